//! FAISS IndexFlatIP behind the `faiss` feature: the reference the gemm search is checked against.

use std::sync::Mutex;

use bench_core::Embeddings;
use faiss::index::flat::FlatIndexImpl;
use faiss::Index as _;

use super::rows::validate;
use super::select::{better, Hit};
use crate::error::{CorpusError, Result};

/// Exact inner-product search through FAISS, with [`super::FlatIndex`]'s API and result order.
#[derive(Debug)]
pub struct FaissFlatIndex {
    dim: usize,
    len: usize,
    /// FAISS's `search` takes `&mut self`; the mutex keeps ours `&self` like `FlatIndex`'s.
    inner: Mutex<FlatIndexImpl>,
}

impl FaissFlatIndex {
    /// Copies the vectors into a new IndexFlatIP; validates them as [`super::FlatIndex::new`].
    pub fn new(vectors: Embeddings) -> Result<Self> {
        let len = validate(&vectors)?;
        let dim = u32::try_from(vectors.dim)
            .map_err(|_| CorpusError::Index(format!("dimension {} is too large", vectors.dim)))?;
        let mut inner =
            FlatIndexImpl::new_ip(dim).map_err(|e| CorpusError::Index(format!("faiss: {e}")))?;
        if len > 0 {
            inner
                .add(&vectors.data)
                .map_err(|e| CorpusError::Index(format!("faiss add: {e}")))?;
        }
        Ok(FaissFlatIndex {
            dim: vectors.dim,
            len,
            inner: Mutex::new(inner),
        })
    }

    /// Length of each vector.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of indexed vectors.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no vector is indexed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// As [`super::FlatIndex::search`].
    ///
    /// # Panics
    ///
    /// If `query.len() != self.dim()`, or if FAISS reports an error.
    pub fn search(&self, query: &[f32], k: usize) -> Vec<Hit> {
        assert_eq!(
            query.len(),
            self.dim,
            "query has dimension {}, index has {}",
            query.len(),
            self.dim
        );
        self.run(query, 1, k).pop().unwrap_or_default()
    }

    /// As [`super::FlatIndex::search_batch`]; FAISS parallelises with OpenMP.
    ///
    /// # Panics
    ///
    /// If `queries` is not empty and `queries.dim != self.dim()`, or if FAISS reports an error.
    pub fn search_batch(&self, queries: &Embeddings, k: usize) -> Vec<Vec<Hit>> {
        let m = queries.len();
        if m == 0 {
            return Vec::new();
        }
        assert_eq!(
            queries.dim, self.dim,
            "queries have dimension {}, index has {}",
            queries.dim, self.dim
        );
        self.run(&queries.data, m, k)
    }

    fn run(&self, data: &[f32], m: usize, k: usize) -> Vec<Vec<Hit>> {
        // FAISS pads with label -1 past ntotal, so ask for no more than exists.
        let k = k.min(self.len);
        if k == 0 {
            return vec![Vec::new(); m];
        }
        let result = self
            .inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .search(data, k)
            .unwrap_or_else(|e| panic!("faiss search failed: {e}"));
        result
            .labels
            .chunks_exact(k)
            .zip(result.distances.chunks_exact(k))
            .map(|(labels, scores)| {
                let mut hits: Vec<Hit> = labels
                    .iter()
                    .zip(scores)
                    .filter_map(|(label, &score)| {
                        // NaN (from a NaN query) ranks last, as in `FlatIndex`.
                        let score = if score.is_nan() {
                            f32::NEG_INFINITY
                        } else {
                            score
                        };
                        label.get().map(|row| Hit {
                            row: row as u32,
                            score,
                        })
                    })
                    .collect();
                // FAISS's heap leaves equal scores in no particular order; impose ours.
                hits.sort_by(better);
                hits
            })
            .collect()
    }
}
