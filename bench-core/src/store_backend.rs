//! The two backends of the results store: where a database is (`--db`), and what differs
//! between SQLite and PostgreSQL (schema types, the clock, the schema version, locks).
//!
//! Every query of the store is written once, in the SQL both accept (`$N` parameters, `ON
//! CONFLICT`, `RETURNING`, `CASE` instead of boolean arithmetic); only the few things below
//! are spelled per backend.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::Row;

use super::{store_err, Store, MIGRATIONS, SCHEMA_VERSION};
use crate::error::{BenchError, Result};

/// Where the results database is: an SQLite file (the embedded default) or a PostgreSQL
/// database (`postgres://USER@HOST[:PORT]/DB`), shared by workers on many machines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DbTarget {
    Sqlite(PathBuf),
    Postgres(String),
}

impl FromStr for DbTarget {
    type Err = BenchError;

    fn from_str(s: &str) -> Result<Self> {
        if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            url_host(s).ok_or_else(|| {
                BenchError::Invalid(format!(
                    "--db {}: expected postgres://USER@HOST[:PORT]/DATABASE",
                    redact(s)
                ))
            })?;
            Ok(DbTarget::Postgres(s.to_owned()))
        } else if s.contains("://") {
            Err(BenchError::Invalid(format!(
                "--db {}: expected a file path (SQLite) or postgres://USER@HOST[:PORT]/DATABASE",
                redact(s)
            )))
        } else if s.is_empty() {
            Err(BenchError::Invalid(
                "--db: expected a file path or a postgres:// URL, got nothing".into(),
            ))
        } else {
            Ok(DbTarget::Sqlite(PathBuf::from(s)))
        }
    }
}

impl fmt::Display for DbTarget {
    /// The path, or the URL with any password replaced: this is what messages and logs show.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DbTarget::Sqlite(p) => write!(f, "{}", p.display()),
            DbTarget::Postgres(url) => f.write_str(&redact(url)),
        }
    }
}

impl DbTarget {
    /// The SQLite file, if this is one.
    pub fn sqlite_path(&self) -> Option<&std::path::Path> {
        match self {
            DbTarget::Sqlite(p) => Some(p),
            DbTarget::Postgres(_) => None,
        }
    }
}

/// The authority part of a URL (`user[:password]@host[:port]`), if it has a host.
fn url_host(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?']).next()?;
    let host = authority.rsplit('@').next()?;
    (!host.is_empty()).then_some(authority)
}

/// `url` with the password of its user, if any, replaced by `***` (never shown or stored).
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    match authority.rsplit_once('@') {
        Some((user, host)) => match user.split_once(':') {
            Some((name, _)) => format!("{scheme}://{name}:***@{host}{tail}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// The database engine behind a store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
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

const PG_NOW: &str =
    "to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')";

/// One SQLite migration as PostgreSQL DDL. Integers are 64-bit and reals double precision (what
/// SQLite stores), text compares bytewise (`COLLATE "C"`, SQLite's BINARY, so every `ORDER BY`
/// gives the same order on both), and `queries` carries an explicit `rowid` (SQLite's implicit
/// one keeps the file order of questions).
pub(crate) fn pg_ddl(sql: &str) -> String {
    sql.replace("INTEGER PRIMARY KEY AUTOINCREMENT", "BIGSERIAL PRIMARY KEY")
        .replace(" INTEGER", " BIGINT")
        .replace(" REAL", " DOUBLE PRECISION")
        .replace(" TEXT", " TEXT COLLATE \"C\"")
        .replace(
            "(strftime('%Y-%m-%dT%H:%M:%fZ','now'))",
            &format!("({PG_NOW})"),
        )
        .replace(
            "CREATE TABLE queries (",
            "CREATE TABLE queries (\n        rowid BIGSERIAL,",
        )
}

/// What opening a PostgreSQL store may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PgOpen {
    /// Look only: refuse a foreign database or a newer schema; write nothing.
    Check,
    /// Open a store that has results (`route eval`, `report`); never create a schema.
    Existing,
    /// Open, creating or migrating the schema.
    Create,
}

/// Lock key of schema migrations on PostgreSQL (`pg_advisory_xact_lock`): "rgrt".
const PG_MIGRATION_LOCK: i64 = 0x7267_7274;
/// Lock key of run starts on PostgreSQL: workers started at once agree on one run.
pub(crate) const PG_RUN_LOCK: i64 = 0x7267_7275;

impl Store {
    /// Opens (creating the schema if needed) the store at `target`.
    pub async fn open_db(target: &DbTarget) -> Result<Store> {
        match target {
            DbTarget::Sqlite(p) => Store::open(p).await,
            DbTarget::Postgres(url) => Store::connect_postgres(url, PgOpen::Create).await,
        }
    }

    /// Opens an existing store for reading and adding evaluations: a database without results
    /// schema is an error, never a new schema.
    pub async fn open_existing_db(target: &DbTarget) -> Result<Store> {
        match target {
            DbTarget::Sqlite(p) => Store::open_existing(p).await,
            DbTarget::Postgres(url) => Store::connect_postgres(url, PgOpen::Existing).await,
        }
    }

    /// Checks, without writing, that `target` can become or is a store of this build: `bench`
    /// asks before it loads a corpus, so a wrong `--db` fails in a second, not after embedding.
    pub async fn check_db(target: &DbTarget) -> Result<()> {
        match target {
            DbTarget::Sqlite(p) => Store::check(p).await,
            DbTarget::Postgres(url) => {
                Store::connect_postgres(url, PgOpen::Check)
                    .await?
                    .close()
                    .await;
                Ok(())
            }
        }
    }

    /// Which engine this store runs on.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    async fn connect_postgres(url: &str, how: PgOpen) -> Result<Store> {
        sqlx::any::install_default_drivers();
        let shown = redact(url);
        // No prepared-statement cache: sqlx's Any driver sends a NULL double as float4, and a
        // statement cached with that type rejects the next non-NULL double ("incorrect binary
        // data format"); unnamed statements take their types from each call's values.
        let url = if url.contains("statement-cache-capacity=") {
            url.to_owned()
        } else {
            let sep = if url.contains('?') { '&' } else { '?' };
            format!("{url}{sep}statement-cache-capacity=0")
        };
        let opts = AnyConnectOptions::from_str(&url).map_err(|e| store_err(&shown, e))?;
        let pool = AnyPoolOptions::new()
            .max_connections(8)
            .acquire_timeout(Duration::from_secs(30))
            .connect_with(opts)
            .await
            .map_err(|e| store_err(&shown, e))?;
        let store = Store {
            pool,
            path: shown,
            backend: Backend::Postgres,
        };
        store.migrate_postgres(how).await?;
        Ok(store)
    }

    /// Applies pending migrations in one transaction under an advisory lock, so of several
    /// workers opening a new database one creates the schema. A database holding other tables
    /// but no ragrouter schema is refused, and the transaction rolled back: nothing written.
    async fn migrate_postgres(&self, how: PgOpen) -> Result<()> {
        let mut tx = self.pool.begin().await.map_err(|e| self.err(e))?;
        sqlx::query("SELECT count(*) FROM (SELECT pg_advisory_xact_lock($1)) AS l")
            .bind(PG_MIGRATION_LOCK)
            .fetch_one(&mut *tx)
            .await
            .map_err(|e| self.err(e))?;
        let has_schema: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM information_schema.tables
             WHERE table_schema = current_schema() AND table_name = 'ragrouter_schema'",
        )
        .fetch_one(&mut *tx)
        .await
        .map_err(|e| self.err(e))?;
        let version: i64 = if has_schema == 0 {
            let others: Vec<String> = sqlx::query(
                "SELECT CAST(table_name AS TEXT) FROM information_schema.tables
                 WHERE table_schema = current_schema() ORDER BY 1 LIMIT 9",
            )
            .fetch_all(&mut *tx)
            .await
            .map_err(|e| self.err(e))?
            .iter()
            .map(|r| r.get(0))
            .collect();
            if !others.is_empty() {
                return Err(BenchError::Invalid(format!(
                    "results database {}: not a ragrouter results database (tables: {}); \
                     refusing to change it (pass --db another database)",
                    self.path,
                    others.join(", ")
                )));
            }
            if how == PgOpen::Check {
                return Ok(()); // dropping the transaction rolls it back: nothing written
            }
            if how == PgOpen::Existing {
                return Err(BenchError::Invalid(format!(
                    "results database {} holds no results: run `ragrouter bench <corpus> --db {}` first",
                    self.path, self.path
                )));
            }
            sqlx::raw_sql(
                "CREATE TABLE ragrouter_schema (version BIGINT NOT NULL);
                 INSERT INTO ragrouter_schema (version) VALUES (0);",
            )
            .execute(&mut *tx)
            .await
            .map_err(|e| self.err(e))?;
            0
        } else {
            sqlx::query_scalar("SELECT version FROM ragrouter_schema")
                .fetch_one(&mut *tx)
                .await
                .map_err(|e| self.err(e))?
        };
        if version > SCHEMA_VERSION {
            return Err(BenchError::Invalid(format!(
                "results store {}: schema version {version} is newer than this build's {SCHEMA_VERSION}; upgrade ragrouter",
                self.path
            )));
        }
        if how == PgOpen::Check {
            return Ok(());
        }
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            sqlx::raw_sql(&pg_ddl(sql))
                .execute(&mut *tx)
                .await
                .map_err(|e| self.err(e))?;
            sqlx::query("UPDATE ragrouter_schema SET version = $1")
                .bind(i as i64 + 1)
                .execute(&mut *tx)
                .await
                .map_err(|e| self.err(e))?;
        }
        tx.commit().await.map_err(|e| self.err(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets() {
        assert_eq!(
            "runs.sqlite".parse::<DbTarget>().unwrap(),
            DbTarget::Sqlite("runs.sqlite".into())
        );
        let pg: DbTarget = "postgres://bench:secret@db.lab:5433/rr".parse().unwrap();
        assert_eq!(pg.to_string(), "postgres://bench:***@db.lab:5433/rr");
        assert!(matches!(pg, DbTarget::Postgres(u) if u.contains("secret")));
        let plain = "postgresql://bench@127.0.0.1/rr";
        assert_eq!(plain.parse::<DbTarget>().unwrap().to_string(), plain);
        for bad in ["mysql://x@y/z", "postgres://", ""] {
            assert!(bad.parse::<DbTarget>().is_err(), "{bad}");
        }
    }

    #[test]
    fn every_migration_translates_to_postgres_types() {
        for sql in MIGRATIONS {
            let pg = pg_ddl(sql);
            for sqlite_only in ["AUTOINCREMENT", "strftime", " REAL", " INTEGER"] {
                assert!(!pg.contains(sqlite_only), "{sqlite_only} in {pg}");
            }
        }
        let first = pg_ddl(MIGRATIONS[0]);
        assert!(first.contains("id BIGSERIAL PRIMARY KEY"));
        assert!(first.contains("rowid BIGSERIAL,"));
        assert!(first.contains("query_id TEXT COLLATE \"C\" NOT NULL"));
        // The column named `text` keeps its name; only the type is rewritten.
        assert!(first.contains("text TEXT COLLATE \"C\" NOT NULL"));
    }
}
