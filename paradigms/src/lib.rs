//! Retriever primitives, the paradigms built on them, and the readers (offline and LLM).

pub mod chunks;
pub mod dense;
pub mod fusion;
pub mod graph;
pub mod iterative;
pub mod llm_only;
pub mod memo;
pub mod ppr;
pub mod probe;
pub mod rag;
pub mod reader;
pub mod registry;

pub use chunks::{fit_budget, ChunkTable};
pub use dense::DenseRetriever;
pub use fusion::{FusedRetriever, FusionMethod, Weighting};
pub use graph::{ExtractedEntities, FnEntities, GraphParams, GraphRetriever, QueryEntities};
pub use iterative::{Evaluator, Iterative, LlmEvaluator, OfflineEvaluator};
pub use llm_only::LlmOnly;
pub use memo::MemoRetriever;
pub use ppr::{PprEngine, PushWorkspace};
pub use rag::RetrieveThenRead;
pub use reader::{LlmReader, OfflineReader};
pub use registry::{Registered, Toolkit, REGISTRY};
