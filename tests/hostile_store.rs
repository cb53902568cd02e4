//! Hostile input to the results store and the loaders (issue #29, part A): another
//! application's SQLite file is refused byte-identical with nothing created beside it, however
//! it is dressed (a `sqliteX` table, a view, our table names, a trigger, another application
//! id, WAL mode); corrupt, truncated and FIFO `--db` exit 2; credentials never reach a message;
//! a NUL, a BOM, a lone surrogate and bytes that are not UTF-8 are named by file, line and
//! field; concurrent imports wait for the lock; an unreachable server is named.

mod common;

use common::*;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

/// Runs `sql` on the SQLite file at `path` (created if missing) as another application would:
/// rollback journal, or WAL when `wal`; the connection is closed (no side file stays).
fn sqlite_exec(path: &Path, sql: &str, wal: bool) {
    use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode};
    use sqlx::{ConnectOptions, Connection};
    block_on(async {
        let mode = if wal {
            SqliteJournalMode::Wal
        } else {
            SqliteJournalMode::Delete
        };
        let mut c = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(mode)
            .connect()
            .await
            .unwrap();
        sqlx::raw_sql(sql).execute(&mut c).await.unwrap();
        c.close().await.unwrap();
    });
}

/// The names and sizes of the files in `dir`, sorted.
fn listing(dir: &Path) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let len = e.metadata().map(|m| m.len()).unwrap_or(0);
            (e.file_name().to_string_lossy().into_owned(), len)
        })
        .collect();
    v.sort();
    v
}

/// A generic-format outcomes file of `n` questions of corpus `corpus`.
fn outcomes_file(path: &Path, corpus: &str, n: usize) {
    let mut text = String::new();
    for i in 0..n {
        text.push_str(&format!(
            r#"{{"id":"q{i}","corpus":"{corpus}","question":"Question number {i}?","answers":["a{i}"],"outcomes":{{"naive":{{"correct":{},"cost":10}},"graph":{{"correct":true,"cost":90}}}}}}"#,
            i % 2 == 0
        ));
        text.push('\n');
    }
    std::fs::write(path, text).unwrap();
}

/// A results store made by `import` (no encoder needed): `db` holds one run of 5 questions.
fn real_store(dir: &Path, db: &Path) {
    let file = dir.join("seed-outcomes.jsonl");
    outcomes_file(&file, "seed", 5);
    check_ok(&run(&["import", "outcomes", s(&file), "--db", s(db)]));
    std::fs::remove_file(&file).unwrap();
    checkpoint(db);
}

/// Moves everything of a WAL-mode file's log into the file; closing removes `-wal` and `-shm`.
fn checkpoint(db: &Path) {
    sqlite_exec(db, "PRAGMA wal_checkpoint(TRUNCATE);", true);
}

/// Every command that opens `--db` fails with exit 2 naming the file and `needle`, and the
/// file and its folder are exactly as before (bytes and listing).
fn refused_untouched(db: &Path, needle: &str) {
    let dir = db.parent().unwrap();
    let work = tempfile::tempdir().unwrap();
    let outcomes = work.path().join("o.jsonl");
    outcomes_file(&outcomes, "c", 3);
    let (bytes, files) = (std::fs::read(db).unwrap(), listing(dir));
    let cache = work.path().join("cache");
    let report = work.path().join("report");
    let commands: Vec<Vec<&str>> = vec![
        vec!["bench", "demo", "--cache-dir", s(&cache)],
        vec!["import", "outcomes", s(&outcomes)],
        vec!["report", "--out", s(&report)],
        vec!["route", "eval", "--cache-dir", s(&cache)],
        vec!["metrics", "demo", "--cache-dir", s(&cache)],
    ];
    for argv in commands {
        let mut a = argv.clone();
        a.extend(["--db", s(db)]);
        let out = run(&a);
        check_fails(&out, 2, &[s(db), needle]);
        assert_eq!(
            std::fs::read(db).unwrap(),
            bytes,
            "{argv:?} changed {}",
            db.display()
        );
        assert_eq!(
            listing(dir),
            files,
            "{argv:?} left files beside {}",
            db.display()
        );
    }
    // `db info` describes it, still without touching it.
    let out = run(&["db", "info", s(db)]);
    check_ok(&out);
    assert!(
        text(&out.stdout).contains("ragrouter results database: no:"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(std::fs::read(db).unwrap(), bytes);
    assert_eq!(listing(dir), files);
}

#[test]
fn foreign_sqlite_files_are_refused_byte_identical_with_nothing_beside_them() {
    let root = tempfile::tempdir().unwrap();
    let case = |name: &str| {
        let d = root.path().join(name);
        std::fs::create_dir_all(&d).unwrap();
        d.join("app.db")
    };
    // 1: `_` of LIKE 'sqlite_%' matched the X: this file was taken as empty.
    let f = case("sqlitex");
    sqlite_exec(
        &f,
        "CREATE TABLE sqliteXusers (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO sqliteXusers (name) VALUES ('ada');",
        false,
    );
    refused_untouched(&f, "sqliteXusers");
    // 2: a view alone was taken as a new file.
    let f = case("view");
    sqlite_exec(&f, "CREATE VIEW totals AS SELECT 1 AS n;", false);
    refused_untouched(&f, "view totals");
    // 3: our table names and a schema version: its journal became WAL, then exit 1.
    let f = case("lookalike");
    sqlite_exec(
        &f,
        "CREATE TABLE runs (id INTEGER); CREATE TABLE results (run_id INTEGER);
         CREATE TABLE corpora (name TEXT); PRAGMA user_version = 5;",
        false,
    );
    refused_untouched(&f, "not a ragrouter results database");
    // Another application's id on an otherwise empty file.
    let f = case("appid");
    sqlite_exec(&f, "PRAGMA application_id = 1234;", false);
    refused_untouched(&f, "application id 1234");
    // A WAL-mode file: a normal read-only open would create -wal and -shm beside it.
    let f = case("wal");
    sqlite_exec(
        &f,
        "CREATE TABLE notes (body TEXT); CREATE INDEX notes_body ON notes(body);
         INSERT INTO notes VALUES ('x');",
        true,
    );
    refused_untouched(&f, "notes");
    // Our own schema with a trigger added, marked and (as if written before the marker) not.
    let f = case("trigger");
    real_store(f.parent().unwrap(), &f);
    sqlite_exec(
        &f,
        "CREATE TRIGGER audit AFTER INSERT ON runs BEGIN SELECT 1; END;",
        false,
    );
    refused_untouched(&f, "trigger audit");
    sqlite_exec(&f, "PRAGMA application_id = 0;", false);
    refused_untouched(&f, "not a ragrouter results database");
    // Our own schema plus someone's table and index.
    let f = case("extra");
    real_store(f.parent().unwrap(), &f);
    sqlite_exec(
        &f,
        "CREATE TABLE mine (x INTEGER); CREATE INDEX mine_x ON mine(x);",
        false,
    );
    refused_untouched(&f, "index mine_x");
}

#[test]
fn a_newer_schema_in_wal_mode_is_refused_with_no_side_files() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    real_store(dir.path(), &db);
    sqlite_exec(&db, "PRAGMA user_version = 999;", true);
    refused_untouched_newer(&db);
}

/// As [`refused_untouched`], for a store of a newer schema (which `db info` calls ours).
fn refused_untouched_newer(db: &Path) {
    let dir = db.parent().unwrap();
    let (bytes, files) = (std::fs::read(db).unwrap(), listing(dir));
    let report = dir.join("..").join("newer-report");
    for argv in [
        vec!["report", "--out", s(&report)],
        vec!["bench", "demo", "--cache-dir", "/nonexistent-cache"],
    ] {
        let mut a = argv.clone();
        a.extend(["--db", s(db)]);
        check_fails(&run(&a), 2, &[s(db), "newer"]);
        assert_eq!(std::fs::read(db).unwrap(), bytes);
        assert_eq!(listing(dir), files);
    }
}

#[test]
fn a_store_written_before_the_marker_is_recognised_read_and_marked_on_its_next_write() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    real_store(dir.path(), &db);
    let id: i64 = try_fetch(&db, "PRAGMA application_id").unwrap()[0];
    assert_eq!(id, i64::from(store::APPLICATION_ID));
    // As written before the marker existed. The store is in WAL mode; keeping it needs no
    // exclusive lock (switching to DELETE did, and once met "database is locked" on a loaded
    // machine while the previous reader's connection was still closing).
    sqlite_exec(&db, "PRAGMA application_id = 0;", true);
    let out = run(&["db", "info", s(&db)]);
    check_ok(&out);
    let info = text(&out.stdout);
    assert!(info.contains("recognised by its exact schema"), "{info}");
    assert!(info.contains("runs: 1 (1 finished), tuples: 10"), "{info}");
    // Reading does not mark it; writing does.
    let report = dir.path().join("report");
    check_ok(&run(&["report", "--out", s(&report), "--db", s(&db)]));
    assert_eq!(query_db(&db, "PRAGMA application_id"), vec![0]);
    let more = dir.path().join("more.jsonl");
    outcomes_file(&more, "more", 4);
    check_ok(&run(&["import", "outcomes", s(&more), "--db", s(&db)]));
    assert_eq!(
        query_db(&db, "PRAGMA application_id"),
        vec![i64::from(store::APPLICATION_ID)]
    );
    let info = text(&run(&["db", "info", s(&db)]).stdout);
    assert!(
        info.contains("ragrouter results database: yes (application id 0x72677274)"),
        "{info}"
    );
    assert!(info.contains("runs: 2 (2 finished), tuples: 18"), "{info}");
}

#[test]
fn db_info_describes_files_and_refuses_what_is_not_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.sqlite");
    let out = run(&["db", "info", s(&missing)]);
    check_ok(&out);
    assert!(
        text(&out.stdout).contains("not yet"),
        "{}",
        text(&out.stdout)
    );
    assert!(!missing.exists(), "db info created the file");
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "plain text, not a database\n".repeat(10)).unwrap();
    check_fails(
        &run(&["db", "info", s(&notes)]),
        2,
        &["notes.txt", "not an SQLite database"],
    );
    check_fails(&run(&["db", "info", s(dir.path())]), 2, &["is a directory"]);
    let out = run(&["db", "info", &format!("postgres://u:{SECRET}@h/d")]);
    masked(&out, 2, &["takes an SQLite file", "u:***@h"]);
    let help = text(&run(&["db", "info", "--help"]).stdout);
    assert!(
        help.contains("Examples:") && help.contains("ragrouter db info"),
        "{help}"
    );
}

#[test]
fn corrupt_truncated_and_fifo_databases_exit_2_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.sqlite");
    real_store(dir.path(), &good);
    let bytes = std::fs::read(&good).unwrap();
    let page = 4096;
    assert!(bytes.len() > 4 * page, "{} bytes", bytes.len());
    let report = dir.path().join("report");
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("half.sqlite", bytes[..2 * page].to_vec(), "truncated"),
        ("cut.sqlite", bytes[..page + 1000].to_vec(), "truncated"),
        (
            "corrupt.sqlite",
            {
                let mut b = bytes.clone();
                b[100..page].fill(0xA5);
                b
            },
            "corrupt",
        ),
    ];
    for (name, content, needle) in cases {
        let f = dir.path().join(name);
        std::fs::write(&f, &content).unwrap();
        for argv in [
            vec!["report", "--out", s(&report)],
            vec!["bench", "demo", "--cache-dir", "/nonexistent-cache"],
        ] {
            let mut a = argv.clone();
            a.extend(["--db", s(&f)]);
            check_fails(&run(&a), 2, &[name, needle]);
            assert_eq!(std::fs::read(&f).unwrap(), content, "{name} changed");
        }
    }
    let fifo = dir.path().join("pipe.sqlite");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    for argv in [
        vec!["report", "--out", s(&report)],
        vec!["bench", "demo", "--cache-dir", "/nonexistent-cache"],
        vec!["db", "info"],
    ] {
        let mut a = argv.clone();
        a.push(if argv[0] == "db" { s(&fifo) } else { "--db" });
        if argv[0] != "db" {
            a.push(s(&fifo));
        }
        check_fails(&run(&a), 2, &["pipe.sqlite", "not a regular file"]);
    }
}

const SECRET: &str = "s3cr3tPW";

/// The command failed with `code`, and neither stdout nor stderr holds the secret.
fn masked(out: &Output, code: i32, needles: &[&str]) {
    check_fails(out, code, needles);
    for (what, t) in [("stdout", text(&out.stdout)), ("stderr", text(&out.stderr))] {
        assert!(!t.contains(SECRET), "the password is in {what}:\n{t}");
    }
}

/// A loopback port nothing listens on.
fn closed_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn credentials_are_masked_in_every_message_including_the_argument_parsers() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report");
    let port = closed_port();
    // Malformed URLs: the argument parser used to echo them raw.
    for db in [
        format!("postgres://bench:{SECRET}@"),
        format!("mysql://bench:{SECRET}@db.lab/x"),
        format!("host=db.lab user=bench password={SECRET}"),
        format!("postgres://bench:{SECRET}@/x?password={SECRET}"),
    ] {
        let out = run(&["report", "--out", s(&report), "--db", &db]);
        masked(&out, 2, &["--db", "***"]);
        // The same value from the environment.
        let out = bin()
            .args(["import", "outcomes", "x.jsonl"])
            .env("RAGROUTER_DB", &db)
            .output()
            .unwrap();
        masked(&out, 2, &["***"]);
    }
    // Well-formed URLs to a closed port, the password in the user part or a query parameter.
    for db in [
        format!("postgres://bench:{SECRET}@127.0.0.1:{port}/rr"),
        format!("postgres://bench@127.0.0.1:{port}/rr?password={SECRET}&sslmode=disable"),
        format!("postgresql://bench@127.0.0.1:{port}/rr?PASSWORD={SECRET}"),
    ] {
        let out = run(&["report", "--out", s(&report), "--db", &db]);
        masked(&out, 1, &[&format!("127.0.0.1:{port}"), "***"]);
    }
}

#[test]
fn an_unreachable_postgresql_is_named_by_host_and_port() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report");
    // Nothing listens: refused at once, named.
    let port = closed_port();
    let out = run(&[
        "report",
        "--out",
        s(&report),
        "--db",
        &format!("postgres://bench@127.0.0.1:{port}/rr"),
    ]);
    check_fails(
        &out,
        1,
        &[&format!(
            "cannot connect to the PostgreSQL server at 127.0.0.1:{port}"
        )],
    );
    assert!(!text(&out.stderr).contains("pool timed out"));
    // Something accepts the connection and never answers: the settable wait, then named.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let out = bin()
        .args(["report", "--out", s(&report), "--db"])
        .arg(format!("postgres://bench@127.0.0.1:{port}/rr"))
        .env("RAGROUTER_PG_CONNECT_TIMEOUT", "1")
        .output()
        .unwrap();
    check_fails(
        &out,
        1,
        &[
            &format!("PostgreSQL server at 127.0.0.1:{port} did not answer within 1 s"),
            "RAGROUTER_PG_CONNECT_TIMEOUT",
        ],
    );
    drop(silent);
    let out = bin()
        .args([
            "report",
            "--out",
            s(&report),
            "--db",
            "postgres://b@127.0.0.1:1/rr",
        ])
        .env("RAGROUTER_PG_CONNECT_TIMEOUT", "soon")
        .output()
        .unwrap();
    check_fails(&out, 2, &["RAGROUTER_PG_CONNECT_TIMEOUT", "soon"]);
}

/// A generic-format corpus folder whose queries file is `queries` (bytes).
fn jsonl_corpus(root: &Path, name: &str, queries: &[u8]) -> PathBuf {
    let d = root.join(name);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(
        d.join("corpus.jsonl"),
        "{\"id\": \"d1\", \"title\": \"Paris\", \"text\": \"Paris is the capital of France.\"}\n",
    )
    .unwrap();
    std::fs::write(d.join("queries.jsonl"), queries).unwrap();
    d
}

const GOOD_QUERY: &str =
    "{\"id\": \"q1\", \"question\": \"What is the capital of France?\", \"answers\": [\"Paris\"], \"type\": \"factual\"}\n";

#[test]
fn a_nul_in_a_question_is_refused_at_load_naming_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let corpus = jsonl_corpus(
        dir.path(),
        "nul",
        format!("{GOOD_QUERY}{{\"id\": \"q2\", \"question\": \"Wh\\u0000at?\", \"answers\": [\"x\"], \"type\": \"factual\"}}\n")
            .as_bytes(),
    );
    let arg = format!("jsonl:{}", corpus.display());
    let cache = dir.path().join("cache");
    let out = run(&["bench", &arg, "--db", s(&db), "--cache-dir", s(&cache)]);
    check_fails(&out, 2, &["queries.jsonl", "line 2", "\"question\"", "NUL"]);
    assert!(!db.exists(), "a database was created for a refused corpus");
    let outcomes = dir.path().join("o.jsonl");
    std::fs::write(
        &outcomes,
        "{\"id\":\"q1\",\"corpus\":\"c\",\"question\":\"a\\u0000b\",\"outcomes\":{\"naive\":{\"correct\":true,\"cost\":1}}}\n",
    )
    .unwrap();
    let out = run(&["import", "outcomes", s(&outcomes), "--db", s(&db)]);
    check_fails(&out, 2, &["o.jsonl", "line 1", "\"question\"", "NUL"]);
    assert!(!db.exists());
}

#[test]
#[ignore = "needs a PostgreSQL server (RAGROUTER_TEST_PG; scripts/pg-test.sh start, .ci/run starts one)"]
fn a_nul_in_a_question_is_refused_on_postgresql_too() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = jsonl_corpus(
        dir.path(),
        "nul",
        format!("{GOOD_QUERY}{{\"id\": \"q2\", \"question\": \"Wh\\u0000at?\", \"answers\": [\"x\"], \"type\": \"factual\"}}\n")
            .as_bytes(),
    );
    let arg = format!("jsonl:{}", corpus.display());
    let cache = dir.path().join("cache");
    let outcomes = dir.path().join("o.jsonl");
    std::fs::write(
        &outcomes,
        "{\"id\":\"q1\",\"corpus\":\"c\",\"question\":\"a\\u0000b\",\"outcomes\":{\"naive\":{\"correct\":true,\"cost\":1}}}\n",
    )
    .unwrap();
    // The same refusal with a PostgreSQL store, which cannot hold a NUL at all.
    let admin = test_pg();
    let url = fresh_pg(&admin, "rr_hostile_nul");
    let out = run(&["bench", &arg, "--db", &url, "--cache-dir", s(&cache)]);
    check_fails(&out, 2, &["queries.jsonl", "line 2", "\"question\"", "NUL"]);
    let out = run(&["import", "outcomes", s(&outcomes), "--db", &url]);
    check_fails(&out, 2, &["o.jsonl", "line 1", "\"question\"", "NUL"]);
    let tables: Vec<i64> = pg_fetch(
        &url,
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()",
    );
    assert_eq!(tables, vec![0], "a refused load wrote into PostgreSQL");
}

#[test]
fn concurrent_imports_into_one_sqlite_file_wait_for_the_lock() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    // Imports this large overlap: before they took the write lock first, all but one failed
    // with "database is locked".
    let (n, questions) = (3, 20_000);
    let files: Vec<PathBuf> = (0..n)
        .map(|i| {
            let f = dir.path().join(format!("o{i}.jsonl"));
            outcomes_file(&f, &format!("c{i}"), questions);
            f
        })
        .collect();
    let children: Vec<_> = files
        .iter()
        .map(|f| {
            bin()
                .args(["import", "outcomes", s(f), "--db", s(&db)])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        check_ok(&c.wait_with_output().unwrap());
    }
    assert_eq!(query_db(&db, "SELECT count(*) FROM runs"), vec![n as i64]);
    assert_eq!(
        query_db(&db, "SELECT count(*) FROM results"),
        vec![n as i64 * questions as i64 * 2]
    );
}

#[test]
fn usage_errors_and_folder_arguments_that_are_files_exit_2_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let db = dir.path().join("r.sqlite");
    check_fails(&run(&["metrics"]), 2, &["nothing to measure"]);
    check_fails(
        &run(&["metrics", "--embeddings", s(&file)]),
        2,
        &["--embeddings and --dim go together"],
    );
    check_fails(
        &run(&["metrics", "demo", "--edges", s(&file)]),
        2,
        &["either a corpus name or --edges"],
    );
    let under = file.join("sub");
    for (argv, flag) in [
        (
            vec!["bench", "demo", "--db", s(&db), "--cache-dir", s(&file)],
            "--cache-dir",
        ),
        (
            vec!["bench", "demo", "--db", s(&db), "--cache-dir", s(&under)],
            "--cache-dir",
        ),
        (
            vec!["metrics", "demo", "--db", s(&db), "--cache-dir", s(&file)],
            "--cache-dir",
        ),
        (
            vec!["route", "eval", "--db", s(&db), "--cache-dir", s(&file)],
            "--cache-dir",
        ),
        (
            vec!["graph", "demo", "--db", s(&db), "--cache-dir", s(&file)],
            "--cache-dir",
        ),
        (vec!["setup", "--model-dir", s(&file)], "--model-dir"),
        (
            vec!["bench", "demo", "--db", s(&db), "--model-dir", s(&file)],
            "--model-dir",
        ),
        (vec!["report", "--db", s(&db), "--out", s(&file)], "--out"),
    ] {
        check_fails(&run(&argv), 2, &[flag, "a-file"]);
        assert!(!db.exists(), "{argv:?} created the database");
        assert_eq!(std::fs::read(&file).unwrap(), b"x");
    }
    // `report --out` at a file is refused before the store is read, not after.
    real_store(dir.path(), &db);
    check_fails(
        &run(&["report", "--db", s(&db), "--out", s(&file)]),
        2,
        &["--out", "is a file"],
    );
}

#[test]
fn long_lines_are_cut_and_text_files_are_named_by_line() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let db = root.join("r.sqlite");
    let cache = root.join("cache");
    // A TOML error quoting a 200 kB line.
    let cfg = root.join("long.toml");
    std::fs::write(&cfg, format!("seed = \"{}\"\n", "x".repeat(200_000))).unwrap();
    let out = run(&[
        "bench",
        "demo",
        "--config",
        s(&cfg),
        "--db",
        s(&db),
        "--cache-dir",
        s(&cache),
    ]);
    check_fails(&out, 2, &["long.toml", "line 1", "more characters"]);
    assert!(
        out.stderr.len() < 4000,
        "{} bytes of stderr",
        out.stderr.len()
    );
    // corpus.toml: a long line, then bytes that are not UTF-8.
    let c = jsonl_corpus(root, "longname", GOOD_QUERY.as_bytes());
    std::fs::write(
        c.join("corpus.toml"),
        format!("name = [{}]\n", "1,".repeat(100_000)),
    )
    .unwrap();
    let arg = format!("jsonl:{}", c.display());
    let out = run(&["bench", &arg, "--dry-run", "--db", s(&db)]);
    check_fails(&out, 2, &["corpus.toml"]);
    assert!(
        out.stderr.len() < 4000,
        "{} bytes of stderr",
        out.stderr.len()
    );
    std::fs::write(
        c.join("corpus.toml"),
        b"description = \"ok\"\nname = \"caf\xe9\"\n",
    )
    .unwrap();
    let out = run(&["bench", &arg, "--dry-run", "--db", s(&db)]);
    check_fails(&out, 2, &["corpus.toml", "line 2", "UTF-8"]);
    // An outcomes file that is not UTF-8 on its third line.
    let o = root.join("latin1.jsonl");
    let mut bytes = Vec::new();
    outcomes_file(&o, "c", 2);
    bytes.extend(std::fs::read(&o).unwrap());
    bytes.extend(b"{\"id\":\"q9\",\"corpus\":\"c\",\"question\":\"caf\xe9?\"}\n");
    std::fs::write(&o, bytes).unwrap();
    let out = run(&["import", "outcomes", s(&o), "--db", s(&db)]);
    check_fails(&out, 2, &["latin1.jsonl", "line 3", "UTF-8"]);
    assert!(!db.exists());
}

#[test]
fn a_bom_is_accepted_and_a_lone_surrogate_is_named_with_its_field() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let db = root.join("r.sqlite");
    // A BOM at the start of a data file and of an outcomes file is accepted.
    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend(GOOD_QUERY.as_bytes());
    let c = jsonl_corpus(root, "bom", &bom);
    let arg = format!("jsonl:{}", c.display());
    let out = run(&["bench", &arg, "--dry-run", "--db", s(&db)]);
    check_ok(&out);
    let o = root.join("bom.jsonl");
    outcomes_file(&o, "c", 2);
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend(std::fs::read(&o).unwrap());
    std::fs::write(&o, bytes).unwrap();
    check_ok(&run(&["import", "outcomes", s(&o), "--db", s(&db)]));
    // A lone surrogate: serde's "unexpected end of hex escape" becomes its name and field.
    let bad_db = root.join("bad.sqlite");
    let c = jsonl_corpus(
        root,
        "surrogate",
        format!("{GOOD_QUERY}{{\"id\": \"q2\", \"question\": \"bad \\ud800 half\", \"answers\": [\"x\"], \"type\": \"factual\"}}\n")
            .as_bytes(),
    );
    let arg = format!("jsonl:{}", c.display());
    let out = run(&["bench", &arg, "--dry-run", "--db", s(&bad_db)]);
    check_fails(
        &out,
        2,
        &[
            "queries.jsonl",
            "line 2",
            "field \"question\"",
            "lone surrogate",
            "\\ud800",
        ],
    );
    let o = root.join("surrogate.jsonl");
    std::fs::write(
        &o,
        "{\"id\":\"q1\",\"corpus\":\"c\",\"question\":\"ok\",\"answers\":[\"\\udc00\"],\"outcomes\":{\"naive\":{\"correct\":true,\"cost\":1}}}\n",
    )
    .unwrap();
    let out = run(&["import", "outcomes", s(&o), "--db", s(&bad_db)]);
    check_fails(
        &out,
        2,
        &[
            "surrogate.jsonl",
            "line 1",
            "field \"answers\"",
            "lone surrogate",
        ],
    );
    assert!(!bad_db.exists());
}

/// Runs the binary as an unprivileged user when this test runs as root (root may write any
/// folder, so the folder's mode alone would prove nothing).
fn unprivileged(args: &[&str]) -> Output {
    let root = Command::new("id").arg("-u").output().unwrap();
    if text(&root.stdout).trim() == "0" {
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_ragrouter"))
            .args(args)
            .env_remove("RAGROUTER_DB")
            .env("RAGROUTER_LOG", "warn")
            .current_dir("/")
            .output()
            .expect("setpriv (util-linux) runs the binary as nobody")
    } else {
        bin().args(args).output().unwrap()
    }
}

#[test]
fn report_reads_a_store_in_a_folder_the_user_cannot_write() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let store_dir = dir.path().join("store");
    std::fs::create_dir_all(&store_dir).unwrap();
    let db = store_dir.join("r.sqlite");
    real_store(dir.path(), &db);
    let out_dir = dir.path().join("out");
    std::fs::create_dir_all(&out_dir).unwrap();
    let mode =
        |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    mode(dir.path(), 0o755);
    mode(&out_dir, 0o777);
    // The user owns the file and may write it, but not the folder (no `-shm` can be made).
    let owner = Command::new("chown")
        .arg(unprivileged_uid())
        .arg(&db)
        .status()
        .unwrap();
    assert!(owner.success());
    mode(&db, 0o644);
    mode(&store_dir, 0o555);
    let before = (std::fs::read(&db).unwrap(), listing(&store_dir));
    let report = out_dir.join("report");
    let out = unprivileged(&["report", "--out", s(&report), "--db", s(&db)]);
    mode(&store_dir, 0o755);
    check_ok(&out);
    assert!(report.join("report.html").exists());
    assert_eq!((std::fs::read(&db).unwrap(), listing(&store_dir)), before);
}

/// The user [`unprivileged`] runs as: nobody under root, else this user.
fn unprivileged_uid() -> String {
    let id = text(&Command::new("id").arg("-u").output().unwrap().stdout)
        .trim()
        .to_owned();
    if id == "0" {
        "65534".into()
    } else {
        id
    }
}
