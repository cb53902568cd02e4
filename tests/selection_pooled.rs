//! Which runs `route eval` pools: one run per corpus, whatever the runs' split tags, so the same
//! questions imported untagged and tagged `test` are counted once.

mod common;

use common::*;

/// 40 questions of one corpus, two arms: naive right on every other question, graph on every
/// third.
fn outcomes() -> String {
    (0..40)
        .map(|i| {
            format!(
                r#"{{"id":"q{i}","corpus":"c1","question":"Question number {i}?","outcomes":{{"naive":{{"correct":{},"cost":100}},"graph":{{"correct":{},"cost":900}}}}}}"#,
                i % 2 == 0,
                i % 3 == 0
            ) + "\n"
        })
        .collect()
}

#[test]
fn an_untagged_and_a_test_run_of_one_corpus_pool_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let file = dir.path().join("mine.jsonl");
    std::fs::write(&file, outcomes()).unwrap();
    let import = |extra: &[&str]| {
        let args = [&["import", "outcomes", file.to_str().unwrap()], extra].concat();
        check_ok(&run_on(&db, &args));
    };
    import(&[]);
    import(&["--split", "test"]);
    assert_eq!(
        query_strings(&db, "SELECT coalesce(split, '-') FROM runs ORDER BY id"),
        ["-", "test"]
    );
    let out = run_on(
        &db,
        &[
            "route",
            "eval",
            "--features",
            "q",
            "--routers",
            "best-single,oracle",
            "--folds",
            "2",
        ],
    );
    // Before: 80 rows, and the store refused the second copy of each prediction (exit 1).
    check_ok(&out);
    let err = text(&out.stderr);
    assert!(err.contains("40 routing rows"), "{err}");
}
