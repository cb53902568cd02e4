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
/// before manifests existed). A missing folder or an empty one is fine.
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
    let files = files_under(out)?;
    if files.is_empty() {
        return Ok(());
    }
    let listed = read_manifest(out)?;
    let manifest = PathBuf::from(MANIFEST);
    if let Some(foreign) = files
        .iter()
        .find(|f| **f != manifest && !listed.contains(*f))
    {
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

/// The files under `dir`, relative to it, in order; links count as files and are not followed.
fn files_under(dir: &Path) -> Result<BTreeSet<PathBuf>> {
    let mut out = BTreeSet::new();
    let mut todo = vec![PathBuf::new()];
    while let Some(rel) = todo.pop() {
        let here = dir.join(&rel);
        let entries = fs::read_dir(&here)
            .map_err(|e| BenchError::io(format!("listing {}", here.display()), e))?;
        for entry in entries {
            let entry =
                entry.map_err(|e| BenchError::io(format!("listing {}", here.display()), e))?;
            let kind = entry
                .file_type()
                .map_err(|e| BenchError::io(format!("reading {}", entry.path().display()), e))?;
            let path = rel.join(entry.file_name());
            if kind.is_dir() {
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
pub(crate) fn staging_dir(out: &Path) -> Result<PathBuf> {
    let (parent, name) = parent_and_name(out)?;
    fs::create_dir_all(&parent)
        .map_err(|e| BenchError::io(format!("creating {}", parent.display()), e))?;
    let dir = parent.join(format!(".{name}.staging-{}", std::process::id()));
    if dir.exists() {
        fs::remove_dir_all(&dir)
            .map_err(|e| BenchError::io(format!("clearing {}", dir.display()), e))?;
    }
    fs::create_dir(&dir).map_err(|e| BenchError::io(format!("creating {}", dir.display()), e))?;
    Ok(dir)
}

/// Writes the manifest of `files` into `staging` and puts `staging` in the place of `out`: the
/// old folder (checked by [`check_out_dir`]) is moved aside, the new one renamed in, the old one
/// removed. Should the second rename fail, the old folder is put back.
pub(crate) fn swap_in(staging: &Path, out: &Path, files: &[PathBuf]) -> Result<()> {
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
    let old = parent.join(format!(".{name}.old-{}", std::process::id()));
    if old.exists() {
        fs::remove_dir_all(&old)
            .map_err(|e| BenchError::io(format!("clearing {}", old.display()), e))?;
    }
    fs::rename(out, &old).map_err(|e| moved(out, &old, e))?;
    if let Err(e) = fs::rename(staging, out) {
        let _ = fs::rename(&old, out);
        return Err(moved(staging, out, e));
    }
    fs::remove_dir_all(&old).map_err(|e| BenchError::io(format!("removing {}", old.display()), e))
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
}
