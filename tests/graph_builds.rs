//! The graph paradigms in LLM mode against a scripted mock: a tuple records the graph build it
//! was answered on, a resumed run whose graph changed (extractions that failed the first time
//! now succeed) answers the graph paradigms' tuples again on the new graph, keeping the others,
//! and a question whose entity list the model garbles is retrieved from the question itself.

mod common;

use common::*;

use std::path::Path;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use llm::mock::{MockReply, MockServer};

fn bench(dir: &Path, base_url: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ragrouter"))
        .env_remove("RAGROUTER_DATA_DIR")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("RAGROUTER_FAULT_DELAY_MS")
        .env("RAGROUTER_LOG", "warn")
        .env("OPENAI_API_KEY", "sk-unused")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["bench", "demo", "--paradigms", "naive,graph"])
        .args(["--llm-base-url", base_url, "--llm-model", "mock-model"])
        .arg("--db")
        .arg(dir.join("r.sqlite"))
        .arg("--cache-dir")
        .arg(shared_cache())
        .output()
        .unwrap()
}

/// (paradigm, graph build, rowid) of every stored tuple, in order.
fn tuples(db: &Path) -> Vec<String> {
    query_strings(
        db,
        "SELECT paradigm || '/' || query_id || '/' || coalesce(graph_build, '-') || '/' || rowid
         FROM results ORDER BY paradigm, query_id",
    )
}

#[test]
fn a_rerun_on_a_completed_graph_answers_the_graph_tuples_again() {
    // While `failing` holds, the extraction of every chunk whose text has an odd length is
    // refused (a 400: not retried), so the first graph is partial.
    let failing = Arc::new(AtomicBool::new(true));
    let f = Arc::clone(&failing);
    let mock = MockServer::start(move |r| {
        let kind = kind_of(r);
        if kind == Kind::Triplets
            && f.load(Ordering::SeqCst)
            && after(r.last_content(), "\nText:\n").len() % 2 == 1
        {
            return MockReply::status(400);
        }
        MockReply::with_usage(content_for(kind, r.last_content()), 10, 5)
    });
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");

    let first = bench(dir.path(), &mock.base_url());
    check_ok(&first);
    let failed = query_db(
        &db,
        "SELECT count(*) FROM extractions WHERE status = 'failed'",
    )[0];
    assert!(
        failed > 0,
        "no extraction failed: the test cannot see a partial graph"
    );
    let partial = query_strings(&db, "SELECT signature FROM graph_builds ORDER BY id");
    assert_eq!(partial.len(), 1);
    // Graph tuples carry the build's signature, the dense paradigm's carry none.
    assert_eq!(
        query_strings(
            &db,
            "SELECT DISTINCT coalesce(graph_build, '-') || '/' || paradigm FROM results ORDER BY 1"
        ),
        vec!["-/naive".to_owned(), format!("{}/graph", partial[0])]
    );
    let before = tuples(&db);

    // The rerun: the failed extractions now succeed, so the graph differs.
    failing.store(false, Ordering::SeqCst);
    let second = bench(dir.path(), &mock.base_url());
    check_ok(&second);
    let stderr = text(&second.stderr);
    let builds = query_strings(&db, "SELECT signature FROM graph_builds ORDER BY id");
    assert_eq!(builds.len(), 2);
    assert_ne!(
        builds[0], builds[1],
        "the completed graph has its own signature"
    );
    let n = query_db(&db, "SELECT count(*) FROM results WHERE paradigm = 'graph'")[0];
    assert!(
        stderr.contains(&format!("{n} tuples were answered on another build")),
        "{stderr}"
    );
    let after_rerun = tuples(&db);
    assert_eq!(after_rerun.len(), before.len(), "every tuple exactly once");
    for (old, new) in before.iter().zip(&after_rerun) {
        if old.starts_with("naive/") {
            assert_eq!(old, new, "a tuple off the graph is kept as it was");
        } else {
            let parts: Vec<&str> = new.split('/').collect();
            assert_eq!(parts[2], builds[1], "{new}");
            assert_ne!(old, new, "a graph tuple is answered again");
        }
    }

    // Same graph again: nothing is redone.
    let third = bench(dir.path(), &mock.base_url());
    check_ok(&third);
    assert!(!text(&third.stderr).contains("answered on another build"));
    assert_eq!(tuples(&db), after_rerun);
}

#[test]
fn an_unreadable_entity_list_retrieves_from_the_question_and_is_counted() {
    let mock = MockServer::start(|r| {
        let kind = kind_of(r);
        if kind == Kind::Entities {
            return MockReply::with_usage("The answer is: a bridge.", 10, 5);
        }
        MockReply::with_usage(content_for(kind, r.last_content()), 10, 5)
    });
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let out = bench(dir.path(), &mock.base_url());
    check_ok(&out);
    let stdout = text(&out.stdout);
    // Every graph tuple is answered (none failed), each from the question itself.
    assert_eq!(
        query_db(
            &db,
            "SELECT count(*) FROM results WHERE paradigm = 'graph' AND error IS NOT NULL"
        )[0],
        0
    );
    let n = query_db(&db, "SELECT count(*) FROM results WHERE paradigm = 'graph'")[0];
    assert_eq!(
        query_db(
            &db,
            "SELECT count(*) FROM results WHERE paradigm = 'graph'
             AND json_extract(trace_json, '$.retrieval.fallback_to_question')
             AND json_extract(trace_json, '$.retrieval.entities_unreadable') LIKE 'unparseable entity list%'"
        )[0],
        n
    );
    assert!(
        stdout.contains(&format!(
            "graph: {n} of {n} graph retrievals used the question itself"
        )),
        "{stdout}"
    );
    assert!(!stdout.contains("naive: "), "{stdout}");
}
