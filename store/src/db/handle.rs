//! The store's handle and its engine: the leaf the other `db` files build on (each adds an
//! `impl Store` block), so that none of them names its parent.

use sqlx::AnyPool;

use crate::error::StoreError;

/// The results database.
#[derive(Debug, Clone)]
pub struct Store {
    pub(super) pool: AnyPool,
    /// The file path, or the PostgreSQL URL without its password: what messages show.
    pub(super) path: String,
    pub(super) backend: Backend,
}

/// The database engine behind a store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// An SQLite file (or an in-memory database).
    Sqlite,
    /// A PostgreSQL database.
    Postgres,
}

impl Backend {
    /// The current UTC time as the store's timestamp text (`2026-12-02T05:00:00.123Z`).
    pub(crate) fn now_text(self) -> &'static str {
        match self {
            Backend::Sqlite => "strftime('%Y-%m-%dT%H:%M:%fZ','now')",
            Backend::Postgres => PG_NOW,
        }
    }

    /// The database clock in milliseconds since the epoch: leases compare against one clock,
    /// the server's, whatever the workers' clocks say.
    pub(crate) fn now_ms(self) -> &'static str {
        match self {
            Backend::Sqlite => "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)",
            Backend::Postgres => "CAST(extract(epoch FROM clock_timestamp()) * 1000 AS BIGINT)",
        }
    }
}

pub(super) const PG_NOW: &str =
    "to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')";

/// A database error on the store shown as `path`.
pub(super) fn store_err(path: &str, source: sqlx::Error) -> StoreError {
    StoreError::Sql {
        path: path.to_owned(),
        source,
    }
}
