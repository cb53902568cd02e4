//! The paradigm registry: each paradigm's constructor and dry-run cost model, one line each.
//!
//! A paradigm is its id (one line in `bench_core::types`' `paradigm_ids!`, which also says
//! whether it reads the graph), one file here that defines its [`Registered`] entry, and one
//! line in [`REGISTRY`]. The binary builds paradigms only through [`build`]; the conformance
//! test (`tests/paradigm_conformance.rs`) runs every entry.

use std::sync::Arc;

use bench_core::{Paradigm, ParadigmId, Result};

pub use crate::toolkit::{CallBounds, PromptSizes, Registered, Toolkit};

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

/// The paradigms whose entries declare faithfulness, in registry order.
pub fn faithful_paradigms() -> Vec<ParadigmId> {
    REGISTRY
        .iter()
        .filter(|r| r.faithfulness)
        .map(|r| r.id)
        .collect()
}

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
