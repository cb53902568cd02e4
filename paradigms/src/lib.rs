//! Retriever primitives, the paradigms built on them, and the readers (offline and LLM).
//!
//! The principal types: [`Toolkit`] (what a paradigm is built from; the binary implements it),
//! [`Registered`] and [`REGISTRY`] (one entry per paradigm: constructor, dry-run cost model,
//! whether faithfulness is measured), [`registry::build`], the retrievers ([`DenseRetriever`],
//! [`GraphRetriever`], [`FusedRetriever`], [`MemoRetriever`]) and the readers
//! ([`OfflineReader`], [`LlmReader`]).
//!
//! ```
//! use bench_core::ParadigmId;
//!
//! // Every paradigm has one entry, in `ParadigmId::ALL`'s order.
//! let ids: Vec<ParadigmId> = paradigms::REGISTRY.iter().map(|r| r.id).collect();
//! assert_eq!(ids, ParadigmId::ALL);
//! // Faithfulness is declared by the entries (NaiveRAG and GraphRAG read once from context).
//! assert_eq!(
//!     paradigms::registry::faithful_paradigms(),
//!     [ParadigmId::Naive, ParadigmId::Graph]
//! );
//! ```

#![warn(missing_docs)]

mod chunks;
mod dense;
mod fusion;
mod graph;
mod iterative;
mod llm_only;
mod memo;
pub mod ppr;
pub mod probe;
mod rag;
mod reader;
pub mod registry;
mod toolkit;

pub use chunks::{context_chunks, fit_budget, ChunkTable};
pub use dense::DenseRetriever;
pub use fusion::{FusedRetriever, FusionMethod, Weighting};
pub use graph::{ExtractedEntities, FnEntities, GraphParams, GraphRetriever, QueryEntities};
pub use iterative::{Iterative, LlmEvaluator, OfflineEvaluator};
pub use llm_only::LlmOnly;
pub use memo::MemoRetriever;
pub use ppr::{PprEngine, PushWorkspace};
pub use rag::RetrieveThenRead;
pub use reader::{LlmReader, OfflineReader, PROMPT_VERSION as READER_PROMPT_VERSION};
pub use registry::REGISTRY;
pub use toolkit::{Evaluation, Evaluator, Registered, Toolkit};
