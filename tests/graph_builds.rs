//! A tuple records the graph build it was answered on, and a resumed run whose graph changed
//! (extractions that failed the first time now succeed) answers the graph paradigms' tuples again
//! on the new graph, keeping the others.

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
