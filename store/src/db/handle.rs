//! The store's handle and its engine: the leaf the `db` files and the facet modules build on,
//! so that none of them names its parent.

use sqlx::any::AnyArguments;
use sqlx::query::Query;
use sqlx::{Any, AnyPool};

use std::sync::Arc;

use super::checkpoint::Closer;

use crate::error::StoreError;

/// The results database.
#[derive(Debug, Clone)]
pub struct Store {
    /// A writable SQLite file's final checkpoint (`None` for PostgreSQL, memory and read-only
    /// opens). First, so that a drop checkpoints while the pool's connection is still open.
    pub(crate) closer: Option<Arc<Closer>>,
    pub(crate) pool: AnyPool,
    /// The file path, or the PostgreSQL URL without its password: what messages show.
    pub(crate) path: String,
    pub(crate) backend: Backend,
}

/// A statement with its values bound, as the store's reads and writes hand it to
/// [`Store::rows`], [`Store::row`] and [`Store::exec`].
pub(crate) type Statement<'q> = Query<'q, Any, AnyArguments<'q>>;

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
pub(crate) fn store_err(path: &str, source: sqlx::Error) -> StoreError {
    StoreError::Sql {
        path: path.to_owned(),
        source,
    }
}
