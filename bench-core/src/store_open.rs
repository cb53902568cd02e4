//! Opening the results store without harming what is there: a file that is not ours (another
//! application's database, a newer schema, not SQLite at all) is refused before anything is
//! written or its journal mode changed, and concurrent openers of a new file agree on one schema.

use std::path::Path;
use std::time::Duration;

use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Connection};

use super::{store_err, Store, MIGRATIONS, SCHEMA_VERSION};
use crate::error::{BenchError, Result};

/// How long an opener waits for another process's lock (schema creation, a long write).
pub(super) const BUSY_WAIT: Duration = Duration::from_secs(30);

/// What a database path holds, found without writing to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Found {
    /// No file, an empty file, or an SQLite file without tables and schema version: ours to set up.
    New,
    /// A results store of this or an older schema version.
    Ours(i64),
}

/// Looks at `path` read-only; refuses a directory, a non-SQLite file, another application's
/// database and a newer schema, all without changing a byte.
pub(super) async fn inspect(path: &Path) -> Result<Found> {
    let shown = path.display().to_string();
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Found::New),
        Err(e) => return Err(BenchError::io(format!("results database {shown}"), e)),
        Ok(m) if m.is_dir() => {
            return Err(BenchError::Invalid(format!(
                "results database {shown} is a directory; --db takes a file path (e.g. {})",
                path.join("results.sqlite").display()
            )))
        }
        Ok(m) if m.len() == 0 => return Ok(Found::New),
        Ok(_) => {}
    }
    let not_sqlite = |e: sqlx::Error| {
        match &e {
        sqlx::Error::Database(d) if d.code().as_deref() == Some("26") => {
            BenchError::Invalid(format!(
                "results database {shown} is not an SQLite database; refusing to touch it (pass --db a new path)"
            ))
        }
        _ => store_err(&shown, e),
    }
    };
    let mut conn = SqliteConnectOptions::new()
        .filename(path)
        .read_only(true)
        .busy_timeout(BUSY_WAIT)
        .connect()
        .await
        .map_err(not_sqlite)?;
    let version: i64 = sqlx::query_scalar("PRAGMA user_version")
        .fetch_one(&mut conn)
        .await
        .map_err(not_sqlite)?;
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )
    .fetch_all(&mut conn)
    .await
    .map_err(not_sqlite)?;
    let _ = conn.close().await;
    classify(&shown, version, &tables)
}

/// Ours when the schema version is set and the tuple tables of migration 1 are there.
fn classify(shown: &str, version: i64, tables: &[String]) -> Result<Found> {
    if version == 0 && tables.is_empty() {
        return Ok(Found::New);
    }
    let has = |t: &str| tables.iter().any(|n| n == t);
    if version <= 0 || !(has("runs") && has("results") && has("corpora")) {
        let mut listed = tables
            .iter()
            .take(8)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if tables.len() > 8 {
            listed.push_str(", ...");
        }
        return Err(BenchError::Invalid(format!(
            "results database {shown} is not a ragrouter results database (schema version {version}, tables: {}); \
             refusing to change it (pass --db a new path)",
            if listed.is_empty() { "none".to_string() } else { listed }
        )));
    }
    if version > SCHEMA_VERSION {
        return Err(newer(shown, version));
    }
    Ok(Found::Ours(version))
}

fn newer(shown: &str, version: i64) -> BenchError {
    BenchError::Invalid(format!(
        "results store {shown}: schema version {version} is newer than this build's {SCHEMA_VERSION}; upgrade ragrouter"
    ))
}

/// The URL of a store file that may be written (created if missing); the pragmas (WAL, so
/// readers can look at a live run) are set on every connection by `connect_sqlite`.
pub(super) fn write_url(path: &Path) -> String {
    SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .to_url_lossy()
        .to_string()
}

/// SQLITE_BUSY or SQLITE_LOCKED (any extended code): another connection holds the lock.
pub(super) fn is_busy(e: &BenchError) -> bool {
    let BenchError::Store {
        source: sqlx::Error::Database(d),
        ..
    } = e
    else {
        return false;
    };
    d.code()
        .and_then(|c| c.parse::<i64>().ok())
        .is_some_and(|c| matches!(c & 0xff, 5 | 6))
}

impl Store {
    /// Checks, read-only, that `path` can become or already is a results store of this build:
    /// refuses a directory, a non-SQLite file, another application's database and a newer
    /// schema. Writes nothing.
    pub async fn check(path: &Path) -> Result<()> {
        inspect(path).await.map(|_| ())
    }

    /// Opens an existing results store for reading and adding evaluations (`route eval`,
    /// `report`): a missing or empty file is an error, never a new schema.
    pub async fn open_existing(path: &Path) -> Result<Store> {
        match inspect(path).await? {
            Found::New => Err(BenchError::Invalid(format!(
                "results database {} {}: run `ragrouter bench <corpus>` first, or pass --db",
                path.display(),
                if path.exists() {
                    "holds no results"
                } else {
                    "does not exist"
                }
            ))),
            Found::Ours(_) => Store::open(path).await,
        }
    }

    /// Connects, retrying while another process holds the lock the WAL switch needs (a
    /// concurrent opener of the same new file), then brings the schema up to date.
    pub(super) async fn connect_writable(path: &Path) -> Result<Store> {
        let shown = path.display().to_string();
        let mut wait = Duration::from_millis(20);
        let deadline = std::time::Instant::now() + BUSY_WAIT;
        loop {
            match Store::connect_sqlite(&write_url(path), shown.clone(), true).await {
                Err(e) if is_busy(&e) && std::time::Instant::now() < deadline => {
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_millis(500));
                }
                other => return other,
            }
        }
    }

    /// Applies the pending migrations in one `BEGIN IMMEDIATE` transaction: the write lock is
    /// taken before the version is read, so of several processes opening a new file one
    /// creates the schema and the others wait for it and then find it there.
    pub(super) async fn migrate_locked(&self) -> Result<()> {
        let mut conn = self.pool.acquire().await.map_err(|e| self.err(e))?;
        sqlx::raw_sql("BEGIN IMMEDIATE")
            .execute(&mut *conn)
            .await
            .map_err(|e| self.err(e))?;
        let applied = async {
            let version: i64 = sqlx::query_scalar("PRAGMA user_version")
                .fetch_one(&mut *conn)
                .await
                .map_err(|e| self.err(e))?;
            if version > SCHEMA_VERSION {
                return Err(newer(&self.path, version));
            }
            for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
                sqlx::raw_sql(sql)
                    .execute(&mut *conn)
                    .await
                    .map_err(|e| self.err(e))?;
                sqlx::raw_sql(&format!("PRAGMA user_version = {}", i + 1))
                    .execute(&mut *conn)
                    .await
                    .map_err(|e| self.err(e))?;
            }
            Ok(())
        }
        .await;
        let end = if applied.is_ok() {
            "COMMIT"
        } else {
            "ROLLBACK"
        };
        let ended = sqlx::raw_sql(end)
            .execute(&mut *conn)
            .await
            .map_err(|e| self.err(e));
        applied.and(ended.map(|_| ()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification() {
        let t = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(classify("f", 0, &[]).unwrap(), Found::New);
        assert_eq!(
            classify("f", 3, &t(&["corpora", "results", "runs"])).unwrap(),
            Found::Ours(3)
        );
        let err = classify("f", 0, &t(&["customers"]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("not a ragrouter") && err.contains("customers"),
            "{err}"
        );
        // A version but not our tables, and our tables without a version: not ours either.
        assert!(classify("f", 2, &t(&["runs"])).is_err());
        assert!(classify("f", 0, &t(&["corpora", "results", "runs"])).is_err());
        let err = classify("f", SCHEMA_VERSION + 1, &t(&["corpora", "results", "runs"]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("newer"), "{err}");
    }
}
