//! The triplet-extractor trait shared by the offline rule-based and the LLM extractors.

use async_trait::async_trait;

use super::types::Triplet;
use crate::error::Result;

/// Who extracted: extractor name, model and a hash of the prompt (or of the rules). It keys the
/// stored per-chunk extractions, so a changed prompt or rule set never reads stale triplets.
pub use bench_core::ExtractorKey as ExtractorId;

/// One chunk's triplets and what extracting them cost (0 tokens for the offline extractor).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extraction {
    /// Raw triplets as extracted; the graph build normalises them.
    pub triplets: Vec<Triplet>,
    /// Prompt tokens spent.
    pub tokens_in: u64,
    /// Completion tokens spent.
    pub tokens_out: u64,
}

/// Turns a chunk's text into (subject, relation, object) triplets.
///
/// A failure is returned as an error (for extractors that spend tokens,
/// [`crate::CorpusError::Extraction`] carries what the failed attempts cost); the build stores
/// it as failed and retries it next time, never treating it as "no triplets".
#[async_trait]
pub trait TripletExtractor: Send + Sync {
    /// Who extracts: it keys the stored extractions.
    fn identity(&self) -> ExtractorId;
    /// Chunks extracted at once by the graph build.
    fn concurrency(&self) -> usize;
    /// The triplets of one chunk's text.
    async fn extract(&self, chunk_text: &str) -> Result<Extraction>;
}
