//! The paradigm registry: each paradigm's constructor and dry-run cost model, one line each.
//!
//! A paradigm is its id (one line in `bench_core::types`' `paradigm_ids!`, which also says
//! whether it reads the graph), one file here that defines its [`Registered`] entry, and one
//! line in [`REGISTRY`]. The binary builds paradigms only through [`build`]; the conformance
//! test (`tests/paradigm_conformance.rs`) runs every entry.

use std::sync::Arc;

use bench_core::{BenchConfig, Paradigm, ParadigmId, Reader, Result, Retriever};

use crate::chunks::ChunkTable;
use crate::iterative::Evaluator;

/// What paradigms are assembled from. The binary implements it over a run's engines (shared,
/// memoised retrievers; offline or LLM reader); tests over the fixture corpus.
pub trait Toolkit {
    fn config(&self) -> &BenchConfig;
    fn reader(&self) -> Arc<dyn Reader>;
    fn chunks(&self) -> Arc<ChunkTable>;
    /// Dense top-K retrieval.
    fn dense(&self) -> Arc<dyn Retriever>;
    /// Graph retrieval; an error when the knowledge graph was not built.
    fn graph(&self) -> Result<Arc<dyn Retriever>>;
    /// The self-evaluator of the iterative paradigms.
    fn evaluator(&self) -> Arc<dyn Evaluator>;
    /// The question-complexity score the weighted fusion reads.
    fn complexity(&self) -> fn(&str) -> f64;
}

/// Token sizes the cost models read, per question: a prompt without context, one with a full
/// context, an answer, a short reply (an entity list, a self-evaluation); rounds of the loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptSizes {
    pub direct: u64,
    pub with_context: u64,
    pub answer: u64,
    pub short_reply: u64,
    pub rounds: u64,
}

/// LLM calls and token bounds of one question, judge not included (`--dry-run`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallBounds {
    pub min_calls: u64,
    pub max_calls: u64,
    pub input: u64,
    pub output: u64,
}

impl CallBounds {
    /// One reader call on `input` prompt tokens.
    pub fn one_read(input: u64, s: &PromptSizes) -> CallBounds {
        CallBounds {
            min_calls: 1,
            max_calls: 1,
            input,
            output: s.answer,
        }
    }

    /// An entity-list call on the question, then one reader call with the context.
    pub fn entities_then_read(s: &PromptSizes) -> CallBounds {
        CallBounds {
            min_calls: 2,
            max_calls: 2,
            input: s.direct + s.with_context,
            output: s.short_reply + s.answer,
        }
    }
}

/// One registered paradigm.
#[derive(Clone, Copy)]
pub struct Registered {
    pub id: ParadigmId,
    pub build: fn(&dyn Toolkit) -> Result<Arc<dyn Paradigm>>,
    pub cost: fn(&PromptSizes) -> CallBounds,
}

impl std::fmt::Debug for Registered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registered").field("id", &self.id).finish()
    }
}

/// Every paradigm, in `ParadigmId::ALL`'s order.
pub const REGISTRY: &[Registered] = &[
    crate::llm_only::LLM_ONLY,
    crate::rag::NAIVE,
    crate::rag::GRAPH,
    crate::fusion::HYBRID,
    crate::iterative::ITERATIVE,
    crate::iterative::ITERATIVE_GRAPH,
    crate::fusion::FUSION,
];

/// The entry of `id`. Every id has one (a test checks it), so a miss is a bug, reported as one.
pub fn entry(id: ParadigmId) -> Result<&'static Registered> {
    REGISTRY.iter().find(|r| r.id == id).ok_or_else(|| {
        bench_core::BenchError::Other(format!("paradigm {id} has no registry entry"))
    })
}

/// Builds paradigm `id` from `kit`.
pub fn build(id: ParadigmId, kit: &dyn Toolkit) -> Result<Arc<dyn Paradigm>> {
    (entry(id)?.build)(kit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_names_every_id_once_in_order() {
        let ids: Vec<ParadigmId> = REGISTRY.iter().map(|r| r.id).collect();
        assert_eq!(ids, ParadigmId::ALL.to_vec());
    }

    #[test]
    fn cost_models_bound_their_calls() {
        let s = PromptSizes {
            direct: 50,
            with_context: 1050,
            answer: 256,
            short_reply: 128,
            rounds: 3,
        };
        for r in REGISTRY {
            let c = (r.cost)(&s);
            assert!(c.min_calls >= 1 && c.min_calls <= c.max_calls, "{}", r.id);
            // Every call reads at least the question's prompt; every paradigm writes an answer.
            assert!(c.input >= c.min_calls * s.direct, "{}", r.id);
            assert!(c.output >= s.answer, "{}", r.id);
            // Retrieving paradigms read a context at least once; LLM-only never does.
            assert_eq!(c.input >= s.with_context, r.id.retrieves(), "{}", r.id);
        }
    }
}
