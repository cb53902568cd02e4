//! Checks the invariants ARCHITECTURE.md writes down about the crate graph.

use std::collections::BTreeMap;
use std::path::Path;

/// Layer of each workspace crate: a crate may depend only on crates of lower layers.
const LAYERS: &[(&str, u8)] = &[
    ("bench-core", 0),
    ("store", 1),
    ("metrics", 1),
    ("corpora", 1),
    ("llm", 1),
    ("paradigms", 2),
    ("routers", 3),
    ("reports", 3),
    ("ragrouter", 4),
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn manifest(dir: &Path) -> toml::Value {
    let text = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    text.parse().unwrap()
}

/// Workspace crates (by package name) → (normal deps, dev deps) that are workspace crates.
fn graph() -> BTreeMap<String, (Vec<String>, Vec<String>)> {
    let ws = manifest(root());
    let members: Vec<String> = ws["workspace"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_owned())
        .collect();
    let mut names: Vec<(String, toml::Value)> = members
        .iter()
        .map(|m| {
            let man = manifest(&root().join(m));
            (man["package"]["name"].as_str().unwrap().to_owned(), man)
        })
        .collect();
    names.push(("ragrouter".into(), ws));
    let internal: Vec<String> = names.iter().map(|(n, _)| n.clone()).collect();
    let deps_of = |man: &toml::Value, table: &str| -> Vec<String> {
        man.get(table)
            .and_then(|t| t.as_table())
            .map(|t| t.keys().filter(|k| internal.contains(k)).cloned().collect())
            .unwrap_or_default()
    };
    names
        .iter()
        .map(|(n, man)| {
            (
                n.clone(),
                (
                    deps_of(man, "dependencies"),
                    deps_of(man, "dev-dependencies"),
                ),
            )
        })
        .collect()
}

fn layer(name: &str) -> u8 {
    LAYERS
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| {
            panic!("crate {name} has no layer: add it to ARCHITECTURE.md and LAYERS")
        })
        .1
}

#[test]
fn dependencies_flow_toward_bench_core() {
    for (krate, (deps, _)) in graph() {
        if krate == "fixtures" {
            assert_eq!(
                deps,
                ["bench-core"],
                "fixtures may depend on bench-core only"
            );
            continue;
        }
        for d in deps {
            assert_ne!(d, "fixtures", "{krate}: fixtures is a dev-dependency only");
            assert!(
                layer(&d) < layer(&krate),
                "{krate} (layer {}) must not depend on {d} (layer {})",
                layer(&krate),
                layer(&d)
            );
        }
    }
}

#[test]
fn routers_never_depend_on_paradigms() {
    if let Some((deps, dev)) = graph().get("routers") {
        assert!(!deps.contains(&"paradigms".to_owned()) && !dev.contains(&"paradigms".to_owned()));
        // Question vectors come through `routers::dataset::QuestionVectors`, not the encoder's crate.
        assert!(
            !deps.contains(&"corpora".to_owned()),
            "routers depends on corpora: {deps:?}"
        );
    }
}

#[test]
fn architecture_md_names_every_crate() {
    let arch = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    for krate in graph().keys() {
        assert!(
            arch.contains(&format!("`{krate}`")),
            "ARCHITECTURE.md does not mention `{krate}`"
        );
    }
}

fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            if !p.ends_with("target") && !p.file_name().unwrap().to_str().unwrap().starts_with('.')
            {
                walk(&p, out);
            }
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The `.rs` files under these top-level folders.
fn rust_files(dirs: &[&str]) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for d in dirs {
        let p = root().join(d);
        if p.exists() {
            walk(&p, &mut files);
        }
    }
    files
}

/// The workspace's crates and the binary's tests.
const SOURCES: &[&str] = &[
    "src",
    "bench-core",
    "store",
    "corpora",
    "paradigms",
    "metrics",
    "routers",
    "reports",
    "fixtures",
    "llm",
    "tests",
];

#[test]
fn every_module_starts_with_a_doc_line() {
    let files = rust_files(SOURCES);
    let missing: Vec<_> = files
        .iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            !text.trim_start().starts_with("//!")
        })
        .collect();
    assert!(
        missing.is_empty(),
        "modules without a leading //! line: {missing:?}"
    );
}

/// `1.89.0` or `1.89` as (major, minor, patch).
fn rust_version(v: &str) -> (u32, u32, u32) {
    let mut parts = v.trim().split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let mut next = || parts.next().unwrap_or(0);
    (next(), next(), next())
}

/// The workspace's `rust-version` is what the lock file really needs: no locked dependency whose
/// sources this machine unpacked (every one a build here compiled) declares a newer one. With one
/// toolchain installed this is the check an MSRV tool would make from the manifests.
#[test]
fn rust_version_covers_every_locked_dependency() {
    let declared = manifest(root())["workspace"]["package"]["rust-version"]
        .as_str()
        .expect("workspace.package.rust-version")
        .to_owned();
    let lock: toml::Value = std::fs::read_to_string(root().join("Cargo.lock"))
        .unwrap()
        .parse()
        .unwrap();
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(&std::env::var_os("HOME").unwrap()).join(".cargo"));
    let registries: Vec<_> = std::fs::read_dir(cargo_home.join("registry/src"))
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    let (mut checked, mut newest) = (0, ((0, 0, 0), String::new()));
    for p in lock["package"].as_array().unwrap() {
        if p.get("source").is_none() {
            continue; // a workspace crate
        }
        let dir = format!(
            "{}-{}",
            p["name"].as_str().unwrap(),
            p["version"].as_str().unwrap()
        );
        let Some(m) = registries
            .iter()
            .map(|r| r.join(&dir).join("Cargo.toml"))
            .find(|m| m.exists())
        else {
            continue; // not built on this platform (windows-sys and the like)
        };
        checked += 1;
        let m: toml::Value = std::fs::read_to_string(&m).unwrap().parse().unwrap();
        if let Some(v) = m["package"].get("rust-version").and_then(|v| v.as_str()) {
            if rust_version(v) > newest.0 {
                newest = (rust_version(v), format!("{dir} needs {v}"));
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} locked crates found under {}: build first",
        cargo_home.display()
    );
    assert!(
        rust_version(&declared) >= newest.0,
        "rust-version = \"{declared}\" but {}",
        newest.1
    );
}

/// Every key of the run configuration is read by some code outside its definition and the tests:
/// a key nothing reads would still enter the run's hash and claim a setting that was never used.
#[test]
fn every_configuration_key_is_read() {
    // Library and binary code only: tests and fixtures may name any key.
    let libraries: Vec<&str> = SOURCES
        .iter()
        .copied()
        .filter(|d| !matches!(*d, "tests" | "fixtures"))
        .collect();
    let files = rust_files(&libraries);
    let code: Vec<String> = files
        .iter()
        .filter(|f| {
            !f.ends_with("bench-core/src/config.rs")
                && !f.components().any(|c| c.as_os_str() == "tests")
        })
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    let defaults = serde_json::to_value(bench_core::BenchConfig::default()).unwrap();
    let mut unread = Vec::new();
    for (section, keys) in defaults.as_object().unwrap() {
        let keys: Vec<&String> = match keys.as_object() {
            Some(m) => m.keys().collect(),
            None => vec![section],
        };
        for key in keys {
            // A field access `.key` not followed by more identifier characters.
            let needle = format!(".{key}");
            let read = code.iter().any(|text| {
                text.match_indices(&needle).any(|(i, _)| {
                    !text[i + needle.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
                })
            });
            if !read {
                unread.push(format!("{section}.{key}"));
            }
        }
    }
    assert!(
        unread.is_empty(),
        "configuration keys no code reads: {unread:?}"
    );
}

/// The crates that may depend on the store (normal dependencies): the rest reach the
/// database through bench-core's cache traits, or not at all.
const STORE_USERS: &[&str] = &["routers", "reports", "ragrouter"];

/// Crates that may not name the store even in their tests: pure computation.
const NEVER_THE_STORE: &[&str] = &["bench-core", "metrics", "paradigms", "fixtures"];

#[test]
fn only_the_store_speaks_sql() {
    // No crate but `store` links sqlx for its own code (tests may read a database).
    for (name, man) in std::iter::once(("ragrouter".to_owned(), manifest(root()))).chain(
        SOURCES
            .iter()
            .filter(|d| !matches!(**d, "src" | "tests" | "store"))
            .map(|c| (c.to_string(), manifest(&root().join(c)))),
    ) {
        let deps = man.get("dependencies").and_then(|t| t.as_table());
        assert!(
            !deps.is_some_and(|d| d.contains_key("sqlx")),
            "{name} depends on sqlx: its queries belong in the store crate"
        );
    }
    // And no library or binary source outside the store crate names it.
    let libraries: Vec<String> = SOURCES
        .iter()
        .filter(|d| !matches!(**d, "tests" | "store"))
        .map(|d| {
            if *d == "src" {
                d.to_string()
            } else {
                format!("{d}/src")
            }
        })
        .collect();
    let offenders: Vec<_> = rust_files(&libraries.iter().map(String::as_str).collect::<Vec<_>>())
        .into_iter()
        .filter(|f| std::fs::read_to_string(f).unwrap().contains("sqlx"))
        .collect();
    assert!(
        offenders.is_empty(),
        "SQL outside the store crate (ARCHITECTURE.md, invariant 12): {offenders:?}"
    );
}

#[test]
fn bench_core_has_no_database_and_no_runtime() {
    let man = manifest(&root().join("bench-core"));
    for table in ["dependencies", "dev-dependencies"] {
        let deps = man.get(table).and_then(|t| t.as_table());
        for banned in ["sqlx", "tokio", "store"] {
            assert!(
                !deps.is_some_and(|d| d.contains_key(banned)),
                "bench-core's [{table}] names {banned}: the vocabulary has no database or runtime"
            );
        }
    }
}

#[test]
fn only_routers_reports_and_the_binary_depend_on_the_store() {
    let graph = graph();
    assert!(
        graph.contains_key("store"),
        "the store crate is a workspace member"
    );
    for (krate, (deps, dev)) in &graph {
        if deps.contains(&"store".to_owned()) {
            assert!(
                STORE_USERS.contains(&krate.as_str()),
                "{krate} depends on the store: only {STORE_USERS:?} may (others use bench-core's cache traits)"
            );
        }
        if NEVER_THE_STORE.contains(&krate.as_str()) {
            assert!(
                !deps.contains(&"store".to_owned()) && !dev.contains(&"store".to_owned()),
                "{krate} must not name the store, not even in its tests"
            );
        }
    }
}

/// The source folders of the libraries and the binary (tests excluded).
fn library_dirs() -> Vec<String> {
    SOURCES
        .iter()
        .filter(|d| **d != "tests")
        .map(|d| {
            if *d == "src" {
                d.to_string()
            } else {
                format!("{d}/src")
            }
        })
        .collect()
}

/// A run's mode is `bench_core::Mode`, parsed once where the store reads it (`Mode::parse`): no
/// library or binary code tests the stored label's text, so a policy or a cost measure is
/// chosen by a `match` on the mode, never by a string that a new mode would silently fall
/// through.
#[test]
fn modes_are_matched_not_compared_as_text() {
    const PARSER: &str = "bench-core/src/record.rs";
    let banned = [
        "== \"offline\"",
        "!= \"offline\"",
        "\"offline\" =>",
        "Some(\"offline\")",
        "IMPORTED_PREFIX",
        "starts_with(\"imported",
        "strip_prefix(\"imported",
        "starts_with(\"llm:",
        "strip_prefix(\"llm:",
    ];
    let libraries = library_dirs();
    let mut offenders = Vec::new();
    for f in rust_files(&libraries.iter().map(String::as_str).collect::<Vec<_>>()) {
        if f.ends_with(PARSER) {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        for (n, line) in text.lines().enumerate() {
            let free_is_imported = line
                .match_indices("is_imported(")
                .any(|(i, _)| !line[i + "is_imported(".len()..].starts_with(')'));
            if free_is_imported || banned.iter().any(|b| line.contains(b)) {
                offenders.push(format!("{}:{}: {}", f.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "a mode tested as text outside its parser ({PARSER}): match on bench_core::Mode instead:\n{}",
        offenders.join("\n")
    );
}

/// Baselines are recognised by the family `route eval` stores with each router
/// (`reports::RouteEval::is_baseline`), never by a list of names that a renamed or new baseline
/// would fall through.
#[test]
fn baselines_are_known_by_family_not_by_name() {
    let banned = [
        "\"bestfixed\"",
        "\"best_fixed\"",
        "\"best-fixed\" |",
        "| \"best-fixed\"",
        "\"random\" |",
        "| \"oracle\"",
    ];
    let libraries = library_dirs();
    let mut offenders = Vec::new();
    for f in rust_files(&libraries.iter().map(String::as_str).collect::<Vec<_>>()) {
        let text = std::fs::read_to_string(&f).unwrap();
        for (n, line) in text.lines().enumerate() {
            if banned.iter().any(|b| line.contains(b)) {
                offenders.push(format!("{}:{}: {}", f.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "a baseline recognised by name: read its stored family instead:\n{}",
        offenders.join("\n")
    );
}
