//! The core error type that every crate's error wraps.

use thiserror::Error;

/// Errors of the core: bad input, store failures, plug-in failures.
#[derive(Debug, Error)]
pub enum BenchError {
    /// Input that does not have the expected shape; the message names file, line and field.
    #[error("{0}")]
    Invalid(String),
    /// A name that names nothing of its kind (a paradigm, a router, a corpus): the caller can
    /// offer the known names.
    #[error("{}", kind.message(name, known))]
    UnknownName {
        /// What the name was to name.
        kind: NameKind,
        /// The name as given.
        name: String,
        /// The known names, comma-separated.
        known: String,
    },
    /// A record of an input file that does not have the expected shape.
    #[error("{file}: {location}: {message}")]
    Malformed {
        /// The file, as given.
        file: String,
        /// Where in it: `line 3`, `record 12, field "answer"`, ...
        location: String,
        /// What is wrong, and what was expected.
        message: String,
    },
    /// The results store's engine failed (the `store` crate's error, converted at its boundary).
    #[error("results store {path}: {source}")]
    Store {
        /// The file path, or the PostgreSQL URL without its password.
        path: String,
        /// What the database engine reported.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A file or stream operation failed ([`BenchError::io`] builds one).
    #[error("{context}: {source}")]
    Io {
        /// What was being done (`reading config c.toml`).
        context: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The sentence encoder failed (loading its weights, or a forward pass).
    #[error("embedder: {0}")]
    Embedding(String),
    /// An LLM call failed; `kind` says whether retrying can help.
    #[error("LLM call failed ({kind}): {message}")]
    Llm {
        /// How a caller should treat the failure.
        kind: LlmErrorKind,
        /// The endpoint's or the client's message.
        message: String,
    },
    /// Any other failure while running, with its message.
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

/// What an unknown name was to name ([`BenchError::UnknownName`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameKind {
    /// A paradigm (`ParadigmId`).
    Paradigm,
    /// A router of the registry.
    Router,
    /// A corpus of the registry.
    Corpus,
}

impl NameKind {
    fn message(self, name: &str, known: &str) -> String {
        match self {
            NameKind::Paradigm => format!("unknown paradigm {name:?}: known paradigms are {known}"),
            NameKind::Router => format!("unknown router {name:?}: known routers are {known}"),
            NameKind::Corpus => format!("unknown corpus {name:?}; known corpora: {known}"),
        }
    }
}

impl BenchError {
    /// Whether the error is the user's input (exit code 2), not a failure while running.
    pub fn is_bad_input(&self) -> bool {
        match self {
            BenchError::Invalid(_)
            | BenchError::UnknownName { .. }
            | BenchError::Malformed { .. } => true,
            BenchError::Store { .. }
            | BenchError::Io { .. }
            | BenchError::Embedding(_)
            | BenchError::Llm { .. }
            | BenchError::Other(_) => false,
        }
    }

    /// An I/O error with what was being done.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        BenchError::Io {
            context: context.into(),
            source,
        }
    }
}

/// The core's result type: [`BenchError`] unless another error is named.
pub type Result<T, E = BenchError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_names_are_typed_and_keep_their_messages() {
        let e = "graphrag".parse::<crate::ParadigmId>().unwrap_err();
        assert!(matches!(
            &e,
            BenchError::UnknownName { kind: NameKind::Paradigm, name, .. } if name == "graphrag"
        ));
        assert!(e.is_bad_input());
        assert!(e
            .to_string()
            .starts_with("unknown paradigm \"graphrag\": known paradigms are llm-only, naive"));
        let corpus = BenchError::UnknownName {
            kind: NameKind::Corpus,
            name: "x".into(),
            known: "demo".into(),
        };
        assert_eq!(
            corpus.to_string(),
            "unknown corpus \"x\"; known corpora: demo"
        );
        assert!(!BenchError::Other("boom".into()).is_bad_input());
    }
}
