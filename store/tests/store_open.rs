//! Opening the results store: concurrent openers of a new file, and files that are not ours
//! (another application's database, a newer schema, a directory, not SQLite) left untouched.

use std::path::Path;
use std::sync::{Arc, Barrier};

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode};
use sqlx::{ConnectOptions, Connection};
use store::{Store, StoreError, SCHEMA_VERSION};

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

/// Writes an SQLite file with a rollback journal (what most applications use) by running `sql`.
fn make_sqlite(path: &Path, sql: &str) {
    block_on(async {
        let mut conn = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Delete)
            .connect()
            .await
            .unwrap();
        sqlx::raw_sql(sql).execute(&mut conn).await.unwrap();
        conn.close().await.unwrap();
    });
}

/// The file's bytes and whether WAL side files appeared next to it.
fn snapshot(path: &Path) -> (Vec<u8>, bool) {
    let wal = path.with_extension("sqlite-wal").exists() || path.with_extension("db-wal").exists();
    (std::fs::read(path).unwrap(), wal)
}

/// The message of a bad-input error: a database this build must not touch, or a path that is
/// not a store.
fn invalid(e: StoreError) -> String {
    match e {
        StoreError::Invalid(m) | StoreError::Incompatible(m) => m,
        other => panic!("expected bad input, got {other:?}"),
    }
}

#[test]
fn concurrent_openers_of_a_new_file_all_get_one_whole_schema() {
    // Before the schema was created under BEGIN IMMEDIATE, some of these failed with
    // "table corpora already exists".
    for _round in 0..4 {
        let dir = tempfile::tempdir().unwrap();
        let path = Arc::new(dir.path().join("r.sqlite"));
        let n = 6;
        let barrier = Arc::new(Barrier::new(n));
        let handles: Vec<_> = (0..n)
            .map(|_| {
                let (path, barrier) = (Arc::clone(&path), Arc::clone(&barrier));
                std::thread::spawn(move || {
                    barrier.wait();
                    block_on(async {
                        let store = Store::open(&path).await?;
                        let mut conn = SqliteConnectOptions::new()
                            .filename(&*path)
                            .connect()
                            .await
                            .unwrap();
                        let v: i64 = sqlx::query_scalar("PRAGMA user_version")
                            .fetch_one(&mut conn)
                            .await
                            .unwrap();
                        drop(store);
                        Ok::<i64, StoreError>(v)
                    })
                })
            })
            .collect();
        for h in handles {
            let v = h
                .join()
                .unwrap()
                .unwrap_or_else(|e| panic!("an opener failed: {e}"));
            assert_eq!(v, SCHEMA_VERSION);
        }
    }
}

#[test]
fn another_applications_database_is_refused_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.db");
    make_sqlite(
        &path,
        "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT);
         INSERT INTO customers (name) VALUES ('Ada'), ('Grace');",
    );
    let before = snapshot(&path);
    let err = invalid(block_on(Store::open(&path)).unwrap_err());
    assert!(
        err.contains("not a ragrouter results database") && err.contains("customers"),
        "{err}"
    );
    let err = invalid(block_on(Store::open_existing(&path)).unwrap_err());
    assert!(err.contains("not a ragrouter"), "{err}");
    assert_eq!(snapshot(&path), before, "the foreign file changed");
    assert!(!dir.path().join("app.db-wal").exists());
    // Its journal mode is still the rollback journal.
    let mode: String = block_on(async {
        let mut c = SqliteConnectOptions::new()
            .filename(&path)
            .read_only(true)
            .connect()
            .await
            .unwrap();
        sqlx::query_scalar("PRAGMA journal_mode")
            .fetch_one(&mut c)
            .await
            .unwrap()
    });
    assert_eq!(mode, "delete");
}

#[test]
fn a_newer_schema_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.sqlite");
    make_sqlite(
        &path,
        &format!(
            "CREATE TABLE corpora (name TEXT); CREATE TABLE runs (id INTEGER);
             CREATE TABLE results (run_id INTEGER); PRAGMA user_version = {};
             PRAGMA application_id = {};",
            SCHEMA_VERSION + 1,
            store::APPLICATION_ID
        ),
    );
    let before = snapshot(&path);
    let err = invalid(block_on(Store::open(&path)).unwrap_err());
    assert!(err.contains("newer"), "{err}");
    assert_eq!(snapshot(&path), before);
    assert!(!dir.path().join("r.sqlite-wal").exists());
}

#[test]
fn a_file_that_is_not_sqlite_and_a_directory_are_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    std::fs::write(&path, "these are my notes, not a database\n".repeat(100)).unwrap();
    let before = std::fs::read(&path).unwrap();
    let err = invalid(block_on(Store::open(&path)).unwrap_err());
    assert!(err.contains("not an SQLite database"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), before);

    let err = invalid(block_on(Store::open(dir.path())).unwrap_err());
    assert!(err.contains("is a directory"), "{err}");
}

#[test]
fn readers_never_create_a_schema() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.sqlite");
    let err = invalid(block_on(Store::open_existing(&missing)).unwrap_err());
    assert!(err.contains("does not exist"), "{err}");
    assert!(!missing.exists());

    let empty = dir.path().join("empty.sqlite");
    std::fs::write(&empty, b"").unwrap();
    let err = invalid(block_on(Store::open_existing(&empty)).unwrap_err());
    assert!(err.contains("holds no results"), "{err}");
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);

    // A store the bench created opens for reading.
    let ours = dir.path().join("r.sqlite");
    drop(block_on(Store::open(&ours)).unwrap());
    block_on(Store::open_existing(&ours)).unwrap();
}

/// A caller can tell a database it must not touch (`Incompatible`) from a path that is not a
/// store at all (`Invalid`), and both are the user's input.
#[test]
fn refusals_are_typed() {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "not a database\n".repeat(100)).unwrap();
    let e = block_on(Store::open(&notes)).unwrap_err();
    assert!(
        matches!(e, StoreError::Incompatible(_)) && e.is_bad_input(),
        "{e:?}"
    );
    let e = block_on(Store::open(dir.path())).unwrap_err();
    assert!(
        matches!(e, StoreError::Invalid(_)) && e.is_bad_input(),
        "{e:?}"
    );
    // At the boundary both are the vocabulary's bad input.
    assert!(matches!(
        bench_core::BenchError::from(e),
        bench_core::BenchError::Invalid(_)
    ));
}
