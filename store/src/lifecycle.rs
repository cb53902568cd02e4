//! Facet "opening and maintenance": open, check, describe and close a store, on SQLite or
//! PostgreSQL.
//!
//! The methods are here; the machinery behind them is in `db/` (safe opening in `db/open.rs`,
//! PostgreSQL in `db/backend.rs`, `db info` in `db/info.rs`, the final checkpoint in
//! `db/checkpoint.rs`).

use std::path::Path;

use crate::db::{backend, checkpoint, info, open, Backend, DbInfo, DbTarget, Store};
use crate::error::{Result, StoreError};

impl Store {
    /// Opens (creating if needed) the database at `path` and brings its schema up to date. A
    /// file that is not a ragrouter store, of a newer schema, or with a corrupt page (`PRAGMA
    /// quick_check`) is refused untouched (`store_open`).
    pub async fn open(path: &Path) -> Result<Store> {
        let shown = path.display().to_string();
        open::inspect(path, true).await?;
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| {
                StoreError::io(format!("creating the directory of database {shown}"), e)
            })?;
        }
        open::connect_writable(path).await
    }

    /// A private in-memory database (tests).
    pub async fn open_in_memory() -> Result<Store> {
        let store = Self::connect_sqlite("sqlite::memory:", ":memory:".into(), false).await?;
        open::migrate_locked(&store).await?;
        Ok(store)
    }

    /// Opens an existing results store for reading and adding evaluations (`route eval`):
    /// a missing or empty file is an error, never a new schema.
    pub async fn open_existing(path: &Path) -> Result<Store> {
        // `open` checks every page before it writes.
        match open::inspect(path, false).await? {
            open::Found::New => Err(open::no_results(path)),
            open::Found::Ours(_) => Store::open(path).await,
        }
    }

    /// Opens an existing results store for reading only (`report`): nothing is written, so a
    /// store in a folder the user cannot write is read. An older schema is migrated first (a
    /// write), since the readers expect this build's columns.
    pub async fn open_read_only(path: &Path) -> Result<Store> {
        open::open_read_only(path).await
    }

    /// Checks, read-only, that `path` can become or already is a results store of this build:
    /// refuses a directory, a non-SQLite file, another application's database and a newer
    /// schema. Writes nothing.
    pub async fn check(path: &Path) -> Result<()> {
        open::inspect(path, true).await.map(|_| ())
    }

    /// Opens (creating the schema if needed) the store at `target`.
    pub async fn open_db(target: &DbTarget) -> Result<Store> {
        match target {
            DbTarget::Sqlite(p) => Store::open(p).await,
            DbTarget::Postgres(url) => {
                backend::connect_postgres(url, backend::PgOpen::Create).await
            }
        }
    }

    /// Opens an existing store for reading and adding evaluations: a database without results
    /// schema is an error, never a new schema.
    pub async fn open_existing_db(target: &DbTarget) -> Result<Store> {
        match target {
            DbTarget::Sqlite(p) => Store::open_existing(p).await,
            DbTarget::Postgres(url) => {
                backend::connect_postgres(url, backend::PgOpen::Existing).await
            }
        }
    }

    /// Opens an existing store for reading only (`report`): on SQLite nothing is written, so
    /// a store in a folder the user cannot write is read.
    pub async fn open_read_only_db(target: &DbTarget) -> Result<Store> {
        match target {
            DbTarget::Sqlite(p) => Store::open_read_only(p).await,
            DbTarget::Postgres(url) => {
                backend::connect_postgres(url, backend::PgOpen::Existing).await
            }
        }
    }

    /// Checks, without writing, that `target` can become or is a store of this build: `bench`
    /// asks before it loads a corpus, so a wrong `--db` fails in a second, not after embedding.
    pub async fn check_db(target: &DbTarget) -> Result<()> {
        match target {
            DbTarget::Sqlite(p) => Store::check(p).await,
            DbTarget::Postgres(url) => {
                backend::connect_postgres(url, backend::PgOpen::Check)
                    .await?
                    .close()
                    .await;
                Ok(())
            }
        }
    }

    /// Describes the file at `path` without changing it. A directory, a FIFO, a file that is
    /// not SQLite or is truncated or corrupt is bad input.
    pub async fn info(path: &Path) -> Result<DbInfo> {
        info::describe(path).await
    }

    /// The file path, or the PostgreSQL URL without its password: what messages show.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Which engine this store runs on.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Closes the connections (a merge input or output must be released before it is moved).
    /// A writable SQLite store first folds its write-ahead log into the file (`PRAGMA
    /// wal_checkpoint(TRUNCATE)`), so the file alone is the data; when another process holds the
    /// store and the checkpoint cannot finish, one line on stderr says the writes are in the
    /// `-wal`. Every command that writes calls this on success; a store dropped without it (an
    /// error path) is checkpointed all the same when its last clone goes.
    pub async fn close(&self) {
        if self.closer.as_ref().is_some_and(|c| c.take()) && self.checkpoint().await == Some(false)
        {
            checkpoint::note_held(&self.path);
        }
        self.pool.close().await;
    }

    /// The final checkpoint on the store's own connection, waiting briefly for other processes;
    /// `Some(true)` when it finished, `None` when the connection is gone.
    async fn checkpoint(&self) -> Option<bool> {
        let mut conn = self.pool.acquire().await.ok()?;
        let wait = format!(
            "PRAGMA busy_timeout = {}",
            checkpoint::CHECKPOINT_WAIT.as_millis()
        );
        sqlx::raw_sql(&wait).execute(&mut *conn).await.ok()?;
        let busy: i64 = sqlx::query_scalar(checkpoint::CHECKPOINT)
            .fetch_one(&mut *conn)
            .await
            .ok()?;
        Some(busy == 0)
    }
}
