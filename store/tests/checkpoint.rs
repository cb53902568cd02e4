//! A writable SQLite store's file alone holds its writes once the store is closed, or dropped
//! without closing (an error path): the final checkpoint empties the `-wal` into the file, so a
//! copy of the file without its side files loses nothing.

mod common;

use std::path::Path;

use common::corpus;
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Connection};
use store::Store;

/// The questions a copy of `path`'s main file holds (its `-wal` and `-shm` left behind).
async fn questions_in_a_copy(path: &Path) -> i64 {
    let copy = path.with_extension("copy");
    std::fs::copy(path, &copy).unwrap();
    let mut conn = SqliteConnectOptions::new()
        .filename(&copy)
        .read_only(true)
        .immutable(true)
        .connect()
        .await
        .unwrap();
    let n = sqlx::query_scalar("SELECT count(*) FROM queries")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();
    n
}

#[tokio::test]
async fn a_closed_or_dropped_store_leaves_every_write_in_its_file() {
    let dir = tempfile::tempdir().unwrap();
    for close in [true, false] {
        let path = dir.path().join(format!("closed-{close}.sqlite"));
        let store = Store::open(&path).await.unwrap();
        let clone = store.clone();
        store.upsert_corpus(&corpus()).await.unwrap();
        // Another connection, idle: SQLite's own checkpoint when its last connection closes
        // does not happen, so only the store's final checkpoint moves the writes.
        let mut other = SqliteConnectOptions::new()
            .filename(&path)
            .connect()
            .await
            .unwrap();
        sqlx::query("SELECT count(*) FROM runs")
            .execute(&mut other)
            .await
            .unwrap();
        if close {
            store.close().await;
        }
        drop(store);
        drop(clone);
        assert_eq!(questions_in_a_copy(&path).await, 2, "closed: {close}");
        other.close().await.unwrap();
    }
}
