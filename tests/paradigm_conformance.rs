//! Every paradigm in `paradigms::REGISTRY`, run by `bench` on the demo corpus under a small
//! context budget, offline and against the scripted mock LLM: each answers every question without
//! error, stays within the budget, leaves a trace, bills LLM tokens exactly when an LLM is used,
//! and gives the same tuples on a fresh run. A new paradigm is covered by its registry line.

mod common;

use common::*;

use std::path::Path;
use std::process::Command;

use llm::mock::{MockReply, MockServer};

const BUDGET: i64 = 300;

fn registered() -> Vec<&'static str> {
    paradigms::REGISTRY.iter().map(|r| r.id.as_str()).collect()
}

/// `bench demo` over every registered paradigm; against `llm` (a base URL) when given.
fn bench(dir: &Path, fresh: bool, llm: Option<&str>) -> std::process::Output {
    let all = registered();
    let mut c = Command::new(env!("CARGO_BIN_EXE_ragrouter"));
    c.env_remove("RAGROUTER_DATA_DIR")
        .env_remove("OPENAI_BASE_URL")
        .env("RAGROUTER_LOG", "warn")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["bench", "demo", "--paradigms", &all.join(",")])
        .arg("--config")
        .arg(dir.join("small.toml"))
        .arg("--db")
        .arg(dir.join("r.sqlite"))
        .arg("--cache-dir")
        .arg(shared_cache());
    if let Some(url) = llm {
        c.env("OPENAI_API_KEY", "sk-conformance").args([
            "--llm-base-url",
            url,
            "--llm-model",
            "mock-model",
        ]);
    }
    if fresh {
        c.arg("--fresh");
    }
    c.output().unwrap()
}

/// A run's tuples, one line each: (paradigm, question, answer, label, context).
fn tuples(db: &Path, run: i64) -> Vec<String> {
    query_strings(
        db,
        &format!(
            "SELECT paradigm || '|' || query_id || '|' || answer || '|' || coalesce(judge_label, '-')
                    || '|' || context_json || '|' || context_tokens
             FROM results WHERE run_id = {run} ORDER BY paradigm, query_id"
        ),
    )
}

/// The conformance checks on one database; `llm` says whether an LLM answered.
fn check(dir: &Path, llm: Option<&str>) {
    std::fs::write(
        dir.join("small.toml"),
        format!("[retrieval]\ncontext_budget = {BUDGET}\n"),
    )
    .unwrap();
    let db = dir.join("r.sqlite");
    check_ok(&bench(dir, false, llm));
    let questions = query_db(&db, "SELECT count(*) FROM queries")[0];
    for p in registered() {
        let check = |sql: &str| query_db(&db, &sql.replace("$P", p))[0];
        assert_eq!(
            check("SELECT count(*) FROM results WHERE paradigm = '$P' AND error IS NULL"),
            questions,
            "{p}: a tuple per question, none failed"
        );
        assert_eq!(
            check(&format!(
                "SELECT max(context_tokens) <= {BUDGET} FROM results WHERE paradigm = '$P'"
            )),
            1,
            "{p}: context within the budget"
        );
        assert_eq!(
            check(
                "SELECT count(*) FROM results WHERE paradigm = '$P'
                 AND (json_type(trace_json) <> 'object' OR trace_json = '{}')"
            ),
            0,
            "{p}: every tuple leaves a trace"
        );
        let billed = check(
            "SELECT count(*) FROM results WHERE paradigm = '$P'
             AND tokens_generation_in + tokens_generation_out > 0",
        );
        if llm.is_some() {
            assert_eq!(billed, questions, "{p}: every answer is billed to the LLM");
        } else {
            assert_eq!(
                check(
                    "SELECT sum(tokens_retrieval_in + tokens_retrieval_out + tokens_generation_in
                              + tokens_generation_out) FROM results WHERE paradigm = '$P'"
                ),
                0,
                "{p}: offline bills no LLM token"
            );
        }
    }
    // The budget binds: retrieving paradigms fill it, so the check above has teeth.
    assert_eq!(
        query_db(
            &db,
            &format!("SELECT max(context_tokens) > {BUDGET} / 2 FROM results")
        )[0],
        1
    );
    // Deterministic: a fresh run gives the same tuples (in LLM mode, from the response cache).
    check_ok(&bench(dir, true, llm));
    assert_eq!(tuples(&db, 2), tuples(&db, 1));
    assert_eq!(
        tuples(&db, 1).len() as i64,
        questions * registered().len() as i64
    );
}

#[test]
fn the_registry_covers_every_paradigm_id() {
    let ids: Vec<&str> = bench_core::ParadigmId::ALL
        .iter()
        .map(|p| p.as_str())
        .collect();
    assert_eq!(registered(), ids);
}

#[test]
fn every_registered_paradigm_conforms_offline() {
    let dir = tempfile::tempdir().unwrap();
    check(dir.path(), None);
}

#[test]
fn every_registered_paradigm_conforms_with_an_llm() {
    let mock = MockServer::start(|r| {
        let content = content_for(kind_of(r), r.last_content());
        let prompt: u64 = r.messages.iter().map(|(_, c)| c.len() as u64 / 4 + 1).sum();
        MockReply::with_usage(content.clone(), prompt, content.len() as u64 / 4 + 1)
    });
    let dir = tempfile::tempdir().unwrap();
    check(dir.path(), Some(&mock.base_url()));
}
