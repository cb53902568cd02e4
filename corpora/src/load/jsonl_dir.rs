//! The generic format's folder (docs/data-format.md): `corpus.jsonl`, `queries.jsonl` and the
//! optional `corpus.toml` that names the corpus.

use std::path::Path;

use super::jsonl::parse_texts;
use super::names::{check_corpus_name, quoted_name};
use super::parsed::Parsed;
use super::records::{malformed, read_file};
use crate::error::Result;

pub(crate) const CORPUS_FILE: &str = "corpus.jsonl";
pub(crate) const QUERIES_FILE: &str = "queries.jsonl";
pub(crate) const MANIFEST_FILE: &str = "corpus.toml";

/// `corpus.toml`: what the files do not say about the corpus.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    /// The short name tables and figures show; the folder's name when absent.
    name: Option<String>,
    /// Free text for the record (where the data came from, its licence).
    #[allow(dead_code)]
    description: Option<String>,
}

/// The corpus's short name: `corpus.toml`'s `name`, else the folder's name. Its identity is its
/// content hash, so the same files reached by any path are one corpus.
fn short_name(dir: &Path) -> Result<String> {
    let manifest = dir.join(MANIFEST_FILE);
    let shown = manifest.display().to_string();
    // No manifest is fine; one that is there must be a regular file under the input cap.
    let read = match std::fs::symlink_metadata(&manifest) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        _ => Some(bench_core::input::read_input(&manifest, "manifest")?),
    };
    let (name, file) = match read {
        Some(bytes) => {
            // Not UTF-8: the error names the line of the first bad byte.
            let text = bench_core::input::decode_utf8(bytes, &shown)?;
            let m: Manifest = toml::from_str(&text).map_err(|e| {
                malformed(&shown, "whole file", format!("not a valid manifest: {e}"))
            })?;
            (m.name, Some(shown))
        }
        None => (None, None),
    };
    let name = match name {
        Some(n) => n,
        None => dir
            .canonicalize()
            .ok()
            .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| dir.display().to_string()),
    };
    let bad = |why: &str| {
        let (file, location) = match &file {
            Some(f) => (f.clone(), "field \"name\"".to_string()),
            None => (dir.display().to_string(), "the folder's name".to_string()),
        };
        Err(malformed(
            &file,
            location,
            format!("corpus name {} {why}", quoted_name(&name)),
        ))
    };
    if let Err(why) = check_corpus_name(&name) {
        return bad(&format!("{why} (set one in corpus.toml: name = \"...\")"));
    }
    Ok(name)
}

/// Reads `<dir>/corpus.jsonl` and `<dir>/queries.jsonl`.
pub(crate) fn parse_dir(dir: &Path) -> Result<Parsed> {
    let hint = format!(
        "the generic format needs {CORPUS_FILE} and {QUERIES_FILE} in {} (docs/data-format.md)",
        dir.display()
    );
    let corpus_path = dir.join(CORPUS_FILE);
    let queries_path = dir.join(QUERIES_FILE);
    let corpus_text = read_file(&corpus_path, &hint)?;
    let queries_text = read_file(&queries_path, &hint)?;
    let name = short_name(dir)?;
    let mut parsed = parse_texts(
        &corpus_path.display().to_string(),
        &corpus_text,
        &queries_path.display().to_string(),
        &queries_text,
    )?;
    parsed.name = Some(name);
    Ok(parsed)
}
