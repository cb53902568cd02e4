//! The README's promise "bad input exits 2" walked class by class, foreign and empty databases
//! left untouched by every command, and failures that must not pass for success.

mod common;

use common::*;

use std::path::{Path, PathBuf};

/// A small JSONL corpus in the generic format; `corpus` is the corpus file's bytes.
fn jsonl_dir(root: &Path, name: &str, corpus: &[u8]) -> PathBuf {
    let d = root.join(name);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("corpus.jsonl"), corpus).unwrap();
    std::fs::write(
        d.join("queries.jsonl"),
        "{\"id\": \"q1\", \"question\": \"What?\", \"answers\": [\"x\"], \"type\": \"factual\"}\n",
    )
    .unwrap();
    d
}

/// An SQLite file of another application (rollback journal, one table with rows).
fn foreign_db(path: &Path) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode};
        use sqlx::ConnectOptions;
        let mut c = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Delete)
            .connect()
            .await
            .unwrap();
        sqlx::raw_sql(
            "CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL); INSERT INTO invoices (total) VALUES (9.5);",
        )
        .execute(&mut c)
        .await
        .unwrap();
    });
}

#[test]
fn every_bad_input_class_exits_2_with_one_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let db = root.join("r.sqlite");
    let cache = root.join("cache");
    let cfg_bad = root.join("bad.toml");
    std::fs::write(&cfg_bad, "[retrieval]\ntopk = 3\n").unwrap();
    let cfg_latin1 = root.join("latin1.toml");
    std::fs::write(&cfg_latin1, b"seed = 1\n# caf\xe9\n").unwrap();
    let malformed = jsonl_dir(
        root,
        "malformed",
        b"{\"id\": \"d1\", \"title\": \"T\", \"text\": \"Some text.\"}\n{\"id\": \"d2\", \"title\": 5, \"text\": \"x\"}\n",
    );
    let not_utf8 = jsonl_dir(
        root,
        "latin1",
        b"{\"id\": \"d1\", \"title\": \"T\", \"text\": \"Some text.\"}\n{\"id\": \"d2\", \"title\": \"Caf\xe9\", \"text\": \"x\"}\n",
    );
    let empty_data = root.join("no-data-here");
    std::fs::create_dir_all(&empty_data).unwrap();
    let foreign = root.join("app.db");
    foreign_db(&foreign);
    let foreign_before = std::fs::read(&foreign).unwrap();
    let emb = root.join("e.f32");
    std::fs::write(&emb, [0u8; 32]).unwrap();
    let bench = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = vec!["bench".into()];
        v.extend(extra.iter().map(|x| x.to_string()));
        if !extra.contains(&"--db") {
            v.extend(["--db".into(), s(&db).into()]);
        }
        v.extend(["--cache-dir".into(), s(&cache).into()]);
        v
    };
    let jsonl = |d: &Path| format!("jsonl:{}", d.display());
    let missing_jsonl = jsonl(&root.join("nowhere"));
    let (malformed_arg, latin1_arg) = (jsonl(&malformed), jsonl(&not_utf8));
    // (what, argv, phrases the message must hold)
    let cases: Vec<(&str, Vec<String>, Vec<&str>)> = vec![
        (
            "unknown corpus",
            bench(&["no-such-corpus"]),
            vec!["no-such-corpus", "demo"],
        ),
        (
            "unknown paradigm",
            bench(&["demo", "--paradigms", "naive,graphrag"]),
            vec!["graphrag"],
        ),
        (
            "malformed data file",
            bench(&[&malformed_arg]),
            vec!["corpus.jsonl", "line 2", "title"],
        ),
        (
            "data file not UTF-8",
            bench(&[&latin1_arg]),
            vec!["corpus.jsonl", "line 2", "UTF-8"],
        ),
        (
            "missing corpus files (jsonl)",
            bench(&[&missing_jsonl]),
            vec!["nowhere"],
        ),
        (
            "missing corpus files (data dir)",
            bench(&["musique-dev", "--data-dir", s(&empty_data)]),
            vec!["musique", "not found"],
        ),
        (
            "bad configuration",
            bench(&["demo", "--config", s(&cfg_bad)]),
            vec!["bad.toml", "topk"],
        ),
        (
            "missing --config file",
            bench(&["demo", "--config", s(&root.join("nope.toml"))]),
            vec!["nope.toml", "does not exist"],
        ),
        (
            "--config not UTF-8",
            bench(&["demo", "--config", s(&cfg_latin1)]),
            vec!["latin1.toml", "line 2", "UTF-8"],
        ),
        (
            "--db is a directory",
            bench(&["demo", "--db", s(root)]),
            vec!["is a directory"],
        ),
        (
            "--db is another application's database",
            bench(&["demo", "--db", s(&foreign)]),
            vec!["app.db", "not a ragrouter results database", "invoices"],
        ),
        (
            "metrics: a dimension larger than the file",
            [
                "metrics",
                "--embeddings",
                s(&emb),
                "--dim",
                "4611686018427387904",
            ]
            .map(String::from)
            .to_vec(),
            vec!["e.f32", "dimension 4611686018427387904"],
        ),
        (
            "metrics: missing embeddings file",
            [
                "metrics",
                "--embeddings",
                s(&root.join("none.f32")),
                "--dim",
                "4",
            ]
            .map(String::from)
            .to_vec(),
            vec!["none.f32"],
        ),
        (
            "route eval: no results database",
            ["route", "eval", "--db", s(&root.join("none.sqlite"))]
                .map(String::from)
                .to_vec(),
            vec!["none.sqlite", "does not exist"],
        ),
        (
            "route eval: another application's database",
            ["route", "eval", "--db", s(&foreign)]
                .map(String::from)
                .to_vec(),
            vec!["not a ragrouter results database"],
        ),
        (
            "report: --db is a directory",
            ["report", "--out", s(&root.join("out")), "--db", s(root)]
                .map(String::from)
                .to_vec(),
            vec!["is a directory"],
        ),
    ];
    for (what, argv, needles) in &cases {
        let out = run(&argv.iter().map(String::as_str).collect::<Vec<_>>());
        let err = text(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{what}: exit {:?}\n{err}",
            out.status.code()
        );
        for n in needles {
            assert!(err.contains(n), "{what}: message lacks {n:?}:\n{err}");
        }
        // One message, each OS error at most once.
        assert_eq!(err.matches("error:").count(), 1, "{what}:\n{err}");
        assert!(
            err.matches("(os error").count() <= 1,
            "{what}: repeats the OS error:\n{err}"
        );
        assert!(!err.contains("panicked"), "{what}:\n{err}");
    }
    assert!(
        !db.exists(),
        "a command that failed on bad input wrote {}",
        db.display()
    );
    assert_eq!(
        std::fs::read(&foreign).unwrap(),
        foreign_before,
        "the foreign database changed"
    );
    assert!(!root.join("app.db-wal").exists());
}

#[test]
fn readers_never_give_an_empty_file_a_schema() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.sqlite");
    std::fs::write(&empty, b"").unwrap();
    for argv in [
        vec!["route", "eval", "--db", s(&empty)],
        vec![
            "report",
            "--out",
            s(&dir.path().join("out")),
            "--db",
            s(&empty),
        ],
    ] {
        let out = run(&argv);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{argv:?}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).contains("holds no results"),
            "{}",
            text(&out.stderr)
        );
        assert_eq!(
            std::fs::metadata(&empty).unwrap().len(),
            0,
            "{argv:?} wrote the file"
        );
    }
}

#[test]
fn a_run_in_which_every_tuple_failed_exits_1_and_stays_unfinished() {
    use llm::mock::{MockReply, MockServer};
    // Every request is refused for good (400: not retried), so every tuple records an error.
    let mock = MockServer::start(|_| MockReply::status(400));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let out = bin()
        .env("OPENAI_API_KEY", "sk-test")
        .args(["bench", "demo", "--paradigms", "llm-only", "--limit", "4"])
        .args([
            "--llm-base-url",
            &mock.base_url(),
            "--llm-model",
            "mock-model",
        ])
        .arg("--db")
        .arg(&db)
        .arg("--cache-dir")
        .arg(shared_cache())
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("every one of run 1's 4 tuples failed"),
        "{err}"
    );
    assert_eq!(
        query_db(&db, "SELECT count(*) FROM results WHERE error IS NOT NULL")[0],
        4
    );
    assert_eq!(
        query_db(&db, "SELECT count(*) FROM runs WHERE finished_at IS NULL")[0],
        1
    );
}

/// README: Quick start, then Routers, then Reports, literally (with a database in a temporary
/// directory): the bench run stores the corpus indicators, so `route eval` needs no `metrics`
/// step; a router that fails makes `route eval` exit 1; the report is written.
#[test]
fn quick_start_then_routers_then_report_runs_to_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let with_db = |args: &[&str]| {
        bin()
            .args(args)
            .arg("--db")
            .arg(&db)
            .arg("--cache-dir")
            .arg(shared_cache())
            .output()
            .unwrap()
    };
    let out = with_db(&["bench", "demo"]);
    check_ok(&out);
    assert!(
        text(&out.stdout).contains("corpus indicators"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(query_db(&db, "SELECT count(*) FROM corpus_metrics")[0], 1);

    let out = with_db(&["route", "eval"]);
    check_ok(&out);
    assert!(
        text(&out.stdout).contains("evaluation 1 stored"),
        "{}",
        text(&out.stdout)
    );

    // A failing external router: the others are measured and stored, the command fails.
    let out = with_db(&[
        "route",
        "eval",
        "--routers",
        "random,oracle",
        "--external",
        "broken=/nonexistent/router-program",
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("broken") && err.contains("failed"), "{err}");
    assert_eq!(query_db(&db, "SELECT count(*) FROM route_evals")[0], 2);

    let report = dir.path().join("report");
    let out = bin()
        .args(["report", "--out"])
        .arg(&report)
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    check_ok(&out);
    assert!(report.join("report.html").exists());
}
