//! The `ragrouter` binary end to end: the demo run, resume, bad inputs, and a SIGKILL mid-run.

mod common;

use common::*;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ragrouter"));
    c.env_remove("RAGROUTER_DATA_DIR")
        .env("RAGROUTER_LOG", "warn")
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn shared_datasets() -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets");
    assert!(
        p.join("musique-hipporag-dev").exists(),
        "the shared data sets are expected at {}",
        p.display()
    );
    p
}

/// Runs `bench` with a database and cache in `dir`; returns the process output.
fn bench(dir: &Path, args: &[&str]) -> Output {
    bin()
        .arg("bench")
        .args(args)
        .arg("--db")
        .arg(dir.join("r.sqlite"))
        .arg("--cache-dir")
        .arg(dir.join("cache"))
        .output()
        .unwrap()
}

#[test]
fn demo_runs_offline_prints_the_table_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let out = bench(dir.path(), &["demo"]);
    check_ok(&out);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("mode: offline"), "{stdout}");
    for needle in [
        "llm-only",
        "naive",
        "factual",
        "reasoning",
        "summary",
        "correct %",
    ] {
        assert!(stdout.contains(needle), "table lacks {needle}:\n{stdout}");
    }
    let db = dir.path().join("r.sqlite");
    let queries = query_db(&db, "SELECT count(*) FROM queries")[0];
    // Every paradigm runs by default: seven tuples per question.
    assert!(queries >= 15);
    assert_eq!(
        query_db(&db, "SELECT count(*) FROM results")[0],
        7 * queries
    );
    assert_eq!(
        query_db(
            &db,
            "SELECT count(*) FROM results WHERE mode = 'offline' AND error IS NULL"
        )[0],
        7 * queries
    );
    // The offline LLM-only baseline answers nothing; NaiveRAG gets some right.
    assert_eq!(
        query_db(&db, "SELECT count(*) FROM results WHERE paradigm = 'llm-only' AND judge_label = 'no-answer'")[0],
        queries
    );
    assert!(
        query_db(
            &db,
            "SELECT count(*) FROM results WHERE paradigm = 'naive' AND judge_label = 'correct'"
        )[0] > 0
    );

    // Same command again: the run resumes with nothing left to do.
    let again = bench(dir.path(), &["demo"]);
    check_ok(&again);
    assert!(text(&again.stdout).contains("(resumed)"));
    assert_eq!(query_db(&db, "SELECT count(*) FROM runs")[0], 1);
    assert_eq!(
        query_db(&db, "SELECT count(*) FROM results")[0],
        7 * queries
    );

    // --fresh starts a second run.
    let fresh = bench(
        dir.path(),
        &["demo", "--fresh", "--paradigms", "naive", "--limit", "3"],
    );
    check_ok(&fresh);
    assert_eq!(query_db(&db, "SELECT count(*) FROM runs")[0], 2);
    assert_eq!(
        query_db(&db, "SELECT count(*) FROM results WHERE run_id = 2")[0],
        3
    );
}

#[test]
fn bad_inputs_fail_clearly_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");

    let out = bench(dir.path(), &["no-such-corpus"]);
    check_fails(&out, 2, &["no-such-corpus", "demo", "musique-dev"]);

    let out = bench(dir.path(), &["demo", "--paradigms", "naive,graphrag"]);
    check_fails(&out, 2, &["graphrag", "llm-only"]);

    let cfg = dir.path().join("bad.toml");
    std::fs::write(&cfg, "[retrieval]\ntopk = 3\n").unwrap();
    let out = bench(dir.path(), &["demo", "--config", cfg.to_str().unwrap()]);
    check_fails(&out, 2, &["bad.toml", "topk"]);

    let data = dir.path().join("broken");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(
        data.join("corpus.jsonl"),
        "{\"id\": \"d1\", \"title\": \"T\", \"text\": \"Some text.\"}\n{\"id\": \"d2\", \"title\": 5, \"text\": \"x\"}\n",
    )
    .unwrap();
    std::fs::write(
        data.join("queries.jsonl"),
        "{\"id\": \"q1\", \"question\": \"What?\", \"answers\": [\"x\"], \"type\": \"factual\"}\n",
    )
    .unwrap();
    let arg = format!("jsonl:{}", data.display());
    let out = bench(dir.path(), &[&arg]);
    check_fails(&out, 2, &["corpus.jsonl", "line 2", "title"]);

    assert!(
        !db.exists(),
        "a run that failed to start wrote {}",
        db.display()
    );

    // An unwritable database path: the message names it, exit 1.
    let blocker = dir.path().join("plain-file");
    std::fs::write(&blocker, b"x").unwrap();
    let out = bin()
        .args(["bench", "demo", "--db"])
        .arg(blocker.join("r.sqlite"))
        .arg("--cache-dir")
        .arg(dir.path().join("cache"))
        .output()
        .unwrap();
    check_fails(&out, 1, &["plain-file"]);
}

#[test]
fn sigkill_mid_run_then_rerun_gives_every_tuple_exactly_once() {
    let data = shared_datasets();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let args = |c: &mut Command| {
        c.args([
            "bench",
            "musique-dev",
            "--paradigms",
            "llm-only,naive",
            "--concurrency",
            "2",
        ])
        .arg("--data-dir")
        .arg(&data)
        .arg("--db")
        .arg(&db)
        .arg("--cache-dir")
        .arg(dir.path().join("cache"));
    };
    let mut first = bin();
    args(&mut first);
    let log = dir.path().join("first-run.stderr");
    let mut child = first
        .env("RAGROUTER_FAULT_DELAY_MS", "25")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    // Wait until some tuples are stored (embedding the corpus comes first, minutes on a loaded
    // two-core machine), then SIGKILL. The bound only stops a hung run, it measures nothing.
    let start = Instant::now();
    loop {
        assert!(
            start.elapsed() < Duration::from_secs(1200),
            "no tuple was stored in time"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before it could be killed"
        );
        // Before the store exists or is migrated the query fails: keep waiting.
        let n = try_query_db(&db, "SELECT count(*) FROM results");
        if matches!(n.as_deref(), Ok([n]) if *n >= 20) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
    let at_kill = query_db(&db, "SELECT count(*) FROM results")[0];
    assert!(
        at_kill < 200,
        "killed too late to prove anything ({at_kill} rows)"
    );

    let mut second = bin();
    args(&mut second);
    let out = second.output().unwrap();
    check_ok(&out);
    assert!(
        text(&out.stderr).contains("resuming"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(query_db(&db, "SELECT count(*) FROM runs")[0], 1);
    assert_eq!(query_db(&db, "SELECT count(*) FROM results")[0], 200);
    assert_eq!(
        query_db(
            &db,
            "SELECT count(DISTINCT query_id || '/' || paradigm) FROM results"
        )[0],
        200
    );
    // Whole rows only: every row has its judge label or its error.
    assert_eq!(
        query_db(
            &db,
            "SELECT count(*) FROM results WHERE judge_label IS NULL AND error IS NULL"
        )[0],
        0
    );
    assert_eq!(
        query_db(
            &db,
            "SELECT count(*) FROM runs WHERE finished_at IS NOT NULL"
        )[0],
        1
    );
}

#[test]
fn musique_every_paradigm_with_corpus_metrics() {
    let data = shared_datasets();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let common = |c: &mut Command| {
        c.arg("--data-dir")
            .arg(&data)
            .arg("--db")
            .arg(&db)
            .arg("--cache-dir")
            .arg(shared_cache());
    };
    let mut metrics = bin();
    metrics.args(["metrics", "musique-dev", "--json"]);
    common(&mut metrics);
    let out = metrics.output().unwrap();
    check_ok(&out);
    let stdout = text(&out.stdout);
    let json_start = stdout.find('{').expect("JSON after the header line");
    let m: serde_json::Value = serde_json::from_str(&stdout[json_start..]).unwrap();
    let nodes = m["graph"]["nodes"].as_u64().unwrap();
    assert!(nodes > 1000, "{nodes}");
    let lcc = m["graph"]["lcc_ratio"].as_f64().unwrap();
    assert!(lcc > 0.0 && lcc <= 1.0);
    assert_eq!(m["embeddings"]["rows"], 1890);
    assert_eq!(query_db(&db, "SELECT count(*) FROM corpus_metrics")[0], 1);

    let mut bench = bin();
    bench.args(["bench", "musique-dev", "--limit", "20"]);
    common(&mut bench);
    let out = bench.output().unwrap();
    check_ok(&out);
    let stdout = text(&out.stdout);
    for p in [
        "llm-only",
        "naive",
        "graph",
        "hybrid",
        "iterative",
        "iterative-graph",
        "fusion",
    ] {
        assert!(stdout.contains(p), "table lacks {p}:\n{stdout}");
    }
    assert!(stdout.contains("corpus indicators"), "{stdout}");
    assert_eq!(query_db(&db, "SELECT count(*) FROM results")[0], 140);
    assert_eq!(
        query_db(&db, "SELECT count(*) FROM results WHERE error IS NOT NULL")[0],
        0
    );
    // Graph paradigms read more context than NaiveRAG's thresholded top-K here.
    let ctx = |p: &str| {
        query_db(
            &db,
            &format!(
                "SELECT CAST(avg(context_tokens) AS INTEGER) FROM results WHERE paradigm = '{p}'"
            ),
        )[0]
    };
    assert!(
        ctx("graph") > ctx("naive"),
        "graph {} vs naive {}",
        ctx("graph"),
        ctx("naive")
    );
    assert!(
        ctx("hybrid") <= 8000 && ctx("graph") <= 8000,
        "the budget holds"
    );
    // Traces a researcher can read: seeds for the graph, rounds for iterative, s(q) for fusion.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let traces: Vec<(String, String)> = rt.block_on(async {
        use sqlx::sqlite::SqliteConnectOptions;
        use sqlx::ConnectOptions;
        let mut conn = SqliteConnectOptions::new().filename(&db).connect().await.unwrap();
        sqlx::query_as("SELECT paradigm, trace_json FROM results WHERE query_id = (SELECT min(query_id) FROM results)")
            .fetch_all(&mut conn)
            .await
            .unwrap()
    });
    let trace = |p: &str| -> serde_json::Value {
        let t = &traces.iter().find(|(q, _)| q == p).unwrap().1;
        serde_json::from_str(t).unwrap()
    };
    assert!(
        trace("graph").to_string().contains("seeds"),
        "{}",
        trace("graph")
    );
    assert!(trace("iterative")["rounds"]
        .as_array()
        .is_some_and(|r| !r.is_empty()));
    let s = trace("fusion")["retrieval"]["complexity_score"]
        .as_f64()
        .unwrap();
    assert!((0.0..=1.0).contains(&s));
    assert!(["rrf"].contains(
        &trace("hybrid")["retrieval"]["fusion"]
            .as_str()
            .unwrap()
            .trim_start_matches("hybrid-")
    ));
}

#[test]
fn dry_run_estimates_calls_and_tokens_without_writing() {
    let dir = tempfile::tempdir().unwrap();
    let out = bench(
        dir.path(),
        &["demo", "--dry-run", "--paradigms", "naive,iterative,graph"],
    );
    check_ok(&out);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("dry run: demo on 20 questions"), "{stdout}");
    // naive: one generation and one judge call per question.
    let naive = stdout.lines().find(|l| l.starts_with("naive")).unwrap();
    assert_eq!(naive.split_whitespace().nth(1), Some("40"), "{naive}");
    // iterative: 2 to 2 + 2 x 3 rounds, plus the judge.
    let it = stdout.lines().find(|l| l.starts_with("iterative")).unwrap();
    assert_eq!(it.split_whitespace().nth(1), Some("60-180"), "{it}");
    assert!(stdout.contains("graph build"), "{stdout}");
    assert!(
        !dir.path().join("r.sqlite").exists(),
        "a dry run wrote the database"
    );
    assert!(
        !dir.path().join("cache").exists(),
        "a dry run embedded something"
    );
}
