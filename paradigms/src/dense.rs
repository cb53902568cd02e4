//! NaiveRetriever: dense top-K over chunk vectors, above a minimum cosine similarity.

use std::sync::Arc;

use async_trait::async_trait;
use bench_core::{BenchError, Embedder, Retrieval, RetrievalQuery, RetrievedChunk, Retriever};
use corpora::FlatIndex;

use crate::chunks::ChunkTable;

/// Exact inner-product search over L2-normalised chunk vectors (cosine similarity).
pub struct DenseRetriever {
    /// The dense index over the chunks' vectors.
    pub index: Arc<FlatIndex>,
    /// The chunks, in the index's row order.
    pub chunks: Arc<ChunkTable>,
    /// Embeds query texts that arrive without a vector (sub-questions of iterative paradigms).
    pub embedder: Arc<dyn Embedder>,
    /// Chunks returned per query.
    pub top_k: usize,
    /// Hits below this similarity are dropped.
    pub min_similarity: f32,
}

impl std::fmt::Debug for DenseRetriever {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DenseRetriever")
            .field("top_k", &self.top_k)
            .field("min_similarity", &self.min_similarity)
            .finish()
    }
}

impl DenseRetriever {
    /// Ranked chunks for a query vector: top-K by similarity, those below the threshold dropped.
    pub fn search(&self, vector: &[f32]) -> Vec<RetrievedChunk> {
        self.index
            .search(vector, self.top_k)
            .into_iter()
            .filter(|h| h.score >= self.min_similarity)
            .map(|h| RetrievedChunk {
                chunk_id: self.chunks.row(h.row as usize).id.clone(),
                score: h.score,
            })
            .collect()
    }
}

#[async_trait]
impl Retriever for DenseRetriever {
    fn name(&self) -> &str {
        "dense"
    }

    async fn retrieve(&self, query: RetrievalQuery<'_>) -> bench_core::Result<Retrieval> {
        let owned;
        let vector = match query.vector {
            Some(v) => v,
            None => {
                owned = self.embedder.embed_one(query.text)?;
                &owned
            }
        };
        if vector.len() != self.index.dim() {
            return Err(BenchError::Embedding(format!(
                "query vector has {} dimensions, the index {}",
                vector.len(),
                self.index.dim()
            )));
        }
        Ok(Retrieval {
            ranked: self.search(vector),
            tokens_in: 0,
            tokens_out: 0,
            trace: serde_json::Value::Null,
        })
    }
}
