//! `bench --retrieval-only`: every paradigm over every question, offline, timed, with nothing
//! judged or stored; the results store is only read (its cached graph extractions), never
//! created or written.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context as _, Result};
use async_trait::async_trait;
use bench_core::{ExtractionCache, ExtractionRow, ExtractorKey, GraphBuildRecord, Paradigm, Query};
use store::{DbTarget, Store};
use tokio::task::JoinSet;

use super::execute::failed;
use super::invocation::Invocation;
use crate::engines::Engines;

impl Invocation<'_> {
    /// Builds the offline paradigms (the graph from the store's cached extractions where it
    /// has them), runs them over every question and prints the wall time.
    pub(super) async fn retrieval_only(&self) -> Result<()> {
        let offline = self.offline_parts();
        let engines = Engines::offline(
            self.config,
            offline.reader.clone(),
            offline.extractor.clone(),
        );
        let cache = ReadOnlyExtractions::open(&self.args.store.db).await;
        let graph = self.graph(&cache, &engines).await;
        cache.close().await;
        let (graph, _, graph_secs) = graph?;
        let (_, paradigms) = self.paradigms(&offline, &engines, graph)?;
        let (secs, tuples) =
            run_paradigms_only(&paradigms, self.queries, &self.embedded.query_vectors).await?;
        eprintln!(
            "retrieval only: {tuples} tuples ({} questions x {} paradigms, no judging or storing) in {secs:.1}s \
             (embedding {:.1}s, graph {graph_secs:.1}s before)",
            self.queries.len(),
            paradigms.len(),
            self.embedded.secs,
        );
        Ok(())
    }
}

/// The graph build's extraction cache for a run that stores nothing: an existing results
/// store is read; what is extracted now is kept in memory only.
pub(super) struct ReadOnlyExtractions(Option<Store>);

impl ReadOnlyExtractions {
    /// The store at `db` opened for reading when it exists; none (an empty cache) otherwise,
    /// or when it cannot be read (said on stderr). An SQLite store of an older schema is not
    /// opened: reading it would migrate it first, a write.
    async fn open(db: &DbTarget) -> Self {
        if let DbTarget::Sqlite(p) = db {
            if !p.exists() {
                return ReadOnlyExtractions(None);
            }
            match Store::info(p).await {
                Ok(info) if info.ownership == store::Ownership::New => {
                    return ReadOnlyExtractions(None)
                }
                Ok(info) if info.schema_version < store::SCHEMA_VERSION => {
                    eprintln!(
                        "retrieval only: {db} has an older schema (version {}): its cached graph \
                         extractions are not read, so that it stays untouched",
                        info.schema_version
                    );
                    return ReadOnlyExtractions(None);
                }
                _ => {}
            }
        }
        match Store::open_read_only_db(db).await {
            Ok(store) => ReadOnlyExtractions(Some(store)),
            Err(e) => {
                eprintln!("retrieval only: not reading cached graph extractions from {db}: {e}");
                ReadOnlyExtractions(None)
            }
        }
    }

    async fn close(&self) {
        if let Some(store) = &self.0 {
            store.close().await;
        }
    }
}

#[async_trait]
impl ExtractionCache for ReadOnlyExtractions {
    async fn cached_extractions(
        &self,
        key: &ExtractorKey,
        chunk_hashes: &[String],
    ) -> bench_core::Result<HashMap<String, ExtractionRow>> {
        match &self.0 {
            Some(store) => ExtractionCache::cached_extractions(store, key, chunk_hashes).await,
            None => Ok(HashMap::new()),
        }
    }

    async fn put_extraction(
        &self,
        _key: &ExtractorKey,
        _row: &ExtractionRow,
    ) -> bench_core::Result<()> {
        Ok(())
    }

    async fn record_graph_build(&self, _build: &GraphBuildRecord) -> bench_core::Result<()> {
        Ok(())
    }
}

/// Every paradigm over every question, one question per unit on blocking threads (one per
/// core), with no judging, scoring or storing. Returns the wall seconds and the tuples run.
pub(crate) async fn run_paradigms_only(
    paradigms: &[Arc<dyn Paradigm>],
    queries: &[Query],
    vectors: &bench_core::Embeddings,
) -> Result<(f64, usize)> {
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let queries: Arc<Vec<Query>> = Arc::new(queries.to_vec());
    let vectors = Arc::new(vectors.clone());
    let paradigms: Arc<Vec<Arc<dyn Paradigm>>> = Arc::new(paradigms.to_vec());
    let t = Instant::now();
    let mut tasks = JoinSet::new();
    let mut next = 0..queries.len();
    let mut tuples = 0;
    loop {
        while tasks.len() < cores {
            let Some(qi) = next.next() else { break };
            let (queries, vectors, paradigms) =
                (queries.clone(), vectors.clone(), paradigms.clone());
            let handle = tokio::runtime::Handle::current();
            tasks.spawn_blocking(move || {
                handle.block_on(async {
                    for p in paradigms.iter() {
                        p.run(&queries[qi], vectors.row(qi)).await?;
                    }
                    Ok::<usize, bench_core::BenchError>(paradigms.len())
                })
            });
        }
        match tasks.join_next().await {
            None => break,
            Some(res) => match res.context("a query task panicked").and_then(|r| Ok(r?)) {
                Ok(n) => tuples += n,
                Err(e) => return Err(failed(&mut tasks, e).await),
            },
        }
    }
    Ok((t.elapsed().as_secs_f64(), tuples))
}
