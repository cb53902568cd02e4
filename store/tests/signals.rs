//! Probe signals written and read back through `Store::put_signals` / `Store::signals`, equal
//! on both backends: SQLite always, PostgreSQL in an `#[ignore]`d test (`RAGROUTER_TEST_PG`).

mod common;

use bench_core::{BenchConfig, ParadigmId, Signal};
use common::{corpus, spec};
use store::{DbTarget, Store};

/// Signals that probe the store's types: missing values, values that need every bit of an f64,
/// negatives, paradigm lists, own costs and milliseconds.
fn written() -> Vec<(String, Signal)> {
    let mut agree = Signal::free(
        "agree.f1",
        Some(2.0 / 3.0),
        "answers",
        &[ParadigmId::LlmOnly, ParadigmId::Naive],
    );
    agree.cost_ms = 0.125;
    let mut mentions = Signal::free("entity.mentions", Some(3.0), "entities", &[]);
    mentions.cost = 41.0;
    mentions.cost_ms = 1.0e-3 / 3.0;
    vec![
        ("q1".into(), agree),
        (
            "q1".into(),
            Signal::free("dense.top1", Some(0.1 + 0.2), "dense", &[]),
        ),
        ("q1".into(), mentions),
        (
            "q1".into(),
            Signal::free(
                "logprob.min",
                Some(-17.25),
                "answers",
                &[ParadigmId::LlmOnly],
            ),
        ),
        (
            "q2".into(),
            Signal::free("dense.top1", Some(1e-300), "dense", &[]),
        ),
        (
            "q2".into(),
            Signal::free("entity.hit_rate", None, "entities", &[]),
        ),
        (
            "q2".into(),
            Signal::free("logprob.min", None, "answers", &[ParadigmId::LlmOnly]),
        ),
    ]
}

/// Writes the signals into a fresh run of `store`, checks a second write keeps the first
/// values, and returns what the store reads back.
async fn round_trip(store: Store) -> Vec<(String, Signal)> {
    let (c, cfg) = (corpus(), BenchConfig::default());
    store.upsert_corpus(&c).await.unwrap();
    let run = store.start_run(&spec(&c, &cfg), false).await.unwrap();
    let rows = written();
    store.put_signals(run.id, &rows).await.unwrap();
    let mut expected = rows.clone();
    expected.sort_by(|a, b| (&a.0, &a.1.name).cmp(&(&b.0, &b.1.name)));
    let back = store.signals(run.id).await.unwrap();
    assert_eq!(back, expected);
    // A resumed probe writing the same keys again changes nothing; a new key is added.
    let mut again = rows.clone();
    for (_, s) in &mut again {
        s.value = Some(99.0);
        s.cost_ms = 5.0;
    }
    again.push(("q2".into(), Signal::free("ppr.top1", Some(0.5), "ppr", &[])));
    store.put_signals(run.id, &again).await.unwrap();
    let back = store.signals(run.id).await.unwrap();
    assert_eq!(back.len(), rows.len() + 1);
    assert_eq!(
        back.iter()
            .filter(|(q, s)| !(q == "q2" && s.name == "ppr.top1"))
            .cloned()
            .collect::<Vec<_>>(),
        expected
    );
    // A non-finite value is refused with the question named, and nothing of the batch is kept.
    let bad = vec![
        ("q1".into(), Signal::free("new.ok", Some(1.0), "x", &[])),
        (
            "q9".into(),
            Signal::free("new.bad", Some(f64::NAN), "x", &[]),
        ),
    ];
    let err = store
        .put_signals(run.id, &bad)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("query q9") && err.contains("not finite"),
        "{err}"
    );
    assert_eq!(store.signals(run.id).await.unwrap(), back);
    back
}

#[tokio::test]
async fn signals_round_trip_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    round_trip(Store::open(&dir.path().join("r.sqlite")).await.unwrap()).await;
}

#[tokio::test]
#[ignore = "needs PostgreSQL (RAGROUTER_TEST_PG)"]
async fn signals_equal_on_sqlite_and_postgres() {
    let admin = std::env::var("RAGROUTER_TEST_PG").expect(
        "this test needs a PostgreSQL server: set RAGROUTER_TEST_PG (scripts/pg-test.sh start prints it)",
    );
    let url = {
        use sqlx::{Connection, Executor};
        let mut conn = sqlx::PgConnection::connect(&admin).await.unwrap();
        conn.execute("DROP DATABASE IF EXISTS rr_signals WITH (FORCE)")
            .await
            .unwrap();
        conn.execute("CREATE DATABASE rr_signals").await.unwrap();
        format!("{}/rr_signals", admin.rsplit_once('/').unwrap().0)
    };
    let target: DbTarget = url.parse().unwrap();
    let pg = round_trip(Store::open_db(&target).await.unwrap()).await;
    let dir = tempfile::tempdir().unwrap();
    let sqlite = round_trip(Store::open(&dir.path().join("r.sqlite")).await.unwrap()).await;
    assert_eq!(pg, sqlite);
}
