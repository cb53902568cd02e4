//! The answer probe in LLM mode against a real server (llama.cpp serving SmolLM2-135M, as in
//! tests/llm_real.rs): the LLM-only and NaiveRAG answers are compared and their token
//! log-probabilities recorded, the calls that produced them are the tuples' (billed in the
//! token totals), a rerun sends nothing, and `route eval --features q+p` reads the signals.
//!
//! `#[ignore]`d: it needs the server (RAGROUTER_REAL_LLM_BASE_URL, RAGROUTER_REAL_LLM_MODEL).

mod common;

use common::*;

use std::path::Path;
use std::process::Output;

const QUESTIONS: i64 = 3;
const CONFIG: &str = r#"
[retrieval]
context_budget = 300

[generation]
max_tokens = 32

[llm.answer]
timeout_s = 300
max_in_flight = 2
max_retries = 1
backoff_base_ms = 100
"#;

fn bench(dir: &Path, base_url: &str, model: &str) -> Output {
    bin()
        .env("OPENAI_API_KEY", "sk-local-dummy")
        .args(["bench", "demo", "--paradigms", "llm-only,naive"])
        .args(["--limit", &QUESTIONS.to_string()])
        .args(["--llm-base-url", base_url, "--llm-model", model])
        .arg("--config")
        .arg(dir.join("config.toml"))
        .arg("--db")
        .arg(dir.join("r.sqlite"))
        .arg("--cache-dir")
        .arg(shared_cache())
        .output()
        .unwrap()
}

const SIGNALS: &str = "SELECT query_id || '|' || name || '|' || value || '|' || present || '|' ||
    paradigms || '|' || cost FROM signals WHERE probe = 'answers' ORDER BY query_id, name";

#[test]
#[ignore = "needs a real LLM server (RAGROUTER_REAL_LLM_BASE_URL / _MODEL; scripts/local-llm.sh start)"]
fn the_answer_probe_records_agreement_and_logprobs_billed_and_cached() {
    let var = |k: &str| std::env::var(k).unwrap_or_else(|_| panic!("set {k}"));
    let (base_url, model) = (
        var("RAGROUTER_REAL_LLM_BASE_URL"),
        var("RAGROUTER_REAL_LLM_MODEL"),
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), CONFIG).unwrap();
    let db = dir.path().join("r.sqlite");

    let first = bench(dir.path(), &base_url, &model);
    check_ok(&first);
    let err = text(&first.stderr);
    assert!(llm_calls_sent(&err) > 0, "{err}");
    let both = query_db(
        &db,
        "SELECT COUNT(*) FROM (SELECT query_id FROM results WHERE error IS NULL
         GROUP BY query_id HAVING COUNT(*) = 2)",
    )[0];
    assert!(both > 0, "no question answered by both arms: {err}");
    // Per question answered by both: 6 agreement signals and 3 confidence signals per arm,
    // none with a cost of its own (the router pays the two arms).
    assert_eq!(
        query_db(&db, "SELECT COUNT(*) FROM signals WHERE probe = 'answers'"),
        [both * 12]
    );
    assert_eq!(
        query_db(
            &db,
            "SELECT COUNT(*) FROM signals WHERE probe = 'answers' AND name LIKE 'agree.%'
             AND paradigms = 'llm-only,naive' AND cost = 0"
        ),
        [both * 2]
    );
    // llama.cpp returns log-probabilities: every answer's confidence is present, its minimum
    // at most its mean, both <= 0, and the entropy >= 0.
    assert_eq!(
        query_db(
            &db,
            "SELECT COUNT(*) FROM signals WHERE name LIKE 'logprob.%' AND present = 1"
        ),
        [both * 6]
    );
    assert_eq!(
        query_db(
            &db,
            "SELECT COUNT(*) FROM signals mn JOIN signals me ON me.query_id = mn.query_id
             AND me.name = replace(mn.name, '.min.', '.mean.')
             WHERE mn.name LIKE 'logprob.min.%' AND NOT (mn.value <= me.value AND me.value <= 0)"
        ),
        [0]
    );
    assert_eq!(
        query_db(
            &db,
            "SELECT COUNT(*) FROM signals WHERE name LIKE 'logprob.entropy.%' AND value < 0"
        ),
        [0]
    );
    // The log-probabilities came with the answer calls, cached beside them, and those calls
    // are the tuples' generation tokens (the token totals bill them, once).
    let cached: Vec<i64> = query_db(
        &db,
        "SELECT COALESCE(SUM(prompt_tokens + completion_tokens), 0) FROM llm_cache
         WHERE logprobs_json IS NOT NULL",
    );
    let billed = query_db(
        &db,
        "SELECT COALESCE(SUM(tokens_generation_in + tokens_generation_out), 0) FROM results
         WHERE error IS NULL",
    );
    let failed = query_db(&db, "SELECT COUNT(*) FROM results WHERE error IS NOT NULL")[0];
    eprintln!("cached {cached:?}, billed {billed:?}, failed tuples {failed}");
    assert!(billed[0] > 0);
    if failed == 0 {
        assert_eq!(cached, billed);
    } else {
        // A tuple that failed after its answer (an unreadable judge reply) keeps its cached
        // answer call but bills nothing: the rerun retries it from the cache.
        assert!(cached[0] >= billed[0], "{cached:?} {billed:?}");
    }

    // The rerun: nothing sent, nothing recomputed.
    let before = query_strings(&db, SIGNALS);
    let again = bench(dir.path(), &base_url, &model);
    check_ok(&again);
    let err = text(&again.stderr);
    if query_db(&db, "SELECT COUNT(*) FROM results WHERE error IS NOT NULL")[0] == 0 {
        assert_eq!(llm_calls_sent(&err), 0, "{err}");
    }
    assert_eq!(query_strings(&db, SIGNALS), before);

    // The routers read them.
    let eval = run_on(
        &db,
        &[
            "route",
            "eval",
            "--features",
            "q+p",
            "--routers",
            "util-lr",
            "--folds",
            "2",
        ],
    );
    check_ok(&eval);
    let out = text(&eval.stdout);
    assert!(
        out.contains("logprob.mean.naive") && out.contains("agree.f1"),
        "{out}"
    );
}
