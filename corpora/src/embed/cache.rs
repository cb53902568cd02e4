//! `VectorCache`: embeddings stored per (key, encoder, exact texts) so no corpus is embedded twice,
//! each file's body checked against its digest before it is used.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use bench_core::{Embedder, Embeddings};
use sha2::{Digest, Sha256};

use super::files::{file_stem, unique_sibling};
use crate::error::{CorpusError, Result};

const MAGIC: &[u8; 8] = b"RRBVECS\0";
/// 2: the header carries the body's sha256 (files of version 1, without it, are embedded again).
const VERSION: u32 = 2;
/// magic, version, dim, rows, content digest, body digest.
const HEADER_LEN: usize = 8 + 4 + 4 + 8 + 32 + 32;
/// Texts per `embed` call: bounds memory and sets how often progress is reported.
const BATCH: usize = 512;

/// A directory of `<key>-<digest>.vecs` files: a small header then raw little-endian f32 rows.
/// The header holds the sha256 of the rows' bytes, checked on every read: a file whose body
/// changed after it was written is embedded again, never used. sha256 rather than a faster
/// 64-bit hash: it is already the cache's digest, needs no new dependency, and costs little
/// beside the read and the float decoding every load does (sha2 runs on the CPU's SHA
/// extensions; 250-290 MB/s measured on a 2-core machine at load 6, so tens of ms for a
/// 10 MB file, well under a millisecond for the 24-83 kB files of the shared data sets).
#[derive(Debug, Clone)]
pub struct VectorCache {
    dir: PathBuf,
}

impl VectorCache {
    /// A cache in `dir` (created when first written to).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        VectorCache { dir: dir.into() }
    }

    /// The directory the vector files are kept in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// sha256 over the key, the encoder's name, the gemm kernel this CPU runs and every text,
    /// each length-prefixed so that no two different inputs concatenate to the same bytes. The
    /// kernel is part of the key because AVX-512 and AVX2 sum in different orders: vectors made
    /// by one are not reused by the other (they agree within 1e-6, which near-ties can feel).
    fn digest(key: &str, texts: &[&str], embedder: &dyn Embedder) -> [u8; 32] {
        let mut h = Sha256::new();
        for part in [key, embedder.name(), crate::index::gemm_kernel()] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part.as_bytes());
        }
        h.update((texts.len() as u64).to_le_bytes());
        for t in texts {
            h.update((t.len() as u64).to_le_bytes());
            h.update(t.as_bytes());
        }
        h.finalize().into()
    }

    /// The file that holds (or will hold) these vectors.
    pub fn path_for(&self, key: &str, texts: &[&str], embedder: &dyn Embedder) -> PathBuf {
        let digest = Self::digest(key, texts, embedder);
        let readable = file_stem(key, 48);
        self.dir
            .join(format!("{readable}-{}.vecs", &hex::encode(digest)[..32]))
    }

    /// The vectors of `texts` under `embedder`, read from the cache or embedded and stored.
    /// `progress(done, total)` is called as batches finish (and once when read from the cache).
    pub fn get_or_embed(
        &self,
        key: &str,
        texts: &[&str],
        embedder: &dyn Embedder,
        progress: &dyn Fn(usize, usize),
    ) -> Result<Embeddings> {
        let digest = Self::digest(key, texts, embedder);
        let path = self.path_for(key, texts, embedder);
        match read(&path, &digest, embedder.dim(), texts.len()) {
            Ok(Some(e)) => {
                tracing::debug!(file = %path.display(), rows = e.len(), "vectors read from cache");
                progress(texts.len(), texts.len());
                return Ok(e);
            }
            Ok(None) => {}
            Err(Unusable::Older(version)) => tracing::info!(
                file = %path.display(),
                version,
                "vector cache file of an older format (no body digest): embedding again"
            ),
            Err(Unusable::Unreadable(e)) => {
                tracing::warn!(file = %path.display(), error = %e, "ignoring unreadable vector cache file")
            }
            Err(Unusable::Corrupt(e)) => {
                // Printed whatever the log level: the vectors a run uses changed under it.
                eprintln!(
                    "vector cache: {} is corrupt ({}): re-embedding and rewriting it",
                    path.display(),
                    corrupt_reason(&e)
                );
            }
        }
        tracing::info!(
            key,
            encoder = embedder.name(),
            texts = texts.len(),
            "embedding"
        );
        let dim = embedder.dim();
        let mut data = Vec::with_capacity(texts.len() * dim);
        progress(0, texts.len());
        for batch in texts.chunks(BATCH) {
            let e = embedder.embed(batch)?;
            if e.dim != dim || e.len() != batch.len() {
                return Err(CorpusError::Encoder(format!(
                    "{} returned {} rows of dim {} for {} texts of dim {dim}",
                    embedder.name(),
                    e.len(),
                    e.dim,
                    batch.len()
                )));
            }
            data.extend_from_slice(&e.data);
            progress(data.len() / dim, texts.len());
        }
        let out = Embeddings { dim, data };
        write(&path, &digest, &out)?;
        Ok(out)
    }
}

/// Why a cache file present under its name is not used.
enum Unusable {
    /// Written by an older format version (no body digest): embedded again once, quietly.
    Older(u32),
    /// The file could not be read.
    Unreadable(CorpusError),
    /// Torn, or its body or header does not match what it should hold.
    Corrupt(CorpusError),
}

/// The message of a parse error without the file name, which the caller prints once.
fn corrupt_reason(e: &CorpusError) -> String {
    match e {
        CorpusError::Malformed { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

/// `Ok(None)` when absent; why not, when present but not a complete, intact file for this content.
fn read(
    path: &Path,
    digest: &[u8; 32],
    dim: usize,
    rows: usize,
) -> std::result::Result<Option<Embeddings>, Unusable> {
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(Unusable::Unreadable(CorpusError::io(
                format!("reading {}", path.display()),
                e,
            )))
        }
    };
    if let Some(v) = older_version(&bytes) {
        return Err(Unusable::Older(v));
    }
    parse(path, &bytes, Some((digest, dim, rows)))
        .map(Some)
        .map_err(Unusable::Corrupt)
}

/// The version of a well-formed file of an older format, else `None`.
fn older_version(bytes: &[u8]) -> Option<u32> {
    let v = u32::from_le_bytes(bytes.get(8..12)?.try_into().ok()?);
    (bytes.starts_with(MAGIC) && (1..VERSION).contains(&v)).then_some(v)
}

/// sha256 of a file's body (the rows' bytes).
fn body_digest(body: &[u8]) -> [u8; 32] {
    Sha256::digest(body).into()
}

impl VectorCache {
    /// The vectors of one cache file, whatever texts and encoder made them (for examples that
    /// measure on real vectors); the header and the body digest are checked, the content
    /// digest is not.
    pub fn read_file(path: &Path) -> Result<Embeddings> {
        let bytes = fs::read(path)
            .map_err(|e| CorpusError::io(format!("reading {}", path.display()), e))?;
        parse(path, &bytes, None)
    }
}

/// A cache file's vectors; with `want`, its header must also name that digest and shape.
fn parse(path: &Path, bytes: &[u8], want: Option<(&[u8; 32], usize, usize)>) -> Result<Embeddings> {
    let bad = |m: &str| CorpusError::Malformed {
        file: path.display().to_string(),
        location: "header".into(),
        message: m.into(),
    };
    if bytes.len() < HEADER_LEN || &bytes[..8] != MAGIC {
        return Err(bad("not a vector cache file"));
    }
    let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap()) as usize;
    let version = u32_at(8);
    let (fdim, frows) = (
        u32_at(12),
        u64::from_le_bytes(bytes[16..24].try_into().unwrap()) as usize,
    );
    if version != VERSION as usize {
        return Err(bad(&format!("version {version}, expected {VERSION}")));
    }
    if let Some((digest, dim, rows)) = want {
        if &bytes[24..56] != digest || fdim != dim || frows != rows {
            return Err(bad("header does not match the requested content"));
        }
    }
    let (dim, rows) = (fdim, frows);
    let body = &bytes[HEADER_LEN..];
    if body.len() != rows * dim * 4 {
        return Err(bad(&format!(
            "{} data bytes, expected {}",
            body.len(),
            rows * dim * 4
        )));
    }
    if bytes[56..88] != body_digest(body) {
        return Err(bad("the vectors do not match the digest of the body"));
    }
    let data = body
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    Ok(Embeddings { dim, data })
}

/// Writes to a unique temporary file, then renames: readers see a complete file or none.
fn write(path: &Path, digest: &[u8; 32], e: &Embeddings) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)
        .map_err(|err| CorpusError::io(format!("creating {}", dir.display()), err))?;
    let tmp = unique_sibling(path, "tmp");
    let body: Vec<u8> = e.data.iter().flat_map(|v| v.to_le_bytes()).collect();
    let res = (|| {
        // `create_new`: a file that was there before is never truncated, nor removed below.
        let mut f = std::io::BufWriter::new(fs::File::create_new(&tmp)?);
        f.write_all(MAGIC)?;
        f.write_all(&VERSION.to_le_bytes())?;
        f.write_all(&(e.dim as u32).to_le_bytes())?;
        f.write_all(&(e.len() as u64).to_le_bytes())?;
        f.write_all(digest)?;
        f.write_all(&body_digest(&body))?;
        f.write_all(&body)?;
        let f = f.into_inner().map_err(|err| err.into_error())?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    res.map_err(|err| {
        let _ = fs::remove_file(&tmp);
        CorpusError::io(format!("writing {}", path.display()), err)
    })
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::embed::HashEmbedder;

    /// Counts the texts it is asked to embed.
    struct Counting {
        inner: HashEmbedder,
        texts: AtomicUsize,
    }

    impl Embedder for Counting {
        fn name(&self) -> &str {
            self.inner.name()
        }
        fn dim(&self) -> usize {
            self.inner.dim()
        }
        fn embed(&self, texts: &[&str]) -> bench_core::Result<Embeddings> {
            self.texts.fetch_add(texts.len(), Ordering::SeqCst);
            self.inner.embed(texts)
        }
    }

    fn counting() -> Counting {
        Counting {
            inner: HashEmbedder::default(),
            texts: AtomicUsize::new(0),
        }
    }

    fn texts(n: usize) -> Vec<String> {
        (0..n)
            .map(|i| format!("passage number {i} about topic {}", i % 7))
            .collect()
    }

    #[test]
    fn second_call_embeds_nothing_and_returns_the_same_vectors() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = VectorCache::new(tmp.path().join("vecs"));
        let owned = texts(1100);
        let t: Vec<&str> = owned.iter().map(String::as_str).collect();
        let enc = counting();
        let last = Cell::new((0, 0));
        let first = cache
            .get_or_embed("corpus-a", &t, &enc, &|d, n| last.set((d, n)))
            .unwrap();
        assert_eq!(enc.texts.load(Ordering::SeqCst), 1100);
        assert_eq!(last.get(), (1100, 1100));
        assert_eq!(first, enc.inner.embed(&t).unwrap());

        let second = cache
            .get_or_embed("corpus-a", &t, &enc, &|_, _| {})
            .unwrap();
        assert_eq!(
            enc.texts.load(Ordering::SeqCst),
            1100,
            "second call embedded again"
        );
        assert_eq!(second, first);
        // One file, no temp files left behind.
        assert_eq!(fs::read_dir(cache.dir()).unwrap().count(), 1);
    }

    #[test]
    fn key_encoder_and_every_text_change_the_file() {
        let cache = VectorCache::new("/x");
        let e = HashEmbedder::default();
        let base = cache.path_for("k", &["a", "b"], &e);
        assert_eq!(base, cache.path_for("k", &["a", "b"], &e));
        assert_ne!(base, cache.path_for("k2", &["a", "b"], &e));
        assert_ne!(base, cache.path_for("k", &["a", "c"], &e));
        assert_ne!(base, cache.path_for("k", &["ab"], &e));
        assert_ne!(
            base,
            cache.path_for("k", &["a", "b"], &HashEmbedder::new(8))
        );
        assert!(base
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("k-"));
    }

    #[test]
    fn truncated_or_foreign_file_is_re_embedded() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = VectorCache::new(tmp.path());
        let t = ["one text", "another text"];
        let enc = counting();
        let good = cache.get_or_embed("k", &t, &enc, &|_, _| {}).unwrap();
        let path = cache.path_for("k", &t, &enc);
        let bytes = fs::read(&path).unwrap();
        assert_eq!(bytes.len(), HEADER_LEN + 2 * 384 * 4);
        fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        let again = cache.get_or_embed("k", &t, &enc, &|_, _| {}).unwrap();
        assert_eq!(again, good);
        assert_eq!(
            enc.texts.load(Ordering::SeqCst),
            4,
            "a damaged file must not be trusted"
        );
        assert_eq!(
            fs::read(&path).unwrap(),
            bytes,
            "the damaged file is rewritten whole"
        );
    }

    #[test]
    fn a_changed_body_or_an_older_format_is_embedded_again() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = VectorCache::new(tmp.path());
        let t = ["one text", "another text"];
        let enc = counting();
        let good = cache.get_or_embed("k", &t, &enc, &|_, _| {}).unwrap();
        let path = cache.path_for("k", &t, &enc);
        let bytes = fs::read(&path).unwrap();
        // One bit of one vector flipped: same length, same header.
        let mut flipped = bytes.clone();
        flipped[HEADER_LEN + 700] ^= 0x01;
        fs::write(&path, &flipped).unwrap();
        let err = parse(&path, &flipped, None).unwrap_err().to_string();
        assert!(err.contains("digest of the body"), "{err}");
        assert_eq!(cache.get_or_embed("k", &t, &enc, &|_, _| {}).unwrap(), good);
        assert_eq!(
            enc.texts.load(Ordering::SeqCst),
            4,
            "a changed body was used"
        );
        assert_eq!(fs::read(&path).unwrap(), bytes, "rewritten whole");
        // A file of format 1 (no body digest) is embedded again, once.
        let mut v1 = bytes[..56].to_vec();
        v1[8..12].copy_from_slice(&1u32.to_le_bytes());
        v1.extend_from_slice(&bytes[HEADER_LEN..]);
        fs::write(&path, &v1).unwrap();
        assert_eq!(older_version(&v1), Some(1));
        assert_eq!(cache.get_or_embed("k", &t, &enc, &|_, _| {}).unwrap(), good);
        assert_eq!(cache.get_or_embed("k", &t, &enc, &|_, _| {}).unwrap(), good);
        assert_eq!(enc.texts.load(Ordering::SeqCst), 6);
        assert_eq!(older_version(&bytes), None);
    }

    #[test]
    fn empty_input_round_trips() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = VectorCache::new(tmp.path());
        let enc = counting();
        let e = cache.get_or_embed("empty", &[], &enc, &|_, _| {}).unwrap();
        assert!(e.is_empty());
        assert_eq!(
            cache
                .get_or_embed("empty", &[], &enc, &|_, _| {})
                .unwrap()
                .dim,
            384
        );
    }
}
