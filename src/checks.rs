//! The binary's own bad-input error (exit code 2) and the checks a command makes before any
//! work: a folder argument that cannot be a folder, a results database that would be refused.

/// Bad input detected by the command itself (exit code 2).
#[derive(Debug)]
pub struct BadInput(pub String);

impl std::fmt::Display for BadInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadInput {}

/// Refuses, before any work, a folder argument (`--cache-dir`, `--model-dir`, `report --out`)
/// that is a file or lies under one: creating it would fail only after the work was done.
pub fn check_folder(flag: &str, path: &std::path::Path) -> Result<(), BadInput> {
    let mut at = Some(path);
    while let Some(p) = at.filter(|p| !p.as_os_str().is_empty()) {
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => return Ok(()),
            Ok(_) if p == path => {
                return Err(BadInput(format!(
                    "{flag} {}: is a file, not a folder (give a folder; it is created if missing)",
                    path.display()
                )))
            }
            Ok(_) => {
                return Err(BadInput(format!(
                    "{flag} {}: {} is a file, so the folder cannot be created there",
                    path.display(),
                    p.display()
                )))
            }
            Err(_) => at = p.parent(),
        }
    }
    Ok(())
}

/// Refuses, before the corpus is loaded, a `--db` that `Store::open` would refuse later
/// (a directory, a file that is not a ragrouter store, a newer schema); writes nothing.
pub fn check_db(db: &store::DbTarget) -> anyhow::Result<()> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(store::Store::check_db(db))?;
    Ok(())
}
