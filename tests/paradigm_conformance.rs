//! Every paradigm `ParadigmId::ALL` names, run by `bench` offline on the demo corpus under a
//! small context budget: each answers every question without error, stays within the budget,
//! leaves a trace, bills no LLM token offline, and gives the same tuples on a fresh run. A new
//! paradigm is covered as soon as it has an id.

mod common;

use common::*;

use std::path::Path;
use std::process::Command;

use bench_core::ParadigmId;

const BUDGET: i64 = 300;

fn bench(dir: &Path, fresh: bool) -> std::process::Output {
    let all: Vec<&str> = ParadigmId::ALL.iter().map(|p| p.as_str()).collect();
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

#[test]
fn every_paradigm_conforms_offline() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("small.toml"),
        format!("[retrieval]\ncontext_budget = {BUDGET}\n"),
    )
    .unwrap();
    let db = dir.path().join("r.sqlite");
    check_ok(&bench(dir.path(), false));
    let questions = query_db(&db, "SELECT count(*) FROM queries")[0];
    for p in ParadigmId::ALL {
        let p = p.as_str();
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
        assert_eq!(
            check(
                "SELECT sum(tokens_retrieval_in + tokens_retrieval_out + tokens_generation_in
                          + tokens_generation_out) FROM results WHERE paradigm = '$P'"
            ),
            0,
            "{p}: offline bills no LLM token"
        );
    }
    // The budget binds: retrieving paradigms fill it, so the check above has teeth.
    assert_eq!(
        query_db(
            &db,
            &format!("SELECT max(context_tokens) > {BUDGET} / 2 FROM results")
        )[0],
        1
    );
    // Deterministic: a fresh run gives the same tuples.
    check_ok(&bench(dir.path(), true));
    assert_eq!(tuples(&db, 2), tuples(&db, 1));
    assert_eq!(
        tuples(&db, 1).len() as i64,
        questions * ParadigmId::ALL.len() as i64
    );
}
