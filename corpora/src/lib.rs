//! Corpus loaders, chunking, the local sentence encoder, the vector cache and the dense index;
//! also the knowledge-graph builders, question generation and the readers of imported
//! outcome files.
//!
//! The principal types: [`load::load_corpus`] with [`load::LoadOptions`] (a named or generic
//! corpus, chunked, its evidence mapped to chunks), [`load::chunk_documents`] (cl100k windows),
//! [`embed::MiniLm`] (the local encoder) and [`embed::VectorCache`], [`index::FlatIndex`] (exact
//! inner-product search, optionally through an [`index::IvfIndex`] or [`index::HnswIndex`]),
//! [`graph::KnowledgeGraph`] built by [`graph::build_graph`] with a [`graph::TripletExtractor`]
//! ([`graph::OfflineExtractor`] or [`graph::LlmExtractor`]), [`generate::Pipeline`] (question
//! generation),
//! [`outcomes::load_outcomes_jsonl`] and [`adarague::load_adarague`] (imported outcome files),
//! and [`CorpusError`].
//!
//! Chunking two documents and searching them with the deterministic test encoder (the local
//! MiniLM needs its weights; [`embed::HashEmbedder`] needs none):
//!
//! ```
//! use bench_core::config::ChunkingConfig;
//! use bench_core::{Document, Embedder};
//! use corpora::embed::HashEmbedder;
//! use corpora::index::FlatIndex;
//! use corpora::load::chunk_documents;
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
//! - Loaders for the shared data sets and the generic JSONL format, the corpus registry, chunking
//!   (`load`).
//! - Evidence statements matched to sentences by meaning (encoder cosine plus a content-word check,
//!   calibrated on 2Wiki; `load::semantic`, docs/evidence.md).
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
//!   verify-then-filter over the `Reader` and `Judge` traits, the set written atomically
//!   (`generate`).
//!
//! Why a crate of its own: heavy dependencies (tokenizers, gemm, faiss; the weights are read with
//! `safetensors`); features `faiss`, `candle-baseline` (candle's BertModel: perf_encoder's baseline
//! and `just test-candle`'s cross-check, off by default because candle was an eighth of a clean
//! build's compile time) and `x86-v4` (gemm's AVX-512 kernels, chosen at run time where the CPU has
//! them; on by default, `--no-default-features` for the AVX2 ones; they move near-ties in README's
//! tables, so the kernel is part of the vector cache's key).

#![warn(missing_docs)]

pub mod adarague;
pub mod embed;
mod error;
mod stopwords;
pub mod generate;
pub mod graph;
pub mod index;
pub mod load;
pub mod outcomes;

pub use error::{CorpusError, Result};
