//! Loaders for the shared data sets and the generic JSONL format, chunking, and the corpus registry.
//!
//! [`load_corpus`] turns a registry name (`demo`, `medical`, `2wiki`, `musique-dev`, or
//! `jsonl:<dir>`) into a fully chunked [`bench_core::Corpus`] whose questions carry their gold
//! evidence mapped to chunk ids. The file formats are described in `docs/data-format.md`.

mod chunk;
pub(crate) mod evidence;
mod jsonl;
mod jsonl_dir;
mod loader;
mod names;
mod parsed;
mod questions;
mod records;
mod registry;
mod sample;
pub mod semantic;

// The built-in loaders: each file's `LOADER` is listed in `registry::LOADERS`.
mod demo;
mod medical;
mod musique;
mod twowiki;

pub use sample::sample_stratified;

pub use chunk::chunk_documents;
pub use loader::CorpusInfo;
pub use names::{check_corpus_name, quoted_name};
pub use registry::registry;

use loader::Source;
use parsed::Parsed;
use registry::known_names;

use bench_core::config::{hash_parts, ChunkingConfig, DataConfig};
use bench_core::{Chunk, Corpus, Query, StatementMatch};
use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::{CorpusError, Result};
use records::malformed;

/// Environment variable naming the folder that holds the data sets.
pub const DATA_DIR_ENV: &str = "RAGROUTER_DATA_DIR";

/// Where the data sets are looked for when neither `--data-dir` nor the environment says.
pub(crate) const DEFAULT_DATA_DIR: &str = "../shared/datasets";

/// Prefix of the generic-format corpus name: `jsonl:<dir>`.
pub(crate) const JSONL_PREFIX: &str = "jsonl:";

/// How the data directory was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataDirSource {
    /// `--data-dir` (the `explicit` argument).
    Explicit,
    /// The `RAGROUTER_DATA_DIR` environment variable.
    Env,
    /// `../shared/datasets` relative to the current directory.
    Default,
    /// None of the above: no data directory.
    NotFound,
}

impl fmt::Display for DataDirSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DataDirSource::Explicit => "--data-dir",
            DataDirSource::Env => DATA_DIR_ENV,
            DataDirSource::Default => "default ../shared/datasets",
            DataDirSource::NotFound => "not found",
        })
    }
}

/// One data file of a corpus: where it is looked for and whether it is there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStatus {
    /// Where the file is looked for.
    pub path: PathBuf,
    /// Whether it is there.
    pub exists: bool,
}

/// Where a registry corpus's files are looked for.
#[derive(Debug, Clone)]
pub struct CorpusLocation {
    /// The corpus.
    pub info: &'static CorpusInfo,
    /// Empty for an embedded corpus or when there is no data directory.
    pub files: Vec<FileStatus>,
    /// Embedded, or every file present.
    pub available: bool,
}

/// The resolved data directory and, per registry corpus, where its files are looked for.
#[derive(Debug, Clone)]
pub struct DataDir {
    /// The directory; `None` when none is given, set, or found at the default.
    pub path: Option<PathBuf>,
    /// How it was chosen.
    pub source: DataDirSource,
    /// Every registry corpus, in registry order.
    pub corpora: Vec<CorpusLocation>,
}

impl DataDir {
    /// What to tell a user whose corpus files are not found.
    pub fn hint(&self, info: &CorpusInfo) -> String {
        let now = match &self.path {
            Some(p) => format!("data directory {} (from {})", p.display(), self.source),
            None => format!(
                "no data directory: --data-dir not given, {DATA_DIR_ENV} not set, and \
                 {DEFAULT_DATA_DIR} not found from the current directory"
            ),
        };
        format!(
            "{now}; set --data-dir or {DATA_DIR_ENV} to the folder that holds {}/",
            info.folder
        )
    }

    /// The location of the registry corpus `name`.
    pub fn location(&self, name: &str) -> Option<&CorpusLocation> {
        self.corpora.iter().find(|c| c.info.name == name)
    }
}

/// Resolves the data directory: `explicit` (`--data-dir`), then `RAGROUTER_DATA_DIR`, then
/// `../shared/datasets` relative to the current directory when it exists; and reports, for each
/// registry corpus, where its files are looked for and whether they exist.
pub fn find_data_dir(explicit: Option<&Path>) -> DataDir {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    resolve_data_dir(explicit, std::env::var_os(DATA_DIR_ENV), &cwd)
}

/// [`find_data_dir`] with the environment and current directory passed in (testable).
fn resolve_data_dir(explicit: Option<&Path>, env: Option<OsString>, cwd: &Path) -> DataDir {
    let default = cwd.join(DEFAULT_DATA_DIR);
    let (path, source) = if let Some(p) = explicit {
        (Some(p.to_path_buf()), DataDirSource::Explicit)
    } else if let Some(e) = env.filter(|e| !e.is_empty()) {
        (Some(PathBuf::from(e)), DataDirSource::Env)
    } else if default.is_dir() {
        (Some(default), DataDirSource::Default)
    } else {
        (None, DataDirSource::NotFound)
    };
    let corpora = registry()
        .map(|info| {
            let files: Vec<FileStatus> = match &path {
                Some(dir) if !info.is_embedded() => info
                    .files
                    .iter()
                    .map(|f| {
                        let path = dir.join(info.folder).join(f);
                        let exists = path.is_file();
                        FileStatus { path, exists }
                    })
                    .collect(),
                _ => Vec::new(),
            };
            let available =
                info.is_embedded() || (!files.is_empty() && files.iter().all(|f| f.exists));
            CorpusLocation {
                info,
                files,
                available,
            }
        })
        .collect();
    DataDir {
        path,
        source,
        corpora,
    }
}

/// What [`load_corpus`] needs besides the name.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// `--data-dir`; None falls back to `RAGROUTER_DATA_DIR`, then `../shared/datasets`.
    pub data_dir: Option<PathBuf>,
    /// Chunk size and overlap, in cl100k tokens.
    pub chunking: ChunkingConfig,
    /// The configuration's `[data]`: which questions to keep and how evidence is matched.
    pub data: DataConfig,
    /// Generic format: load a set whose evidence names something the corpus does not have
    /// (else the first such question is an error). Native loaders never fail on evidence.
    pub allow_missing_evidence: bool,
    /// The encoder and vector cache for evidence statements that match no sentence verbatim
    /// (`data.evidence`); `None`: verbatim matching only. The statements that matched nothing
    /// are listed under the cache's `evidence/` folder ([`semantic::unmatched_path`]).
    pub semantic: Option<semantic::SemanticMatching>,
}

/// Loads, chunks and maps the gold evidence of the corpus `name` (a registry name, as
/// `ragrouter corpora` lists them; `jsonl:<dir>` reads the generic format from `<dir>`).
pub fn load_corpus(name: &str, opts: &LoadOptions) -> Result<Corpus> {
    chunk::validate(&opts.chunking)?;
    let unknown = || CorpusError::UnknownCorpus {
        name: name.to_string(),
        known: known_names(),
    };
    let (parsed, source) = if let Some(dir) = name.strip_prefix(JSONL_PREFIX) {
        if dir.trim().is_empty() {
            return Err(unknown());
        }
        let dir = PathBuf::from(dir);
        let mut parsed = jsonl_dir::parse_dir(&dir)?;
        parsed.evidence_must_resolve = !opts.allow_missing_evidence;
        (parsed, dir.display().to_string())
    } else {
        let loader = registry::find(name).ok_or_else(unknown)?;
        load_builtin(loader, opts)?
    };
    assemble(name, source, parsed, opts)
}

/// Runs a built-in loader over its folder under the data directory (an embedded one needs
/// none); returns what it read and the corpus's source.
fn load_builtin(loader: &loader::Loader, opts: &LoadOptions) -> Result<(Parsed, String)> {
    let info = &loader.info;
    if info.is_embedded() {
        let source = Source {
            dir: Path::new(""),
            data: &opts.data,
            hint: "",
        };
        return Ok(((loader.load)(&source)?, loader.embedded_source.to_string()));
    }
    let data_dir = find_data_dir(opts.data_dir.as_deref());
    let hint = data_dir.hint(info);
    let Some(root) = &data_dir.path else {
        return Err(CorpusError::io(
            format!("corpus {} needs {}/: {hint}", info.name, info.folder),
            std::io::Error::from(std::io::ErrorKind::NotFound),
        ));
    };
    let dir = root.join(info.folder);
    let source = Source {
        dir: &dir,
        data: &opts.data,
        hint: &hint,
    };
    let parsed = (loader.load)(&source)?;
    Ok((parsed, dir.display().to_string()))
}

/// Checks, chunks, maps evidence to chunks and hashes.
fn assemble(name: &str, source: String, parsed: Parsed, opts: &LoadOptions) -> Result<Corpus> {
    let chunking = &opts.chunking;
    check_parsed(&parsed)?;
    let Parsed {
        documents,
        queries,
        queries_file,
        name: short_name,
        evidence_must_resolve,
        ..
    } = parsed;
    let name = short_name.as_deref().unwrap_or(name);
    let chunks = chunk_documents(&documents, chunking);
    let matches = match_statements(name, &chunks, &documents, &queries, opts)?;
    let gold = Gold {
        chunks: &chunks,
        documents: &documents,
        queries_file: &queries_file,
        must_resolve: evidence_must_resolve,
    };
    let queries = gold.resolve(queries, matches)?;
    let content_hash = content_hash(chunking, &chunks, &queries);
    if let Some(m) = by_meaning(opts) {
        let path = semantic::unmatched_path(m.cache.dir(), name, &content_hash);
        semantic::write_unmatched(&path, &queries)?;
    }
    Ok(Corpus {
        name: name.to_string(),
        documents,
        chunks,
        queries,
        content_hash,
        source,
    })
}

/// A loader's result has documents and questions, and no question id twice.
fn check_parsed(parsed: &Parsed) -> Result<()> {
    if parsed.documents.is_empty() {
        return Err(malformed(
            &parsed.corpus_file,
            "whole file",
            "the corpus is empty: expected at least one document",
        ));
    }
    if parsed.queries.is_empty() {
        return Err(malformed(
            &parsed.queries_file,
            "whole file",
            "no questions: expected at least one",
        ));
    }
    let mut seen: HashMap<&str, &str> = HashMap::new();
    for q in &parsed.queries {
        if let Some(first) = seen.insert(&q.query.id, &q.location) {
            return Err(malformed(
                &parsed.queries_file,
                q.location.clone(),
                format!(
                    "field \"id\": duplicate query id {:?} (first at {first})",
                    q.query.id
                ),
            ));
        }
    }
    Ok(())
}

/// The encoder and cache for evidence by meaning, when the configuration asks for it.
fn by_meaning(opts: &LoadOptions) -> Option<&semantic::SemanticMatching> {
    opts.semantic
        .as_ref()
        .filter(|_| opts.data.evidence.semantic)
}

/// Every evidence sentence of every question, in order, matched to the chunks that hold it
/// verbatim, then (when asked) by meaning.
fn match_statements(
    name: &str,
    chunks: &[Chunk],
    documents: &[bench_core::Document],
    queries: &[parsed::PendingQuery],
    opts: &LoadOptions,
) -> Result<Vec<StatementMatch>> {
    // One list per evidence sentence, so that a sentence that matches nothing can be named.
    let sentence_lists: Vec<Vec<String>> = queries
        .iter()
        .flat_map(|q| q.gold_sentences.iter().map(|s| vec![s.clone()]))
        .collect();
    let mut matches: Vec<StatementMatch> = evidence::sentences_to_chunks(chunks, &sentence_lists)
        .into_iter()
        .zip(&sentence_lists)
        .map(|(hits, s)| StatementMatch {
            text: s[0].clone(),
            chunks: hits.iter().map(|&i| chunks[i].id.clone()).collect(),
            score: if hits.is_empty() { 0.0 } else { 1.0 },
            semantic: false,
            sentence: None,
        })
        .collect();
    if let Some(m) = by_meaning(opts) {
        let todo: Vec<usize> = (0..matches.len())
            .filter(|&i| !matches[i].is_matched())
            .collect();
        let texts: Vec<&str> = todo.iter().map(|&i| matches[i].text.as_str()).collect();
        let found =
            semantic::match_by_meaning(name, chunks, documents, &texts, m, &opts.data.evidence)?;
        for (i, f) in todo.into_iter().zip(found) {
            matches[i] = f;
        }
    }
    Ok(matches)
}

/// What turns a question's evidence into its gold chunks and documents.
struct Gold<'a> {
    chunks: &'a [Chunk],
    documents: &'a [bench_core::Document],
    queries_file: &'a str,
    /// An evidence sentence that matched nothing is an error.
    must_resolve: bool,
}

impl Gold<'_> {
    /// Each question with its gold chunks (those of its gold documents and of its matched
    /// sentences), gold documents and statement matches (`matches` in question order).
    fn resolve(
        &self,
        queries: Vec<parsed::PendingQuery>,
        matches: Vec<StatementMatch>,
    ) -> Result<Vec<Query>> {
        let chunks = self.chunks;
        // Chunks come in document order (ids are unique), so each document owns a contiguous run.
        let mut doc_ranges = Vec::with_capacity(self.documents.len());
        let mut next = 0;
        for d in self.documents {
            let start = next;
            while next < chunks.len() && chunks[next].document == d.id {
                next += 1;
            }
            doc_ranges.push(start..next);
        }
        let chunk_at: HashMap<&str, usize> = chunks
            .iter()
            .enumerate()
            .map(|(i, c)| (c.id.as_str(), i))
            .collect();
        let mut matches = matches.into_iter();
        let mut out = Vec::with_capacity(queries.len());
        for p in queries {
            let mut gold: BTreeSet<usize> = BTreeSet::new();
            let statements: Vec<StatementMatch> =
                matches.by_ref().take(p.gold_sentences.len()).collect();
            for m in &statements {
                if !m.is_matched() && self.must_resolve {
                    return Err(malformed(
                        self.queries_file,
                        p.location.clone(),
                        format!(
                            "field \"evidence\": {:?} matched no document id, title or \
                             sentence of the corpus (docs/data-format.md; --allow-missing-evidence \
                             loads the set anyway and counts such questions)",
                            m.text
                        ),
                    ));
                }
                gold.extend(m.chunks.iter().map(|c| chunk_at[c.as_str()]));
            }
            for &d in &p.gold_docs {
                gold.extend(doc_ranges[d].clone());
            }
            let mut query = p.query;
            query.gold_chunks = gold.into_iter().map(|i| chunks[i].id.clone()).collect();
            query.gold_documents = p
                .gold_docs
                .iter()
                .map(|&d| self.documents[d].id.clone())
                .collect();
            query.statements = statements;
            out.push(query);
        }
        Ok(out)
    }
}

/// sha256 over the chunking settings, every chunk (id, text) and every question (id, text, type,
/// answers, evidence, gold chunks): any change to what a run reads gives a new hash.
pub fn content_hash(chunking: &ChunkingConfig, chunks: &[Chunk], queries: &[Query]) -> String {
    fn num(n: usize) -> Cow<'static, [u8]> {
        Cow::Owned(n.to_string().into_bytes())
    }
    let mut parts: Vec<Cow<'_, [u8]>> = vec![
        Cow::Borrowed(b"ragrouter-corpus-v1"),
        num(chunking.size),
        num(chunking.overlap),
        num(chunks.len()),
    ];
    for c in chunks {
        parts.push(Cow::Borrowed(c.id.as_bytes()));
        parts.push(Cow::Borrowed(c.text.as_bytes()));
    }
    parts.push(num(queries.len()));
    for q in queries {
        parts.push(Cow::Borrowed(q.id.as_bytes()));
        parts.push(Cow::Borrowed(q.text.as_bytes()));
        parts.push(Cow::Borrowed(q.qtype.as_str().as_bytes()));
        parts.push(Cow::Borrowed(q.gold.answer.as_bytes()));
        // Counts before each list keep the boundaries between lists unambiguous.
        for items in [&q.gold.aliases, &q.evidence, &q.gold_chunks] {
            parts.push(num(items.len()));
            parts.extend(items.iter().map(|s| Cow::Borrowed(s.as_bytes())));
        }
        // Statement matches (only where there are statements, so that corpora whose evidence
        // names passages keep their hash): per statement its chunks, score and kind.
        if !q.statements.is_empty() {
            parts.push(Cow::Borrowed(b"statements"));
            parts.push(num(q.statements.len()));
            for m in &q.statements {
                parts.push(num(m.chunks.len()));
                parts.extend(m.chunks.iter().map(|c| Cow::Borrowed(c.as_bytes())));
                let tag = format!("{}:{}", m.score.to_bits(), m.semantic);
                parts.push(Cow::Owned(tag.into_bytes()));
            }
        }
    }
    hash_parts(parts.iter().map(|p| p.as_ref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_names_are_the_documented_ones() {
        let names: Vec<_> = registry().map(|c| c.name).collect();
        assert_eq!(names, ["demo", "medical", "2wiki", "musique-dev"]);
        assert!(known_names().ends_with("jsonl:<dir>"));
    }

    #[test]
    fn data_dir_prefers_flag_then_env_then_default() {
        let tmp = tempfile::tempdir().unwrap();
        let cwd = tmp.path().join("project");
        std::fs::create_dir_all(&cwd).unwrap();
        let none = resolve_data_dir(None, None, &cwd);
        assert_eq!(
            (none.path.clone(), none.source),
            (None, DataDirSource::NotFound)
        );
        assert!(none.location("demo").unwrap().available);
        assert!(!none.location("medical").unwrap().available);
        assert!(none.hint(&registry::LOADERS[1].info).contains(DATA_DIR_ENV));

        let shared = tmp.path().join("shared/datasets/musique-hipporag-dev");
        std::fs::create_dir_all(&shared).unwrap();
        std::fs::write(shared.join("musique_train.json"), "[]").unwrap();
        let dflt = resolve_data_dir(None, Some(OsString::new()), &cwd);
        assert_eq!(dflt.source, DataDirSource::Default);
        let m = dflt.location("musique-dev").unwrap();
        assert_eq!(m.files.len(), 2);
        assert_eq!(
            m.files.iter().map(|f| f.exists).collect::<Vec<_>>(),
            [false, true]
        );
        assert!(!m.available);

        let env = resolve_data_dir(None, Some("/env/dir".into()), &cwd);
        assert_eq!(
            (env.path.unwrap(), env.source),
            (PathBuf::from("/env/dir"), DataDirSource::Env)
        );
        let flag = resolve_data_dir(Some(Path::new("/flag")), Some("/env/dir".into()), &cwd);
        assert_eq!(flag.source, DataDirSource::Explicit);
        assert_eq!(
            flag.location("2wiki").unwrap().files[0].path,
            Path::new("/flag/2wiki-hipporag/2wikimultihopqa_corpus.json")
        );
    }

    #[test]
    fn unknown_names_and_bad_chunking_are_rejected() {
        let opts = LoadOptions::default();
        let e = load_corpus("hotpot", &opts).unwrap_err().to_string();
        assert!(
            e.contains("hotpot") && e.contains("musique-dev, jsonl:<dir>"),
            "{e}"
        );
        assert!(matches!(
            load_corpus("jsonl:", &opts),
            Err(CorpusError::UnknownCorpus { .. })
        ));
        let bad = LoadOptions {
            chunking: ChunkingConfig {
                size: 100,
                overlap: 100,
            },
            ..LoadOptions::default()
        };
        let e = load_corpus("demo", &bad).unwrap_err().to_string();
        assert!(e.contains("overlap"), "{e}");
    }

    #[test]
    fn missing_data_directory_says_how_to_set_it() {
        let tmp = tempfile::tempdir().unwrap();
        let opts = LoadOptions {
            data_dir: Some(tmp.path().to_path_buf()),
            ..LoadOptions::default()
        };
        let e = load_corpus("musique-dev", &opts).unwrap_err().to_string();
        assert!(e.contains("musique_train_corpus.json"), "{e}");
        assert!(e.contains("--data-dir") && e.contains(DATA_DIR_ENV), "{e}");
    }

    #[test]
    fn content_hash_changes_with_any_field() {
        let corpus = load_corpus("demo", &LoadOptions::default()).unwrap();
        let base = content_hash(&ChunkingConfig::default(), &corpus.chunks, &corpus.queries);
        assert_eq!(base, corpus.content_hash);
        let other_chunking = ChunkingConfig {
            size: 256,
            overlap: 100,
        };
        assert_ne!(
            content_hash(&other_chunking, &corpus.chunks, &corpus.queries),
            base
        );
        let mut chunks = corpus.chunks.clone();
        chunks[3].text.push('!');
        assert_ne!(
            content_hash(&ChunkingConfig::default(), &chunks, &corpus.queries),
            base
        );
        let variants: [fn(&mut Query); 6] = [
            |q| q.text.push('?'),
            |q| q.qtype = bench_core::QueryType::Other,
            |q| q.gold.answer.push('x'),
            |q| q.gold.aliases.push("alias".into()),
            |q| q.evidence.push("more".into()),
            |q| {
                q.gold_chunks.pop();
            },
        ];
        for change in variants {
            let mut queries = corpus.queries.clone();
            change(&mut queries[0]);
            assert_ne!(
                content_hash(&ChunkingConfig::default(), &corpus.chunks, &queries),
                base
            );
        }
        // Moving an alias into the evidence list is a change too.
        let mut queries = corpus.queries.clone();
        queries[0].gold.aliases.push("a".into());
        let h1 = content_hash(&ChunkingConfig::default(), &corpus.chunks, &queries);
        queries[0].gold.aliases.pop();
        queries[0].evidence.insert(0, "a".into());
        assert_ne!(
            content_hash(&ChunkingConfig::default(), &corpus.chunks, &queries),
            h1
        );
    }
}
