//! Sharing work between the paradigms of a question changes no tuple: a run with sharing on (the
//! default) and one with `--share-nothing` store the same rows.

mod common;

use common::*;

use std::path::{Path, PathBuf};
use std::process::Command;

fn bench(db: &Path, corpus: &str, extra: &[&str]) {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets");
    let out = Command::new(env!("CARGO_BIN_EXE_ragrouter"))
        .env_remove("RAGROUTER_DATA_DIR")
        .env("RAGROUTER_LOG", "warn")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["bench", corpus])
        .args(extra)
        .arg("--data-dir")
        .arg(&data)
        .arg("--db")
        .arg(db)
        .arg("--cache-dir")
        .arg(shared_cache())
        .output()
        .unwrap();
    check_ok(&out);
    assert!(
        text(&out.stderr).contains("wall time by stage"),
        "{}",
        text(&out.stderr)
    );
}

/// Every stored column but timings and creation times, one string per tuple in key order.
const EXACT: &str = "SELECT query_id || '|' || paradigm || '|' || answer || '|' || context_json || '|' ||
    context_tokens || '|' || coalesce(judge_label, '-') || '|' || printf('%.17g|%.17g|%.17g', em, f1, answer_recall)
    || '|' || coalesce(printf('%.17g', evidence_recall), '-') || '|' || coalesce(reader_correct, '-') || '|' ||
    (tokens_construction_in + tokens_construction_out + tokens_retrieval_in + tokens_retrieval_out
     + tokens_generation_in + tokens_generation_out + tokens_judge_in + tokens_judge_out) || '|' ||
    token_source || '|' || mode || '|' || config_hash || '|' || coalesce(error, '-') || '|' || trace_json
    FROM results ORDER BY query_id, paradigm";

fn floats(db: &Path, column: &str) -> Vec<f64> {
    try_fetch::<f64>(
        db,
        &format!("SELECT coalesce({column}, -1.0) FROM results ORDER BY query_id, paradigm"),
    )
    .unwrap()
}

fn compare(corpus: &str, extra: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let (shared, alone): (PathBuf, PathBuf) =
        (dir.path().join("s.sqlite"), dir.path().join("n.sqlite"));
    bench(&shared, corpus, extra);
    let mut args = extra.to_vec();
    args.push("--share-nothing");
    bench(&alone, corpus, &args);
    let (a, b) = (query_strings(&shared, EXACT), query_strings(&alone, EXACT));
    assert!(!a.is_empty());
    assert_eq!(a.len(), b.len(), "{corpus}: tuple counts differ");
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(
            x, y,
            "{corpus}: a tuple differs between sharing and sharing nothing"
        );
    }
    // Graph paradigms ran and some context delivered the answer, so sharing had work to share.
    assert!(
        query_db(
            &shared,
            "SELECT count(*) FROM results WHERE paradigm = 'hybrid' AND judge_label = 'correct'"
        )[0] > 0
    );
    // Semantic F1 and coverage come from one batched forward per question instead of one per
    // tuple: equal up to float summation order inside gemm.
    for column in ["semantic_f1", "coverage"] {
        let (x, y) = (floats(&shared, column), floats(&alone, column));
        assert_eq!(x.len(), y.len());
        let worst = x
            .iter()
            .zip(&y)
            .map(|(p, q)| (p - q).abs())
            .fold(0.0f64, f64::max);
        assert!(worst <= 1e-6, "{corpus}: {column} differs by {worst}");
    }
}

#[test]
fn demo_tuples_are_the_same_with_and_without_sharing() {
    compare("demo", &[]);
}

#[test]
fn musique_tuples_are_the_same_with_and_without_sharing() {
    compare("musique-dev", &["--limit", "8"]);
}
