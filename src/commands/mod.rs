//! Sub-commands other than `bench`.

pub mod check_llm;
pub mod corpora;
pub mod db;
pub mod generate;
pub mod graph;
pub mod import;
pub mod merge;
pub mod metrics;
pub mod report;
pub mod route;
pub mod setup;

/// Refuses, before any work, a folder argument (`--cache-dir`, `--model-dir`, `report --out`)
/// that is a file or lies under one: creating it would fail only after the work was done.
pub fn check_folder(flag: &str, path: &std::path::Path) -> Result<(), crate::bench::BadInput> {
    let mut at = Some(path);
    while let Some(p) = at.filter(|p| !p.as_os_str().is_empty()) {
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => return Ok(()),
            Ok(_) if p == path => {
                return Err(crate::bench::BadInput(format!(
                    "{flag} {}: is a file, not a folder (give a folder; it is created if missing)",
                    path.display()
                )))
            }
            Ok(_) => {
                return Err(crate::bench::BadInput(format!(
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
