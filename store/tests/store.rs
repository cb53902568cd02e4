//! The results store: migrations, resume semantics, atomic rows and the summary.

mod common;

use bench_core::{BenchConfig, JudgeLabel, ParadigmId, QueryType};
use common::{corpus, record, spec};
use store::Store;
use store::SCHEMA_VERSION;

#[tokio::test]
async fn a_rerun_resumes_and_fresh_starts_a_new_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub/r.sqlite");
    let (c, cfg) = (corpus(), BenchConfig::default());
    let store = Store::open(&path).await.unwrap();
    store.upsert_corpus(&c).await.unwrap();
    let run = store.start_run(&spec(&c, &cfg), false).await.unwrap();
    assert!(!run.resumed);
    store
        .write_result(
            run.id,
            &record("q1", ParadigmId::Naive, Some(JudgeLabel::Correct), None),
        )
        .await
        .unwrap();
    store
        .write_result(
            run.id,
            &record("q2", ParadigmId::Naive, None, Some("timeout")),
        )
        .await
        .unwrap();
    drop(store);

    // Reopened: same spec resumes the same run; only the error-free tuple counts as finished.
    let store = Store::open(&path).await.unwrap();
    store.upsert_corpus(&c).await.unwrap();
    let again = store.start_run(&spec(&c, &cfg), false).await.unwrap();
    assert_eq!((again.id, again.resumed), (run.id, true));
    let done = store.finished_pairs(run.id).await.unwrap();
    assert_eq!(done.len(), 1);
    assert!(done.contains(&("q1".to_owned(), ParadigmId::Naive)));

    // The retried tuple replaces its failed row: still one row per (query, paradigm).
    store
        .write_result(
            run.id,
            &record("q2", ParadigmId::Naive, Some(JudgeLabel::Incorrect), None),
        )
        .await
        .unwrap();
    assert_eq!(store.count_results(run.id).await.unwrap(), 2);
    assert_eq!(store.finished_pairs(run.id).await.unwrap().len(), 2);

    let fresh = store.start_run(&spec(&c, &cfg), true).await.unwrap();
    assert!(fresh.id > run.id && !fresh.resumed);
    assert_eq!(store.count_results(fresh.id).await.unwrap(), 0);

    // A different configuration is a different run.
    let other = BenchConfig {
        seed: 7,
        ..BenchConfig::default()
    };
    let r3 = store.start_run(&spec(&c, &other), false).await.unwrap();
    assert!(!r3.resumed);
}

/// Stores on one file starting the same run at once agree on one run (the check and the insert
/// are one statement; a separate SELECT then INSERT let CI start two).
#[test]
fn stores_starting_one_run_at_once_share_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.sqlite");
    let (c, cfg) = (corpus(), BenchConfig::default());
    let rt = || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    };
    rt().block_on(async {
        let store = Store::open(&path).await.unwrap();
        store.upsert_corpus(&c).await.unwrap();
    });
    for _ in 0..5 {
        let barrier = std::sync::Barrier::new(8);
        let handles: Vec<_> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..8)
                .map(|_| {
                    s.spawn(|| {
                        rt().block_on(async {
                            let store = Store::open(&path).await.unwrap();
                            barrier.wait();
                            store.start_run(&spec(&c, &cfg), false).await.unwrap()
                        })
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let ids: std::collections::BTreeSet<i64> = handles.iter().map(|h| h.id).collect();
        assert_eq!(ids.len(), 1, "{handles:?}");
        assert!(handles.iter().filter(|h| !h.resumed).count() <= 1);
    }
}

#[tokio::test]
async fn summary_groups_by_paradigm_and_type_from_the_rows() {
    let store = Store::open_in_memory().await.unwrap();
    let (c, cfg) = (corpus(), BenchConfig::default());
    store.upsert_corpus(&c).await.unwrap();
    let run = store.start_run(&spec(&c, &cfg), false).await.unwrap();
    for (q, label) in [("q1", JudgeLabel::Correct), ("q2", JudgeLabel::NoAnswer)] {
        store
            .write_result(run.id, &record(q, ParadigmId::Naive, Some(label), None))
            .await
            .unwrap();
    }
    let rows = store.summary(run.id).await.unwrap();
    let kinds: Vec<_> = rows.iter().map(|r| (r.paradigm, r.qtype)).collect();
    assert_eq!(
        kinds,
        [
            (ParadigmId::Naive, Some(QueryType::Factual)),
            (ParadigmId::Naive, Some(QueryType::Reasoning)),
            (ParadigmId::Naive, None),
        ]
    );
    let all = &rows[2];
    assert_eq!((all.n, all.errors), (2, 0));
    assert_eq!((all.correct, all.no_answer), (0.5, 0.5));
    assert_eq!(all.evidence_recall, Some(1.0));
    assert_eq!(all.context_tokens, 10.0);
}

#[tokio::test]
async fn schema_is_versioned_and_a_newer_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.sqlite");
    let store = Store::open(&path).await.unwrap();
    store.close().await;
    // Looked at from outside, as another program would.
    let mut conn = {
        use sqlx::ConnectOptions;
        sqlx::sqlite::SqliteConnectOptions::new()
            .filename(&path)
            .connect()
            .await
            .unwrap()
    };
    let v: i64 = sqlx::query_scalar("PRAGMA user_version")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(v, SCHEMA_VERSION);
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(mode, "wal");
    sqlx::raw_sql(&format!("PRAGMA user_version = {}", SCHEMA_VERSION + 1))
        .execute(&mut conn)
        .await
        .unwrap();
    drop(conn);
    let err = Store::open(&path).await.unwrap_err().to_string();
    assert!(err.contains("newer"), "{err}");
}

#[tokio::test]
async fn an_unwritable_path_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain-file");
    std::fs::write(&file, b"x").unwrap();
    // A database "inside" a regular file cannot be created.
    let err = Store::open(&file.join("r.sqlite"))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("plain-file"), "{err}");
}

#[tokio::test]
async fn route_evaluations_round_trip_and_keep_lambda_in_the_key() {
    use bench_core::{Measures, RouteEvalRow, RouteEvalSpec};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("r.sqlite")).await.unwrap();
    let spec = RouteEvalSpec {
        split: "kfold".into(),
        folds: 5,
        seed: 7,
        features: "q+c".into(),
        policy: "judge-then-semantic-f1".into(),
        mode: "offline".into(),
        runs: vec![("musique-dev".into(), 3)],
        config: serde_json::json!({"encoder": "all-MiniLM-L6-v2"}),
    };
    let row = |router: &str, param: Option<f64>, fold: u32, acc: f64| {
        let base = fixtures::route_eval_row(router, param, "*", fold);
        RouteEvalRow {
            n: 20,
            measures: Measures {
                accuracy: acc,
                mean_tokens: 1234.5,
                regret_correct: 0.1,
                regret_tokens: 10.0,
                latency_ms: 0.01,
                fit_ms: 3.0,
                ..base.measures
            },
            ..base
        }
    };
    let rows = vec![
        row("cost-aware", Some(0.0001), 0, 0.3),
        row("cost-aware", Some(0.001), 0, 0.2),
        row("oracle", None, 0, 1.0),
        row("oracle", None, 1, 1.0),
    ];
    let id = store.put_route_eval(&spec, &rows).await.unwrap();
    let evals = store.route_evals().await.unwrap();
    assert_eq!(evals.len(), 1);
    assert_eq!(evals[0], (id, spec.clone()));
    let back = store.route_eval_rows(id).await.unwrap();
    assert_eq!(back, rows);
    // A duplicate key aborts the whole evaluation: nothing is half written.
    let dup = vec![row("oracle", None, 0, 1.0), row("oracle", None, 0, 1.0)];
    assert!(store.put_route_eval(&spec, &dup).await.is_err());
    assert_eq!(store.route_evals().await.unwrap().len(), 1);
}
