//! The post-arm probe `pairs`: a bench run (`--probes pairs`; the offline readers' answers, or
//! the LLM's against the mock server) and an import of the same answers (`--pairs`) store the
//! same signals; an import derives them with the whole-answer refusal rule ("Unknown Soldier" is
//! an answer, "unknown" a refusal); SQLite and PostgreSQL store the same rows.

mod common;

use common::*;

use std::path::Path;

/// Every `pairs` signal but its milliseconds: (question, name, value, present, paradigms, cost).
const PAIRS: &str = "SELECT query_id || '|' || name || '|' || value || '|' || present || '|' ||
    paradigms || '|' || cost FROM signals WHERE probe = 'pairs' ORDER BY query_id, name";

fn bench(db: &Path, extra: &[&str]) -> std::process::Output {
    let cache = shared_cache();
    let mut args = vec!["bench", "demo", "--cache-dir", cache.to_str().unwrap()];
    args.extend_from_slice(extra);
    run_on(db, &args)
}

/// A generic outcome file (docs/outcomes-format.md) of the bench run's answers: one record per
/// question, its text and each arm's stored answer.
fn outcomes_of(db: &Path) -> String {
    let rows = query_strings(
        db,
        "SELECT r.query_id || char(31) || q.text || char(31) || r.paradigm || char(31) || r.answer
         FROM results r JOIN queries q ON q.query_id = r.query_id
         ORDER BY r.query_id, r.paradigm",
    );
    let mut records: Vec<(String, String, serde_json::Map<String, serde_json::Value>)> = Vec::new();
    for row in rows {
        let f: Vec<&str> = row.split('\u{1f}').collect();
        if records.last().is_none_or(|r| r.0 != f[0]) {
            records.push((f[0].into(), f[1].into(), serde_json::Map::new()));
        }
        let outcome = serde_json::json!({"answer": f[3], "cost": 1});
        records.last_mut().unwrap().2.insert(f[2].into(), outcome);
    }
    records
        .into_iter()
        .map(|(id, question, outcomes)| {
            let r = serde_json::json!({"id": id, "corpus": "demo-answers", "question": question,
                "answers": ["gold"], "outcomes": outcomes});
            format!("{r}\n")
        })
        .collect()
}

/// The `pairs` rows of an import (`--pairs`) of the answers stored in `db`.
fn imported_pairs(db: &Path, dir: &Path) -> Vec<String> {
    let file = dir.join("answers.jsonl");
    std::fs::write(&file, outcomes_of(db)).unwrap();
    let imported = dir.join("import.sqlite");
    check_ok(&run_on(
        &imported,
        &["import", "outcomes", "--pairs", s(&file)],
    ));
    query_strings(&imported, PAIRS)
}

#[test]
fn a_bench_run_and_an_import_of_its_answers_store_the_same_pairs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bench.sqlite");
    let arms = ["--paradigms", "llm-only,naive,iterative"];
    let out = bench(&db, &[&arms[..], &["--probes", "pairs"]].concat());
    check_ok(&out);
    let err = text(&out.stderr);
    assert!(
        err.contains("probes (pairs): 660 signals for 20 questions"),
        "{err}"
    );
    // Three arms: 3 pairs of 6 signals and 3 shapes of 5, per question.
    let benched = query_strings(&db, PAIRS);
    assert_eq!(benched.len(), 20 * 33);
    // The offline LLM-only reader has no context and answers nothing: a refusal.
    assert_eq!(
        query_db(
            &db,
            "SELECT count(*) FROM signals WHERE name = 'shape.llm-only.refusal' AND value = 1"
        ),
        [20]
    );
    // A rerun computes nothing again.
    let again = bench(&db, &[&arms[..], &["--probes", "pairs"]].concat());
    check_ok(&again);
    assert!(
        !text(&again.stderr).contains("probes ("),
        "{}",
        text(&again.stderr)
    );
    assert_eq!(query_strings(&db, PAIRS), benched);

    assert_eq!(imported_pairs(&db, dir.path()), benched);

    // One arm has nothing to compare: said, nothing stored.
    let single = dir.path().join("single.sqlite");
    let out = bench(&single, &["--paradigms", "naive", "--probes", "pairs"]);
    check_ok(&out);
    assert!(text(&out.stderr).contains("pairs compares the answers of two arms or more"));
    assert_eq!(query_db(&single, "SELECT count(*) FROM signals"), [0]);
}

#[test]
fn an_llm_run_probes_pairs_from_the_llm_answers() {
    use llm::mock::{MockReply, MockServer};
    let mock = MockServer::start(|r| {
        MockReply::with_usage(content_for(kind_of(r), r.last_content()), 10, 5)
    });
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("llm.sqlite");
    let url = mock.base_url();
    let out = bin()
        .env("OPENAI_API_KEY", "sk-pairs-test")
        .args(["bench", "demo", "--paradigms", "llm-only,naive,iterative"])
        .args([
            "--probes",
            "pairs",
            "--llm-base-url",
            &url,
            "--llm-model",
            "mock-model",
        ])
        .arg("--cache-dir")
        .arg(shared_cache())
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    check_ok(&out);
    let benched = query_strings(&db, PAIRS);
    assert_eq!(benched.len(), 20 * 33);
    // "mock answer without passages" against "mock answer from N passages": 3 shared tokens
    // of 4 and 5 (F1 2/3), lengths 4 and 5; only the retrieving answer holds a number.
    let one = |name: &str| {
        query_strings(
            &db,
            &format!("SELECT DISTINCT CAST(value AS TEXT) FROM signals WHERE name = '{name}'"),
        )
    };
    assert_eq!(one("pair.llm-only.naive.len_ratio"), ["0.8"]);
    assert_eq!(one("pair.llm-only.naive.f1"), ["0.666666666666667"]);
    assert_eq!(one("shape.llm-only.number"), ["0.0"]);
    assert_eq!(one("shape.naive.number"), ["1.0"]);
    assert_eq!(imported_pairs(&db, dir.path()), benched);
}

/// Three arms' answers to one question, and a record with one answered arm (no pair).
const RECORDS: &str = concat!(
    r#"{"id":"q1","corpus":"c","question":"Who is buried in the tomb?","answers":["The Unknown Soldier"],"#,
    r#""outcomes":{"llm-only":{"answer":"Unknown Soldier","cost":0},"naive":{"answer":"unknown","cost":1},"#,
    r#""iterative":{"answer":"The Unknown Soldier.","cost":3}}}"#,
    "\n",
    r#"{"id":"q2","corpus":"c","question":"Who wrote it?","answers":["Orla"],"#,
    r#""outcomes":{"llm-only":{"answer":"Orla","cost":0},"naive":{"correct":true,"cost":1}}}"#,
    "\n"
);

/// The rows an import of [`RECORDS`] must store (golden values).
/// (SQLite writes a float as text with 15 significant digits: 2/3 is 0.666666666666667.)
const EXPECTED: [&str; 33] = [
    "q1|pair.llm-only.iterative.a_in_b|1.0|1|llm-only,iterative|0.0",
    "q1|pair.llm-only.iterative.b_in_a|1.0|1|llm-only,iterative|0.0",
    "q1|pair.llm-only.iterative.both_refuse|0.0|1|llm-only,iterative|0.0",
    "q1|pair.llm-only.iterative.em|1.0|1|llm-only,iterative|0.0",
    "q1|pair.llm-only.iterative.f1|1.0|1|llm-only,iterative|0.0",
    "q1|pair.llm-only.iterative.len_ratio|1.0|1|llm-only,iterative|0.0",
    "q1|pair.llm-only.naive.a_in_b|0.0|1|llm-only,naive|0.0",
    "q1|pair.llm-only.naive.b_in_a|1.0|1|llm-only,naive|0.0",
    "q1|pair.llm-only.naive.both_refuse|0.0|1|llm-only,naive|0.0",
    "q1|pair.llm-only.naive.em|0.0|1|llm-only,naive|0.0",
    "q1|pair.llm-only.naive.f1|0.666666666666667|1|llm-only,naive|0.0",
    "q1|pair.llm-only.naive.len_ratio|0.5|1|llm-only,naive|0.0",
    "q1|pair.naive.iterative.a_in_b|1.0|1|naive,iterative|0.0",
    "q1|pair.naive.iterative.b_in_a|0.0|1|naive,iterative|0.0",
    "q1|pair.naive.iterative.both_refuse|0.0|1|naive,iterative|0.0",
    "q1|pair.naive.iterative.em|0.0|1|naive,iterative|0.0",
    "q1|pair.naive.iterative.f1|0.666666666666667|1|naive,iterative|0.0",
    "q1|pair.naive.iterative.len_ratio|0.5|1|naive,iterative|0.0",
    "q1|shape.iterative.len|2.0|1|iterative|0.0",
    "q1|shape.iterative.number|0.0|1|iterative|0.0",
    "q1|shape.iterative.q_overlap|0.0|1|iterative|0.0",
    "q1|shape.iterative.refusal|0.0|1|iterative|0.0",
    "q1|shape.iterative.yesno|0.0|1|iterative|0.0",
    "q1|shape.llm-only.len|2.0|1|llm-only|0.0",
    "q1|shape.llm-only.number|0.0|1|llm-only|0.0",
    "q1|shape.llm-only.q_overlap|0.0|1|llm-only|0.0",
    "q1|shape.llm-only.refusal|0.0|1|llm-only|0.0",
    "q1|shape.llm-only.yesno|0.0|1|llm-only|0.0",
    "q1|shape.naive.len|1.0|1|naive|0.0",
    "q1|shape.naive.number|0.0|1|naive|0.0",
    "q1|shape.naive.q_overlap|0.0|1|naive|0.0",
    "q1|shape.naive.refusal|1.0|1|naive|0.0",
    "q1|shape.naive.yesno|0.0|1|naive|0.0",
];

#[test]
fn an_import_derives_pairs_with_the_whole_answer_refusal_rule() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("i.sqlite");
    let file = dir.path().join("r.jsonl");
    std::fs::write(&file, RECORDS).unwrap();
    check_ok(&run_on(&db, &["import", "outcomes", "--pairs", s(&file)]));
    assert_eq!(query_strings(&db, PAIRS), EXPECTED);
    // The answer probe reads the same rule: "Unknown Soldier" answers, "unknown" refuses.
    assert_eq!(
        query_strings(
            &db,
            "SELECT name || '=' || value FROM signals WHERE name LIKE 'refusal.%' ORDER BY 1"
        ),
        ["refusal.llm-only=0.0", "refusal.naive=1.0"]
    );
    // Without --pairs an import derives the answer probe alone.
    let plain = dir.path().join("plain.sqlite");
    check_ok(&run_on(&plain, &["import", "outcomes", s(&file)]));
    assert_eq!(
        query_strings(&plain, "SELECT DISTINCT probe FROM signals ORDER BY 1"),
        ["answers"]
    );
}

#[test]
#[ignore = "needs a PostgreSQL server (RAGROUTER_TEST_PG; scripts/pg-test.sh start, .ci/run starts one)"]
fn postgresql_stores_the_same_pairs_as_sqlite() {
    let pg = fresh_pg(&test_pg(), "rr_pairs");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("r.jsonl");
    std::fs::write(&file, RECORDS).unwrap();
    let sqlite = dir.path().join("i.sqlite");
    check_ok(&run_on(
        &sqlite,
        &["import", "outcomes", "--pairs", s(&file)],
    ));
    check_ok(&run_on(
        Path::new(&pg),
        &["import", "outcomes", "--pairs", s(&file)],
    ));
    // PostgreSQL prints a float without the ".0" SQLite adds: compare the values as numbers.
    let rows = "SELECT query_id || '|' || name || '|' || paradigms FROM signals
        WHERE probe = 'pairs' ORDER BY query_id, name";
    let values = "SELECT value FROM signals WHERE probe = 'pairs' ORDER BY query_id, name";
    assert_eq!(pg_fetch::<String>(&pg, rows), query_strings(&sqlite, rows));
    assert_eq!(
        pg_fetch::<f64>(&pg, values),
        try_fetch::<f64>(&sqlite, values).unwrap()
    );
    assert_eq!(pg_fetch::<String>(&pg, rows).len(), EXPECTED.len());
}
