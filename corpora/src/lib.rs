//! Corpus loaders, chunking, the local sentence encoder, the vector cache and the dense index;
//! also the knowledge-graph builders, question generation and the readers of imported
//! outcome files.
//!
//! The principal items: [`load_corpus`] with [`LoadOptions`] (a named or generic corpus,
//! chunked, its evidence mapped to chunks), [`chunk_documents`] (cl100k windows), [`MiniLm`] (the
//! local encoder) and [`VectorCache`], [`FlatIndex`] (exact inner-product search, optionally
//! through an [`IvfIndex`] or [`HnswIndex`]), [`KnowledgeGraph`] built by [`build_graph`] with a
//! [`TripletExtractor`] ([`OfflineExtractor`] or [`LlmExtractor`]), [`Pipeline`] (question
//! generation), [`load_outcomes_jsonl`] and [`load_adarague`] (imported outcome files), and
//! [`CorpusError`].
//!
//! Chunking two documents and searching them with the deterministic test encoder (the local
//! MiniLM needs its weights; [`HashEmbedder`] needs none):
//!
//! ```
//! use bench_core::config::ChunkingConfig;
//! use bench_core::{Document, Embedder};
//! use corpora::{chunk_documents, FlatIndex, HashEmbedder};
//!
//! let doc = |id: &str, text: &str| Document {
//!     id: id.into(),
//!     title: String::new(),
//!     text: text.into(),
//! };
//! let docs = [
//!     doc("curie", "Marie Curie was born in Warsaw and studied in Paris."),
//!     doc("eiffel", "The Eiffel Tower stands on the Champ de Mars in Paris."),
//! ];
//! let chunks = chunk_documents(&docs, &ChunkingConfig { size: 8, overlap: 2 });
//! // Windows of at most 8 cl100k tokens, named after their document.
//! assert!(chunks.len() > 2 && chunks.iter().all(|c| c.tokens <= 8));
//! assert_eq!(chunks[0].id, "curie#0");
//!
//! let encoder = HashEmbedder::new(64);
//! let texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
//! let index = FlatIndex::new(encoder.embed(&texts).unwrap()).unwrap();
//! let hits = index.search(&encoder.vector("Where was Marie Curie born?"), 1);
//! assert_eq!(chunks[hits[0].row as usize].document, "curie");
//! ```
//!
//! # Modules
//!
//! The modules are private; what other crates use is re-exported below, one list per module.
//!
//! - Loaders for the shared data sets and the generic JSONL format, the corpus registry, chunking
//!   (`load`).
//! - Evidence statements matched to sentences by meaning (encoder cosine plus a content-word check,
//!   calibrated on 2Wiki; `load::semantic`, docs/evidence.md).
//! - The English stop words that the offline graph extractor and the evidence matcher share
//!   (`stopwords`).
//! - The all-MiniLM-L6-v2 encoder, its weights and the vector cache (`embed`).
//! - Exact inner-product top-K search, faiss behind a feature, the gemm kernel's name and the
//!   machine line perf output prints (`index`, `index::kernel`).
//! - For corpora past `approx_min_chunks` an approximate index, built once and stored in the cache
//!   (`index::stored`): inverted lists (spherical k-means, each probed list scanned by one gemm for
//!   the whole batch; `[retrieval] index = "ivf"`, `index::ivf`) or an HNSW graph (hnsw_rs) whose
//!   candidates the exact index rescores (`index = "hnsw"`, `index::hnsw`).
//! - The knowledge graph: `TripletExtractor` with the offline rule-based and the LLM extractor,
//!   entity normalisation, the resumable cached build and the CSR adjacency (`graph`).
//! - Loaders of published outcome matrices, the generic JSON-lines format and Adaptive-RAG's files
//!   (`outcomes`).
//! - AdaRAGUE's LLaMA-8B outcomes with answers and SeaKR's uncertainty (`adarague`).
//! - Question generation of Algorithm 2: sources from the corpus and its graph, the `Generator`
//!   trait with LLM prompts (`generate::llm`) and graph templates (`generate::offline`),
//!   verify-then-filter over the `Reader` and `Judge` traits (`generate`), the set written
//!   atomically (`generate::write`).
//!
//! Why a crate of its own: heavy dependencies (tokenizers, gemm, faiss; the weights are read with
//! `safetensors`); features `faiss`, `candle-baseline` (candle's BertModel: perf_encoder's baseline
//! and `just test-candle`'s cross-check, off by default because candle was an eighth of a clean
//! build's compile time) and `x86-v4` (gemm's AVX-512 kernels, chosen at run time where the CPU has
//! them; on by default, `--no-default-features` for the AVX2 ones; they move near-ties in README's
//! tables, so the kernel is part of the vector cache's key).

#![warn(missing_docs)]

mod adarague;
mod embed;
mod error;
mod generate;
mod graph;
mod index;
mod load;
mod outcomes;
mod stopwords;

pub use adarague::{load_adarague, AdaragueOptions};
#[cfg(feature = "candle-baseline")]
pub use embed::CandleMiniLm;
pub use embed::{ensure_model, HashEmbedder, MiniLm, TokenEmbeddings, VectorCache};
pub use error::{CorpusError, Result};
pub use generate::llm::LlmGenerator;
pub use generate::offline::TemplateGenerator;
pub use generate::write::write_set;
pub use generate::{Filter, Generator, Kept, LlmChecks, Outcome, Pipeline, Statistics, TypePlan};
pub use graph::build::{component_ids, component_sizes, components};
pub use graph::normalize::entity as normalize_entity;
pub use graph::{
    build_graph, embed_entities, load_or_build, BuildOptions, BuildStats, Csr, Extraction,
    ExtractorId, GraphBuild, GraphStats, GraphTriplet, KnowledgeGraph, LlmExtractor,
    LlmExtractorOptions, OfflineExtractor, TripletExtractor,
};
#[cfg(feature = "faiss")]
pub use index::FaissFlatIndex;
pub use index::{
    dense_index, gemm_kernel, load_average, machine_line, FlatIndex, Hit, HnswIndex, HnswParams,
    IvfIndex, IvfParams, Origin, Rows,
};
// Two modules name a type `Candidate`; the root names each by what it is a candidate for.
pub use generate::{Candidate as QuestionCandidate, Source as QuestionSource};
pub use load::semantic::Candidate as SentenceCandidate;
pub use load::semantic::{
    calibrate, twowiki_statements, unmatched_path, Calibration, SemanticMatching, SentenceIndex,
    SentenceSearch,
};
pub use load::{
    check_corpus_name, chunk_documents, find_data_dir, load_corpus, sample_stratified, CorpusInfo,
    CorpusLocation, DataDir, FileStatus, LoadOptions,
};
pub use outcomes::{load_adaptive_rag, load_outcomes_jsonl, ArmSpec};
