//! The core error type that every crate's error wraps.

use thiserror::Error;

/// Errors of the core: bad input, store failures, plug-in failures.
#[derive(Debug, Error)]
pub enum BenchError {
    /// Input that does not have the expected shape; the message names file, line and field.
    #[error("{0}")]
    Invalid(String),
    /// The results store's engine failed (the `store` crate's error, converted at its boundary).
    #[error("results store {path}: {source}")]
    Store {
        path: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error("embedder: {0}")]
    Embedding(String),
    #[error("LLM call failed ({kind}): {message}")]
    Llm { kind: LlmErrorKind, message: String },
    #[error("{0}")]
    Other(String),
}

/// How an LLM failure should be treated by a caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LlmErrorKind {
    /// Worth retrying: rate limit, server error, timeout, dropped connection.
    Retryable,
    /// Retrying cannot help: bad request, authentication, unknown model.
    Fatal,
    /// The call succeeded but the reply could not be parsed as required.
    Unparseable,
}

impl std::fmt::Display for LlmErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LlmErrorKind::Retryable => "retryable",
            LlmErrorKind::Fatal => "fatal",
            LlmErrorKind::Unparseable => "unparseable",
        })
    }
}

impl BenchError {
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        BenchError::Io {
            context: context.into(),
            source,
        }
    }
}

pub type Result<T, E = BenchError> = std::result::Result<T, E>;
