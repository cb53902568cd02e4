//! NUL characters in imported text on a PostgreSQL store (hostile test of 2026-12-07, H14): the
//! import is refused with exit 2 naming the file, line and field, as on SQLite, not with the
//! server's encoding error and exit 1; nothing is stored. Schema version 16 rekeys a stored
//! import on PostgreSQL as on SQLite (H7).

mod common;

use common::*;

#[test]
#[ignore = "needs a PostgreSQL server (RAGROUTER_TEST_PG; scripts/pg-test.sh start, .ci/run starts one)"]
fn h14_nul_in_imported_text_is_exit_2_on_postgres() {
    let admin = test_pg();
    let pg = fresh_pg(&admin, "rr_h14_nul");
    let dir = tempfile::tempdir().unwrap();
    let line = r#"{"id": "a", "corpus": "nq", "question": "q?", "answers": ["x"], "outcomes": {"llm-only": {"answer": "x", "cost": 0}}}"#;
    for (i, (from, to, field)) in [
        (
            r#""answer": "x""#,
            r#""answer": "x\u0000y""#,
            "outcomes.llm-only",
        ),
        (
            r#""cost": 0}}"#,
            r#""cost": 0}}, "signals": {"s": {"value": 1, "probe": "p\u0000"}}"#,
            "signals.s",
        ),
        (
            r#""cost": 0}}"#,
            r#""cost": 0}}, "routers": {"r": {"choice": "llm-only", "answer": "a\u0000"}}"#,
            "routers.r",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let file = dir.path().join(format!("n{i}.jsonl"));
        std::fs::write(&file, format!("{}\n", line.replacen(from, to, 1))).unwrap();
        let out = bin()
            .args(["import", "outcomes", s(&file), "--db", &pg])
            .output()
            .unwrap();
        check_fails(&out, 2, &[&format!("n{i}.jsonl"), "line 1", field, "NUL"]);
    }
    // Nothing stored (the schema may or may not exist: no run either way).
    let runs: Vec<i64> = pg_fetch(
        &pg,
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'runs'",
    );
    if runs == [1] {
        assert_eq!(pg_fetch::<i64>(&pg, "SELECT count(*) FROM runs"), [0]);
    }
}

/// Schema version 16's data step on PostgreSQL: a run stored with a path in its settings and a
/// path-dependent key is rekeyed, so importing the same file again adds nothing (H7).
#[test]
#[ignore = "needs a PostgreSQL server (RAGROUTER_TEST_PG; scripts/pg-test.sh start, .ci/run starts one)"]
fn h7_a_postgres_store_keyed_by_path_is_migrated_to_the_content_key() {
    let admin = test_pg();
    let pg = fresh_pg(&admin, "rr_h7_rekey");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("good.jsonl");
    std::fs::write(
        &file,
        r#"{"id": "a", "corpus": "nq", "question": "q?", "outcomes": {"naive": {"correct": true, "cost": 1}}}
"#,
    )
    .unwrap();
    let import = || {
        bin()
            .args(["import", "outcomes", s(&file), "--db", &pg])
            .output()
            .unwrap()
    };
    check_ok(&import());
    let config: Vec<String> = pg_fetch(&pg, "SELECT config_json FROM runs");
    let mut old: serde_json::Value = serde_json::from_str(&config[0]).unwrap();
    old["file"] = serde_json::json!(s(&file));
    pg_exec(
        &pg,
        &format!(
            "UPDATE runs SET run_key = 'keyed-by-path', config_hash = 'old', config_json = '{}'",
            old.to_string().replace('\'', "''")
        ),
    );
    // Version 17's column did not exist yet.
    pg_exec(&pg, "ALTER TABLE route_predictions DROP COLUMN arms_played");
    pg_exec(&pg, "UPDATE ragrouter_schema SET version = 15");
    let out = import();
    check_ok(&out);
    assert!(
        text(&out.stdout).contains("nothing added"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(pg_fetch::<i64>(&pg, "SELECT count(*) FROM runs"), [1]);
    let config: Vec<String> = pg_fetch(&pg, "SELECT config_json FROM runs");
    assert!(!config[0].contains('/'), "{}", config[0]);
    assert_eq!(
        pg_fetch::<i64>(
            &pg,
            "SELECT count(*) FROM results WHERE config_hash = 'old'"
        ),
        [0]
    );
}
