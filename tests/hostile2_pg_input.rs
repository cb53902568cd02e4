//! NUL characters in imported text on a PostgreSQL store (hostile test of 2026-12-07, H14): the
//! import is refused with exit 2 naming the file, line and field, as on SQLite, not with the
//! server's encoding error and exit 1; nothing is stored.

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
