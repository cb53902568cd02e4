//! Core vocabulary of ragrouter-bench: corpora, queries, paradigm ids, the result tuple, the
//! plug-in traits ([`Paradigm`], [`Retriever`], [`Reader`], [`Judge`], [`Embedder`], [`Llm`],
//! [`Router`]), the two cache traits the `store` crate implements ([`ExtractionCache`],
//! [`ResponseCache`]), and cl100k token counting. Every other crate depends on this one and on
//! nothing that depends on it.
//!
//! The principal types: [`Corpus`] with its [`Query`]s, [`ParadigmId`] and [`QueryType`] (the
//! closed sets of paradigms and question types), [`ResultRecord`] (one stored tuple) with its
//! [`JudgeLabel`] and [`PhaseTokens`], [`Mode`] (how a run's tuples came to be), [`BenchConfig`],
//! the routing vocabulary ([`RoutingSet`], [`Router`]) and [`BenchError`].
//!
//! The public modules hold what the root does not re-export: the configuration's sections and
//! `hash_parts` ([`config`]), cl100k counting ([`tokens`]), the sentence splitter ([`text`]),
//! reading input files ([`input`], [`strict_json`]), the seeded generator ([`rng`]), corpus
//! indicators and `argmax` ([`routing`]), imported outcomes ([`outcomes`]), Table 3's model
//! ([`table3`]) and the LLM helpers of [`traits`].
//!
//! ```
//! use bench_core::{cost_tokens, JudgeLabel, Mode, ParadigmId};
//!
//! // Names round-trip through their stored forms.
//! let p: ParadigmId = "naive".parse().unwrap();
//! assert_eq!(p.as_str(), "naive");
//! assert_eq!(JudgeLabel::parse("correct"), Some(JudgeLabel::Correct));
//!
//! // A run's mode is stored as its label and read back once; code matches on it.
//! let mode = Mode::parse("imported:adaptive-rag/flan_t5_xl").unwrap();
//! assert!(mode.is_imported());
//! // Offline a tuple costs its context tokens, an imported one its declared cost.
//! assert_eq!(cost_tokens(&Mode::Offline, 120, 800, 0.0), 800.0);
//! assert_eq!(cost_tokens(&mode, 0, 0, 3.0), 3.0);
//! ```
//!
//! # Modules
//!
//! - Table 3's model (`table3`: routers grouped by `Family`, cells with mean and spread over folds,
//!   which the terminal and the report both render).
//! - The vocabulary (`Document`, `Chunk`, `Query`, `QueryType`, `ParadigmId`, `ResultRecord`,
//!   `PhaseTokens`, `JudgeLabel`, `Mode`).
//! - The run configuration (`BenchConfig`, every default of decisions.md).
//! - The plug-in traits (`Paradigm`, `Retriever`, `Reader`, `Judge`, `Embedder`, `TokenEncoder`,
//!   `Llm`, `Router`).
//! - The routing vocabulary (`routing`: `RoutingSchema` with typed feature blocks, `RoutingRow`,
//!   `RoutingSet`, `RouteEvalRow` with its nine `Measures`, the six `CORPUS_INDICATORS` with their
//!   keys, feature names and labels; `cost_tokens`, the one cost measure routers and reports
//!   share).
//! - The two caches the plug-ins reach through traits (`caches`: `ExtractionCache` for the graph
//!   build's per-chunk extractions, `ResponseCache` for LLM replies, with their row types).
//! - The run's `Mode` (`offline`, `llm:MODEL@URL`, `imported:SOURCE`; `Mode::parse` is the one
//!   place its label is read back).
//! - Imported outcome matrices' vocabulary (`outcomes`).
//! - Probe signals and published choices (`signals`).
//! - Cl100k token counting and chunk windows (`tokens`).
//! - The seeded generator every sampler shares (`rng`).
//! - Input decoding shared by every loader (`input`: UTF-8 named by line, BOM, NUL and
//!   lone-surrogate messages; `strict_json`: JSON that refuses duplicate keys).
//! - The one sentence splitter and its word lists (`text`).
//! - Which URL query parameters carry a credential (`credentials`), for the LLM settings and the
//!   store's redactor alike.
//!
//! Why a crate of its own: the plug-in API: everything else depends on it and on nothing that
//! depends on it; no database and no async runtime.

#![warn(missing_docs)]

mod caches;
pub mod config;
pub mod credentials;
mod error;
pub mod input;
pub mod outcomes;
mod record;
pub mod rng;
pub mod routing;
mod signals;
pub mod strict_json;
pub mod table3;
pub mod text;
pub mod tokens;
pub mod traits;
mod types;

pub use caches::{
    ExtractionCache, ExtractionRow, ExtractionStatus, ExtractorKey, GraphBuildRecord,
    LlmCacheEntry, ResponseCache,
};
pub use config::BenchConfig;
pub use error::{BenchError, LlmErrorKind, NameKind, Result};
pub use outcomes::{ArmOutcome, OutcomeImport, OutcomeRecord, SplitTag};
pub use record::{
    cost_tokens, JudgeLabel, Mode, ParadigmOutput, PhaseLatency, PhaseTokens, QualityMetrics,
    ResultRecord, RetrievedChunk, TokenSource,
};
pub use routing::{
    ClassOutcome, FeatureBlock, FeatureKind, Measures, RouteEvalRow, RouteEvalSpec, RouteEvalTest,
    RoutePrediction, Router, RoutingCost, RoutingRow, RoutingSchema, RoutingSet,
};
pub use signals::{PublishedChoice, Signal};
pub use traits::{
    ChatMessage, ChatRequest, ChatResponse, Confidence, ContextChunk, Embedder, Embeddings,
    Generation, Judge, Llm, Paradigm, Reader, Retrieval, RetrievalQuery, Retriever, Role,
    TokenEncoder, TokenLogprob, Usage, Verdict,
};
pub use types::{
    Chunk, Corpus, Document, GoldAnswer, ParadigmId, Query, QueryType, StatementMatch,
};
