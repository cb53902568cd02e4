//! Errors of the corpus metrics: bad input files, with the line or byte offset that is wrong.

use thiserror::Error;

/// What can go wrong reading corpus inputs or computing corpus metrics.
#[derive(Debug, Error)]
pub enum MetricsError {
    /// A TSV edge file line that is not `head<TAB>relation<TAB>tail`.
    #[error("{file}:{line}: {message}")]
    BadLine {
        /// The file, as given.
        file: String,
        /// The 1-based line number.
        line: usize,
        /// What is wrong with the line.
        message: String,
    },
    /// A raw float32 embedding file that is malformed at a byte offset.
    #[error("{file}: byte offset {offset}: {message}")]
    BadBytes {
        /// The file, as given.
        file: String,
        /// The byte offset where the problem is.
        offset: u64,
        /// What is wrong there.
        message: String,
    },
    /// Input whose shape makes a metric meaningless (e.g. a dimension of 0).
    #[error("{0}")]
    Invalid(String),
    /// Reading a file failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being read.
        context: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A core error (a bad input file read through `bench_core::input`, ...).
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
