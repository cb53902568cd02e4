//! LLM mode against a real OpenAI-compatible server (llama.cpp serving SmolLM2-135M, started by
//! `scripts/local-llm.sh`; `.ci/run` starts it and sets the variables): check-llm, a small
//! bench run, the cache on the rerun, token counts against the server's usage, key hygiene.
//!
//! The test is `#[ignore]`d, so `cargo test` counts it as ignored on a machine without a server;
//! `.ci/run` starts one and runs it with `--include-ignored`, where a missing server fails it.

mod common;

use common::*;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use bench_core::{GoldAnswer, JudgeLabel};
use metrics::{judge_request, parse_judge_reply};

/// A dummy key: the local server ignores it; it must reach no file, log or output.
const KEY: &str = "sk-local-DUMMY-7f3c91";
const PARADIGMS: &str = "llm-only,naive,iterative";
const QUESTIONS: usize = 3;

/// Small budgets: a 135M model on two CPU cores reads about 150 prompt tokens a second.
const CONFIG: &str = r#"
[retrieval]
context_budget = 300

[generation]
max_tokens = 48

[iterative]
max_rounds = 1

[llm.answer]
timeout_s = 300
max_in_flight = 2
max_retries = 1
backoff_base_ms = 100
"#;

struct Server {
    base_url: String,
    model: String,
    log: Option<PathBuf>,
}

/// The server `.ci/run` starts (`scripts/local-llm.sh start` prints its variables). The test that
/// calls this is `#[ignore]`d; run with `--include-ignored`, a missing server fails it.
fn server() -> Server {
    let var = |k: &str| {
        std::env::var(k).unwrap_or_else(|_| {
            panic!(
                "this test needs a real LLM server: set RAGROUTER_REAL_LLM_BASE_URL and \
                 RAGROUTER_REAL_LLM_MODEL (scripts/local-llm.sh start prints them)"
            )
        })
    };
    Server {
        base_url: var("RAGROUTER_REAL_LLM_BASE_URL"),
        model: var("RAGROUTER_REAL_LLM_MODEL"),
        log: std::env::var_os("RAGROUTER_REAL_LLM_LOG").map(PathBuf::from),
    }
}

fn ragrouter() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ragrouter"));
    c.env_remove("RAGROUTER_DATA_DIR")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("RAGROUTER_FAULT_DELAY_MS")
        .env("RAGROUTER_LOG", "info")
        .env("NO_COLOR", "1")
        .env("OPENAI_API_KEY", KEY)
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn bench(dir: &Path, s: &Server, paradigms: &str) -> Output {
    bench_with(dir, s, paradigms, &[])
}

fn bench_with(dir: &Path, s: &Server, paradigms: &str, extra: &[&str]) -> Output {
    ragrouter()
        .args(["bench", "demo", "--paradigms", paradigms])
        .args(extra)
        .args(["--limit", &QUESTIONS.to_string()])
        .args(["--llm-base-url", &s.base_url, "--llm-model", &s.model])
        .arg("--config")
        .arg(dir.join("config.toml"))
        .arg("--db")
        .arg(dir.join("r.sqlite"))
        .arg("--cache-dir")
        .arg(shared_cache())
        .output()
        .unwrap()
}

/// Every row of `sql`, its columns as text.
fn rows(db: &Path, sql: &str) -> Vec<Vec<String>> {
    use sqlx::{ConnectOptions, Row};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut conn = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(db)
            .read_only(true)
            .connect()
            .await
            .unwrap();
        let rows = sqlx::query(sql).fetch_all(&mut conn).await.unwrap();
        rows.iter()
            .map(|r| (0..r.len()).map(|i| r.get::<String, _>(i)).collect())
            .collect()
    })
}

fn no_key_in(what: &str, bytes: &[u8]) {
    assert!(
        !bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
        "the API key appears in {what}"
    );
}

/// One raw HTTP/1.1 POST to the server (not through the crate's client): the JSON body back.
fn post(base_url: &str, path: &str, body: &serde_json::Value) -> serde_json::Value {
    let rest = base_url
        .strip_prefix("http://")
        .expect("an http:// base URL");
    let (host, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    let body = body.to_string();
    let mut stream = TcpStream::connect(host).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(300)))
        .unwrap();
    write!(
        stream,
        "POST /{prefix}{path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    let (head, body) = reply.split_once("\r\n\r\n").expect("an HTTP reply");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}\n{body}");
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"))
}

#[test]
#[ignore = "needs a real LLM server (RAGROUTER_REAL_LLM_BASE_URL / _MODEL; scripts/local-llm.sh start, .ci/run starts one)"]
fn a_real_server_runs_llm_mode_end_to_end() {
    let s = server();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), CONFIG).unwrap();
    let db = dir.path().join("r.sqlite");

    // check-llm: every check passes, JSON mode and the context window among them.
    let check = ragrouter()
        .args([
            "check-llm",
            "--llm-base-url",
            &s.base_url,
            "--llm-model",
            &s.model,
        ])
        .arg("--config")
        .arg(dir.path().join("config.toml"))
        .output()
        .unwrap();
    eprintln!("{}", text(&check.stdout));
    check_ok(&check);
    let report = text(&check.stdout);
    for line in [
        "reachable",
        "model present",
        "chat",
        "JSON mode",
        "context window",
    ] {
        assert!(
            report
                .lines()
                .any(|l| l.contains("[ ok ]") && l.contains(line)),
            "{line}: {report}"
        );
    }
    no_key_in("check-llm's output", &[check.stdout, check.stderr].concat());

    // The bench: completes, every tuple once, in LLM mode.
    let out = bench(dir.path(), &s, PARADIGMS);
    eprintln!("{}", text(&out.stdout));
    check_ok(&out);
    let stdout = text(&out.stdout);
    let mode = format!("llm:{}@{}", s.model, s.base_url);
    assert!(stdout.contains(&format!("mode: {mode}")), "{stdout}");
    let expected_rows = 3 * QUESTIONS as i64;
    assert_eq!(
        query_db(&db, "SELECT count(*) FROM results")[0],
        expected_rows
    );
    let sql = format!("SELECT count(*) FROM results WHERE mode = '{mode}'");
    assert_eq!(query_db(&db, &sql)[0], expected_rows);

    // Every row is an answer with a label the judge's reply really gave, or an error without
    // one: a garbled reply never becomes a label.
    assert_eq!(
        query_db(
            &db,
            "SELECT count(*) FROM results WHERE (error IS NULL) = (judge_label IS NULL)"
        )[0],
        0
    );
    let judged = rows(
        &db,
        "SELECT q.text, q.answer, q.aliases_json, r.answer, r.judge_label
         FROM results r JOIN queries q ON q.query_id = r.query_id WHERE r.error IS NULL",
    );
    let cache = rows(&db, "SELECT request_json, response FROM llm_cache");
    for row in &judged {
        let [question, gold, aliases, answer, label] = &row[..] else {
            unreachable!()
        };
        if answer.trim().is_empty() {
            assert_eq!(label, "no-answer");
            continue;
        }
        let gold = GoldAnswer {
            answer: gold.clone(),
            aliases: serde_json::from_str(aliases).unwrap(),
        };
        let messages =
            serde_json::to_value(judge_request(question, &gold, answer).messages).unwrap();
        let reply = cache
            .iter()
            .find_map(|r| {
                let req: serde_json::Value = serde_json::from_str(&r[0]).unwrap();
                (req["messages"] == messages).then_some(&r[1])
            })
            .unwrap_or_else(|| panic!("no cached judge reply for {answer:?}"));
        let parsed = parse_judge_reply(reply).map(JudgeLabel::as_str);
        assert_eq!(parsed, Some(label.as_str()), "judge reply {reply:?}");
    }
    for e in query_strings(&db, "SELECT error FROM results WHERE error IS NOT NULL") {
        eprintln!("error row: {e}");
        assert!(e.contains("LLM call failed"), "{e}");
    }

    // Tokens: every cached reply carries the server's usage, and the server reports the same
    // usage when a deterministic (temperature 0) request is sent again, raw.
    assert_eq!(
        query_db(
            &db,
            "SELECT count(*) FROM llm_cache WHERE usage_reported = 0"
        )[0],
        0
    );
    let replayed = rows(
        &db,
        "SELECT request_json, prompt_tokens || ',' || completion_tokens FROM llm_cache
         WHERE request_json LIKE '%\"temperature\":0.0%' LIMIT 3",
    );
    for r in &replayed {
        let (req, tokens) = (&r[0], &r[1]);
        let req: serde_json::Value = serde_json::from_str(req).unwrap();
        let mut body = serde_json::json!({
            "model": s.model,
            "messages": req["messages"],
            "temperature": 0.0,
            "max_tokens": req["max_tokens"],
        });
        if req["json"] == true {
            body["response_format"] = serde_json::json!({"type": "json_object"});
        }
        let reply = post(&s.base_url, "/chat/completions", &body);
        let usage = &reply["usage"];
        assert_eq!(
            format!("{},{}", usage["prompt_tokens"], usage["completion_tokens"]),
            *tokens,
            "{reply}"
        );
    }

    // The rerun: resumed; the rows that succeeded stay as they were, and only tuples that
    // failed (a reply the model garbled every time) are asked again.
    let snapshot =
        "SELECT query_id || '/' || paradigm || '/' || answer || '/' || judge_label || '/' ||
                    tokens_generation_in || '/' || tokens_generation_out
                    FROM results WHERE error IS NULL ORDER BY query_id, paradigm";
    let succeeded = query_strings(&db, snapshot);
    let failed = query_strings(
        &db,
        "SELECT DISTINCT paradigm FROM results WHERE error IS NOT NULL",
    );
    let again = bench(dir.path(), &s, PARADIGMS);
    check_ok(&again);
    let stdout = text(&again.stdout);
    eprintln!("{stdout}");
    assert!(stdout.contains("resumed"), "{stdout}");
    assert_eq!(
        query_db(&db, "SELECT count(*) FROM results")[0],
        expected_rows
    );
    let kept = query_strings(&db, snapshot);
    assert!(
        succeeded.iter().all(|r| kept.contains(r)),
        "{succeeded:?}\n{kept:?}"
    );
    let calls = text(&again.stderr);
    if failed.is_empty() {
        assert_eq!(llm_calls_sent(&calls), 0, "{calls}");
    }

    // A loop that stopped at an unreadable self-evaluation is counted in the bench's output.
    let unreadable = query_strings(
        &db,
        "SELECT DISTINCT paradigm FROM results
         WHERE json_extract(trace_json, '$.stop') = 'evaluation-unreadable'",
    );
    for p in &unreadable {
        assert!(
            stdout.contains(&format!("{p}: ")) && stdout.contains("unreadable self-evaluation"),
            "{stdout}"
        );
    }

    // Every successful call was cached: a new run of the paradigms that never failed is
    // answered from the cache alone (an unreadable reply is never cached, so a paradigm that
    // met one asks again).
    let clean: Vec<&str> = PARADIGMS
        .split(',')
        .filter(|p| !failed.iter().chain(&unreadable).any(|f| f == p))
        .collect();
    assert!(
        !clean.is_empty(),
        "every paradigm had a failed tuple: {failed:?}"
    );
    // `--fresh`: a new run, so every tuple is answered again (through the cache).
    let cached_only = bench_with(dir.path(), &s, &clean.join(","), &["--fresh"]);
    check_ok(&cached_only);
    let stdout = text(&cached_only.stdout);
    eprintln!("{stdout}");
    let calls = text(&cached_only.stderr);
    assert_eq!(llm_calls_sent(&calls), 0, "{calls}");
    assert!(!calls.contains("llm calls: answer 0 cached"), "{calls}");

    // The dummy key: in no output, log, database file or server log.
    for o in [&out, &again, &cached_only] {
        no_key_in(
            "bench's output",
            &[o.stdout.clone(), o.stderr.clone()].concat(),
        );
    }
    for suffix in ["", "-wal", "-shm"] {
        if let Ok(bytes) = std::fs::read(format!("{}{suffix}", db.display())) {
            no_key_in(&format!("the database{suffix}"), &bytes);
        }
    }
    if let Some(log) = &s.log {
        no_key_in("the server's log", &std::fs::read(log).unwrap());
    }
}
