//! The staged cascades end to end on the AdaRAGUE import: every prediction delivers an arm it
//! paid for and stores the arms it ran, each billed once; the cascades' own rows sit at the
//! point fixed on the training rows; a matrix without answers says why no cascade runs.

mod common;

use common::*;

use std::path::Path;

/// `route eval` on the probe signals, trained on the given split's training runs.
const EVAL_P_GIVEN: &[&str] = &[
    "route",
    "eval",
    "--features",
    "p",
    "--split",
    "given",
    "--routers",
    "best-single",
];

fn folder(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/datasets")
        .join(name)
        .to_str()
        .unwrap()
        .to_string()
}

#[test]
fn staged_cascades_deliver_an_arm_they_played_and_store_every_arm_paid_for() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.sqlite");
    // With the pairs probe: after multi-step its answer is compared with the cheap ones.
    check_ok(&run_on(
        &db,
        &["import", "adarague", &folder("adarague-llama8b"), "--pairs"],
    ));
    let out = run_on(&db, EVAL_P_GIVEN);
    check_ok(&out);
    let table = text(&out.stdout);
    let paired = after(&table, "paired against best-single");
    for router in ["cascade-select ", "cascade-voi ", "cascade-lr "] {
        assert!(
            paired.lines().any(|l| l.starts_with(router)),
            "{router}\n{table}"
        );
    }
    let eval = query_db(&db, "SELECT max(id) FROM route_evals")[0];
    let preds = format!("FROM route_predictions WHERE eval_id = {eval}");
    // No prediction delivers an arm it did not pay for.
    assert_eq!(
        query_db(
            &db,
            &format!("SELECT count(*) {preds} AND instr(',' || arms_played || ',', ',' || played || ',') = 0")
        ),
        [0]
    );
    // The staged cascade runs the cheap pair as one stage, then multi-step: two lists only.
    // After the cheap stage a question costs 0 + 1 step and delivers one of the pair; after
    // multi-step, 0 + 1 + its own steps, whichever of the three it delivers.
    for router in ["cascade-select", "cascade-voi"] {
        let lists = query_strings(
            &db,
            &format!(
                "SELECT arms_played || ':' || CAST(min(cost) >= 1 AS TEXT) || ':' || CAST(count(DISTINCT played) AS TEXT)
                 {preds} AND router = '{router}' AND param = '' GROUP BY arms_played ORDER BY 1"
            ),
        );
        assert_eq!(
            lists,
            ["llm-only,naive,iterative:1:3", "llm-only,naive:1:2"],
            "{router}"
        );
        assert_eq!(
            query_db(
                &db,
                &format!("SELECT count(*) {preds} AND router = '{router}' AND arms_played = 'llm-only,naive' AND cost <> 1")
            ),
            [0],
            "{router}"
        );
    }
    // A single arm pays for itself alone.
    assert_eq!(
        query_strings(
            &db,
            &format!("SELECT DISTINCT arms_played {preds} AND router = 'naive'")
        ),
        ["naive"]
    );
    // The cascades' own rows (param '') exist and the points they sit at are recorded.
    assert_eq!(
        query_db(
            &db,
            &format!("SELECT count(DISTINCT router) FROM route_eval_results WHERE eval_id = {eval} AND param = '' AND router IN ('cascade-lr', 'cascade-select', 'cascade-voi')")
        ),
        [3]
    );
    let config = query_strings(
        &db,
        &format!("SELECT config_json FROM route_evals WHERE id = {eval}"),
    );
    assert!(
        config[0].contains("operating_points") && config[0].contains("cascade-voi"),
        "{}",
        config[0]
    );

    // A store from before the list was kept (schema version 16) keeps its predictions: the
    // migration adds the column, NULL in the old rows, filled in the new ones.
    let before = query_db(&db, "SELECT count(*) FROM route_predictions")[0];
    exec_db(&db, "ALTER TABLE route_predictions DROP COLUMN arms_played");
    exec_db(&db, "PRAGMA user_version = 16");
    check_ok(&run_on(&db, EVAL_P_GIVEN));
    assert_eq!(query_db(&db, "PRAGMA user_version"), [17]);
    assert_eq!(
        query_db(
            &db,
            &format!("SELECT count(*) {preds} AND arms_played IS NULL")
        ),
        [before]
    );
    assert_eq!(
        query_strings(
            &db,
            &format!(
                "SELECT DISTINCT arms_played FROM route_predictions WHERE eval_id > {eval} AND router = 'naive'"
            )
        ),
        ["naive"]
    );
}

#[test]
fn a_matrix_without_answers_says_why_no_cascade_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.sqlite");
    let d = folder("adaptive-rag-outcomes/classifier/data");
    check_ok(&run_on(
        &db,
        &[
            "import",
            "adaptive-rag",
            "--queries",
            &format!("{d}/valid.json"),
            "--labels",
            &format!("{d}/flan_t5_xl/valid.json"),
            "--split",
            "test",
        ],
    ));
    let out = run_on(&db, &["route", "eval", "--features", "p", "--folds", "3"]);
    check_fails(
        &out,
        2,
        &["no stored probe signals", "use features without p"],
    );
}
