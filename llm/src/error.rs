//! The crate's error: configuration problems, or a core error (LLM call failures among them).

use bench_core::{BenchError, LlmErrorKind};
use thiserror::Error;

/// An error of the LLM layer: its settings, or a call (a core error).
#[derive(Debug, Error)]
pub enum LlmError {
    /// Invalid or incomplete endpoint settings; maps to bad input (exit code 2).
    #[error("LLM configuration: {0}")]
    Config(String),
    /// A core error: an LLM call's failure with its class, or another.
    #[error(transparent)]
    Core(#[from] BenchError),
}

impl From<LlmError> for BenchError {
    fn from(e: LlmError) -> Self {
        match e {
            LlmError::Core(e) => e,
            LlmError::Config(m) => BenchError::Invalid(format!("LLM configuration: {m}")),
        }
    }
}

/// A `BenchError::Llm` of the given kind.
pub(crate) fn llm_err(kind: LlmErrorKind, message: impl Into<String>) -> BenchError {
    BenchError::Llm {
        kind,
        message: message.into(),
    }
}
