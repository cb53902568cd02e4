//! The store's engine, which every facet module builds on: the handle, the backends, safe
//! opening, the migrations, and the crate-private plumbing of every query (fetch, error, parsed
//! names, shared SQL fragments).

use std::str::FromStr;

use sqlx::any::AnyRow;
use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::AnyPool;

use bench_core::{JudgeLabel, Mode, ParadigmId, QueryType};

use crate::error::{Result, StoreError};

pub(crate) mod backend;
pub(crate) mod checkpoint;
mod handle;
pub(crate) mod info;
pub(crate) mod open;

pub(crate) use backend::PG_RUN_LOCK;
pub use backend::{redact, DbTarget};
pub(crate) use handle::store_err;
use handle::Statement;
pub use handle::{Backend, Store};
pub use info::{DbInfo, Ownership};
pub use open::{printable, APPLICATION_ID};

mod schema;
pub use schema::SCHEMA_VERSION;

/// The typed value of a stored text column, or bad input naming the store, the run and the
/// column: the one place stored names are parsed back.
fn parsed<T>(
    store: &Store,
    run_id: i64,
    column: &str,
    text: &str,
    parse: impl FnOnce(&str) -> Option<T>,
) -> Result<T> {
    parse(text).ok_or_else(|| {
        StoreError::Invalid(format!(
            "results store {}: run {run_id}: {column} {text:?} is not one this build knows",
            store.path()
        ))
    })
}

// Crate-private plumbing, no facet: the fetch, its error and the row mapping written once (each
// read states its SQL and how a row becomes its type, nothing else), stored names parsed back,
// and the SQLite connection and write transaction.
impl Store {
    /// Every row `statement` returns, each made into a `T` by `map`.
    pub(crate) async fn rows<T>(
        &self,
        statement: Statement<'_>,
        map: impl FnMut(&AnyRow) -> Result<T>,
    ) -> Result<Vec<T>> {
        let fetched = statement.fetch_all(&self.pool).await;
        fetched.map_err(|e| self.err(e))?.iter().map(map).collect()
    }

    /// The row `statement` returns, if any, made into a `T` by `map`.
    pub(crate) async fn row<T>(
        &self,
        statement: Statement<'_>,
        map: impl FnOnce(&AnyRow) -> Result<T>,
    ) -> Result<Option<T>> {
        match statement.fetch_optional(&self.pool).await {
            Ok(found) => found.as_ref().map(map).transpose(),
            Err(e) => Err(self.err(e)),
        }
    }

    /// Runs a write whose count of changed rows nobody reads.
    pub(crate) async fn exec(&self, statement: Statement<'_>) -> Result<()> {
        statement
            .execute(&self.pool)
            .await
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// A stored paradigm name.
    pub(crate) fn paradigm_of(&self, run_id: i64, text: &str) -> Result<ParadigmId> {
        parsed(self, run_id, "paradigm", text, |t| t.parse().ok())
    }

    /// A stored judge label (`None` stays `None`: the tuple failed).
    pub(crate) fn judge_of(&self, run_id: i64, text: Option<String>) -> Result<Option<JudgeLabel>> {
        text.map(|t| parsed(self, run_id, "judge_label", &t, JudgeLabel::parse))
            .transpose()
    }

    /// A stored mode: the one place a mode label is read back. Masked first ([`crate::redact`]):
    /// a store written before base URLs with credentials were refused may hold one in the label.
    pub(crate) fn mode_of(&self, run_id: i64, text: &str) -> Result<Mode> {
        parsed(self, run_id, "mode", &crate::redact(text), Mode::parse)
    }

    /// A stored question type.
    pub(crate) fn qtype_of(&self, run_id: i64, text: &str) -> Result<QueryType> {
        parsed(self, run_id, "qtype", text, |t| t.parse().ok())
    }

    /// One connection: SQLite serialises writers anyway, and an in-memory database lives as
    /// long as its connection, so the pool never closes it. Every connection gets the
    /// store's pragmas (the `Any` driver takes a URL, which cannot carry them); the schema is
    /// the caller's (`store_open` marks and migrates a file before WAL is switched on).
    pub(crate) async fn connect_sqlite(url: &str, path: String, wal: bool) -> Result<Store> {
        sqlx::any::install_default_drivers();
        let opts =
            checkpoint::quiet(AnyConnectOptions::from_str(url).map_err(|e| store_err(&path, e))?);
        let pool = checkpoint::quiet_pool(AnyPoolOptions::new())
            .max_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            .after_connect(move |conn, _| {
                let pragmas: &'static str = if wal {
                    "PRAGMA busy_timeout = 30000; PRAGMA foreign_keys = ON; \
                     PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
                } else {
                    "PRAGMA busy_timeout = 30000; PRAGMA foreign_keys = ON;"
                };
                set_pragmas(conn, pragmas)
            })
            .connect_with(opts)
            .await
            .map_err(open::open_err(&path))?;
        Ok(Store {
            closer: None,
            pool,
            path,
            backend: Backend::Sqlite,
        })
    }

    /// A transaction that will write after reading: on SQLite it takes the write lock first
    /// (`BEGIN IMMEDIATE`, waiting for another writer under the busy timeout), since a read
    /// transaction that later writes fails at once with "database is locked" when another
    /// process wrote in between.
    pub(crate) async fn begin_write(&self) -> Result<sqlx::Transaction<'static, sqlx::Any>> {
        match self.backend {
            Backend::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await,
            Backend::Postgres => self.pool.begin().await,
        }
        .map_err(|e| self.err(e))
    }

    /// The connection pool, for the store's own modules only: nothing outside speaks SQL.
    pub(crate) fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// A database error of this store; on PostgreSQL a server that went away is said so.
    pub(crate) fn err(&self, e: sqlx::Error) -> StoreError {
        if self.backend == Backend::Postgres {
            if let Some(gone) = backend::pg_gone(&self.path, &e) {
                return gone;
            }
        }
        store_err(&self.path, e)
    }
}

/// Runs `pragmas` on a new connection (a named function: the closure form trips the
/// compiler's higher-ranked lifetime inference for `Executor`).
fn set_pragmas<'c>(
    conn: &'c mut sqlx::AnyConnection,
    pragmas: &'static str,
) -> std::pin::Pin<
    Box<dyn std::future::Future<Output = std::result::Result<(), sqlx::Error>> + Send + 'c>,
> {
    Box::pin(async move {
        sqlx::Executor::execute(conn, pragmas).await?;
        Ok(())
    })
}

/// The mean of `expr` as a double on both backends (PostgreSQL's `avg` of integers is NUMERIC).
pub(crate) fn mean(expr: &str) -> String {
    format!("CAST(avg({expr}) AS DOUBLE PRECISION)")
}

/// `ON CONFLICT (key) DO UPDATE SET` every column of `columns` outside the key, plus
/// `refreshed` (a defaulted timestamp): SQLite's `INSERT OR REPLACE`, in SQL both backends take.
pub(crate) fn upsert(key: &str, columns: &str, refreshed: &str) -> String {
    let keys: Vec<&str> = key.split(", ").collect();
    let set: Vec<String> = columns
        .split(", ")
        .chain(std::iter::once(refreshed))
        .filter(|c| !keys.contains(c))
        .map(|c| format!("{c} = excluded.{c}"))
        .collect();
    format!("ON CONFLICT ({key}) DO UPDATE SET {}", set.join(", "))
}

pub(crate) fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).expect("serialisable")
}
