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
//!
//! # Modules
//!
//! - Chunk table and the context-budget cut (`chunks`).
//! - The dense retriever (`dense`).
//! - Personalized PageRank: the certified engine (default: exact top-k proven per query), power
//!   iteration and push (`ppr/`: `exact`, `push`, the certified engine's `factor`, `storage`,
//!   `symmetry`, `certified` (the solve, written for queries in the lanes of one sweep of the core;
//!   one query is one lane), `batch` (many queries, groups of four lanes over threads, bit for bit
//!   the one-query results) and `certificate`; dated measurements in docs/performance.md).
//! - The GraphRAG retriever of Algorithm 4 (`graph`).
//! - RRF / interleave / complexity-weighted fusion (`fusion`).
//! - A retriever memoised per query so the paradigms of a question share one dense ranking and one
//!   GraphRAG retrieval (`memo`).
//! - Retrieve-then-read paradigms (`rag`: NaiveRAG, GraphRAG, HybridRAG, Fusion).
//! - IterativeRAG of Algorithm 3 with offline and LLM evaluators (`iterative`).
//! - LLM-only (`llm_only`).
//! - The offline BM25 reader and the LLM reader (`reader`).
//! - What paradigms are built from and registered with (`toolkit`, a leaf: `Toolkit`, `Evaluator`,
//!   `PromptSizes`, `CallBounds`, the `Registered` entry with its constructor, cost model and
//!   whether faithfulness is measured).
//! - The paradigm registry (`registry`).
//! - The zero-token probe signals read off these primitives: dense top-k shape, a BM25 index over
//!   chunks (the `bm25` crate 2.3, default features off: its Okapi scorer over our own lower-cased
//!   alphanumeric terms), entity linking, the PPR distribution and the seeds' degree and component
//!   (`retrieval_signals`).
//!
//! Why a crate of its own: the retriever primitives and what is built on them.

#![warn(missing_docs)]

mod chunks;
mod dense;
mod fusion;
mod graph;
mod iterative;
mod llm_only;
mod memo;
pub mod ppr;
mod rag;
mod reader;
pub mod registry;
pub mod retrieval_signals;
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
