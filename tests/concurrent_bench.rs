//! Several `bench` processes started at once on one new SQLite file: all finish, one run, every
//! (question, paradigm) tuple exactly once, and the tuples equal a single process's.

mod common;

use common::*;

use std::path::Path;
use std::process::{Command, Stdio};

fn bench(db: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ragrouter"));
    c.env_remove("RAGROUTER_DATA_DIR")
        .env_remove("OPENAI_BASE_URL")
        .env("RAGROUTER_LOG", "warn")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["bench", "demo", "--db"])
        .arg(db)
        .arg("--cache-dir")
        .arg(shared_cache());
    c
}

/// Every stored tuple as one line (ids, answer, label, context), in key order.
fn tuples(db: &Path) -> Vec<String> {
    query_strings(
        db,
        "SELECT query_id || '|' || paradigm || '|' || answer || '|' || coalesce(judge_label, '-')
                || '|' || context_json
         FROM results ORDER BY query_id, paradigm",
    )
}

#[test]
fn three_processes_on_one_new_file_store_every_tuple_once() {
    let dir = tempfile::tempdir().unwrap();
    let alone = dir.path().join("alone.sqlite");
    check_ok(&bench(&alone).output().unwrap());

    let shared = dir.path().join("shared.sqlite");
    let children: Vec<_> = (0..3)
        .map(|_| {
            bench(&shared)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        check_ok(&c.wait_with_output().unwrap());
    }
    assert_eq!(query_db(&shared, "SELECT count(*) FROM runs")[0], 1);
    let n = query_db(&shared, "SELECT count(*) FROM results")[0];
    assert_eq!(
        n,
        query_db(
            &shared,
            "SELECT count(*) FROM (SELECT DISTINCT query_id, paradigm FROM results)"
        )[0]
    );
    assert_eq!(n, 20 * 7, "20 questions x 7 paradigms");
    assert_eq!(tuples(&shared), tuples(&alone));
}
