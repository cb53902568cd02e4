//! Corpus loaders, chunking, the local sentence encoder, the vector cache and the dense index.

pub mod adarague;
pub mod embed;
pub mod error;
pub mod generate;
pub mod graph;
pub mod index;
pub mod load;
pub mod outcomes;

pub use error::{CorpusError, Result};
