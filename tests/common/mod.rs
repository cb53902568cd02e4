//! Helpers shared by the binary's integration tests: process output, the shared vector cache,
//! and read-only queries on a results database.

#![allow(dead_code)] // each test binary uses its own subset

use std::path::{Path, PathBuf};
use std::process::Output;

use sqlx::Sqlite;

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A vector cache shared by the tests of a binary: content-addressed and written atomically,
/// so sharing it only saves re-embedding the same corpus.
pub fn shared_cache() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("vector-cache")
}

/// The scalars a query returns, read with the SQLite engine the store itself uses.
pub fn try_fetch<T>(db: &Path, sql: &str) -> Result<Vec<T>, sqlx::Error>
where
    T: for<'r> sqlx::Decode<'r, Sqlite> + sqlx::Type<Sqlite> + Send + Unpin,
{
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        use sqlx::sqlite::SqliteConnectOptions;
        use sqlx::ConnectOptions;
        let mut conn = SqliteConnectOptions::new()
            .filename(db)
            .read_only(true)
            .connect()
            .await?;
        sqlx::query_scalar(sql).fetch_all(&mut conn).await
    })
}

pub fn try_query_db(db: &Path, sql: &str) -> Result<Vec<i64>, sqlx::Error> {
    try_fetch(db, sql)
}

pub fn query_db(db: &Path, sql: &str) -> Vec<i64> {
    try_fetch(db, sql).unwrap()
}

pub fn query_strings(db: &Path, sql: &str) -> Vec<String> {
    try_fetch(db, sql).unwrap()
}

pub fn check_ok(out: &Output) {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        text(&out.stdout),
        text(&out.stderr)
    );
}
