//! Retrieve-then-read: one retriever call, the budget cut, one reader call (NaiveRAG, and the
//! shape GraphRAG and HybridRAG share).

use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use bench_core::{
    Paradigm, ParadigmId, ParadigmOutput, PhaseLatency, PhaseTokens, Query, Reader, RetrievalQuery,
    Retriever, TokenSource,
};

use crate::chunks::{context_chunks, fit_budget, ChunkTable};
use crate::toolkit::{CallBounds, Registered, Toolkit};

/// NaiveRAG in the registry: dense top-K, then one reader call.
pub const NAIVE: Registered = Registered {
    id: ParadigmId::Naive,
    faithfulness: true,
    build: |kit| Ok(read_with(kit, ParadigmId::Naive, kit.dense())),
    cost: |s| CallBounds::one_read(s.with_context, s),
};

/// GraphRAG in the registry: graph retrieval (seed entities, PPR), then one reader call.
pub const GRAPH: Registered = Registered {
    id: ParadigmId::Graph,
    faithfulness: true,
    build: |kit| Ok(read_with(kit, ParadigmId::Graph, kit.graph()?)),
    cost: CallBounds::entities_then_read,
};

/// Paradigm `id`: `retriever`, the context budget, then the kit's reader.
pub fn read_with(
    kit: &dyn Toolkit,
    id: ParadigmId,
    retriever: Arc<dyn Retriever>,
) -> Arc<dyn Paradigm> {
    Arc::new(RetrieveThenRead {
        id,
        retriever,
        reader: kit.reader(),
        chunks: kit.chunks(),
        budget: kit.config().retrieval.context_budget,
    })
}

/// A paradigm made of one retriever and one reader.
pub struct RetrieveThenRead {
    /// Which paradigm this is (NaiveRAG, GraphRAG, Hybrid, ...).
    pub id: ParadigmId,
    /// Retrieves the context.
    pub retriever: Arc<dyn Retriever>,
    /// Answers from it.
    pub reader: Arc<dyn Reader>,
    /// The corpus's chunks.
    pub chunks: Arc<ChunkTable>,
    /// Context budget in cl100k tokens.
    pub budget: u64,
}

impl std::fmt::Debug for RetrieveThenRead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RetrieveThenRead")
            .field("id", &self.id)
            .field("retriever", &self.retriever.name())
            .field("reader", &self.reader.identity())
            .field("budget", &self.budget)
            .finish()
    }
}

#[async_trait]
impl Paradigm for RetrieveThenRead {
    fn id(&self) -> ParadigmId {
        self.id
    }

    async fn run(&self, query: &Query, vector: &[f32]) -> bench_core::Result<ParadigmOutput> {
        let t0 = Instant::now();
        let retrieval = self
            .retriever
            .retrieve(RetrievalQuery {
                text: &query.text,
                vector: Some(vector),
            })
            .await?;
        let (kept, context_tokens) = fit_budget(&retrieval.ranked, &self.chunks, self.budget)?;
        let retrieval_ms = t0.elapsed().as_secs_f64() * 1e3;

        let t1 = Instant::now();
        let ctx = context_chunks(&kept, &self.chunks)?;
        let generation = self.reader.answer(&query.text, query.qtype, &ctx).await?;
        let generation_ms = t1.elapsed().as_secs_f64() * 1e3;

        Ok(ParadigmOutput {
            answer: generation.text,
            context: kept,
            context_tokens,
            tokens: PhaseTokens {
                retrieval_in: retrieval.tokens_in,
                retrieval_out: retrieval.tokens_out,
                generation_in: generation.tokens_in,
                generation_out: generation.tokens_out,
                ..PhaseTokens::default()
            },
            token_source: if retrieval.tokens_in + retrieval.tokens_out == 0 {
                generation.token_source
            } else {
                generation.token_source.merge(TokenSource::Cl100k)
            },
            latency: PhaseLatency {
                retrieval_ms,
                generation_ms,
                judge_ms: 0.0,
            },
            trace: crate::reader::with_confidence(
                serde_json::json!({
                    "retriever": self.retriever.name(),
                    "candidates": retrieval.ranked.len(),
                    "retrieval": retrieval.trace,
                }),
                generation.confidence,
            ),
        })
    }

    fn settings(&self) -> serde_json::Value {
        serde_json::json!({ "retriever": self.retriever.name(), "budget": self.budget })
    }
}
