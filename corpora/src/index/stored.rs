//! What the stored approximate indexes (HNSW, IVF) share: where one lives in the cache, the
//! digests that guard it, and the write-then-rename that keeps a torn copy from being read.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::rows::Rows;
use crate::error::{CorpusError, Result};

/// Whether an index came from the cache or was built in this call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Built in this call (and stored in the cache).
    Built,
    /// Read from the cache.
    Cached,
}

/// `<dir>/<kind>/<readable key>-<32 hex>`: one directory per (kind, vectors, parameters); the
/// hex is the sha256 of the length-prefixed `parts` (the vectors' digest and the build settings).
pub(super) fn store_path(dir: &Path, kind: &str, key: &str, parts: &[&[u8]]) -> PathBuf {
    let mut h = Sha256::new();
    for part in parts {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part);
    }
    let readable = crate::embed::files::file_stem(key, 48);
    dir.join(kind)
        .join(format!("{readable}-{}", &hex::encode(h.finalize())[..32]))
}

/// The manifest in `dir`, or `None` when there is none or it does not parse (then the index is
/// rebuilt, with a warning for an unreadable one).
pub(super) fn read_manifest<M: serde::de::DeserializeOwned>(dir: &Path) -> Option<M> {
    let text = fs::read_to_string(dir.join(MANIFEST)).ok()?;
    let parsed = serde_json::from_str(&text);
    if parsed.is_err() {
        tracing::warn!("{}: unreadable manifest, rebuilding", dir.display());
    }
    parsed.ok()
}

/// Writes `manifest` into `dir` (the directory being filled by [`write_dir_atomically`]).
pub(super) fn write_manifest(dir: &Path, manifest: &impl serde::Serialize) -> Result<()> {
    let json = serde_json::to_string_pretty(manifest).expect("manifest serialises");
    fs::write(dir.join(MANIFEST), json)
        .map_err(|e| CorpusError::io(format!("writing {}", dir.display()), e))
}

/// The manifest's file name inside a stored index's directory.
pub(super) const MANIFEST: &str = "manifest.json";

/// sha256 of the shape and every value (little-endian), in rows.
pub(super) fn vectors_digest(flat: &Rows) -> String {
    let mut h = Sha256::new();
    h.update((flat.dim() as u64).to_le_bytes());
    h.update((flat.len() as u64).to_le_bytes());
    let mut buf = Vec::with_capacity(flat.dim() * 4);
    for i in 0..flat.len() {
        buf.clear();
        for v in flat.row(i) {
            buf.extend_from_slice(&v.to_le_bytes());
        }
        h.update(&buf);
    }
    hex::encode(h.finalize())
}

/// sha256 of a file's bytes.
pub(super) fn file_digest(path: &Path) -> Result<String> {
    let mut f = fs::File::open(path)
        .map_err(|e| CorpusError::io(format!("opening {}", path.display()), e))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f
            .read(&mut buf)
            .map_err(|e| CorpusError::io(format!("reading {}", path.display()), e))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex::encode(h.finalize()))
}

/// Runs `fill` on a fresh sibling directory of `target`, then renames it to `target`, so a
/// reader sees either the old directory or the whole new one.
pub(super) fn write_dir_atomically(
    target: &Path,
    fill: impl FnOnce(&Path) -> Result<()>,
) -> Result<()> {
    let parent = target.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(parent)
        .map_err(|e| CorpusError::io(format!("creating {}", parent.display()), e))?;
    // A fresh name, created exclusively: only a folder this call made is ever removed.
    let tmp = loop {
        let tmp = crate::embed::files::unique_sibling(target, "tmp");
        match fs::create_dir(&tmp) {
            Ok(()) => break tmp,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(CorpusError::io(format!("creating {}", tmp.display()), e));
            }
        }
    };
    if let Err(e) = fill(&tmp) {
        let _ = fs::remove_dir_all(&tmp);
        return Err(e);
    }
    // The cache's own entry for this key, written by an earlier run: replaced whole.
    let _ = fs::remove_dir_all(target);
    fs::rename(&tmp, target)
        .map_err(|e| CorpusError::io(format!("renaming into {}", target.display()), e))
}
