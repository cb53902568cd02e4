//! The report's output folder: checked before any work, written whole into a fresh sibling folder
//! and swapped in by rename, with a manifest of the files written, so that one folder never mixes
//! two reports and a folder holding anything else is refused untouched.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use bench_core::{BenchError, Result};

/// The manifest a report writes into its folder: the files it wrote, one relative path each.
pub const MANIFEST: &str = "report-manifest.json";

/// Refuses a folder a report may not replace: a path that is not a folder, or a folder holding a
/// file that no earlier report listed in its manifest (the user's own files, or a report written
/// before manifests existed). A missing folder or an empty one is fine. The walk stops at the
/// first such file, and looks at a folder's own files before the folders inside it, so a
/// foreign tree (`/`, a home folder) is refused at once rather than listed whole.
pub fn check_out_dir(out: &Path) -> Result<()> {
    let shown = out.display();
    let meta = match fs::symlink_metadata(out) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(BenchError::io(format!("reading {shown}"), e)),
    };
    if !meta.is_dir() {
        return Err(BenchError::Invalid(format!(
            "report --out {shown}: not a folder (give a folder to write the report into)"
        )));
    }
    let listed = read_manifest(out)?;
    let manifest = PathBuf::from(MANIFEST);
    let foreign = first_file_outside(out, |f| *f == manifest || listed.contains(f))?;
    if let Some(foreign) = foreign {
        let why = if listed.is_empty() {
            format!("the folder has no {MANIFEST}")
        } else {
            format!("it is not in the folder's {MANIFEST}")
        };
        return Err(BenchError::Invalid(format!(
            "report --out {shown}: holds {}, which no earlier report wrote ({why}); a report \
             replaces only its own files: choose a new folder or move that file away",
            out.join(foreign).display()
        )));
    }
    Ok(())
}

/// The first file under `dir` (relative to it) that `known` does not accept, breadth first: a
/// folder's files before its subfolders. Links count as files and are not followed. A folder
/// that cannot be listed is bad input too: a report could not replace it.
fn first_file_outside(dir: &Path, known: impl Fn(&PathBuf) -> bool) -> Result<Option<PathBuf>> {
    let mut todo = std::collections::VecDeque::from([PathBuf::new()]);
    while let Some(rel) = todo.pop_front() {
        let here = dir.join(&rel);
        let unreadable = |e: std::io::Error| {
            BenchError::Invalid(format!(
                "report --out {}: cannot list {} ({e}); a report replaces only a folder it can \
                 read whole: choose a new folder",
                dir.display(),
                here.display()
            ))
        };
        let mut entries = fs::read_dir(&here)
            .map_err(unreadable)?
            .map(|e| {
                let e = e?;
                Ok((e.file_name(), e.file_type()?))
            })
            .collect::<std::io::Result<Vec<_>>>()
            .map_err(unreadable)?;
        // Names in order, so the file named is the same on every run.
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, kind) in entries {
            let path = rel.join(name);
            if kind.is_dir() {
                todo.push_back(path);
            } else if !known(&path) {
                return Ok(Some(path));
            }
        }
    }
    Ok(None)
}

/// The files under `dir`, relative to it, in order; links count as files and are not followed.
#[cfg(test)]
fn files_under(dir: &Path) -> Result<BTreeSet<PathBuf>> {
    let mut out = BTreeSet::new();
    let mut todo = vec![PathBuf::new()];
    while let Some(rel) = todo.pop() {
        for entry in fs::read_dir(dir.join(&rel)).map_err(|e| BenchError::io("listing", e))? {
            let entry = entry.map_err(|e| BenchError::io("listing", e))?;
            let path = rel.join(entry.file_name());
            if entry
                .file_type()
                .map_err(|e| BenchError::io("listing", e))?
                .is_dir()
            {
                todo.push(path);
            } else {
                out.insert(path);
            }
        }
    }
    Ok(out)
}

/// The files the folder's manifest lists; none when it has no manifest.
fn read_manifest(dir: &Path) -> Result<BTreeSet<PathBuf>> {
    let path = dir.join(MANIFEST);
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeSet::new()),
        Err(e) => return Err(BenchError::io(format!("reading {}", path.display()), e)),
    };
    let bad = |m: String| BenchError::Invalid(format!("{}: {m}", path.display()));
    let v = bench_core::strict_json::from_str(&text).map_err(|e| bad(format!("not JSON: {e}")))?;
    let files = v
        .get("files")
        .and_then(serde_json::Value::as_array)
        .ok_or_else(|| bad("field \"files\": expected an array of paths".into()))?;
    files
        .iter()
        .map(|f| {
            f.as_str()
                .map(PathBuf::from)
                // Only paths inside the folder: a manifest cannot vouch for `../elsewhere`.
                .filter(|p| {
                    p.components()
                        .all(|c| matches!(c, std::path::Component::Normal(_)))
                })
                .ok_or_else(|| bad(format!("field \"files\": {f} is not a relative path")))
        })
        .collect()
}

/// The parent folder and the name of `out`, for its siblings.
fn parent_and_name(out: &Path) -> Result<(PathBuf, String)> {
    let out = match out.file_name() {
        Some(_) => out.to_path_buf(),
        // `.` or `dir/..`: the folder's own name.
        None => out
            .canonicalize()
            .map_err(|e| BenchError::io(format!("resolving {}", out.display()), e))?,
    };
    let name = out.file_name().ok_or_else(|| {
        BenchError::Invalid(format!("report --out {}: not a folder name", out.display()))
    })?;
    let parent = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    Ok((parent, name.to_string_lossy().into_owned()))
}

/// A fresh, empty folder next to `out` (same file system, so it can be renamed into place).
pub fn staging_dir(out: &Path) -> Result<PathBuf> {
    let (parent, name) = parent_and_name(out)?;
    fs::create_dir_all(&parent)
        .map_err(|e| BenchError::io(format!("creating {}", parent.display()), e))?;
    fresh_sibling(&parent, &name, "staging")
}

/// Creates `.<name>.<tag>-<pid>` in `parent`, or, where that name is taken, the first free
/// `.<name>.<tag>-<pid>-<n>`: created exclusively, so the folder is this run's own and only it
/// is ever removed, never a folder of the same name that was there before.
fn fresh_sibling(parent: &Path, name: &str, tag: &str) -> Result<PathBuf> {
    let pid = std::process::id();
    for n in 0..1000u32 {
        let dir = match n {
            0 => parent.join(format!(".{name}.{tag}-{pid}")),
            n => parent.join(format!(".{name}.{tag}-{pid}-{n}")),
        };
        match fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(BenchError::io(format!("creating {}", dir.display()), e)),
        }
    }
    Err(BenchError::Other(format!(
        "no free name for the report's {tag} folder in {}: 1000 names .{name}.{tag}-{pid}-N are taken",
        parent.display()
    )))
}

/// Writes the manifest of `files` into `staging` and puts `staging` in the place of `out`: the
/// old folder (checked by [`check_out_dir`]) is moved aside into a folder this run created, the
/// new one renamed in, and the old report's files removed. Should the second rename fail, the
/// old folder is put back.
pub fn swap_in(staging: &Path, out: &Path, files: &[PathBuf]) -> Result<()> {
    let listed: Vec<String> = files
        .iter()
        .map(|f| f.to_string_lossy().into_owned())
        .collect();
    let manifest = serde_json::json!({"written_by": "ragrouter report", "files": listed});
    let path = staging.join(MANIFEST);
    fs::write(&path, format!("{manifest:#}\n"))
        .map_err(|e| BenchError::io(format!("writing {}", path.display()), e))?;
    let (parent, name) = parent_and_name(out)?;
    let moved = |from: &Path, to: &Path, e| {
        BenchError::io(format!("moving {} to {}", from.display(), to.display()), e)
    };
    if fs::symlink_metadata(out).is_err() {
        return fs::rename(staging, out).map_err(|e| moved(staging, out, e));
    }
    // An empty folder of our own, which the rename of a folder replaces: the old report can
    // never land on, or in, a folder that was there before.
    let old = fresh_sibling(&parent, &name, "old")?;
    if let Err(e) = fs::rename(out, &old) {
        let _ = fs::remove_dir(&old);
        return Err(moved(out, &old, e));
    }
    if let Err(e) = fs::rename(staging, out) {
        let _ = fs::rename(&old, out);
        return Err(moved(staging, out, e));
    }
    remove_old_report(&old)
}

/// Removes the replaced report: the files its manifest lists and the manifest, found by a walk
/// that never follows a link (a listed path through a linked folder is not removed), then its
/// folders once empty. A file that appeared since the check is kept, with the folder that
/// holds it.
fn remove_old_report(old: &Path) -> Result<()> {
    let mut listed = read_manifest(old)?;
    listed.insert(PathBuf::from(MANIFEST));
    let mut dirs = vec![PathBuf::new()];
    let mut i = 0;
    while i < dirs.len() {
        let here = old.join(&dirs[i]);
        let entries = fs::read_dir(&here)
            .map_err(|e| BenchError::io(format!("listing {}", here.display()), e))?;
        for entry in entries.flatten() {
            let rel = dirs[i].join(entry.file_name());
            match entry.file_type() {
                Ok(k) if k.is_dir() => dirs.push(rel),
                Ok(_) if listed.contains(&rel) => fs::remove_file(old.join(&rel)).map_err(|e| {
                    BenchError::io(format!("removing {}", old.join(&rel).display()), e)
                })?,
                _ => {}
            }
        }
        i += 1;
    }
    // Deepest folders first; `remove_dir` only ever removes an empty one.
    for d in dirs.iter().rev() {
        let _ = fs::remove_dir(old.join(d));
    }
    if old.exists() {
        return Err(BenchError::Other(format!(
            "the new report is in place, but {} (the replaced one) was kept: it holds files \
             that appeared while the report was written",
            old.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_is_replaced_only_when_the_manifest_lists_every_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("rep");
        check_out_dir(&out).unwrap();
        let staging = staging_dir(&out).unwrap();
        fs::create_dir_all(staging.join("tables")).unwrap();
        fs::write(staging.join("tables/a.md"), "a").unwrap();
        swap_in(&staging, &out, &[PathBuf::from("tables/a.md")]).unwrap();
        assert!(!staging.exists());
        check_out_dir(&out).unwrap();
        // A second report replaces the first whole: its files only.
        let staging = staging_dir(&out).unwrap();
        fs::write(staging.join("b.md"), "b").unwrap();
        swap_in(&staging, &out, &[PathBuf::from("b.md")]).unwrap();
        assert_eq!(
            files_under(&out).unwrap(),
            BTreeSet::from([PathBuf::from("b.md"), PathBuf::from(MANIFEST)])
        );
        // A file of the user's makes the folder foreign; a file is not a folder.
        fs::write(out.join("notes.txt"), "mine").unwrap();
        let e = check_out_dir(&out).unwrap_err().to_string();
        assert!(e.contains("notes.txt"), "{e}");
        let e = check_out_dir(&out.join("b.md")).unwrap_err().to_string();
        assert!(e.contains("not a folder"), "{e}");
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no sibling left"
        );
    }

    #[test]
    fn staging_and_old_folders_are_fresh_and_others_are_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("rep");
        let pid = std::process::id();
        // The user's folders under the names a first try would take.
        let theirs: Vec<PathBuf> = ["staging", "old"]
            .iter()
            .map(|t| dir.path().join(format!(".rep.{t}-{pid}")))
            .collect();
        for d in &theirs {
            fs::create_dir(d).unwrap();
            fs::write(d.join("notes.txt"), "mine").unwrap();
        }
        for round in ["a.md", "b.md"] {
            let staging = staging_dir(&out).unwrap();
            assert!(!theirs.contains(&staging));
            fs::write(staging.join(round), round).unwrap();
            swap_in(&staging, &out, &[PathBuf::from(round)]).unwrap();
        }
        for d in &theirs {
            assert_eq!(fs::read_to_string(d.join("notes.txt")).unwrap(), "mine");
        }
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            3,
            "rep and the two of theirs"
        );
        // A foreign file at the top is named before anything deeper is listed.
        fs::create_dir_all(out.join("a/b")).unwrap();
        fs::write(out.join("a/b/deep.txt"), "d").unwrap();
        fs::write(out.join("top.txt"), "t").unwrap();
        let e = check_out_dir(&out).unwrap_err().to_string();
        assert!(e.contains("top.txt"), "{e}");
    }

    #[test]
    fn a_manifest_cannot_reach_through_a_linked_folder() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere");
        fs::create_dir(&elsewhere).unwrap();
        fs::write(elsewhere.join("a.md"), "theirs").unwrap();
        let out = dir.path().join("rep");
        fs::create_dir(&out).unwrap();
        std::os::unix::fs::symlink(&elsewhere, out.join("t")).unwrap();
        let manifest = serde_json::json!({"files": ["t", "t/a.md"]});
        fs::write(out.join(MANIFEST), manifest.to_string()).unwrap();
        check_out_dir(&out).unwrap();
        let staging = staging_dir(&out).unwrap();
        swap_in(&staging, &out, &[]).unwrap();
        assert_eq!(
            fs::read_to_string(elsewhere.join("a.md")).unwrap(),
            "theirs"
        );
        assert!(
            !out.join("t").exists(),
            "the link itself was the old report's"
        );
    }
}
