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

use super::handle::{store_err, Backend, Store, PG_NOW};
use super::schema::{MIGRATIONS, SCHEMA_VERSION};
use crate::error::{Result, StoreError};

/// Where the results database is: an SQLite file (the embedded default) or a PostgreSQL
/// database (`postgres://USER@HOST[:PORT]/DB`), shared by workers on many machines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DbTarget {
    /// An SQLite file at this path.
    Sqlite(PathBuf),
    /// A PostgreSQL URL (`postgres://USER@HOST[:PORT]/DB`).
    Postgres(String),
}

impl FromStr for DbTarget {
    type Err = StoreError;

    /// Every message here shows the value with its credentials masked ([`redact`]): the
    /// argument parser prints this message instead of the raw value.
    fn from_str(s: &str) -> Result<Self> {
        if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            url_host(s).ok_or_else(|| {
                StoreError::Invalid(format!(
                    "--db {}: expected postgres://USER@HOST[:PORT]/DATABASE",
                    redact(s)
                ))
            })?;
            Ok(DbTarget::Postgres(s.to_owned()))
        } else if s.contains("://") {
            Err(StoreError::Invalid(format!(
                "--db {}: expected a file path (SQLite) or postgres://USER@HOST[:PORT]/DATABASE",
                redact(s)
            )))
        } else if s.is_empty() {
            Err(StoreError::Invalid(
                "--db: expected a file path or a postgres:// URL, got nothing".into(),
            ))
        } else if is_conninfo(s) {
            // `host=... password=...` would otherwise become a file of that name.
            Err(StoreError::Invalid(format!(
                "--db {}: a keyword=value connection string is not taken; expected \
                 postgres://USER@HOST[:PORT]/DATABASE",
                redact(s)
            )))
        } else {
            Ok(DbTarget::Sqlite(PathBuf::from(s)))
        }
    }
}

/// A libpq `keyword=value ...` string: two or more words, each a known keyword with a value.
fn is_conninfo(s: &str) -> bool {
    const KEYS: [&str; 8] = [
        "host", "hostaddr", "port", "dbname", "user", "password", "sslmode", "passfile",
    ];
    let words: Vec<&str> = s.split_whitespace().collect();
    let keyed = |w: &&str| {
        w.split_once('=')
            .is_some_and(|(k, _)| KEYS.contains(&k.to_ascii_lowercase().as_str()))
    };
    (words.len() >= 2 && words.iter().all(keyed)) || words.iter().any(|w| is_secret_key(w))
}

impl fmt::Display for DbTarget {
    /// The path, or the URL with any password replaced: this is what messages and logs show.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DbTarget::Sqlite(p) => f.write_str(&redact(&p.display().to_string())),
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

/// `host:port` of a PostgreSQL URL (port 5432 when none is given), for messages.
fn host_port(url: &str) -> String {
    let authority = url_host(url).unwrap_or("");
    let host = authority.rsplit('@').next().unwrap_or("");
    let has_port = match host.rfind(']') {
        Some(b) => host[b..].contains(':'),
        None => host.contains(':'),
    };
    if has_port {
        host.to_owned()
    } else {
        format!("{host}:5432")
    }
}

/// Keys whose value is a credential (`?password=...`, `password=...` of a connection string).
const SECRET_KEYS: [&str; 6] = [
    "password",
    "passwd",
    "pwd",
    "pgpassword",
    "sslpassword",
    "pass",
];

/// Keys of API credentials, masked as [`SECRET_KEYS`] are wherever they appear as `KEY=value`
/// (a log line, a message), though a `--db` naming one is not taken for a connection string.
const API_SECRET_KEYS: [&str; 7] = [
    "api_key",
    "api-key",
    "apikey",
    "access_token",
    "token",
    "secret",
    "client_secret",
];

/// `word` is `KEY=...` with a credential key (any case).
fn is_secret_key(word: &str) -> bool {
    word.split_once('=')
        .is_some_and(|(k, _)| SECRET_KEYS.contains(&k.to_ascii_lowercase().as_str()))
}

use bench_core::credentials::is_credential_param;

/// What follows a URL's authority (path, query, fragment), with the value of every query
/// parameter that names a credential ([`is_credential_param`]) replaced by `***`. A value runs
/// to the next `&`, `;` or `#`; punctuation that ends the URL (`:`, `)`, `,`) stays outside
/// the mask, so "URL: refused" still reads.
fn mask_query(url_rest: &str) -> String {
    let Some(q) = url_rest.find('?') else {
        return url_rest.to_owned();
    };
    let (head, query) = url_rest.split_at(q + 1);
    let (query, fragment) = query.split_at(query.find('#').unwrap_or(query.len()));
    let mut out = head.to_owned();
    let pieces: Vec<&str> = query.split_inclusive(['&', ';']).collect();
    for (i, piece) in pieces.iter().enumerate() {
        let (param, sep) = match piece.strip_suffix(['&', ';']) {
            Some(p) => (p, &piece[p.len()..]),
            None => (*piece, ""),
        };
        match param.split_once('=') {
            Some((name, value)) if !value.is_empty() && is_credential_param(name) => {
                let ends_url = i + 1 == pieces.len() && fragment.is_empty();
                let kept = if ends_url {
                    value.trim_end_matches([':', ')', ','])
                } else {
                    value
                };
                out.push_str(name);
                out.push_str("=***");
                out.push_str(&value[kept.len()..]);
            }
            _ => out.push_str(param),
        }
        out.push_str(sep);
    }
    out.push_str(fragment);
    out
}

/// `text` with every credential replaced by `***`: the password of each `scheme://user:pass@`,
/// the value of each URL query parameter whose name contains `key`, `token`, `secret`, `pass`,
/// `auth` or `sig` (`?api_key=`, `?access_token=`, `?sig=`, ...), and the value of each
/// `password=` (and `pwd=`, `pgpassword=`, `sslpassword=`, ...) whether a URL query parameter or
/// a `keyword=value` pair. Messages, logs and stdout show only this.
pub fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    // The userinfo password of every URL in the text.
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        let end = tail
            .find(|c: char| matches!(c, '/' | '?' | '#') || c.is_whitespace())
            .unwrap_or(tail.len());
        let (authority, after) = tail.split_at(end);
        match authority
            .rsplit_once('@')
            .and_then(|(user, host)| user.split_once(':').map(|(name, _)| (name, host)))
        {
            Some((name, host)) => {
                out.push_str(name);
                out.push_str(":***@");
                out.push_str(host);
            }
            None => out.push_str(authority),
        }
        // The URL goes on to whitespace, a quote or an angle bracket.
        let url_end = after
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '`'))
            .unwrap_or(after.len());
        out.push_str(&mask_query(&after[..url_end]));
        rest = &after[url_end..];
    }
    out.push_str(rest);
    mask_secret_values(&out)
}

/// Replaces the value after each credential key (at a word or parameter boundary), also in
/// the `key=password value=...` form of a driver's log line. A value ends at `&`, `;`, `,`, a
/// quote, `)`, whitespace, or a `:` that ends the text or precedes whitespace (": " in messages).
fn mask_secret_values(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let boundary = i == 0
            || matches!(
                bytes[i - 1],
                b'?' | b'&' | b';' | b',' | b'\'' | b'"' | b'(' | b' ' | b'\t' | b'\n'
            );
        let prefix = boundary
            .then(|| {
                SECRET_KEYS.iter().chain(&API_SECRET_KEYS).find_map(|k| {
                    [format!("{k}="), format!("key={k} value=")]
                        .into_iter()
                        .find(|p| lower[i..].starts_with(p.as_str()))
                })
            })
            .flatten();
        match prefix {
            Some(p) => {
                let start = i + p.len();
                let rest = &bytes[start..];
                let end = (0..rest.len())
                    .find(|&j| match rest[j] {
                        b'&' | b';' | b',' | b'\'' | b'"' | b')' => true,
                        b':' => rest.get(j + 1).is_none_or(|c| c.is_ascii_whitespace()),
                        c => c.is_ascii_whitespace(),
                    })
                    .map_or(text.len(), |e| start + e);
                out.push_str(&text[i..start]);
                if end > start {
                    out.push_str("***");
                }
                i = end;
            }
            None => {
                let c = text[i..].chars().next().expect("in bounds");
                out.push(c);
                i += c.len_utf8();
            }
        }
    }
    out
}

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
pub(crate) enum PgOpen {
    /// Look only: refuse a foreign database or a newer schema; write nothing.
    Check,
    /// Open a store that has results (`route eval`, `report`); never create a schema.
    Existing,
    /// Open, creating or migrating the schema.
    Create,
}

/// The environment variable that sets how long a PostgreSQL server may take to answer.
pub const CONNECT_TIMEOUT_ENV: &str = "RAGROUTER_PG_CONNECT_TIMEOUT";

/// Seconds to wait for a PostgreSQL server's first answer: $RAGROUTER_PG_CONNECT_TIMEOUT, else 10.
fn pg_connect_timeout() -> Result<Duration> {
    match std::env::var(CONNECT_TIMEOUT_ENV) {
        Err(_) => Ok(Duration::from_secs(10)),
        Ok(v) => v
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && *s > 0.0 && *s <= 3600.0)
            .map(Duration::from_secs_f64)
            .ok_or_else(|| {
                StoreError::Invalid(format!(
                    "{CONNECT_TIMEOUT_ENV}={v:?}: expected seconds, a number above 0 and at most 3600"
                ))
            }),
    }
}

/// How long a statement waits for a pooled connection unless $RAGROUTER_PG_CONNECT_TIMEOUT
/// says otherwise. The pool retries a refused connection until this runs out, so it is how long
/// a worker takes to notice a server that went away; the statements themselves are short.
const POOL_WAIT: Duration = Duration::from_secs(5);

/// A PostgreSQL failure that means the server is gone (stopped, crashed, restarting, the
/// connection cut), said so by host and port; `None` for any other failure.
pub(super) fn pg_gone(shown: &str, e: &sqlx::Error) -> Option<StoreError> {
    let server = host_port(shown);
    let why = match e {
        sqlx::Error::PoolTimedOut => {
            "no connection could be opened or freed in time: it refuses connections".to_owned()
        }
        sqlx::Error::Io(_) | sqlx::Error::Protocol(_) => redact(&e.to_string()),
        // admin_shutdown, crash_shutdown, cannot_connect_now
        sqlx::Error::Database(d)
            if d.code()
                .is_some_and(|c| matches!(c.as_ref(), "57P01" | "57P02" | "57P03")) =>
        {
            redact(d.message())
        }
        _ => return None,
    };
    Some(StoreError::Other(format!(
        "results database {shown}: the PostgreSQL server at {server} went away ({why})"
    )))
}

/// Lock key of schema migrations on PostgreSQL (`pg_advisory_xact_lock`): "rgrt".
const PG_MIGRATION_LOCK: i64 = 0x7267_7274;
/// Lock key of run starts on PostgreSQL: workers started at once agree on one run.
pub(crate) const PG_RUN_LOCK: i64 = 0x7267_7275;

pub(crate) async fn connect_postgres(url: &str, how: PgOpen) -> Result<Store> {
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
    let opts = super::checkpoint::quiet(
        AnyConnectOptions::from_str(&url).map_err(|e| store_err(&shown, e))?,
    );
    // One connection first, under its own timeout: the pool would retry a refused or
    // silent server until its acquire timeout and then say only "pool timed out".
    let wait = pg_connect_timeout()?;
    let server = host_port(url.as_str());
    match tokio::time::timeout(wait, sqlx::ConnectOptions::connect(&opts)).await {
        Err(_) => {
            return Err(StoreError::Other(format!(
                "results database {shown}: the PostgreSQL server at {server} did not answer \
                 within {} s ({CONNECT_TIMEOUT_ENV} sets the wait)",
                wait.as_secs_f64()
            )))
        }
        Ok(Err(e)) => {
            return Err(StoreError::Other(format!(
                "results database {shown}: cannot connect to the PostgreSQL server at \
                 {server}: {}",
                redact(&e.to_string())
            )))
        }
        Ok(Ok(conn)) => {
            let _ = sqlx::Connection::close(conn).await;
        }
    }
    let pool_wait = match std::env::var_os(CONNECT_TIMEOUT_ENV) {
        Some(_) => wait,
        None => POOL_WAIT,
    };
    let pool = super::checkpoint::quiet_pool(AnyPoolOptions::new())
        .max_connections(8)
        .acquire_timeout(pool_wait)
        .connect_with(opts)
        .await
        .map_err(|e| store_err(&shown, e))?;
    let store = Store {
        closer: None,
        pool,
        path: shown,
        backend: Backend::Postgres,
    };
    migrate_postgres(&store, how).await?;
    Ok(store)
}

/// Applies pending migrations in one transaction under an advisory lock, so of several
/// workers opening a new database one creates the schema. A database holding other tables
/// but no ragrouter schema is refused, and the transaction rolled back: nothing written.
async fn migrate_postgres(store: &Store, how: PgOpen) -> Result<()> {
    let mut tx = store.pool.begin().await.map_err(|e| store.err(e))?;
    sqlx::query("SELECT count(*) FROM (SELECT pg_advisory_xact_lock($1)) AS l")
        .bind(PG_MIGRATION_LOCK)
        .fetch_one(&mut *tx)
        .await
        .map_err(|e| store.err(e))?;
    let has_schema: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM information_schema.tables
         WHERE table_schema = current_schema() AND table_name = 'ragrouter_schema'",
    )
    .fetch_one(&mut *tx)
    .await
    .map_err(|e| store.err(e))?;
    let version: i64 = if has_schema == 0 {
        let others: Vec<String> = sqlx::query(
            "SELECT CAST(table_name AS TEXT) FROM information_schema.tables
             WHERE table_schema = current_schema() ORDER BY 1 LIMIT 9",
        )
        .fetch_all(&mut *tx)
        .await
        .map_err(|e| store.err(e))?
        .iter()
        .map(|r| r.get(0))
        .collect();
        if !others.is_empty() {
            return Err(StoreError::Incompatible(format!(
                "results database {}: not a ragrouter results database (tables: {}); \
                 refusing to change it (pass --db another database)",
                store.path,
                others.join(", ")
            )));
        }
        if how == PgOpen::Check {
            return Ok(()); // dropping the transaction rolls it back: nothing written
        }
        if how == PgOpen::Existing {
            return Err(StoreError::Invalid(format!(
                "results database {} holds no results: run `ragrouter bench <corpus> --db {}` first",
                store.path, store.path
            )));
        }
        sqlx::raw_sql(
            "CREATE TABLE ragrouter_schema (version BIGINT NOT NULL);
             INSERT INTO ragrouter_schema (version) VALUES (0);",
        )
        .execute(&mut *tx)
        .await
        .map_err(|e| store.err(e))?;
        0
    } else {
        sqlx::query_scalar("SELECT version FROM ragrouter_schema")
            .fetch_one(&mut *tx)
            .await
            .map_err(|e| store.err(e))?
    };
    if version > SCHEMA_VERSION {
        return Err(StoreError::Incompatible(format!(
            "results store {}: schema version {version} is newer than this build's {SCHEMA_VERSION}; upgrade ragrouter",
            store.path
        )));
    }
    if how == PgOpen::Check {
        return Ok(());
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        sqlx::raw_sql(&pg_ddl(sql))
            .execute(&mut *tx)
            .await
            .map_err(|e| store.err(e))?;
        super::schema::data_step(i + 1, &mut tx)
            .await
            .map_err(|e| store.err(e))?;
        sqlx::query("UPDATE ragrouter_schema SET version = $1")
            .bind(i as i64 + 1)
            .execute(&mut *tx)
            .await
            .map_err(|e| store.err(e))?;
    }
    tx.commit().await.map_err(|e| store.err(e))
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
    fn every_credential_form_is_masked() {
        for (raw, shown) in [
            ("postgres://u:pw@h:5/d", "postgres://u:***@h:5/d"),
            (
                "postgres://u@h/d?password=pw&sslmode=require",
                "postgres://u@h/d?password=***&sslmode=require",
            ),
            (
                "postgres://u@h/d?PassWord=pw",
                "postgres://u@h/d?PassWord=***",
            ),
            (
                "host=h password=pw dbname=d",
                "host=h password=*** dbname=d",
            ),
            (
                "db postgres://u@h/d?pwd=p:w: refused",
                "db postgres://u@h/d?pwd=***: refused",
            ),
            ("key=PASSWORD value=pw", "key=PASSWORD value=***"),
            (
                "see https://a:b@x and postgres://c:d@y",
                "see https://a:***@x and postgres://c:***@y",
            ),
            ("runs/bypass=1.sqlite", "runs/bypass=1.sqlite"),
            ("plain.sqlite", "plain.sqlite"),
            // Query parameters whose name contains key, token, secret, pass, auth or sig.
            (
                "mode: llm:m@http://h:1/v1?api_key=sk-C1 next",
                "mode: llm:m@http://h:1/v1?api_key=*** next",
            ),
            (
                "https://h/v1?model=m&KEY=sk-C1;x-Auth=a&sig=s#frag",
                "https://h/v1?model=m&KEY=***;x-Auth=***&sig=***#frag",
            ),
            (
                "{\"u\":\"http://h/v1?access_token=t-C1\"}",
                "{\"u\":\"http://h/v1?access_token=***\"}",
            ),
            (
                "http://h/?client%5Fsecret=C1",
                "http://h/?client%5Fsecret=***",
            ),
            (
                "http://h/v1?api_key=C1: refused",
                "http://h/v1?api_key=***: refused",
            ),
            ("http://h/v1?model=m&top=3", "http://h/v1?model=m&top=3"),
            ("http://h/v1?empty_key=&a", "http://h/v1?empty_key=&a"),
            ("retry api_key=sk-C1 later", "retry api_key=*** later"),
        ] {
            assert_eq!(redact(raw), shown, "{raw}");
        }
        let err = "host=h password=pw"
            .parse::<DbTarget>()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("password=***") && !err.contains("pw "),
            "{err}"
        );
        assert_eq!(host_port("postgres://u:p@db.lab/x"), "db.lab:5432");
        assert_eq!(host_port("postgres://u@[::1]:7/x"), "[::1]:7");
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
