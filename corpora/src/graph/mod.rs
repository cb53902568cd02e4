//! The knowledge graph: triplets extracted per chunk, normalised entities, and an undirected
//! simple graph in CSR form that PPR walks.

mod types;

pub use types::{Csr, GraphTriplet, KnowledgeGraph};

pub mod build;
mod extract;
mod llm;
pub mod normalize;
pub mod offline;

pub use build::{
    build_graph, embed_entities, load_or_build, BuildOptions, BuildStats, GraphBuild, GraphStats,
};
pub use extract::{Extraction, ExtractorId, TripletExtractor};
pub use llm::{LlmExtractor, LlmExtractorOptions};
pub use offline::OfflineExtractor;
