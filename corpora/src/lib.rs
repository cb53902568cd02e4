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

#![warn(missing_docs)]

pub mod adarague;
pub mod embed;
mod error;
pub mod generate;
pub mod graph;
pub mod index;
pub mod load;
pub mod outcomes;

pub use error::{CorpusError, Result};
