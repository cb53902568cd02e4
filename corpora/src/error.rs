//! The corpora crate's error, wrapping the core's.

use thiserror::Error;

/// Every failure of a loader, the encoder, the vector cache, the index or a graph build.
#[derive(Debug, Error)]
pub enum CorpusError {
    /// An error of the core crate (configuration, cache store), passed through unchanged.
    #[error(transparent)]
    Core(#[from] bench_core::BenchError),
    /// A data file that does not have the expected shape: file, record or line, field, expectation.
    #[error("{file}: {location}: {message}")]
    Malformed {
        /// The file, as shown to the user.
        file: String,
        /// The record or line within it.
        location: String,
        /// The field and what was expected of it.
        message: String,
    },
    /// A file-system operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, e.g. `reading <path>`.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A corpus name that is neither in the registry nor `jsonl:<dir>`.
    #[error("unknown corpus {name:?}; known corpora: {known}")]
    UnknownCorpus {
        /// The name asked for.
        name: String,
        /// The known names, comma-separated, for the message.
        known: String,
    },
    /// The sentence encoder: its weights (finding, verifying, loading), tokenizing, the forward,
    /// or vectors of an unexpected shape.
    #[error("encoder: {0}")]
    Encoder(String),
    /// A dense index or HNSW graph that cannot be built, read or searched as asked.
    #[error("index: {0}")]
    Index(String),
    /// A chunk's triplet extraction failed; the tokens its attempts spent are still counted.
    #[error("extraction: {message}")]
    Extraction {
        /// Why the last attempt failed.
        message: String,
        /// Prompt tokens the chunk spent.
        tokens_in: u64,
        /// Completion tokens the chunk spent.
        tokens_out: u64,
    },
}

impl CorpusError {
    /// An [`CorpusError::Io`] with its context (`reading <path>`, `creating <dir>`).
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        CorpusError::Io {
            context: context.into(),
            source,
        }
    }
}

impl From<CorpusError> for bench_core::BenchError {
    fn from(e: CorpusError) -> Self {
        use bench_core::{BenchError, NameKind};
        match e {
            CorpusError::Core(c) => c,
            // Bad input stays bad input, with its place and the known names.
            CorpusError::Malformed {
                file,
                location,
                message,
            } => BenchError::Malformed {
                file,
                location,
                message,
            },
            CorpusError::UnknownCorpus { name, known } => BenchError::UnknownName {
                kind: NameKind::Corpus,
                name,
                known,
            },
            other => BenchError::Other(other.to_string()),
        }
    }
}

/// The crate's result type: [`CorpusError`] by default.
pub type Result<T, E = CorpusError> = std::result::Result<T, E>;
