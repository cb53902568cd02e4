//! The files of a crate form no circle, where an edge is "file A names an item defined in file
//! B" (through `crate::`, `super::`, `self::` or a child module's path; a re-export is followed
//! to the file that defines the item); and the registry entries and the command-line flag
//! blocks hold no duplicated block of six lines.
//!
//! Test modules (`#[cfg(test)]` to the end of a file) are left out: a test may name anything.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file under `src` (`lib.rs` / `main.rs`: the root).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    match last.as_str() {
        "lib.rs" | "main.rs" | "mod.rs" => {}
        other => parts.push(other.trim_end_matches(".rs").to_string()),
    }
    parts
}

/// The source without comments, string literals and the test module.
fn code(text: &str) -> String {
    let cut = text.find("#[cfg(test)]").unwrap_or(text.len());
    let text = &text[..cut];
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                i += 1;
            }
            i += 2;
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' && b.get(i + 2) == Some(&b'\'') {
            // A char literal such as '{' (lifetimes have no closing quote two bytes on).
            i += 3;
        } else if b[i] == b'\'' && b.get(i + 1) == Some(&b'\\') {
            i += 2;
            while i < b.len() && b[i] != b'\'' {
                i += 1;
            }
            i += 1;
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

/// Expands a use tree (`a::{b, c::{d, e}}`) into paths.
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let t = tree.split(" as ").next().unwrap().trim();
        return vec![t.replace(' ', "")];
    };
    let prefix = tree[..open].trim();
    let inner = &tree[open + 1..tree.rfind('}').unwrap()];
    let (mut parts, mut depth, mut cur) = (Vec::new(), 0, String::new());
    for c in inner.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    parts.push(cur);
    parts
        .iter()
        .filter(|p| !p.trim().is_empty())
        .flat_map(|p| expand(p))
        .map(|p| {
            if p == "self" {
                prefix.trim_end_matches("::").to_string()
            } else {
                format!("{prefix}{p}")
            }
        })
        .collect()
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every path the code names: use trees expanded, and `a::b::c` paths in expressions.
fn paths(code: &str) -> (Vec<String>, Vec<String>) {
    let (mut uses, mut exprs) = (Vec::new(), Vec::new());
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let before_ok = at == 0 || !is_ident(rest[..at].chars().last().unwrap());
        let tail = &rest[at + 4..];
        let end = tail.find(';').unwrap_or(tail.len());
        if before_ok {
            uses.extend(expand(&tail[..end]));
        }
        rest = &tail[end.min(tail.len())..];
    }
    let chars: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if is_ident(chars[i]) && (i == 0 || !(is_ident(chars[i - 1]) || chars[i - 1] == ':')) {
            let mut j = i;
            let mut s = String::new();
            loop {
                while j < chars.len() && is_ident(chars[j]) {
                    s.push(chars[j]);
                    j += 1;
                }
                if j + 2 < chars.len()
                    && chars[j] == ':'
                    && chars[j + 1] == ':'
                    && is_ident(chars[j + 2])
                {
                    s.push_str("::");
                    j += 2;
                } else {
                    break;
                }
            }
            if s.contains("::") {
                exprs.push(s);
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    (uses, exprs)
}

struct Crate {
    files: Vec<PathBuf>,
    /// Module path → file index.
    modules: BTreeMap<Vec<String>, usize>,
    code: Vec<String>,
}

impl Crate {
    fn load(src: &Path) -> Crate {
        let mut files = Vec::new();
        rust_files(src, &mut files);
        let modules = files
            .iter()
            .enumerate()
            .map(|(i, f)| (module_of(src, f), i))
            .collect();
        let code = files
            .iter()
            .map(|f| code(&std::fs::read_to_string(f).unwrap()))
            .collect();
        Crate {
            files,
            modules,
            code,
        }
    }

    /// The file index of module path `m`, if a file holds it.
    fn file(&self, m: &[String]) -> Option<usize> {
        self.modules.get(m).copied()
    }

    /// The absolute segments of `path` named in module `here`, or `None` for another crate's.
    fn absolute(&self, here: &[String], path: &str) -> Option<Vec<String>> {
        let segs: Vec<String> = path.split("::").map(str::to_string).collect();
        let mut base: Vec<String>;
        let mut k = 0;
        match segs[0].as_str() {
            "crate" => {
                base = Vec::new();
                k = 1;
            }
            "self" => {
                base = here.to_vec();
                k = 1;
            }
            "super" => {
                base = here.to_vec();
                while segs.get(k).is_some_and(|s| s == "super") {
                    base.pop();
                    k += 1;
                }
            }
            first => {
                let mut child = here.to_vec();
                child.push(first.to_string());
                self.file(&child)?;
                base = here.to_vec();
            }
        }
        base.extend(segs[k..].iter().cloned());
        Some(base)
    }

    /// The file that defines what `abs` names: the deepest module file on the path, then a
    /// re-export of the next segment in it followed to its own file.
    fn target(&self, abs: &[String], depth: usize) -> Option<usize> {
        let n = (0..=abs.len())
            .rev()
            .find(|&n| self.file(&abs[..n]).is_some())?;
        let f = self.file(&abs[..n])?;
        if n == abs.len() || depth > 8 {
            return Some(f);
        }
        let item = &abs[n];
        let module = &abs[..n];
        let (uses, _) = paths(&self.code[f]);
        for u in uses
            .iter()
            .filter(|u| u.rsplit("::").next() == Some(item.as_str()) && self.is_pub_use(f, item))
        {
            match self.absolute(module, u) {
                // Re-exported from another crate: no file of this one.
                None => return None,
                Some(a) if a != abs => {
                    if let Some(t) = self.target(&a, depth + 1) {
                        return Some(t);
                    }
                }
                Some(_) => {}
            }
        }
        Some(f)
    }

    /// Whether file `f` re-exports `item` (`pub use ...item`).
    fn is_pub_use(&self, f: usize, item: &str) -> bool {
        self.code[f].split(';').any(|stmt| {
            let s = stmt.trim_start();
            (s.starts_with("pub use ") || s.starts_with("pub(crate) use "))
                && s.split(|c: char| !is_ident(c)).any(|w| w == item)
        })
    }

    fn edges(&self) -> BTreeMap<usize, BTreeSet<usize>> {
        let mut edges: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
        let modules: Vec<(Vec<String>, usize)> =
            self.modules.iter().map(|(m, &f)| (m.clone(), f)).collect();
        for (here, f) in &modules {
            let (uses, exprs) = paths(&self.code[*f]);
            for p in uses.iter().chain(&exprs) {
                let p = p.trim_end_matches("::*");
                let Some(abs) = self.absolute(here, p) else {
                    continue;
                };
                if let Some(t) = self.target(&abs, 0) {
                    if t != *f {
                        edges.entry(*f).or_default().insert(t);
                    }
                }
            }
        }
        edges
    }

    /// Strongly connected groups of more than one file.
    fn circles(&self) -> Vec<Vec<String>> {
        let edges = self.edges();
        let n = self.files.len();
        let reach = |from: usize| {
            let mut seen = BTreeSet::from([from]);
            let mut stack = vec![from];
            while let Some(x) = stack.pop() {
                for &y in edges.get(&x).into_iter().flatten() {
                    if seen.insert(y) {
                        stack.push(y);
                    }
                }
            }
            seen
        };
        let reaches: Vec<BTreeSet<usize>> = (0..n).map(reach).collect();
        let mut done = BTreeSet::new();
        let mut out = Vec::new();
        for a in 0..n {
            if done.contains(&a) {
                continue;
            }
            let group: Vec<usize> = (0..n)
                .filter(|&b| reaches[a].contains(&b) && reaches[b].contains(&a))
                .collect();
            done.extend(group.iter().copied());
            if group.len() > 1 {
                out.push(
                    group
                        .iter()
                        .map(|&i| self.files[i].to_string_lossy().into_owned())
                        .collect(),
                );
            }
        }
        out
    }
}

/// The crates whose files this test holds to "no circle": every library and the binary.
const CHECKED: [&str; 10] = [
    "bench-core/src",
    "store/src",
    "corpora/src",
    "metrics/src",
    "paradigms/src",
    "fixtures/src",
    "llm/src",
    "routers/src",
    "reports/src",
    "src",
];

/// `RAGROUTER_FILE_EDGES=routers/src`: prints that crate's edges (for hunting a circle).
#[test]
fn print_edges_when_asked() {
    let Ok(dir) = std::env::var("RAGROUTER_FILE_EDGES") else {
        return;
    };
    let c = Crate::load(&root().join(dir));
    let name = |i: usize| c.files[i].to_string_lossy().into_owned();
    for (a, bs) in c.edges() {
        for b in bs {
            println!("{} -> {}", name(a), name(b));
        }
    }
}

#[test]
fn no_circle_among_the_files_of_a_crate() {
    let mut found = Vec::new();
    for dir in CHECKED {
        let c = Crate::load(&root().join(dir));
        for circle in c.circles() {
            found.push(format!("{dir}: {}", circle.join(" <-> ")));
        }
    }
    assert!(found.is_empty(), "file circles:\n{}", found.join("\n"));
}

#[test]
fn the_file_graph_sees_uses_reexports_and_relative_paths() {
    assert_eq!(
        expand("crate::a::{b, c::{d, e as f}, self}"),
        [
            "crate::a::b",
            "crate::a::c::d",
            "crate::a::c::e",
            "crate::a"
        ]
    );
    // routers' protocol names the registry's lookup and the entry types through re-exports.
    let c = Crate::load(&root().join("routers/src"));
    let edges = c.edges();
    let file = |m: &[&str]| {
        c.file(&m.iter().map(|s| s.to_string()).collect::<Vec<_>>())
            .unwrap()
    };
    let from = edges.get(&file(&["protocol"])).unwrap();
    assert!(from.contains(&file(&["registry"])), "{from:?}");
    assert!(from.contains(&file(&["eval"])), "{from:?}");
    // A child module named from its parent (`models::lr::entry` in the registry).
    assert!(edges
        .get(&file(&["registry"]))
        .unwrap()
        .contains(&file(&["models", "lr"])));
}

/// Blocks of the registries and flag groups: the body of every `RouterEntry {`, `Registered {`
/// literal and every clap `Args` struct.
fn blocks(text: &str) -> Vec<Vec<String>> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i].trim();
        let args_struct = l.starts_with("pub struct")
            && i > 0
            && lines[..i]
                .iter()
                .rev()
                .take(3)
                .any(|p| p.contains("derive") && p.contains("Args"));
        if l.ends_with("RouterEntry {") || l.ends_with("Registered {") || args_struct {
            let indent = lines[i].len() - lines[i].trim_start().len();
            let mut body = Vec::new();
            i += 1;
            while i < lines.len() {
                let li = lines[i];
                let ind = li.len() - li.trim_start().len();
                if ind <= indent && li.trim_start().starts_with('}') {
                    break;
                }
                if !li.trim().is_empty() {
                    body.push(li.trim().to_string());
                }
                i += 1;
            }
            out.push(body);
        }
        i += 1;
    }
    out
}

#[test]
fn no_duplicated_block_of_six_lines_among_registry_entries_and_flag_groups() {
    let mut files = Vec::new();
    for dir in ["routers/src", "paradigms/src", "src"] {
        rust_files(&root().join(dir), &mut files);
    }
    let mut seen: BTreeMap<Vec<String>, String> = BTreeMap::new();
    let mut dups = Vec::new();
    let mut n_blocks = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let text = &text[..text.find("#[cfg(test)]").unwrap_or(text.len())];
        for (b, body) in blocks(text).iter().enumerate() {
            n_blocks += 1;
            for w in body.windows(6) {
                let here = format!("{} block {b}", f.display());
                if let Some(first) = seen.get(w) {
                    if *first != here {
                        dups.push(format!("{first} and {here}:\n  {}", w.join("\n  ")));
                    }
                } else {
                    seen.insert(w.to_vec(), here);
                }
            }
        }
    }
    assert!(n_blocks > 40, "only {n_blocks} blocks found");
    assert!(dups.is_empty(), "duplicated blocks:\n{}", dups.join("\n"));
}
