//! Store integrity under hostile use (the 2026-12-07 hostile test): a command that writes a
//! store leaves every write in the main file (H2), a corrupt store is refused before any write
//! (H5), `db info` names an unmerged `-wal` (H8), `merge` refuses a shard given twice by its
//! content (H17), names from a foreign store are printed escaped (H21), waiting for a lock prints
//! no driver warning and a held store is named (H25), and a symlink loop is bad input (H19).

mod common;

use common::*;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;
use std::time::Duration;

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

/// `bench demo` into `db` with the tests' vector cache, plus `extra` arguments.
fn bench_demo(db: &Path, extra: &[&str]) -> Output {
    let mut a = vec!["bench", "demo", "--db", s(db), "--cache-dir"];
    let cache = shared_cache();
    a.push(s(&cache));
    a.extend(extra);
    run(&a)
}

/// One finished demo run (20 questions x 7 paradigms), built once per test binary and folded
/// into its main file; tests copy it.
fn demo_store() -> &'static Path {
    static STORE: OnceLock<PathBuf> = OnceLock::new();
    STORE.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hostile2-store");
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("demo.sqlite");
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(side(&db, suffix));
        }
        check_ok(&bench_demo(&db, &[]));
        on_db(&db, |_| async {}, "PRAGMA wal_checkpoint(TRUNCATE)");
        db
    })
}

/// Opens `db` with the SQLite engine the store uses, runs `sql`, then `during` while the
/// connection is still open, then closes it.
fn on_db<F, Fut>(db: &Path, during: F, sql: &str)
where
    F: FnOnce(PathBuf) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    use sqlx::sqlite::SqliteConnectOptions;
    use sqlx::{ConnectOptions, Connection};
    block_on(async {
        let mut c = SqliteConnectOptions::new()
            .filename(db)
            .create_if_missing(true)
            .connect()
            .await
            .unwrap();
        sqlx::raw_sql(sql).execute(&mut c).await.unwrap();
        during(db.to_path_buf()).await;
        c.close().await.unwrap();
    });
}

/// Copies `from` (the main file only) to `to`.
fn copy_main(from: &Path, to: &Path) {
    std::fs::copy(from, to).unwrap();
    assert!(!side(to, "-wal").exists());
}

fn side(p: &Path, suffix: &str) -> PathBuf {
    let mut s = p.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// `db info`'s stdout, which must succeed.
fn info(db: &Path) -> String {
    let out = run(&["db", "info", s(db)]);
    check_ok(&out);
    text(&out.stdout)
}

/// The names and sizes of the files in `dir`, sorted.
fn listing(dir: &Path) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().unwrap().len(),
            )
        })
        .collect();
    v.sort();
    v
}

/// A generic outcomes file of `n` questions of `corpus` (`import outcomes` needs no encoder).
fn outcomes(path: &Path, corpus: &str, n: usize) {
    let lines: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"id":"q{i}","corpus":"{corpus}","question":"Question {i}?","answers":["a"],"outcomes":{{"naive":{{"correct":true,"cost":1}}}}}}"#
            )
        })
        .collect();
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

#[test]
fn h2_a_copy_of_the_main_file_holds_every_write() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    let copies = tempfile::tempdir().unwrap();
    let c = |n: &str| copies.path().join(n);
    // bench: each shard's main file alone holds its tuples.
    for (shard, file) in [("1/2", "a.sqlite"), ("2/2", "b.sqlite")] {
        check_ok(&bench_demo(&p(file), &["--shard", shard]));
        copy_main(&p(file), &c(file));
        let shown = info(&c(file));
        assert!(shown.contains("tuples: 70,"), "bench {shard}: {shown}");
    }
    // merge: the output's main file alone holds the merged run.
    let out = run(&[
        "merge",
        s(&p("all.sqlite")),
        s(&p("a.sqlite")),
        s(&p("b.sqlite")),
    ]);
    check_ok(&out);
    copy_main(&p("all.sqlite"), &c("all.sqlite"));
    let shown = info(&c("all.sqlite"));
    assert!(
        shown.contains("runs: 1 (1 finished), tuples: 140,"),
        "merge: {shown}"
    );
    // route eval: the evaluation is in the main file.
    let out = run_on(
        &p("all.sqlite"),
        &[
            "route",
            "eval",
            "--routers",
            "random,oracle",
            "--features",
            "q",
            "--folds",
            "2",
        ],
    );
    check_ok(&out);
    copy_main(&p("all.sqlite"), &c("evaluated.sqlite"));
    let shown = info(&c("evaluated.sqlite"));
    assert!(
        shown.contains("router evaluations: 1"),
        "route eval: {shown}"
    );
}

#[test]
fn h2_a_store_another_process_holds_is_named_at_close() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("held.sqlite");
    let file = dir.path().join("o.jsonl");
    outcomes(&file, "first", 4);
    check_ok(&run(&["import", "outcomes", s(&file), "--db", s(&db)]));
    outcomes(&file, "second", 6);
    // A reader in an open transaction: the importer's checkpoint cannot finish.
    let mut stderr = String::new();
    on_db(
        &db,
        |_| async {
            let out = run(&["import", "outcomes", s(&file), "--db", s(&db)]);
            check_ok(&out);
            stderr = text(&out.stderr);
        },
        "BEGIN; SELECT count(*) FROM results;",
    );
    let notes: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("another process"))
        .collect();
    assert_eq!(notes.len(), 1, "{stderr}");
    assert!(
        notes[0].contains("held.sqlite") && notes[0].contains("-wal"),
        "{stderr}"
    );
}

#[test]
fn h5_a_corrupt_page_is_refused_before_any_write() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.sqlite");
    std::fs::copy(demo_store(), &db).unwrap();
    let root = query_db(
        &db,
        "SELECT rootpage FROM sqlite_master WHERE name = 'results'",
    )[0];
    let mut bytes = std::fs::read(&db).unwrap();
    // The results table's root page overwritten; the header and the schema are intact.
    let page = 4096;
    let at = (root as usize - 1) * page;
    bytes[at..at + page].fill(0x5A);
    std::fs::write(&db, &bytes).unwrap();
    let before = listing(dir.path());
    let file = dir.path().join("o.jsonl");
    outcomes(&file, "c", 3);
    let before_all = listing(dir.path());
    assert_eq!(before_all.len(), before.len() + 1);
    for argv in [
        vec![
            "bench",
            "demo",
            "--fresh",
            "--cache-dir",
            s(&shared_cache()),
        ],
        vec!["import", "outcomes", s(&file)],
    ] {
        let mut a = argv.clone();
        a.extend(["--db", s(&db)]);
        let out = run(&a);
        check_fails(&out, 2, &["c.sqlite", "corrupt"]);
        assert_eq!(
            std::fs::read(&db).unwrap(),
            bytes,
            "{argv:?} changed the file"
        );
        assert_eq!(
            listing(dir.path()),
            before_all,
            "{argv:?} left files beside it"
        );
    }
}

#[test]
fn h8_db_info_names_an_unmerged_wal() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live.sqlite");
    std::fs::copy(demo_store(), &live).unwrap();
    let copy = tempfile::tempdir().unwrap();
    let db = copy.path().join("walnoshm.sqlite");
    // The store copied with its -wal but not its -shm while a writer had rows in the log.
    on_db(
        &live,
        |live| {
            let db = db.clone();
            async move {
                std::fs::copy(&live, &db).unwrap();
                std::fs::copy(side(&live, "-wal"), side(&db, "-wal")).unwrap();
            }
        },
        "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; DELETE FROM results;",
    );
    let wal_len = std::fs::metadata(side(&db, "-wal")).unwrap().len();
    assert!(wal_len > 0);
    let before = listing(copy.path());
    let shown = info(&db);
    assert!(
        shown.contains(&format!("walnoshm.sqlite-wal ({wal_len} bytes)")),
        "{shown}"
    );
    assert!(shown.contains("leave out"), "{shown}");
    assert_eq!(
        listing(copy.path()),
        before,
        "db info created or changed a file"
    );
}

#[test]
fn h17_a_vacuumed_copy_of_a_shard_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    std::fs::copy(demo_store(), p("s1.sqlite")).unwrap();
    let target = p("s1b.sqlite");
    on_db(
        &p("s1.sqlite"),
        |_| async {},
        &format!("VACUUM INTO '{}'", target.display()),
    );
    assert_ne!(
        std::fs::read(p("s1.sqlite")).unwrap(),
        std::fs::read(&target).unwrap(),
        "the vacuumed copy must differ in bytes"
    );
    let out = run(&["merge", s(&p("out.sqlite")), s(&p("s1.sqlite")), s(&target)]);
    check_fails(&out, 2, &["s1.sqlite", "s1b.sqlite", "same"]);
    assert!(!p("out.sqlite").exists(), "an output was left");
}

#[test]
fn h21_foreign_names_are_printed_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ansi.db");
    on_db(
        &db,
        |_| async {},
        "CREATE TABLE \"x\x1b[31mRED\x1b[0m\nfake: yes\" (a); CREATE VIEW \"v\x07\" AS SELECT 1;",
    );
    let shown = info(&db);
    let out = bench_demo(&db, &[]);
    check_fails(&out, 2, &["ansi.db"]);
    let refusal = text(&out.stderr);
    for (what, t) in [("db info", &shown), ("bench", &refusal)] {
        assert!(!t.contains('\x1b') && !t.contains('\x07'), "{what}: {t:?}");
        assert!(
            !t.lines().any(|l| l.starts_with("fake: yes")),
            "{what}: {t}"
        );
        assert!(
            t.contains(r"x\u{1b}[31mRED\u{1b}[0m\nfake: yes"),
            "{what}: {t}"
        );
    }
}

#[test]
fn h25_db_info_names_a_held_store_without_driver_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("locked.sqlite");
    // A rollback-journal file whose exclusive lock another process holds: nobody may read it.
    on_db(&db, |_| async {}, "CREATE TABLE t (a);");
    let mut out = None;
    on_db(
        &db,
        |_| async {
            out = Some(run(&["db", "info", s(&db)]));
        },
        "BEGIN EXCLUSIVE;",
    );
    let out = out.unwrap();
    let err = text(&out.stderr);
    assert!(!out.status.success());
    assert!(!err.contains("slow statement"), "{err}");
    assert!(
        err.contains("locked.sqlite") && err.contains("another process holds"),
        "{err}"
    );
}

/// Runs `command` while another connection holds `db`'s write lock for `hold`.
fn while_held(db: &Path, hold: Duration, command: impl FnOnce() -> Output) -> Output {
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::channel();
        let holder = scope.spawn(move || {
            on_db(
                db,
                |_| async move {
                    tx.send(()).unwrap();
                    tokio::time::sleep(hold).await;
                },
                "BEGIN IMMEDIATE;",
            )
        });
        rx.recv().unwrap();
        let out = command();
        holder.join().unwrap();
        out
    })
}

#[test]
fn h25_waiting_for_a_lock_prints_no_driver_warning() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("busy.sqlite");
    let file = dir.path().join("o.jsonl");
    outcomes(&file, "first", 3);
    check_ok(&run(&["import", "outcomes", s(&file), "--db", s(&db)]));
    outcomes(&file, "second", 5);
    // The import waits 2.5 s for the lock, then writes; bench's tasks also wait for the one
    // connection while a statement waits for the lock.
    let import = while_held(&db, Duration::from_millis(2500), || {
        run(&["import", "outcomes", s(&file), "--db", s(&db)])
    });
    let demo = dir.path().join("demo.sqlite");
    std::fs::copy(demo_store(), &demo).unwrap();
    let bench = while_held(&demo, Duration::from_secs(4), || {
        bench_demo(&demo, &["--fresh"])
    });
    for (what, out) in [("import", import), ("bench", bench)] {
        check_ok(&out);
        let err = text(&out.stderr);
        assert!(!err.contains("slow statement"), "{what}: {err}");
        assert!(!err.contains("WARN sqlx"), "{what}: {err}");
    }
}

#[cfg(unix)]
#[test]
fn h19_db_info_on_a_symlink_loop_is_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("loopa"), dir.path().join("loopb"));
    std::os::unix::fs::symlink(&b, &a).unwrap();
    std::os::unix::fs::symlink(&a, &b).unwrap();
    let out = run(&["db", "info", s(&a)]);
    check_fails(&out, 2, &["loopa", "symbolic link"]);
    assert!(
        !text(&out.stderr).contains("os error 40"),
        "{}",
        text(&out.stderr)
    );
}
