//! Work leases (`bench_core::leases`), the same checks on both backends: SQLite always,
//! PostgreSQL (an `#[ignore]`d test: `RAGROUTER_TEST_PG` names the server; `.ci/run` starts one
//! and runs it with `--include-ignored`).

use std::time::Duration;

mod common;

use bench_core::{BenchConfig, JudgeLabel, ParadigmId};
use common::{corpus, spec};
use store::{Claimed, Lease};
use store::{DbTarget, Store};
use ParadigmId::{Graph, Naive};

fn record(p: ParadigmId, error: Option<&str>) -> bench_core::ResultRecord {
    common::record("q1", p, Some(JudgeLabel::Correct), error)
}

fn claimed(mine: &[ParadigmId], held: &[ParadigmId], gone: &[ParadigmId]) -> Claimed {
    Claimed {
        mine: mine.to_vec(),
        held: held.to_vec(),
        gone: gone.to_vec(),
    }
}

/// Two workers on one run: claims exclude each other, a done item is gone for peers, an
/// expired lease is taken over, and a failed item is retried by a later invocation only.
async fn check(store: Store) {
    let (c, cfg) = (corpus(), BenchConfig::default());
    store.upsert_corpus(&c).await.unwrap();
    let spec = spec(&c, &cfg);
    let run = store.start_run(&spec, false).await.unwrap();
    let now = store.clock_ms().await.unwrap();
    let worker = |name: &str, lease_ms: i64, started_ms: i64| Lease {
        run_id: run.id,
        worker: name.into(),
        lease_ms,
        started_ms,
    };
    let a = worker("a", 150, now);
    let b = worker("b", 150, now);
    let c_ = worker("c", 60_000, now);
    let both = [Naive, Graph];
    let expire = || tokio::time::sleep(Duration::from_millis(250));

    assert_eq!(
        store.claim(&a, "q1", &both).await.unwrap(),
        claimed(&both, &[], &[])
    );
    assert_eq!(
        store.claim(&b, "q1", &both).await.unwrap(),
        claimed(&[], &both, &[])
    );
    // A writes naive (it fails) and marks it done: gone for B, who started with A.
    store
        .write_result(run.id, &record(Naive, Some("timeout")))
        .await
        .unwrap();
    store.release_done(&a, "q1", Naive).await.unwrap();
    assert_eq!(
        store.claim(&b, "q1", &both).await.unwrap(),
        claimed(&[], &[Graph], &[Naive])
    );
    // A dies holding graph: once its lease has run out, B takes it.
    expire().await;
    assert_eq!(
        store.claim(&b, "q1", &[Graph]).await.unwrap(),
        claimed(&[Graph], &[], &[])
    );
    // B writes graph and dies before marking it done: a claim that lands on a finished item
    // hands it back as gone (and marks it done).
    store
        .write_result(run.id, &record(Graph, None))
        .await
        .unwrap();
    // A second answer of a finished tuple (a worker whose lease ran out mid-answer) is not
    // stored over the first: the first success is final, only failures are replaced.
    store
        .write_result(run.id, &record(Graph, Some("late duplicate")))
        .await
        .unwrap();
    let rows = store.routing_tuples(run.id).await.unwrap();
    let graph = rows.iter().find(|r| r.paradigm == Graph).unwrap();
    assert_eq!(graph.error, None);
    assert_eq!(rows.len(), 2);
    expire().await;
    assert_eq!(
        store.claim(&c_, "q1", &[Graph]).await.unwrap(),
        claimed(&[], &[], &[Graph])
    );
    assert_eq!(
        store.claim(&b, "q1", &[Graph]).await.unwrap(),
        claimed(&[], &[], &[Graph])
    );

    // A later invocation (started after those claims) retries the failed naive tuple only.
    tokio::time::sleep(Duration::from_millis(5)).await;
    let later = worker("d", 60_000, store.clock_ms().await.unwrap());
    assert_eq!(
        store.claim(&later, "q1", &both).await.unwrap(),
        claimed(&[Naive], &[], &[Graph])
    );
}

#[tokio::test]
async fn leases_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    check(Store::open(&dir.path().join("r.sqlite")).await.unwrap()).await;
}

#[tokio::test]
#[ignore = "needs a PostgreSQL server (RAGROUTER_TEST_PG; scripts/pg-test.sh start, .ci/run starts one)"]
async fn leases_on_postgres() {
    let admin = std::env::var("RAGROUTER_TEST_PG").expect(
        "this test needs a PostgreSQL server: set RAGROUTER_TEST_PG (scripts/pg-test.sh start prints it)",
    );
    let url = {
        use sqlx::{Connection, Executor};
        let mut conn = sqlx::PgConnection::connect(&admin).await.unwrap();
        conn.execute("DROP DATABASE IF EXISTS rr_leases WITH (FORCE)")
            .await
            .unwrap();
        conn.execute("CREATE DATABASE rr_leases").await.unwrap();
        format!("{}/rr_leases", admin.rsplit_once('/').unwrap().0)
    };
    let target: DbTarget = url.parse().unwrap();
    check(Store::open_db(&target).await.unwrap()).await;
}
