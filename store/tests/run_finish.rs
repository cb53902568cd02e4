//! `runs.finished_at` is when a run first finished: a resume does not clear or move it.

mod common;

use bench_core::BenchConfig;
use common::{corpus, spec};
use store::Store;

async fn finished_at(store: &Store, id: i64) -> Option<String> {
    store.run_row(id).await.unwrap().unwrap().finished_at
}

#[tokio::test]
async fn a_resume_keeps_the_first_finish() {
    let store = Store::open_in_memory().await.unwrap();
    let (c, cfg) = (corpus(), BenchConfig::default());
    store.upsert_corpus(&c).await.unwrap();
    let spec = spec(&c, &cfg);
    let run = store.start_run(&spec, false).await.unwrap();
    assert_eq!(finished_at(&store, run.id).await, None);
    store.finish_run(run.id).await.unwrap();
    let first = finished_at(&store, run.id).await.expect("finished");

    // Timestamps have millisecond resolution: make sure a later finish would differ.
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let again = store.start_run(&spec, false).await.unwrap();
    assert!(again.resumed && again.id == run.id);
    assert_eq!(finished_at(&store, run.id).await.as_ref(), Some(&first));
    store.finish_run(run.id).await.unwrap();
    assert_eq!(finished_at(&store, run.id).await, Some(first));
}
