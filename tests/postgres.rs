//! The shared PostgreSQL store (issue #17) against a real server (`RAGROUTER_TEST_PG`; `.ci/run`
//! starts one): three `bench` workers on one run of musique-dev, one SIGKILLed mid-run, store
//! every tuple exactly once and equal a single-process SQLite run; `route eval` and `report`
//! give the same tables on both stores; an import lands the same; a database that is not ours
//! is refused untouched.

mod common;

use common::*;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Questions of musique-dev in the runs here: 7 paradigms each.
const QUESTIONS: usize = 30;
const TUPLES: i64 = QUESTIONS as i64 * 7;

fn datasets() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets")
}

fn cmd(db: &str, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ragrouter"));
    c.env_remove("OPENAI_BASE_URL")
        .env_remove("RAGROUTER_DB")
        .env("RAGROUTER_LOG", "warn")
        .env("RAGROUTER_DATA_DIR", datasets())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .args(["--db", db]);
    if matches!(args[0], "bench" | "route") {
        c.arg("--cache-dir").arg(shared_cache());
    }
    c
}

fn bench(db: &str) -> Command {
    cmd(
        db,
        &["bench", "musique-dev", "--limit", &QUESTIONS.to_string()],
    )
}

fn out(c: &mut Command) -> Output {
    let o = c.output().unwrap();
    check_ok(&o);
    o
}

/// Every tuple's deciding fields, in key order (latency and timestamps left out: they are
/// measured, not computed).
const TUPLES_SQL: &str =
    "SELECT query_id || '|' || paradigm || '|' || answer || '|' || coalesce(judge_label, '-')
            || '|' || context_json || '|' || context_tokens || '|' || coalesce(error, '')
     FROM results ORDER BY query_id, paradigm";

/// A `route eval` table without its last line (which names the database).
fn eval_table(o: &Output) -> String {
    let t = text(&o.stdout);
    let mut lines: Vec<&str> = t.lines().collect();
    assert!(lines.pop().unwrap().starts_with("evaluation "), "{t}");
    lines.join("\n")
}

/// The exported tuples without the measured latency column.
fn tuples_export(dir: &Path) -> String {
    let csv = std::fs::read_to_string(dir.join("exports/tuples.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let at = header.iter().position(|h| *h == "latency_ms").unwrap();
    // Quoted fields may hold commas; the latency column is counted from the end.
    let from_end = header.len() - at;
    csv.lines()
        .map(|l| {
            let mut f: Vec<&str> = l.split(',').collect();
            let i = f.len() - from_end;
            f.remove(i);
            f.join(",")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn read_tables(dir: &Path) -> Vec<(String, String)> {
    let mut files: Vec<_> = std::fs::read_dir(dir.join("tables"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(p).unwrap(),
            )
        })
        .collect()
}

/// `report` on both stores into `dir/rep-pg` and `dir/rep-sqlite`: their tables are equal.
fn reports_on_both(dir: &Path, pg: &str, sqlite: &str) -> (PathBuf, PathBuf) {
    let (rp, rs) = (dir.join("rep-pg"), dir.join("rep-sqlite"));
    out(&mut cmd(pg, &["report", "--out", rp.to_str().unwrap()]));
    out(&mut cmd(sqlite, &["report", "--out", rs.to_str().unwrap()]));
    assert_eq!(read_tables(&rp), read_tables(&rs));
    (rp, rs)
}

fn kill(child: &mut Child) {
    // SIGKILL: no handler runs, nothing is flushed; what the worker held must come back.
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
#[ignore = "needs a PostgreSQL server (RAGROUTER_TEST_PG; scripts/pg-test.sh start, .ci/run starts one)"]
fn three_workers_one_killed_store_every_tuple_once_and_equal_sqlite() {
    let admin = test_pg();
    let pg = fresh_pg(&admin, "rr_workers");
    let dir = tempfile::tempdir().unwrap();
    let sqlite = dir.path().join("alone.sqlite");
    let sqlite_s = sqlite.to_str().unwrap();
    out(&mut bench(sqlite_s));

    // A pause before each write keeps the workers mid-run long enough for the kill to land
    // while the first one holds leased items; a 2 s lease brings them back quickly.
    let mut workers: Vec<Child> = (0..3)
        .map(|_| {
            bench(&pg)
                .args(["--lease", "2"])
                .env("RAGROUTER_FAULT_DELAY_MS", "40")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let victim = format!("%/{}/%", workers[0].id());
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        // The claims table appears once the first worker has opened the store.
        let ready = pg_fetch::<i64>(
            &pg,
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'claims'",
        )[0] > 0;
        if ready
            && pg_fetch::<i64>(
                &pg,
                &format!("SELECT count(*) FROM claims WHERE worker LIKE '{victim}' AND done = 1"),
            )[0] >= 3
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the first worker never got going"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    kill(&mut workers[0]);
    let held_at_kill: i64 = pg_fetch(
        &pg,
        &format!("SELECT count(*) FROM claims WHERE worker LIKE '{victim}' AND done = 0"),
    )[0];
    let written_at_kill: i64 = pg_fetch(&pg, "SELECT count(*) FROM results")[0];
    assert!(
        written_at_kill < TUPLES,
        "the kill landed after the run ended ({written_at_kill} tuples)"
    );
    for w in workers.drain(1..) {
        check_ok(&w.wait_with_output().unwrap());
    }

    // Exactly once, all of them, and the same tuples as one process on SQLite.
    let counts = |sql: &str| pg_fetch::<i64>(&pg, sql)[0];
    assert_eq!(counts("SELECT count(*) FROM runs"), 1);
    assert_eq!(counts("SELECT count(*) FROM results"), TUPLES);
    assert_eq!(
        counts("SELECT count(*) FROM (SELECT DISTINCT query_id, paradigm FROM results) d"),
        TUPLES
    );
    assert_eq!(
        pg_fetch::<String>(&pg, TUPLES_SQL),
        query_strings(&sqlite, TUPLES_SQL)
    );
    // Every claim ended done: what the dead worker held was taken over by the others.
    assert_eq!(counts("SELECT count(*) FROM claims WHERE done = 0"), 0);
    assert_eq!(
        counts(&format!(
            "SELECT count(*) FROM claims WHERE worker LIKE '{victim}' AND done = 0"
        )),
        0
    );
    eprintln!(
        "killed with {written_at_kill} of {TUPLES} tuples written and {held_at_kill} items held"
    );

    // `route eval` and `report` give the same tables on both stores.
    let eval = ["route", "eval", "--features", "q", "--folds", "3"];
    let on_pg = out(&mut cmd(&pg, &eval));
    let on_sqlite = out(&mut cmd(sqlite_s, &eval));
    assert_eq!(eval_table(&on_pg), eval_table(&on_sqlite));
    let (rp, rs) = reports_on_both(dir.path(), &pg, sqlite_s);
    assert_eq!(tuples_export(&rp), tuples_export(&rs));
}

#[test]
#[ignore = "needs a PostgreSQL server (RAGROUTER_TEST_PG; scripts/pg-test.sh start, .ci/run starts one)"]
fn an_import_lands_the_same_and_a_foreign_database_is_refused() {
    let admin = test_pg();
    let pg = fresh_pg(&admin, "rr_import");
    let dir = tempfile::tempdir().unwrap();
    let sqlite = dir.path().join("r.sqlite");
    let d = datasets().join("adaptive-rag-outcomes/classifier/data");
    let (queries, labels) = (d.join("valid.json"), d.join("flan_t5_xl/valid.json"));
    let import = [
        "import",
        "adaptive-rag",
        "--queries",
        queries.to_str().unwrap(),
        "--labels",
        labels.to_str().unwrap(),
        "--split",
        "test",
    ];
    out(&mut cmd(&pg, &import));
    out(&mut cmd(sqlite.to_str().unwrap(), &import));
    // Importing again adds nothing (the same check as on SQLite).
    out(&mut cmd(&pg, &import));
    let counts = "SELECT (SELECT count(*) FROM runs) * 1000000 + (SELECT count(*) FROM results)";
    assert_eq!(pg_fetch::<i64>(&pg, counts), [6 * 1_000_000 + 9000]);
    assert_eq!(query_db(&sqlite, counts), [6 * 1_000_000 + 9000]);
    let eval = [
        "route",
        "eval",
        "--features",
        "q",
        "--folds",
        "3",
        // Baselines only: the point is the store, not the learners (tests/import_outcomes.rs).
        "--routers",
        "oracle,best-fixed,oracle-per-corpus",
    ];
    let on_pg = out(&mut cmd(&pg, &eval));
    assert_eq!(
        eval_table(&on_pg),
        eval_table(&out(&mut cmd(sqlite.to_str().unwrap(), &eval)))
    );
    assert!(
        text(&on_pg.stdout).contains("38.17"),
        "{}",
        text(&on_pg.stdout)
    );
    // Imported tuples carry no measured latency: the report's tables and its tuple export are
    // byte-identical on both stores.
    let (rp, rs) = reports_on_both(dir.path(), &pg, sqlite.to_str().unwrap());
    let export = |d: &Path| std::fs::read(d.join("exports/tuples.csv")).unwrap();
    assert_eq!(export(&rp), export(&rs));
    // Predictions and paired tests are stored on PostgreSQL too.
    assert!(pg_fetch::<i64>(&pg, "SELECT count(*) FROM route_predictions")[0] > 0);
    assert!(pg_fetch::<i64>(&pg, "SELECT count(*) FROM route_eval_tests")[0] > 0);

    // Another application's database: refused with exit 2, and left as it was.
    let foreign = fresh_pg(&admin, "rr_foreign");
    pg_exec(
        &foreign,
        "CREATE TABLE customers (id BIGINT PRIMARY KEY, name TEXT)",
    );
    check_fails(
        &cmd(&foreign, &["bench", "demo"]).output().unwrap(),
        2,
        &["not a ragrouter results database"],
    );
    let tables: Vec<String> = pg_fetch(
        &foreign,
        "SELECT CAST(table_name AS TEXT) FROM information_schema.tables WHERE table_schema = 'public'",
    );
    assert_eq!(tables, ["customers"]);
    // Reading commands on an empty database say to bench first, and create nothing.
    let empty = fresh_pg(&admin, "rr_empty");
    check_fails(
        &cmd(&empty, &["route", "eval"]).output().unwrap(),
        2,
        &["holds no results"],
    );
    let none: Vec<i64> = pg_fetch(
        &empty,
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'",
    );
    assert_eq!(none, [0]);
}

#[test]
#[ignore = "needs a PostgreSQL server (RAGROUTER_TEST_PG; scripts/pg-test.sh start, .ci/run starts one)"]
fn llm_workers_share_the_response_cache_in_postgres() {
    use llm::mock::{MockReply, MockServer};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let admin = test_pg();
    let pg = fresh_pg(&admin, "rr_llm");
    const KEY: &str = "sk-pg-test-key-never-stored";
    let requests = Arc::new(AtomicUsize::new(0));
    let seen = requests.clone();
    let mock = MockServer::start(move |r| {
        seen.fetch_add(1, Ordering::SeqCst);
        let content = content_for(kind_of(r), r.last_content());
        MockReply::with_usage(content, 10, 5)
    });
    let worker = |extra: &[&str]| {
        let mut c = cmd(
            &pg,
            &[
                "bench",
                "demo",
                "--paradigms",
                "llm-only,naive",
                "--llm-base-url",
                &mock.base_url(),
                "--llm-model",
                "mock-model",
            ],
        );
        c.env("OPENAI_API_KEY", KEY).args(extra);
        c
    };
    // Two workers on one LLM run.
    let children: Vec<Child> = (0..2)
        .map(|_| {
            worker(&[])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        check_ok(&c.wait_with_output().unwrap());
    }
    let counts = |sql: &str| pg_fetch::<i64>(&pg, sql)[0];
    assert_eq!(counts("SELECT count(*) FROM results"), 40);
    assert_eq!(
        counts("SELECT count(*) FROM results WHERE error IS NOT NULL"),
        0
    );
    let paid = requests.load(Ordering::SeqCst);
    assert!(paid > 0);
    // Another machine starts a new run of the same configuration: every reply is already in
    // the shared cache, so the endpoint sees no request.
    out(&mut worker(&["--fresh"]));
    assert_eq!(counts("SELECT count(*) FROM runs"), 2);
    assert_eq!(counts("SELECT count(*) FROM results"), 80);
    assert_eq!(requests.load(Ordering::SeqCst), paid);
    // The key is sent to the endpoint only, never stored.
    let stored = counts(&format!(
        "SELECT (SELECT count(*) FROM llm_cache WHERE request_json LIKE '%{KEY}%')
              + (SELECT count(*) FROM runs WHERE config_json LIKE '%{KEY}%')"
    ));
    assert_eq!(stored, 0);
}
