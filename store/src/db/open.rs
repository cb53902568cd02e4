//! Opening the results store without harming what is there: a file that is not ours (another
//! application's database, a newer schema, not SQLite at all) is refused before anything is
//! written or its journal mode changed, and concurrent openers of a new file agree on one schema.
//!
//! A file is ours when it carries [`APPLICATION_ID`] (`PRAGMA application_id`, written with the
//! schema) and its schema version (`PRAGMA user_version`), or, for files written before that
//! marker, when its objects are exactly those our migrations create at its schema version (it is
//! marked on its next write). Anything else in `sqlite_schema` (a view, a trigger, an index or
//! table of someone else) makes the file foreign.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::any::AnyConnectOptions;
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};
use sqlx::{AnyConnection, ConnectOptions, Connection};

use super::checkpoint::{quiet, Closer};
use super::handle::{store_err, Store};
use super::schema::{MIGRATIONS, SCHEMA_VERSION};
use crate::error::{Result, StoreError};

/// How long an opener waits for another process's lock (schema creation, a long write).
pub(super) const BUSY_WAIT: Duration = Duration::from_secs(30);

/// "Too many levels of symbolic links".
#[cfg(target_os = "linux")]
const ELOOP: i32 = 40;
#[cfg(not(target_os = "linux"))]
const ELOOP: i32 = 62;

/// How long `db info` waits for another process's lock: it only looks.
pub(super) const LOOK_WAIT: Duration = Duration::from_secs(5);

/// The application id every results file carries (header bytes 68-71): "rgrt".
pub const APPLICATION_ID: i32 = 0x7267_7274;

/// Tables `ANALYZE` adds to any database: SQLite's own, never a sign of another application.
const SQLITE_STATS: [&str; 4] = [
    "sqlite_stat1",
    "sqlite_stat2",
    "sqlite_stat3",
    "sqlite_stat4",
];

/// What a database path holds, found without writing to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Found {
    /// No file, an empty file, or an SQLite file without any object and schema version: ours
    /// to set up.
    New,
    /// A results store of this or an older schema version.
    Ours(i64),
}

/// The fields of the 100-byte SQLite header that decide how the file may be looked at.
#[derive(Debug, Clone, Copy)]
pub(super) struct Header {
    /// Write-ahead-log mode (format bytes 18-19 are 2).
    pub(super) wal: bool,
}

/// One `sqlite_schema` row: (type, name).
type Object = (String, String);

/// A database file as seen read-only: its header, markers and objects.
#[derive(Debug, Clone)]
pub(super) struct View {
    pub(super) header: Header,
    pub(super) application_id: i64,
    pub(super) version: i64,
    pub(super) objects: Vec<Object>,
}

/// `path` with `suffix` appended to its file name (`r.sqlite-wal`).
pub(super) fn side_file(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

fn invalid(shown: &str, what: &str) -> StoreError {
    StoreError::Incompatible(format!(
        "results database {shown} {what}; refusing to touch it (pass --db a new path)"
    ))
}

/// SQLite's primary result code of a database error (the low byte of an extended code).
fn primary_code(e: &sqlx::Error) -> Option<i64> {
    match e {
        sqlx::Error::Database(d) => d.code()?.parse::<i64>().ok().map(|c| c & 0xff),
        _ => None,
    }
}

/// An SQLite failure while opening a file: a corrupt (code 11) or non-SQLite (26) file is bad
/// input; anything else, a lock included, stays the engine's error.
pub(super) fn open_err(shown: &str) -> impl Fn(sqlx::Error) -> StoreError + '_ {
    move |e: sqlx::Error| match (&e, primary_code(&e)) {
        (sqlx::Error::Database(d), Some(11 | 26)) => invalid(
            shown,
            &format!(
                "is corrupt or not an SQLite database (SQLite: {})",
                d.message()
            ),
        ),
        _ => store_err(shown, e),
    }
}

/// An SQLite failure on a file we read or open: as [`open_err`], and a lock another process
/// still held when the wait ran out (code 5 or 6) is said plainly.
pub(super) fn read_err(shown: &str) -> impl Fn(sqlx::Error) -> StoreError + '_ {
    move |e: sqlx::Error| match primary_code(&e) {
        Some(5 | 6) => held(shown),
        _ => open_err(shown)(e),
    }
}

/// Another process holds the lock a command waited for.
fn held(shown: &str) -> StoreError {
    StoreError::Other(format!(
        "results database {shown}: another process holds the store (its lock was still held \
         when the wait ran out); try again when that process is done"
    ))
}

/// Reads and checks the header: SQLite's magic, a page size, and a length of whole pages that
/// the header's page count does not exceed (a truncated copy).
fn read_header(path: &Path, shown: &str, len: u64) -> Result<Header> {
    use std::io::Read;
    let mut head = [0u8; 100];
    let read = std::fs::File::open(path)
        .and_then(|f| f.take(100).read(&mut head))
        .map_err(|e| StoreError::io(format!("reading results database {shown}"), e))?;
    if read < 100 || &head[..16] != b"SQLite format 3\0" {
        return Err(invalid(shown, "is not an SQLite database"));
    }
    let be32 = |at: usize| u32::from_be_bytes(head[at..at + 4].try_into().expect("4 bytes"));
    let page = match u16::from_be_bytes([head[16], head[17]]) {
        1 => 65536,
        p if p >= 512 && p.is_power_of_two() => u64::from(p),
        p => {
            return Err(invalid(
                shown,
                &format!("is corrupt (page size {p} in its header)"),
            ))
        }
    };
    let wal = head[18] == 2 || head[19] == 2;
    if !len.is_multiple_of(page) {
        return Err(invalid(
            shown,
            &format!(
                "is truncated or corrupt ({len} bytes, not a whole number of {page}-byte pages)"
            ),
        ));
    }
    // The header's page count is valid when its "version valid for" equals the change counter.
    let pages = u64::from(be32(28));
    if be32(92) == be32(24) && pages * page > len && !side_file(path, "-wal").exists() {
        return Err(invalid(
            shown,
            &format!("is truncated ({len} bytes; its header says {pages} pages of {page} bytes)"),
        ));
    }
    Ok(Header { wal })
}

/// A read-only connection that creates nothing beside the file: a WAL-mode file without both
/// side files is read as immutable (a normal open would create `-wal` and `-shm`). It waits
/// `wait` for another process's lock.
pub(super) async fn read_only(
    path: &Path,
    shown: &str,
    header: Header,
    wait: Duration,
) -> Result<SqliteConnection> {
    let immutable =
        header.wal && !(side_file(path, "-wal").exists() && side_file(path, "-shm").exists());
    quiet(
        SqliteConnectOptions::new()
            .filename(path)
            .read_only(true)
            .immutable(immutable)
            .busy_timeout(wait),
    )
    .connect()
    .await
    .map_err(read_err(shown))
}

/// `PRAGMA quick_check` on an open read-only connection: a store with a corrupt page is
/// refused before a command writes to it. It reads every page (see docs/performance.md).
async fn quick_check(conn: &mut SqliteConnection, shown: &str) -> Result<()> {
    let found: Vec<String> = sqlx::query_scalar("PRAGMA quick_check(3)")
        .fetch_all(conn)
        .await
        .map_err(read_err(shown))?;
    if found.len() == 1 && found[0] == "ok" {
        return Ok(());
    }
    Err(invalid(
        shown,
        &format!(
            "is corrupt (SQLite's integrity check: {})",
            printable(&found.join("; "))
        ),
    ))
}

/// The markers and objects of an open database.
async fn markers(conn: &mut AnyConnection, shown: &str) -> Result<(i64, i64, Vec<Object>)> {
    let application_id: i64 = sqlx::query_scalar("PRAGMA application_id")
        .fetch_one(&mut *conn)
        .await
        .map_err(read_err(shown))?;
    let version: i64 = sqlx::query_scalar("PRAGMA user_version")
        .fetch_one(&mut *conn)
        .await
        .map_err(read_err(shown))?;
    let objects = objects(conn, shown).await?;
    Ok((application_id, version, objects))
}

const OBJECTS: &str = "SELECT type, name FROM sqlite_master ORDER BY type, name";

async fn objects(conn: &mut AnyConnection, shown: &str) -> Result<Vec<Object>> {
    sqlx::query_as(OBJECTS)
        .fetch_all(conn)
        .await
        .map_err(read_err(shown))
}

async fn sqlite_objects(conn: &mut SqliteConnection, shown: &str) -> Result<Vec<Object>> {
    sqlx::query_as(OBJECTS)
        .fetch_all(conn)
        .await
        .map_err(read_err(shown))
}

/// Looks at `path` read-only; `None` when there is no file or an empty one. Refuses a
/// directory, a FIFO or device, a symbolic link loop, a non-SQLite, truncated or corrupt file
/// (every page checked when `verify`), all without changing a byte or creating a file beside
/// it. Waits `wait` for another process's lock.
pub(super) async fn view(path: &Path, wait: Duration, verify: bool) -> Result<Option<View>> {
    let shown = path.display().to_string();
    let len = match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        // The path's links never reach a file (std's kind for it is not stable yet).
        Err(e) if e.raw_os_error() == Some(ELOOP) => {
            return Err(StoreError::Invalid(format!(
                "results database {shown} is a loop of symbolic links (following them never \
                 reaches a file); --db takes a file path"
            )))
        }
        Err(e) => return Err(StoreError::io(format!("results database {shown}"), e)),
        Ok(m) if m.is_dir() => {
            return Err(StoreError::Invalid(format!(
                "results database {shown} is a directory; --db takes a file path (e.g. {})",
                path.join("results.sqlite").display()
            )))
        }
        // Opening a FIFO would block, and a device is nobody's database.
        Ok(m) if !m.is_file() => {
            return Err(invalid(
                &shown,
                "is not a regular file (a FIFO, socket or device)",
            ))
        }
        Ok(m) if m.len() == 0 => return Ok(None),
        Ok(m) => m.len(),
    };
    let header = read_header(path, &shown, len)?;
    let mut conn = read_only(path, &shown, header, wait).await?;
    let read = async {
        let application_id: i64 = sqlx::query_scalar("PRAGMA application_id")
            .fetch_one(&mut conn)
            .await
            .map_err(read_err(&shown))?;
        let version: i64 = sqlx::query_scalar("PRAGMA user_version")
            .fetch_one(&mut conn)
            .await
            .map_err(read_err(&shown))?;
        let objects = sqlite_objects(&mut conn, &shown).await?;
        if verify && !objects.is_empty() {
            quick_check(&mut conn, &shown).await?;
        }
        Ok::<_, StoreError>((application_id, version, objects))
    }
    .await;
    let _ = conn.close().await;
    let (application_id, version, objects) = read?;
    Ok(Some(View {
        header,
        application_id,
        version,
        objects,
    }))
}

/// Looks at `path` read-only and says whether it is new or ours; refuses anything else, and
/// with `verify` a file with a corrupt page (checked before a command writes to it).
pub(crate) async fn inspect(path: &Path, verify: bool) -> Result<Found> {
    match view(path, BUSY_WAIT, verify).await? {
        None => Ok(Found::New),
        Some(v) => classify(
            &path.display().to_string(),
            v.application_id,
            v.version,
            &v.objects,
            expected().await?,
        ),
    }
}

/// The objects our migrations create, after each number of them (index 0: none), found by
/// running them on an in-memory database once.
pub(super) async fn expected() -> Result<&'static [BTreeSet<Object>]> {
    static SETS: tokio::sync::OnceCell<Vec<BTreeSet<Object>>> = tokio::sync::OnceCell::const_new();
    SETS.get_or_try_init(|| async {
        let mut conn = SqliteConnectOptions::new()
            .in_memory(true)
            .connect()
            .await
            .map_err(|e| store_err(":memory:", e))?;
        let mut sets = vec![BTreeSet::new()];
        for sql in MIGRATIONS {
            sqlx::raw_sql(sql)
                .execute(&mut conn)
                .await
                .map_err(|e| store_err(":memory:", e))?;
            sets.push(
                sqlite_objects(&mut conn, ":memory:")
                    .await?
                    .into_iter()
                    .collect(),
            );
        }
        let _ = conn.close().await;
        Ok(sets)
    })
    .await
    .map(Vec::as_slice)
}

/// Ours when marked (or, written before the marker, unmarked) and holding exactly the objects
/// of its schema version; new when it holds nothing at all.
pub(super) fn classify(
    shown: &str,
    application_id: i64,
    version: i64,
    objects: &[Object],
    expected: &[BTreeSet<Object>],
) -> Result<Found> {
    let marked = application_id == i64::from(APPLICATION_ID);
    let got: BTreeSet<Object> = objects
        .iter()
        .filter(|(_, n)| !SQLITE_STATS.contains(&n.as_str()))
        .cloned()
        .collect();
    let foreign = |why: String| {
        Err(StoreError::Incompatible(format!(
            "results database {shown} is not a ragrouter results database ({why}); refusing to \
             change it (pass --db a new path)"
        )))
    };
    let holds = describe(objects);
    if application_id != 0 && !marked {
        return foreign(format!(
            "application id {application_id} ({application_id:#010x}) is another application's, \
             ragrouter's is {APPLICATION_ID:#010x}; {holds}"
        ));
    }
    if objects.is_empty() && version == 0 {
        return Ok(Found::New);
    }
    let newest = &expected[SCHEMA_VERSION as usize];
    if version > SCHEMA_VERSION && (marked || got.is_superset(newest)) {
        return Err(newer(shown, version));
    }
    if (1..=SCHEMA_VERSION).contains(&version) && got == expected[version as usize] {
        return Ok(Found::Ours(version));
    }
    if marked {
        let want = expected
            .get(version.max(0) as usize)
            .cloned()
            .unwrap_or_default();
        let list = |s: Vec<&Object>| {
            s.iter()
                .take(6)
                .map(|(t, n)| format!("{t} {}", printable(n)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(StoreError::Incompatible(format!(
            "results database {shown} carries ragrouter's application id but not the schema of \
             its version {version} (unexpected: {}; missing: {}); refusing to change it",
            or_none(list(got.difference(&want).collect())),
            or_none(list(want.difference(&got).collect())),
        )));
    }
    foreign(format!("schema version {version}, {holds}"))
}

fn or_none(s: String) -> String {
    if s.is_empty() {
        "none".into()
    } else {
        s
    }
}

/// "tables: a, b, view v": what a file holds, SQLite's own objects left out.
pub(super) fn describe(objects: &[Object]) -> String {
    let shown: Vec<String> = objects
        .iter()
        .filter(|(_, n)| !n.starts_with("sqlite_"))
        .map(|(t, n)| {
            if t == "table" {
                printable(n).into_owned()
            } else {
                format!("{t} {}", printable(n))
            }
        })
        .collect();
    let mut listed = shown.iter().take(8).cloned().collect::<Vec<_>>().join(", ");
    if shown.len() > 8 {
        listed.push_str(", ...");
    }
    format!("tables: {}", or_none(listed))
}

/// A name read from a database as it may be printed: Rust's quoted, escaped form
/// (`"x\u{1b}[31m"`, as corpus names are shown in errors) when it holds a control or invisible
/// character, a quote or a backslash; else as it is. A foreign file's names reach the terminal,
/// where an escape sequence would recolour it and a newline forge an output line.
pub fn printable(name: &str) -> Cow<'_, str> {
    let quoted = format!("{name:?}");
    if quoted.get(1..quoted.len() - 1) == Some(name) {
        Cow::Borrowed(name)
    } else {
        Cow::Owned(quoted)
    }
}

fn newer(shown: &str, version: i64) -> StoreError {
    StoreError::Incompatible(format!(
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
pub(super) fn is_busy(e: &StoreError) -> bool {
    let StoreError::Sql {
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

/// Opens an existing results store for reading only (`report`): nothing is written, so a
/// store in a folder the user cannot write is read. An older schema is migrated first (a
/// write), since the readers expect this build's columns.
pub(crate) async fn open_read_only(path: &Path) -> Result<Store> {
    let shown = path.display().to_string();
    let Some(v) = view(path, BUSY_WAIT, false).await? else {
        return Err(no_results(path));
    };
    match classify(
        &shown,
        v.application_id,
        v.version,
        &v.objects,
        expected().await?,
    )? {
        Found::New => Err(no_results(path)),
        Found::Ours(version) if version < SCHEMA_VERSION => Store::open(path).await,
        Found::Ours(_) => {
            // A WAL file with no log beside it has no writer: read it as immutable, which
            // needs no `-shm` (a folder the user cannot write has none).
            let immutable = v.header.wal && !side_file(path, "-wal").exists();
            let url = SqliteConnectOptions::new()
                .filename(path)
                .read_only(true)
                .immutable(immutable)
                .to_url_lossy()
                .to_string();
            Store::connect_sqlite(&url, shown, false).await
        }
    }
}

/// Marks and migrates the file under the write lock (still in its own journal mode, so a
/// refused file never switches to WAL), then opens the pool, retrying while another process
/// holds the lock the WAL switch needs (a concurrent opener of the same new file).
pub(crate) async fn connect_writable(path: &Path) -> Result<Store> {
    let shown = path.display().to_string();
    sqlx::any::install_default_drivers();
    let opts = AnyConnectOptions::from_str(&write_url(path)).map_err(read_err(&shown))?;
    let mut conn = quiet(opts).connect().await.map_err(read_err(&shown))?;
    let migrated = migrate_on(&mut conn, &shown, true).await;
    let _ = conn.close().await;
    migrated?;
    let mut wait = Duration::from_millis(20);
    let deadline = std::time::Instant::now() + BUSY_WAIT;
    loop {
        match Store::connect_sqlite(&write_url(path), shown.clone(), true).await {
            Err(e) if is_busy(&e) && std::time::Instant::now() < deadline => {
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_millis(500));
            }
            Err(e) if is_busy(&e) => return Err(held(&shown)),
            Ok(mut store) => {
                store.closer = Some(Arc::new(Closer::new(path.to_path_buf(), shown)));
                return Ok(store);
            }
            other => return other,
        }
    }
}

/// Applies the pending migrations of the store's own connection (the in-memory store).
pub(crate) async fn migrate_locked(store: &Store) -> Result<()> {
    let mut conn = store.pool.acquire().await.map_err(|e| store.err(e))?;
    migrate_on(&mut conn, &store.path, false).await
}

pub(crate) fn no_results(path: &Path) -> StoreError {
    StoreError::Invalid(format!(
        "results database {} {}: run `ragrouter bench <corpus>` first, or pass --db",
        path.display(),
        if path.exists() {
            "holds no results"
        } else {
            "does not exist"
        }
    ))
}

/// In one `BEGIN IMMEDIATE` transaction: the file is classified again under the write lock (of
/// several processes opening a new file one creates the schema, the others wait and find it),
/// marked with [`APPLICATION_ID`] and migrated. A refusal rolls back: nothing written.
async fn migrate_on(conn: &mut AnyConnection, shown: &str, classify_first: bool) -> Result<()> {
    let err = read_err(shown);
    sqlx::raw_sql("PRAGMA busy_timeout = 30000; PRAGMA foreign_keys = ON;")
        .execute(&mut *conn)
        .await
        .map_err(&err)?;
    sqlx::raw_sql("BEGIN IMMEDIATE")
        .execute(&mut *conn)
        .await
        .map_err(read_err(shown))?;
    let applied = async {
        let (application_id, version, objects) = markers(conn, shown).await?;
        if classify_first {
            classify(shown, application_id, version, &objects, expected().await?)?;
        } else if version > SCHEMA_VERSION {
            return Err(newer(shown, version));
        }
        if application_id != i64::from(APPLICATION_ID) {
            sqlx::raw_sql(&format!("PRAGMA application_id = {APPLICATION_ID}"))
                .execute(&mut *conn)
                .await
                .map_err(&err)?;
        }
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            sqlx::raw_sql(sql).execute(&mut *conn).await.map_err(&err)?;
            super::schema::data_step(i + 1, &mut *conn)
                .await
                .map_err(&err)?;
            sqlx::raw_sql(&format!("PRAGMA user_version = {}", i + 1))
                .execute(&mut *conn)
                .await
                .map_err(&err)?;
        }
        Ok(())
    }
    .await;
    let end = if applied.is_ok() {
        "COMMIT"
    } else {
        "ROLLBACK"
    };
    let ended = sqlx::raw_sql(end).execute(&mut *conn).await.map_err(&err);
    applied.and(ended.map(|_| ()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(v: &[(&str, &str)]) -> Vec<Object> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn names_with_control_characters_are_printed_escaped() {
        assert!(matches!(
            printable("route_evals"),
            Cow::Borrowed("route_evals")
        ));
        assert_eq!(printable("x\u{1b}[31m\nfake"), r#""x\u{1b}[31m\nfake""#);
        assert_eq!(printable("n\u{200d}q"), r#""n\u{200d}q""#);
        assert_eq!(printable("a\"b"), r#""a\"b""#);
        assert_eq!(printable("é ü"), "é ü");
    }

    #[tokio::test]
    async fn classification() {
        let exp = expected().await.unwrap();
        let ours = |v: i64| exp[v as usize].iter().cloned().collect::<Vec<_>>();
        let id = i64::from(APPLICATION_ID);
        assert_eq!(classify("f", 0, 0, &[], exp).unwrap(), Found::New);
        assert_eq!(classify("f", id, 0, &[], exp).unwrap(), Found::New);
        // Written before the marker, recognised by its exact schema.
        assert_eq!(classify("f", 0, 3, &ours(3), exp).unwrap(), Found::Ours(3));
        assert_eq!(
            classify("f", id, SCHEMA_VERSION, &ours(SCHEMA_VERSION), exp).unwrap(),
            Found::Ours(SCHEMA_VERSION)
        );
        // ANALYZE's tables are SQLite's own.
        let mut analysed = ours(5);
        analysed.push(("table".into(), "sqlite_stat1".into()));
        assert_eq!(classify("f", 0, 5, &analysed, exp).unwrap(), Found::Ours(5));
        let err = classify("f", 0, 0, &t(&[("table", "customers")]), exp)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("not a ragrouter") && err.contains("customers"),
            "{err}"
        );
        // `_` is no wildcard here: a table named sqliteXusers is someone's.
        let err = classify("f", 0, 0, &t(&[("table", "sqliteXusers")]), exp)
            .unwrap_err()
            .to_string();
        assert!(err.contains("sqliteXusers"), "{err}");
        // A view alone, and our tables plus a view or trigger: not ours.
        let err = classify("f", 0, 0, &t(&[("view", "v")]), exp)
            .unwrap_err()
            .to_string();
        assert!(err.contains("view v"), "{err}");
        let mut extra = ours(4);
        extra.push(("trigger".into(), "audit".into()));
        assert!(classify("f", 0, 4, &extra, exp).is_err());
        let err = classify("f", id, 4, &extra, exp).unwrap_err().to_string();
        assert!(err.contains("unexpected: trigger audit"), "{err}");
        // Some of our table names at a schema version: not ours either.
        let some = t(&[
            ("table", "runs"),
            ("table", "results"),
            ("table", "corpora"),
        ]);
        assert!(classify("f", 0, 5, &some, exp).is_err());
        assert!(classify("f", 0, 0, &ours(1), exp).is_err());
        // Another application's id, even on an empty file.
        let err = classify("f", 7, 0, &[], exp).unwrap_err().to_string();
        assert!(err.contains("application id 7"), "{err}");
        let err = classify("f", id, SCHEMA_VERSION + 1, &[], exp)
            .unwrap_err()
            .to_string();
        assert!(err.contains("newer"), "{err}");
    }
}
