//! Errors of the corpus metrics: bad input files, with the line or byte offset that is wrong.

use thiserror::Error;

/// What can go wrong reading corpus inputs or computing corpus metrics.
#[derive(Debug, Error)]
pub enum MetricsError {
    /// A TSV edge file line that is not `head<TAB>relation<TAB>tail`.
    #[error("{file}:{line}: {message}")]
    BadLine {
        file: String,
        line: usize,
        message: String,
    },
    /// A raw float32 embedding file that is malformed at a byte offset.
    #[error("{file}: byte offset {offset}: {message}")]
    BadBytes {
        file: String,
        offset: u64,
        message: String,
    },
    /// Input whose shape makes a metric meaningless (e.g. a dimension of 0).
    #[error("{0}")]
    Invalid(String),
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Bench(#[from] bench_core::BenchError),
}

impl MetricsError {
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        MetricsError::Io {
            context: context.into(),
            source,
        }
    }
}
