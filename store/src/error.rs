//! The store's error: what a database, its file or its contents did wrong, converted into the
//! vocabulary's `BenchError` at the boundary (`?` in a caller that returns `bench_core::Result`).

use bench_core::BenchError;
use thiserror::Error;

/// Errors of the results store.
#[derive(Debug, Error)]
pub enum StoreError {
    /// The database engine failed: connecting, a query, a constraint, a lock.
    #[error("results store {path}: {source}")]
    Sql {
        /// The file path, or the PostgreSQL URL without its password.
        path: String,
        /// What sqlx reported.
        #[source]
        source: sqlx::Error,
    },
    /// A database this build must not touch: not SQLite, corrupt, another application's, or of
    /// a newer schema. The message names the file and what was found; nothing was written.
    #[error("{0}")]
    Incompatible(String),
    /// Bad input: a `--db` value, a selection of runs that matches nothing, stored content that
    /// does not parse. The message names the database, the row or the field.
    #[error("{0}")]
    Invalid(String),
    /// A file-system failure around the database (creating its directory, reading its header).
    #[error("{context}: {source}")]
    Io {
        /// What was being done, with the path.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A failure that is neither bad input nor the engine's (an unexpected server reply).
    #[error("{0}")]
    Other(String),
    /// An error of the vocabulary (a stored name that does not parse, a configuration).
    #[error(transparent)]
    Core(#[from] BenchError),
}

impl StoreError {
    /// An I/O error with what was being done.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        StoreError::Io {
            context: context.into(),
            source,
        }
    }

    /// Whether the error is the user's input (a bad `--db`, a database not ours, nothing to
    /// select): the binary exits with code 2 for these.
    pub fn is_bad_input(&self) -> bool {
        match self {
            StoreError::Incompatible(_) | StoreError::Invalid(_) => true,
            StoreError::Core(e) => e.is_bad_input(),
            StoreError::Sql { .. } | StoreError::Io { .. } | StoreError::Other(_) => false,
        }
    }
}

/// The boundary: a caller speaking the vocabulary's error keeps the message and the cause.
impl From<StoreError> for BenchError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Sql { path, source } => BenchError::Store {
                path,
                source: Box::new(source),
            },
            StoreError::Incompatible(m) | StoreError::Invalid(m) => BenchError::Invalid(m),
            StoreError::Io { context, source } => BenchError::Io { context, source },
            StoreError::Other(m) => BenchError::Other(m),
            StoreError::Core(e) => e,
        }
    }
}

/// The store's result type.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;
