//! The corpora crate's error, wrapping the core's.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum CorpusError {
    #[error(transparent)]
    Core(#[from] bench_core::BenchError),
    /// A data file that does not have the expected shape: file, record or line, field, expectation.
    #[error("{file}: {location}: {message}")]
    Malformed {
        file: String,
        location: String,
        message: String,
    },
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error("unknown corpus {name:?}; known corpora: {known}")]
    UnknownCorpus { name: String, known: String },
    #[error("encoder: {0}")]
    Encoder(String),
    #[error("index: {0}")]
    Index(String),
    /// A chunk's triplet extraction failed; the tokens its attempts spent are still counted.
    #[error("extraction: {message}")]
    Extraction {
        message: String,
        tokens_in: u64,
        tokens_out: u64,
    },
}

impl CorpusError {
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

pub type Result<T, E = CorpusError> = std::result::Result<T, E>;
