//! Folding a writable SQLite store's write-ahead log into its file when the command is done
//! with it, so that the file alone is the data (a copy or a move of it loses nothing).
//!
//! [`Store::close`](super::Store::close) checkpoints through the store's own connection; a store
//! dropped without it (an error path, a command that returns early) is checkpointed here, from
//! [`Closer`]'s `Drop`, through a connection of its own.

use std::path::PathBuf;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use sqlx::any::AnyConnectOptions;
use sqlx::pool::PoolOptions;
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Connection};

/// How long the final checkpoint waits for another process's readers and writers: a command
/// that is done should not hang for the 30 s an opener waits.
pub(crate) const CHECKPOINT_WAIT: Duration = Duration::from_secs(2);

/// The statement that moves every logged page into the file and empties the `-wal`; its first
/// column is 1 when another connection kept it from finishing.
pub(crate) const CHECKPOINT: &str = "PRAGMA wal_checkpoint(TRUNCATE)";

/// `opts` with sqlx's slow-statement warning at its statement level (debug): a statement that
/// waits for another process's lock is expected, and the wait that runs out has its own
/// message. sqlx does not re-export `log`'s level type, so the level is read off a default
/// options value.
pub(crate) fn quiet<O: ConnectOptions>(opts: O) -> O {
    opts.log_slow_statements(
        defaults().log_settings.statements_level,
        Duration::from_secs(1),
    )
}

/// `pool` with sqlx's slow-acquire warning at debug too: a task waits for the pool's connection
/// while another task's statement waits for another process's lock.
pub(crate) fn quiet_pool<DB: sqlx::Database>(pool: PoolOptions<DB>) -> PoolOptions<DB> {
    pool.acquire_slow_level(defaults().log_settings.statements_level)
}

fn defaults() -> AnyConnectOptions {
    AnyConnectOptions::from_str("sqlite::memory:").expect("a valid URL")
}

/// The one line a command prints when another process keeps its writes in the `-wal`.
pub(crate) fn note_held(shown: &str) {
    eprintln!(
        "warning: results store {shown}: another process has it open, so the last writes stay in \
         {shown}-wal until that process closes it (copy or move the -wal with the file until then)"
    );
}

/// Shared by every clone of a writable SQLite store: checkpoints the file once, when the store
/// is closed or its last clone dropped.
#[derive(Debug)]
pub(crate) struct Closer {
    path: PathBuf,
    shown: String,
    done: AtomicBool,
}

impl Closer {
    pub(crate) fn new(path: PathBuf, shown: String) -> Self {
        Closer {
            path,
            shown,
            done: AtomicBool::new(false),
        }
    }

    /// Marks the store closed; true the first time (the caller checkpoints).
    pub(crate) fn take(&self) -> bool {
        !self.done.swap(true, Ordering::SeqCst)
    }

    /// Checkpoints through a connection of its own, on a thread with its own runtime: `Drop`
    /// cannot await, and it may run inside another runtime. `Some(true)` when it finished.
    fn checkpoint_now(&self) -> Option<bool> {
        let path = self.path.clone();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            runtime.block_on(async {
                let mut conn = quiet(
                    SqliteConnectOptions::new()
                        .filename(&path)
                        .busy_timeout(CHECKPOINT_WAIT),
                )
                .connect()
                .await
                .ok()?;
                let busy = sqlx::query_scalar::<_, i64>(CHECKPOINT)
                    .fetch_one(&mut conn)
                    .await
                    .ok();
                let _ = conn.close().await;
                busy.map(|b| b == 0)
            })
        })
        .join()
        .ok()
        .flatten()
    }
}

impl Drop for Closer {
    fn drop(&mut self) {
        if self.take() && self.checkpoint_now() == Some(false) {
            note_held(&self.shown);
        }
    }
}
