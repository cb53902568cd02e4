//! `ragrouter bench` in LLM mode against the scripted mock server: every paradigm, faults, tokens, cache, key hygiene.

mod common;

use common::*;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use llm::mock::{ChatRequestSeen, MockReply, MockServer};

const KEY: &str = "sk-test-SECRET-123";
const PARADIGMS: &str = "llm-only,naive,graph,hybrid,iterative,iterative-graph,fusion";

/// What the mock served, to compare with what the database records.
#[derive(Default)]
struct Ledger {
    /// Usage of each distinct successful request (keyed by its body), with its kind.
    served: HashMap<String, (Kind, u64)>,
    /// Every successful reply's usage, duplicates included.
    served_total: u64,
    /// Request bodies that already got their injected 500.
    faulted: HashSet<String>,
    faults: usize,
}

/// The request's identity as the response cache sees it (messages, sampling, JSON mode).
fn body_key(r: &ChatRequestSeen) -> String {
    serde_json::json!([
        r.body["messages"],
        r.body["temperature"],
        r.body["max_tokens"],
        r.body["max_completion_tokens"],
        r.json_mode
    ])
    .to_string()
}

fn start_mock(ledger: Arc<Mutex<Ledger>>) -> MockServer {
    MockServer::start(move |r| {
        let kind = kind_of(r);
        let key = body_key(r);
        let mut l = ledger.lock().unwrap();
        if r.index == 3 {
            return MockReply::rate_limited(1);
        }
        // About one request body in seven fails once with a 500; its retry succeeds.
        let h = key
            .bytes()
            .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64));
        if h % 7 == 0 && l.faulted.insert(key.clone()) {
            l.faults += 1;
            return MockReply::status(500);
        }
        let content = content_for(kind, r.last_content());
        let prompt: u64 = r.messages.iter().map(|(_, c)| c.len() as u64 / 4 + 1).sum();
        let completion = content.len() as u64 / 4 + 1;
        l.served.insert(key, (kind, prompt + completion));
        l.served_total += prompt + completion;
        MockReply::with_usage(content, prompt, completion)
    })
}

/// `ragrouter bench demo` in LLM mode against `base_url`, storing into `dir/r.sqlite`.
fn bench_command(dir: &Path, base_url: &str, paradigms: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ragrouter"));
    c.env_remove("RAGROUTER_DATA_DIR")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("RAGROUTER_FAULT_DELAY_MS")
        .env("RAGROUTER_LOG", "warn")
        .env("OPENAI_API_KEY", KEY)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["bench", "demo", "--paradigms", paradigms])
        .args(["--llm-base-url", base_url, "--llm-model", "mock-model"])
        .arg("--db")
        .arg(dir.join("r.sqlite"))
        .arg("--cache-dir")
        .arg(shared_cache());
    c
}

fn bench(dir: &Path, base_url: &str) -> Output {
    bench_command(dir, base_url, PARADIGMS).output().unwrap()
}

fn no_key_in(out: &Output, db: &Path) {
    assert!(!text(&out.stdout).contains(KEY), "key in stdout");
    assert!(!text(&out.stderr).contains(KEY), "key in stderr");
    for suffix in ["", "-wal", "-shm"] {
        let p = PathBuf::from(format!("{}{suffix}", db.display()));
        if let Ok(bytes) = std::fs::read(&p) {
            assert!(
                !bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
                "key in {}",
                p.display()
            );
        }
    }
}

#[test]
fn llm_mode_runs_every_paradigm_bills_tokens_and_caches() {
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let mock = start_mock(ledger.clone());
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");

    let out = bench(dir.path(), &mock.base_url());
    check_ok(&out);
    let stdout = text(&out.stdout);
    let label = format!("mode: llm:mock-model@{}", mock.base_url());
    assert!(stdout.contains(&label), "{stdout}");
    // The settings one readable line per role (#32), not the whole record on one line.
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "  answer: mock-model@{} (timeout ",
            mock.base_url()
        )) && stderr.contains("  judge: as answer")
            && stderr.contains("  embedding: the local sentence encoder"),
        "{stderr}"
    );
    assert!(stderr.lines().all(|l| l.len() < 200), "{stderr}");
    no_key_in(&out, &db);
    // The key went where it belongs: the Authorization header.
    assert!(mock
        .authorizations()
        .iter()
        .all(|a| a.as_deref() == Some(&format!("Bearer {KEY}"))));

    // Every (query, paradigm) tuple exactly once.
    let queries = query_db(&db, "SELECT count(*) FROM queries")[0];
    assert!(queries >= 15);
    assert_eq!(
        query_db(&db, "SELECT count(*) FROM results")[0],
        7 * queries
    );
    assert_eq!(
        query_db(
            &db,
            "SELECT count(*) FROM (SELECT DISTINCT query_id, paradigm FROM results)"
        )[0],
        7 * queries
    );
    let label_sql = format!(
        "SELECT count(*) FROM results WHERE mode = 'llm:mock-model@{}'",
        mock.base_url()
    );
    assert_eq!(query_db(&db, &label_sql)[0], 7 * queries);

    // Faults were injected, and every one ended as a success or an error row: never as an
    // answer the script did not give, and never as a judged error.
    let l = ledger.lock().unwrap();
    eprintln!(
        "mock: {} chat requests, {} distinct replies, {} faults",
        mock.chat_requests(),
        l.served.len(),
        l.faults
    );
    assert!(l.faults > 0, "no fault was injected");
    // The summary counts the retries per role (#32): the injected faults were retried.
    let retries: u64 = stderr
        .lines()
        .find_map(|l| l.strip_prefix("llm retries: "))
        .unwrap_or_else(|| panic!("no `llm retries` line: {stderr}"))
        .split(", ")
        .map(|part| part.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert!(retries > 0, "{stderr}");
    assert_eq!(
        query_db(
            &db,
            "SELECT count(*) FROM results WHERE error IS NOT NULL AND judge_label IS NOT NULL"
        )[0],
        0
    );
    for answer in query_strings(&db, "SELECT answer FROM results WHERE error IS NULL") {
        assert!(answer.starts_with("mock answer"), "{answer:?}");
    }
    // The retries recovered everything (a rerun retrying error rows would call the mock).
    let errors = query_strings(&db, "SELECT error FROM results WHERE error IS NOT NULL");
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        query_db(
            &db,
            "SELECT count(*) FROM results WHERE judge_label = 'correct'"
        )[0],
        7 * queries
    );

    // Tokens: every distinct reply the mock served is in the response cache with its usage
    // (judge calls are billed only there: result rows carry no judge tokens).
    let served_distinct: u64 = l.served.values().map(|(_, t)| t).sum();
    let cached = query_db(
        &db,
        "SELECT CAST(sum(prompt_tokens + completion_tokens) AS INTEGER) FROM llm_cache",
    )[0];
    assert_eq!(cached as u64, served_distinct);
    let served_of = |k: Kind| -> u64 {
        l.served
            .values()
            .filter(|(kind, _)| *kind == k)
            .map(|(_, t)| t)
            .sum()
    };
    // Triplet extraction: billed per chunk in the extraction cache.
    let extracted = query_db(
        &db,
        "SELECT CAST(sum(tokens_in + tokens_out) AS INTEGER) FROM extractions",
    )[0];
    assert_eq!(extracted as u64, served_of(Kind::Triplets));
    assert!(extracted > 0);
    // Generation and query entities are billed on the result rows (a cache hit bills the
    // stored usage, so rows sharing a request each carry its tokens).
    assert_eq!(
        query_db(
            &db,
            "SELECT count(*) FROM results WHERE tokens_generation_in = 0 OR tokens_generation_out = 0"
        )[0],
        0
    );
    assert_eq!(
        query_db(
            &db,
            "SELECT count(*) FROM results WHERE paradigm IN ('graph', 'hybrid', 'fusion', 'iterative-graph') AND tokens_retrieval_in = 0"
        )[0],
        0
    );
    // Every distinct answer, self-evaluation and query-entity reply is billed on some row:
    // answers in the generation phase, self-evaluations and query entities in the retrieval
    // phase (decisions.md "Costs"); a cache hit bills again, so the rows carry at least that.
    let billed = |cols: &str| {
        query_db(
            &db,
            &format!("SELECT CAST(sum({cols}) AS INTEGER) FROM results"),
        )[0] as u64
    };
    let billed_generation = billed("tokens_generation_in + tokens_generation_out");
    assert!(billed_generation >= served_of(Kind::Generation) + served_of(Kind::Direct));
    assert!(
        billed_generation + billed("tokens_retrieval_in + tokens_retrieval_out")
            >= served_of(Kind::Generation)
                + served_of(Kind::Direct)
                + served_of(Kind::Evaluation)
                + served_of(Kind::Entities)
    );
    // The run records its LLM settings (names of key variables, not keys).
    // Faithfulness (eq. 14-15) is computed for NaiveRAG and GraphRAG only, as in the paper.
    assert_eq!(
        query_db(
            &db,
            "SELECT count(*) FROM results WHERE paradigm IN ('naive', 'graph')
             AND (faithfulness_hard IS NULL OR faithfulness_soft < 0 OR faithfulness_soft > 1
                  OR faithfulness_hard < 0 OR faithfulness_hard > 1)"
        )[0],
        0
    );
    assert_eq!(
        query_db(
            &db,
            "SELECT count(*) FROM results WHERE paradigm NOT IN ('naive', 'graph') AND faithfulness_hard IS NOT NULL"
        )[0],
        0
    );
    assert_eq!(
        query_db(
            &db,
            "SELECT count(*) FROM results WHERE semantic_f1 IS NULL OR coverage IS NULL"
        )[0],
        0
    );
    let config = query_strings(&db, "SELECT config_json FROM runs");
    assert_eq!(config.len(), 1);
    let config: serde_json::Value = serde_json::from_str(&config[0]).unwrap();
    assert_eq!(config["llm"]["answer"]["model"], "mock-model");
    assert_eq!(config["llm"]["judge"]["api_key_env"], "OPENAI_API_KEY");
    drop(l);

    // The same command again: resumed, nothing left, not one request.
    let before = mock.chat_requests();
    let again = bench(dir.path(), &mock.base_url());
    check_ok(&again);
    assert!(
        text(&again.stdout).contains("resumed"),
        "{}",
        text(&again.stdout)
    );
    assert_eq!(mock.chat_requests(), before, "the rerun called the LLM");
    assert_eq!(
        query_db(&db, "SELECT count(*) FROM results")[0],
        7 * queries
    );
    no_key_in(&again, &db);
}

#[test]
fn bad_llm_settings_fail_before_the_database_is_touched() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_ragrouter"));
        c.env_remove("RAGROUTER_DATA_DIR")
            .env_remove("OPENAI_BASE_URL")
            .env_remove("OPENAI_API_KEY")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["bench", "demo"])
            .args(args)
            .arg("--db")
            .arg(&db)
            .arg("--cache-dir")
            .arg(shared_cache());
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    };
    // A base URL without a model.
    let out = run(&["--llm-base-url", "http://127.0.0.1:9/v1"], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("no model"),
        "{}",
        text(&out.stderr)
    );
    // A key variable named in the configuration but not set.
    let cfg = dir.path().join("c.toml");
    std::fs::write(
        &cfg,
        "[llm.answer]\nmodel = \"m\"\nbase_url = \"http://127.0.0.1:9/v1\"\napi_key_env = \"NO_SUCH_KEY_VAR\"\n",
    )
    .unwrap();
    let out = run(&["--config", cfg.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("NO_SUCH_KEY_VAR"),
        "{}",
        text(&out.stderr)
    );
    assert!(!db.exists(), "a failed start wrote the database");
}

#[test]
fn sigkill_during_an_llm_run_then_rerun_completes_exactly_once() {
    const CONCURRENCY: usize = 4;
    // Every reply is plausible and deterministic, and comes after a short pause so that the
    // run lasts long enough to be killed in the middle. Each request body is recorded in
    // arrival order, to tell the killed run's requests from the rerun's.
    let bodies = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = bodies.clone();
    let mock = MockServer::start(move |r| {
        seen.lock().unwrap().push(body_key(r));
        let content = content_for(kind_of(r), r.last_content());
        let prompt: u64 = r.messages.iter().map(|(_, c)| c.len() as u64 / 4 + 1).sum();
        let completion = content.len() as u64 / 4 + 1;
        MockReply::with_usage(content, prompt, completion).delayed(Duration::from_millis(50))
    });
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let command = || {
        let mut c = bench_command(dir.path(), &mock.base_url(), "llm-only,naive,iterative");
        c.args(["--concurrency", &CONCURRENCY.to_string()]);
        c
    };

    let mut child = command()
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until some tuples are stored, then SIGKILL.
    let start = Instant::now();
    loop {
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("no tuple was stored in time");
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the run ended ({status}) before it could be killed");
        }
        // Before the store exists or is migrated the query fails: keep waiting.
        let n = try_query_db(&db, "SELECT count(*) FROM results");
        if matches!(n.as_deref(), Ok([n]) if *n >= 10) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
    // Let the mock finish taking in what the killed run had sent.
    std::thread::sleep(Duration::from_millis(200));
    let killed_requests = mock.chat_requests();
    let queries = query_db(&db, "SELECT count(*) FROM queries")[0];
    assert_eq!(queries, 20);
    let tuples = 3 * queries;
    let at_kill = query_db(&db, "SELECT count(*) FROM results")[0];
    assert!(
        (10..tuples).contains(&at_kill),
        "killed too late to prove anything ({at_kill} of {tuples} rows)"
    );

    let out = command().output().unwrap();
    check_ok(&out);
    assert!(
        text(&out.stderr).contains("resuming"),
        "{}",
        text(&out.stderr)
    );
    no_key_in(&out, &db);
    assert_eq!(query_db(&db, "SELECT count(*) FROM runs")[0], 1);
    assert_eq!(
        query_db(
            &db,
            "SELECT count(*) FROM runs WHERE finished_at IS NOT NULL"
        )[0],
        1
    );
    // Every (query, paradigm) tuple exactly once, each a whole row.
    assert_eq!(query_db(&db, "SELECT count(*) FROM results")[0], tuples);
    assert_eq!(
        query_db(
            &db,
            "SELECT count(*) FROM (SELECT DISTINCT query_id, paradigm FROM results)"
        )[0],
        tuples
    );
    assert_eq!(
        query_db(
            &db,
            "SELECT count(*) FROM results WHERE judge_label IS NULL AND error IS NULL"
        )[0],
        0
    );
    let errors = query_strings(&db, "SELECT error FROM results WHERE error IS NOT NULL");
    assert!(errors.is_empty(), "{errors:?}");

    // Work was not redone: the rerun sent again only what was in flight at the kill (at most
    // one request per task, its reply never in the response cache), and fewer requests than
    // the whole run needs.
    let bodies = bodies.lock().unwrap();
    assert_eq!(bodies.len(), mock.chat_requests());
    let (first, second) = bodies.split_at(killed_requests);
    let answered_before: HashSet<&String> = first.iter().collect();
    // Distinct bodies: two rerun tasks may send the same judge request at once.
    let repeated = second
        .iter()
        .filter(|b| answered_before.contains(b))
        .collect::<HashSet<_>>()
        .len();
    let needed: HashSet<&String> = bodies.iter().collect();
    eprintln!(
        "mock: {} requests before the kill, {} after ({} repeated); {} distinct in all; {at_kill} rows at the kill",
        first.len(),
        second.len(),
        repeated,
        needed.len()
    );
    assert!(
        repeated <= CONCURRENCY,
        "the rerun repeated {repeated} requests the killed run had answered"
    );
    assert!(!second.is_empty(), "the rerun did no work");
    assert!(
        second.len() < needed.len(),
        "the rerun sent {} requests, a whole run needs {}",
        second.len(),
        needed.len()
    );
}

#[test]
fn max_tokens_stops_cleanly_and_a_larger_budget_continues() {
    let mock = MockServer::start(|r| {
        let content = content_for(kind_of(r), r.last_content());
        let prompt: u64 = r.messages.iter().map(|(_, c)| c.len() as u64 / 4 + 1).sum();
        let completion = content.len() as u64 / 4 + 1;
        MockReply::with_usage(content, prompt, completion)
    });
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let run = |budget: Option<u64>| {
        let mut c = bench_command(dir.path(), &mock.base_url(), "naive");
        c.args(["--concurrency", "1"]);
        if let Some(b) = budget {
            c.args(["--max-tokens", &b.to_string()]);
        }
        c.output().unwrap()
    };
    let tokens_sql =
        "SELECT coalesce(sum(tokens_retrieval_in + tokens_retrieval_out + tokens_generation_in
        + tokens_generation_out + tokens_judge_in + tokens_judge_out), 0) FROM results";

    // Measure one full run elsewhere to size a budget of about a third of it.
    let full_dir = tempfile::tempdir().unwrap();
    let mut full = bench_command(full_dir.path(), &mock.base_url(), "naive");
    let out = full.args(["--concurrency", "1"]).output().unwrap();
    check_ok(&out);
    let full_tokens = query_db(&full_dir.path().join("r.sqlite"), tokens_sql)[0] as u64;
    assert!(full_tokens > 0);
    let budget = full_tokens / 3;

    let out = run(Some(budget));
    check_ok(&out);
    assert!(
        text(&out.stdout).contains("stopped at the token budget"),
        "{}",
        text(&out.stdout)
    );
    let rows = query_db(&db, "SELECT count(*) FROM results")[0];
    assert!(
        rows > 0 && rows < 20,
        "{rows} tuples under a third of the bill"
    );
    let spent = query_db(&db, tokens_sql)[0] as u64;
    assert!(spent <= budget, "spent {spent} > budget {budget}");
    assert_eq!(
        query_db(&db, "SELECT count(*) FROM runs WHERE finished_at IS NULL")[0],
        1,
        "the run is left open to continue"
    );

    // The same command without a budget continues the same run to the end.
    let out = run(None);
    check_ok(&out);
    assert_eq!(query_db(&db, "SELECT count(*) FROM runs")[0], 1);
    assert_eq!(query_db(&db, "SELECT count(*) FROM results")[0], 20);
}

#[test]
fn llm_mode_survives_every_fault_kind() {
    const PARAS: &str = "naive,iterative,graph";
    const SLOW: &str = "SLOW-REPLY-AFTER-THE-TIMEOUT";
    const NOT_JSON: &str = "GARBAGE-NOT-JSON";
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let kinds_hit = Arc::new(Mutex::new([0usize; 6]));
    // When each slow reply was started, and how long its request took to come again.
    let slow_at = Arc::new(Mutex::new(HashMap::<String, Instant>::new()));
    let slow_gaps = Arc::new(Mutex::new(Vec::<Duration>::new()));
    let (l2, k2) = (ledger.clone(), kinds_hit.clone());
    let (s2, g2) = (slow_at.clone(), slow_gaps.clone());
    let mock = MockServer::start(move |r| {
        let kind = kind_of(r);
        let key = body_key(r);
        let mut l = l2.lock().unwrap();
        if let Some(at) = s2.lock().unwrap().remove(&key) {
            g2.lock().unwrap().push(at.elapsed());
        }
        if r.index == 3 {
            return MockReply::rate_limited(1);
        }
        // About one request body in four fails once, in a way chosen by its hash; the retry
        // succeeds.
        let h = key
            .bytes()
            .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64));
        if h % 4 == 0 && !l.faulted.contains(&key) {
            let mut k = k2.lock().unwrap();
            let mut fault = ((h / 4) % 6) as usize;
            // Slow replies cost a timeout each: three suffice, the first three self-evaluations
            // that fail. Only self-evaluations get them: their bodies are one tuple's own, where
            // an answer's or a judgement's body can be sent by two paradigms of one query at
            // once, and the second copy would then look like an early retry of the first.
            if kind == Kind::Evaluation && k[0] < 3 {
                fault = 0;
            } else if fault == 0 {
                fault = 1;
            }
            // Garbage content is a fault only where JSON is expected.
            if fault == 5 && !r.json_mode {
                fault = 2;
            }
            k[fault] += 1;
            if fault == 0 {
                s2.lock().unwrap().insert(key.clone(), Instant::now());
            }
            l.faulted.insert(key.clone());
            l.faults += 1;
            return match fault {
                0 => MockReply::with_usage(SLOW, 1, 1).delayed(Duration::from_millis(2500)),
                1 => MockReply::TruncatedBody,
                2 => MockReply::NonJson,
                3 => MockReply::DropConnection,
                4 => MockReply::status(500),
                _ => MockReply::with_usage(NOT_JSON, 1, 1),
            };
        }
        let content = content_for(kind, r.last_content());
        let prompt: u64 = r.messages.iter().map(|(_, c)| c.len() as u64 / 4 + 1).sum();
        let completion = content.len() as u64 / 4 + 1;
        l.served.insert(key, (kind, prompt + completion));
        l.served_total += prompt + completion;
        MockReply::with_usage(content, prompt, completion)
    });
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    // A short per-attempt timeout, so the slow reply times out, and short backoffs.
    let cfg = dir.path().join("c.toml");
    std::fs::write(
        &cfg,
        format!(
            "[llm.answer]\nmodel = \"mock-model\"\nbase_url = \"{}\"\ntimeout_s = 1\nmax_retries = 5\nbackoff_base_ms = 50\nbackoff_max_ms = 500\n",
            mock.base_url()
        ),
    )
    .unwrap();
    let run = || {
        let mut c = bench_command(dir.path(), &mock.base_url(), PARAS);
        c.arg("--config").arg(&cfg);
        c.output().unwrap()
    };

    let started = Instant::now();
    let out = run();
    check_ok(&out);
    no_key_in(&out, &db);
    eprintln!(
        "fault run took {:?}; faults by kind (slow, truncated, non-JSON, dropped, 500, bad JSON content): {:?}",
        started.elapsed(),
        kinds_hit.lock().unwrap()
    );
    {
        let k = kinds_hit.lock().unwrap();
        for (i, name) in [
            "slow",
            "truncated",
            "non-JSON",
            "dropped",
            "500",
            "bad JSON content",
        ]
        .iter()
        .enumerate()
        {
            assert!(k[i] > 0, "no {name} fault was injected: {k:?}");
        }
    }

    // The client gave up on each slow reply at its timeout and asked again before the reply
    // was due (a plausible-looking slow reply would otherwise have been taken).
    let gaps = slow_gaps.lock().unwrap().clone();
    assert_eq!(gaps.len(), kinds_hit.lock().unwrap()[0], "{gaps:?}");
    assert!(
        gaps.iter()
            .all(|g| *g >= Duration::from_millis(900) && *g < Duration::from_millis(2400)),
        "retry gaps after slow replies: {gaps:?}"
    );

    // Every (query, paradigm) tuple exactly once.
    let queries = query_db(&db, "SELECT count(*) FROM queries")[0];
    assert!(queries >= 15);
    assert_eq!(
        query_db(&db, "SELECT count(*) FROM results")[0],
        3 * queries
    );
    assert_eq!(
        query_db(
            &db,
            "SELECT count(*) FROM (SELECT DISTINCT query_id, paradigm FROM results)"
        )[0],
        3 * queries
    );

    // Faults ended as successes or error rows: never judged errors, never wrong answers.
    assert_eq!(
        query_db(
            &db,
            "SELECT count(*) FROM results WHERE error IS NOT NULL AND judge_label IS NOT NULL"
        )[0],
        0
    );
    for answer in query_strings(
        &db,
        "SELECT answer FROM results WHERE judge_label IS NOT NULL",
    ) {
        assert!(answer.starts_with("mock answer"), "{answer:?}");
    }
    let errors = query_strings(&db, "SELECT error FROM results WHERE error IS NOT NULL");
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        query_db(
            &db,
            "SELECT count(*) FROM results WHERE judge_label = 'correct'"
        )[0],
        3 * queries
    );

    // Nothing faulty was cached.
    for response in query_strings(&db, "SELECT response FROM llm_cache") {
        assert!(
            !response.contains(SLOW)
                && !response.contains(NOT_JSON)
                && !response.to_ascii_lowercase().contains("<html"),
            "{response:?}"
        );
    }

    // Tokens: exactly what the mock served (distinct successful replies).
    let l = ledger.lock().unwrap();
    let served_distinct: u64 = l.served.values().map(|(_, t)| t).sum();
    let cached = query_db(
        &db,
        "SELECT CAST(sum(prompt_tokens + completion_tokens) AS INTEGER) FROM llm_cache",
    )[0];
    assert_eq!(cached as u64, served_distinct);
    let triplets: u64 = l
        .served
        .values()
        .filter(|(k, _)| *k == Kind::Triplets)
        .map(|(_, t)| t)
        .sum();
    let extracted = query_db(
        &db,
        "SELECT CAST(sum(tokens_in + tokens_out) AS INTEGER) FROM extractions",
    )[0];
    assert_eq!(extracted as u64, triplets);
    drop(l);

    // A second identical run makes no request.
    let before = mock.chat_requests();
    let again = run();
    check_ok(&again);
    assert_eq!(mock.chat_requests(), before, "the rerun called the LLM");
    assert_eq!(
        query_db(&db, "SELECT count(*) FROM results")[0],
        3 * queries
    );
    no_key_in(&again, &db);
}
