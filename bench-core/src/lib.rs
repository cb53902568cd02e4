//! Core vocabulary of ragrouter-bench: corpora, queries, paradigm ids, the result tuple, the
//! plug-in traits (`Paradigm`, `Retriever`, `Reader`, `Judge`, `Embedder`, `Llm`, `Router`), cl100k token
//! counting and the SQLite results store. Every other crate depends on this one and on nothing
//! that depends on it.

pub mod config;
pub mod error;
pub mod extractions;
pub mod imports;
pub mod input;
pub mod leases;
pub mod llm_cache;
pub mod merge;
pub mod outcomes;
pub mod record;
pub mod rng;
pub mod route_evals;
pub mod routing;
pub mod runs;
pub mod signals;
pub mod store;
pub mod store_reads;
pub mod strict_json;
pub mod text;
pub mod tokens;
pub mod traits;
pub mod types;

pub use config::BenchConfig;
pub use error::{BenchError, LlmErrorKind, Result};
pub use imports::ImportedCorpus;
pub use outcomes::{ArmOutcome, OutcomeImport, OutcomeRecord, SplitTag};
pub use record::{
    cost_tokens, JudgeLabel, Mode, ParadigmOutput, PhaseLatency, PhaseTokens, QualityMetrics,
    ResultRecord, RetrievedChunk, TokenSource,
};
pub use routing::{
    ClassOutcome, FeatureBlock, FeatureKind, RouteEvalRow, RouteEvalSpec, RouteEvalTest,
    RoutePrediction, Router, RoutingCost, RoutingRow, RoutingSchema, RoutingSet,
};
pub use signals::{PublishedChoice, Signal};
pub use store::{Backend, DbTarget, RunHandle, RunSpec, Store, SummaryRow};
pub use traits::{
    ChatMessage, ChatRequest, ChatResponse, Confidence, ContextChunk, Embedder, Embeddings,
    Generation, Judge, Llm, Paradigm, Reader, Retrieval, RetrievalQuery, Retriever, Role,
    TokenEncoder, TokenLogprob, Usage, Verdict,
};
pub use types::{
    Chunk, Corpus, Document, GoldAnswer, ParadigmId, Query, QueryType, StatementMatch,
};
