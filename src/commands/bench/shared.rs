//! What the steps of `bench` share: the encoders and index ([`EmbeddedCorpus`]), what every
//! query task reads ([`Shared`]), the stage clock and the evidence-statements line. A leaf: the
//! steps (`mod.rs`, `invocation`, `assemble`, `execute`, `signals_step`, `retrieval`) name these,
//! and nothing here names a step.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bench_core::{Embedder, ResultRecord};
use corpora::{FlatIndex, MiniLm, VectorCache};
use metrics::TupleEvaluator;
use paradigms::ChunkTable;
use store::Store;

/// Everything a query task needs, shared by all tasks.
pub(crate) struct Shared {
    pub(crate) store: Store,
    pub(crate) run_id: i64,
    /// Judge, answer metrics, semantic F1, coverage and faithfulness of each tuple.
    pub(crate) evaluator: TupleEvaluator,
    pub(crate) mode: String,
    pub(crate) config_hash: String,
    /// `RAGROUTER_FAULT_DELAY_MS`: a pause before each write, for crash-and-resume tests
    /// (debug builds only).
    pub(crate) fault_delay: Option<std::time::Duration>,
    /// This invocation's time by stage, for the stage breakdown.
    pub(crate) clock: StageClock,
    /// Share work between the paradigms of a question (off with `--share-nothing`).
    pub(crate) share: bool,
    /// Run tuples on blocking threads, one unit per core (offline: the work is CPU-bound).
    pub(crate) blocking: bool,
    /// The corpus's chunks: the judge sees the delivered context's texts.
    pub(crate) chunks: Arc<ChunkTable>,
    /// The signature of this run's graph build, recorded with every tuple that reads the graph.
    pub(crate) graph_build: Option<String>,
    /// On a shared (PostgreSQL) store: this worker's lease; items are claimed before answering.
    pub(crate) lease: Option<store::Lease>,
    /// The token budget the LLM calls reserve in (`--max-tokens`; unlimited without it).
    pub(crate) budget: Arc<llm::budget::TokenBudget>,
}

/// The encoders, the vector cache, the question vectors and the dense index.
pub(super) struct EmbeddedCorpus {
    pub(super) encoder: Arc<MiniLm>,
    pub(super) embedder: Arc<dyn Embedder>,
    /// The endpoint embedder when embeddings come from an endpoint (its usage is billed).
    pub(super) endpoint_embedder: Option<Arc<llm::EndpointEmbedder>>,
    pub(super) cache: VectorCache,
    pub(super) query_vectors: bench_core::Embeddings,
    pub(super) index: Arc<FlatIndex>,
    pub(super) secs: f64,
}

/// Microseconds of the work this invocation did, by stage (summed over tuples).
#[derive(Debug, Default)]
pub(crate) struct StageClock {
    pub(crate) retrieval: AtomicU64,
    pub(crate) reading: AtomicU64,
    pub(crate) judging: AtomicU64,
    pub(crate) storing: AtomicU64,
    /// Tuples written.
    pub(crate) tuples: AtomicU64,
}

impl StageClock {
    pub(super) fn add(&self, r: &ResultRecord) {
        let us = |ms: f64| (ms * 1e3).round() as u64;
        let l = &r.output.latency;
        self.retrieval
            .fetch_add(us(l.retrieval_ms), Ordering::Relaxed);
        self.reading
            .fetch_add(us(l.generation_ms), Ordering::Relaxed);
        self.judging.fetch_add(us(l.judge_ms), Ordering::Relaxed);
        self.tuples.fetch_add(1, Ordering::Relaxed);
    }

    /// Seconds of (retrieval, reading, judging, storing).
    pub(crate) fn seconds(&self) -> [f64; 4] {
        [&self.retrieval, &self.reading, &self.judging, &self.storing]
            .map(|a| a.load(Ordering::Relaxed) as f64 / 1e6)
    }
}

/// How the evidence statements were matched (verbatim, by meaning, not at all) and the share of
/// questions with gold chunks; `None` when the corpus's evidence has no statements.
pub(crate) fn statements_line(
    corpus: &bench_core::Corpus,
    cache_dir: Option<&std::path::Path>,
) -> Option<String> {
    let all: Vec<&bench_core::StatementMatch> =
        corpus.queries.iter().flat_map(|q| &q.statements).collect();
    if all.is_empty() {
        return None;
    }
    let verbatim = all.iter().filter(|s| s.is_matched() && !s.semantic).count();
    let meaning = all.iter().filter(|s| s.is_matched() && s.semantic).count();
    let none = all.len() - verbatim - meaning;
    let with_gold = corpus.queries_with_gold_chunks();
    let listed = match cache_dir {
        Some(dir) if none > 0 => format!(
            " (listed in {})",
            corpora::unmatched_path(dir, &corpus.name, &corpus.content_hash).display()
        ),
        _ => String::new(),
    };
    Some(format!(
        "evidence statements: {}: {verbatim} matched verbatim, {meaning} by meaning, {none} matched \
         nothing{listed}; gold chunks for {with_gold} of {} questions ({:.1} %)",
        all.len(),
        corpus.queries.len(),
        100.0 * with_gold as f64 / corpus.queries.len().max(1) as f64
    ))
}
