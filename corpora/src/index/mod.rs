//! Dense exact inner-product top-K search (gemm), with faiss IndexFlatIP behind a feature,
//! optional approximate indexes for large corpora (inverted lists, `ivf`; an HNSW graph, `hnsw`;
//! what their stored copies share, `stored`), and the gemm kernel this CPU runs (`kernel`).
//!
//! Vectors are L2-normalised, so the inner product is the cosine similarity. Results are sorted
//! by score descending, ties broken by the lower row index, so a ranking is deterministic for a
//! given set of scores. The batch path (`gemm`) and the one-query path (a dot-product loop) sum in
//! different orders, so their scores may differ in the last bits; near-ties may then swap.

#[cfg(feature = "faiss")]
mod faiss_flat;
mod hnsw;
mod ivf;
mod kernel;
mod rows;
mod select;
mod stored;

use std::sync::Arc;

use bench_core::Embeddings;
use rayon::prelude::*;

use crate::error::{CorpusError, Result};

#[cfg(feature = "faiss")]
pub use faiss_flat::FaissFlatIndex;
pub use hnsw::{HnswIndex, HnswParams};
pub use ivf::{IvfIndex, IvfParams};
pub use kernel::{gemm_kernel, load_average, machine_line};
pub use rows::Rows;
pub use select::Hit;
pub use stored::Origin;

use rows::{dot, products};

/// Score-matrix elements per gemm block: 2^21 f32 = 8 MiB, so 1,000 queries over 21k vectors
/// never hold the whole 84 MB matrix, while each block (~100 queries) is still large enough for
/// gemm to run at full speed.
const BLOCK_ELEMS: usize = 1 << 21;

/// Below this many queries per block of whole index rows (index above 32,768 rows), the batch
/// search tiles the index instead ([`FlatIndex::exact_search_batch`]).
const MIN_BLOCK_QUERIES: usize = 64;

/// Queries per tile of the tiled batch search: 1,000 queries over a 1M-row index read it once.
const TILE_QUERIES: usize = 1024;

/// Inner-product index over row-major `f32` vectors: exact (brute force) unless an approximate
/// index is attached ([`FlatIndex::attach_hnsw`], [`FlatIndex::attach_ivf`]), in which case
/// `search` and `search_batch` return only the rows it finds.
#[derive(Debug, Clone)]
pub struct FlatIndex {
    rows: Rows,
    approx: Option<Approx>,
}

/// An approximate index attached to a [`FlatIndex`].
#[derive(Debug, Clone)]
enum Approx {
    Hnsw(Arc<HnswIndex>),
    Ivf(Arc<IvfIndex>),
}

impl FlatIndex {
    /// Takes ownership of the vectors; row `i` is hit `row == i`.
    ///
    /// Fails when `dim` is 0, the data is not a whole number of rows, there are more than
    /// `u32::MAX` rows, or a value is not finite (a NaN would make the ranking meaningless).
    pub fn new(vectors: Embeddings) -> Result<Self> {
        Ok(FlatIndex {
            rows: Rows::new(vectors)?,
            approx: None,
        })
    }

    /// Routes `search` and `search_batch` through `graph`, which must index these rows.
    pub fn attach_hnsw(&mut self, graph: Arc<HnswIndex>) -> Result<()> {
        if graph.len() != self.rows.len {
            return Err(CorpusError::Index(format!(
                "the HNSW graph has {} rows, the index {}",
                graph.len(),
                self.rows.len
            )));
        }
        self.approx = Some(Approx::Hnsw(graph));
        Ok(())
    }

    /// Routes `search` and `search_batch` through `lists`, which must index these rows.
    pub fn attach_ivf(&mut self, lists: Arc<IvfIndex>) -> Result<()> {
        if lists.len() != self.rows.len {
            return Err(CorpusError::Index(format!(
                "the IVF index has {} rows, the index {}",
                lists.len(),
                self.rows.len
            )));
        }
        self.approx = Some(Approx::Ivf(lists));
        Ok(())
    }

    /// The search in use, for tables and logs: `exact` or the approximate index's description.
    pub fn describe(&self) -> String {
        match &self.approx {
            None => "exact".into(),
            Some(Approx::Hnsw(g)) => g.describe(),
            Some(Approx::Ivf(l)) => l.describe(),
        }
    }

    /// Length of each vector.
    pub fn dim(&self) -> usize {
        self.rows.dim
    }

    /// Number of indexed vectors.
    pub fn len(&self) -> usize {
        self.rows.len
    }

    /// Whether no vector is indexed.
    pub fn is_empty(&self) -> bool {
        self.rows.len == 0
    }

    /// Row `i` as given to [`FlatIndex::new`].
    pub fn row(&self, i: usize) -> &[f32] {
        self.rows.row(i)
    }

    /// The indexed vectors (what an HNSW graph is built over).
    pub fn rows(&self) -> &Rows {
        &self.rows
    }

    /// The `min(k, len)` rows with the largest inner product with `query`, best first.
    ///
    /// A NaN score (only possible from a NaN in the query) ranks as negative infinity.
    ///
    /// # Panics
    ///
    /// If `query.len() != self.rows.dim()`.
    pub fn search(&self, query: &[f32], k: usize) -> Vec<Hit> {
        assert_eq!(
            query.len(),
            self.rows.dim,
            "query has dimension {}, index has {}",
            query.len(),
            self.rows.dim
        );
        if k == 0 || self.rows.len == 0 {
            return Vec::new();
        }
        match &self.approx {
            Some(Approx::Hnsw(g)) => return g.search(&self.rows, query, k),
            Some(Approx::Ivf(l)) => return l.search(query, k),
            None => {}
        }
        let scores: Vec<f32> = self
            .rows
            .data
            .chunks_exact(self.rows.dim)
            .map(|row| dot(query, row))
            .collect();
        select::top_k(&scores, k)
    }

    /// [`FlatIndex::search`] for every row of `queries`, as blocked matrix products.
    ///
    /// Uses the current rayon pool (its thread count: `RAYON_NUM_THREADS` or the core count).
    ///
    /// # Panics
    ///
    /// If `queries` is not empty and `queries.dim != self.rows.dim()`.
    pub fn search_batch(&self, queries: &Embeddings, k: usize) -> Vec<Vec<Hit>> {
        let m = queries.len();
        if m == 0 {
            return Vec::new();
        }
        assert_eq!(
            queries.dim, self.rows.dim,
            "queries have dimension {}, index has {}",
            queries.dim, self.rows.dim
        );
        if k == 0 || self.rows.len == 0 {
            return vec![Vec::new(); m];
        }
        match &self.approx {
            Some(Approx::Hnsw(g)) => {
                return g.search_batch_with(&self.rows, &queries.data, k, g.params().ef_search)
            }
            Some(Approx::Ivf(l)) => {
                return l.search_batch_with(&queries.data, k, l.params().nprobe)
            }
            None => {}
        }
        self.exact_search_batch(queries, k)
    }

    /// With an approximate index attached, its recall@k against exact search, estimated on
    /// `sample` distinct rows drawn with `seed` and used as queries (each row itself left out
    /// of both lists); `None` for an exact index. Chunks stand in for questions, so this is an
    /// estimate of the index on this corpus, printed so that nobody trusts a default blindly.
    pub fn sampled_recall(&self, k: usize, sample: usize, seed: u64) -> Option<f64> {
        self.approx.as_ref()?;
        let n = self.rows.len;
        let (k, sample) = (k.min(n.saturating_sub(1)), sample.min(n));
        if k == 0 || sample == 0 {
            return Some(1.0);
        }
        let mut order: Vec<u32> = (0..n as u32).collect();
        bench_core::rng::SplitMix64::new(seed).shuffle(&mut order);
        let picked = &order[..sample];
        let mut data = Vec::with_capacity(sample * self.rows.dim);
        for &r in picked {
            data.extend_from_slice(self.rows.row(r as usize));
        }
        let queries = Embeddings::new(self.rows.dim, data);
        let exact = self.exact_search_batch(&queries, k + 1);
        let approx = self.search_batch(&queries, k + 1);
        let (mut found, mut total) = (0usize, 0usize);
        for ((&q, e), a) in picked.iter().zip(&exact).zip(&approx) {
            let others = |hits: &[Hit]| -> Vec<u32> {
                hits.iter()
                    .map(|h| h.row)
                    .filter(|&r| r != q)
                    .take(k)
                    .collect()
            };
            let got: std::collections::HashSet<u32> = others(a).into_iter().collect();
            let want = others(e);
            found += want.iter().filter(|r| got.contains(r)).count();
            total += want.len();
        }
        Some(found as f64 / total.max(1) as f64)
    }

    /// [`FlatIndex::search_batch`] by brute force whether or not a graph is attached.
    pub fn exact_search_batch(&self, queries: &Embeddings, k: usize) -> Vec<Vec<Hit>> {
        let m = queries.len();
        if m == 0 || k == 0 || self.rows.len == 0 {
            return vec![Vec::new(); m];
        }
        let n = self.rows.len;
        let block_rows = (BLOCK_ELEMS / n).clamp(1, m);
        if block_rows < MIN_BLOCK_QUERIES && block_rows < m {
            return self.tiled_search_batch(queries, k, TILE_QUERIES, BLOCK_ELEMS);
        }
        let threads = rayon::current_num_threads();
        let mut scores = vec![0.0f32; block_rows * n];
        let mut out = Vec::with_capacity(m);
        for block in queries.data.chunks(block_rows * self.rows.dim) {
            let rows = block.len() / self.rows.dim;
            let scores = &mut scores[..rows * n];
            self.scores_into(block, rows, 0, n, scores, threads);
            let mut hits = Vec::with_capacity(rows);
            scores
                .par_chunks(n)
                .map(|row| select::top_k(row, k))
                .collect_into_vec(&mut hits);
            out.append(&mut hits);
        }
        out
    }

    /// Exact search over index tiles: up to `tile_queries` queries at a time against
    /// `tile_elems / queries` index rows at a time, each query keeping a running top-k.
    ///
    /// Used when the index is so large that a score block of whole index rows would hold only a
    /// few queries: gemm would then stream every index row from memory once per few queries
    /// (1M x 384 rows, 1,000 queries: 83 s, memory-bound). Tiling reads the index once per
    /// query tile. The hits equal a whole-row selection over the same scores (`TopK` does not
    /// depend on slicing); gemm's blocking differs with the tile width, so a score may differ in
    /// its last bit from the untiled path.
    fn tiled_search_batch(
        &self,
        queries: &Embeddings,
        k: usize,
        tile_queries: usize,
        tile_elems: usize,
    ) -> Vec<Vec<Hit>> {
        let (n, d) = (self.rows.len, self.rows.dim);
        let m = queries.len();
        let qb = m.min(tile_queries).max(1);
        let width = (tile_elems / qb).clamp(1, n);
        let threads = rayon::current_num_threads();
        let k = k.min(n);
        let mut scores = vec![0.0f32; qb * width];
        let mut out = Vec::with_capacity(m);
        for block in queries.data.chunks(qb * d) {
            let rows = block.len() / d;
            let mut tops: Vec<select::TopK> = (0..rows).map(|_| select::TopK::new(k)).collect();
            for start in (0..n).step_by(width) {
                let w = width.min(n - start);
                let tile = &mut scores[..rows * w];
                self.scores_into(block, rows, start, w, tile, threads);
                tops.par_iter_mut()
                    .zip(tile.par_chunks(w))
                    .for_each(|(top, row)| top.extend(row, start as u32));
            }
            out.extend(tops.into_iter().map(select::TopK::finish));
        }
        out
    }

    /// `scores[i * width + j] = <queries row i, index row start + j>` for a block of `rows`
    /// queries and `width` index rows from `start`.
    fn scores_into(
        &self,
        queries: &[f32],
        rows: usize,
        start: usize,
        width: usize,
        scores: &mut [f32],
        threads: usize,
    ) {
        let d = self.rows.dim;
        assert!(start + width <= self.rows.len);
        let rhs = &self.rows.data[start * d..(start + width) * d];
        products(queries, rows, rhs, width, d, scores, threads);
    }
}

/// The dense chunk index `[retrieval]` asks for: exact, or exact with an HNSW graph or IVF lists
/// attached (loaded from `cache_dir` or built and stored there) when `index` is `"hnsw"` or
/// `"ivf"` and the corpus has at least `approx_min_chunks` rows. Returns the index and, when an
/// approximate one was used, where it came from.
pub fn dense_index(
    vectors: Embeddings,
    retrieval: &bench_core::config::RetrievalConfig,
    cache_dir: &std::path::Path,
    key: &str,
) -> Result<(FlatIndex, Option<Origin>)> {
    use bench_core::config::IndexKind;
    let mut index = FlatIndex::new(vectors)?;
    match retrieval.index {
        IndexKind::Exact => Ok((index, None)),
        IndexKind::Hnsw | IndexKind::Ivf if index.len() < retrieval.approx_min_chunks => {
            Ok((index, None))
        }
        IndexKind::Hnsw => {
            let (graph, origin) =
                HnswIndex::load_or_build(cache_dir, key, index.rows(), HnswParams::default())?;
            index.attach_hnsw(Arc::new(graph))?;
            Ok((index, Some(origin)))
        }
        IndexKind::Ivf => {
            let params = IvfParams {
                nprobe: retrieval.ivf_nprobe,
                ..IvfParams::default()
            };
            let (lists, origin) = IvfIndex::load_or_build(cache_dir, key, index.rows(), params)?;
            index.attach_ivf(Arc::new(lists))?;
            Ok((index, Some(origin)))
        }
    }
}

/// Seeded test vectors shared by the index tests.
#[cfg(test)]
pub(crate) mod testdata {
    use super::Hit;
    use bench_core::Embeddings;

    /// Seeded clustered unit vectors: 20 centres, points scattered around them.
    pub(crate) fn clustered(n: usize, dim: usize, seed: u64) -> Embeddings {
        let mut rng = bench_core::rng::SplitMix64::new(seed);
        let centres: Vec<Vec<f32>> = (0..20)
            .map(|_| (0..dim).map(|_| rng.normal() as f32).collect())
            .collect();
        let mut data = Vec::with_capacity(n * dim);
        for i in 0..n {
            let c = &centres[i % centres.len()];
            let row: Vec<f32> = c.iter().map(|x| x + 0.6 * rng.normal() as f32).collect();
            let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt();
            data.extend(row.iter().map(|x| x / norm));
        }
        Embeddings::new(dim, data)
    }

    /// Share of the exact hits that the approximate lists found.
    pub(crate) fn recall(exact: &[Vec<Hit>], approx: &[Vec<Hit>]) -> f64 {
        let mut found = 0usize;
        let mut total = 0usize;
        for (e, a) in exact.iter().zip(approx) {
            let rows: std::collections::HashSet<u32> = a.iter().map(|h| h.row).collect();
            found += e.iter().filter(|h| rows.contains(&h.row)).count();
            total += e.len();
        }
        found as f64 / total as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn emb(dim: usize, data: &[f32]) -> Embeddings {
        Embeddings::new(dim, data.to_vec())
    }

    #[test]
    fn new_rejects_bad_shapes_and_values() {
        let zero_dim = Embeddings {
            dim: 0,
            data: vec![],
        };
        assert!(matches!(
            FlatIndex::new(zero_dim),
            Err(CorpusError::Index(_))
        ));
        let ragged = Embeddings {
            dim: 2,
            data: vec![1.0, 0.0, 1.0],
        };
        assert!(matches!(FlatIndex::new(ragged), Err(CorpusError::Index(_))));
        let nan = emb(2, &[1.0, 0.0, f32::NAN, 0.0]);
        let err = FlatIndex::new(nan).unwrap_err().to_string();
        assert!(err.contains("row 1"), "{err}");
    }

    #[test]
    fn dot_matches_naive_with_remainder() {
        let a: Vec<f32> = (0..19).map(|i| i as f32 * 0.5 - 3.0).collect();
        let b: Vec<f32> = (0..19).map(|i| 1.0 - i as f32 * 0.25).collect();
        let naive: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &b) - naive).abs() < 1e-4);
    }

    #[test]
    fn batch_blocks_agree_with_single_queries() {
        // More queries than fit one block for this n, so several gemm blocks run.
        let (dim, n, m) = (3, 40_000, 120);
        let mut data = Vec::with_capacity(n * dim);
        for i in 0..n {
            let t = i as f32 * 0.001;
            data.extend_from_slice(&[t.cos(), t.sin(), 0.0]);
        }
        let index = FlatIndex::new(Embeddings::new(dim, data)).unwrap();
        let mut q = Vec::with_capacity(m * dim);
        for j in 0..m {
            let t = j as f32 * 0.3;
            q.extend_from_slice(&[t.cos(), t.sin(), 0.0]);
        }
        let queries = Embeddings::new(dim, q);
        assert!(BLOCK_ELEMS / n < m);
        let batch = index.search_batch(&queries, 3);
        assert_eq!(batch.len(), m);
        for (j, hits) in batch.iter().enumerate() {
            let single = index.search(queries.row(j), 3);
            assert_eq!(hits.len(), 3);
            for (a, b) in hits.iter().zip(&single) {
                assert!(
                    (a.score - b.score).abs() < 1e-5,
                    "query {j}: {a:?} vs {b:?}"
                );
            }
        }
    }

    #[test]
    fn dense_index_attaches_the_approximate_index_asked_for_above_the_threshold() {
        use bench_core::config::{IndexKind, RetrievalConfig};
        let dir = tempfile::tempdir().unwrap();
        let vectors = testdata::clustered(600, 16, 21);
        let queries = testdata::clustered(10, 16, 22);
        let exact = FlatIndex::new(vectors.clone()).unwrap();
        let config = |index, approx_min_chunks| RetrievalConfig {
            index,
            approx_min_chunks,
            ivf_nprobe: 12,
            ..RetrievalConfig::default()
        };
        // Under the threshold every kind is exact.
        for kind in [IndexKind::Exact, IndexKind::Ivf, IndexKind::Hnsw] {
            let (index, origin) =
                dense_index(vectors.clone(), &config(kind, 601), dir.path(), "t:chunks").unwrap();
            assert_eq!((index.describe().as_str(), origin), ("exact", None));
            assert_eq!(index.sampled_recall(10, 50, 7), None);
        }
        let kinds = [
            (IndexKind::Ivf, "ivf(lists=49,nprobe=12)"),
            (IndexKind::Hnsw, "hnsw("),
        ];
        for (kind, name) in kinds {
            let c = config(kind, 600);
            let (first, origin) = dense_index(vectors.clone(), &c, dir.path(), "t:chunks").unwrap();
            assert!(first.describe().starts_with(name), "{}", first.describe());
            assert_eq!(origin, Some(Origin::Built));
            let (again, origin) = dense_index(vectors.clone(), &c, dir.path(), "t:chunks").unwrap();
            assert_eq!(origin, Some(Origin::Cached));
            let hits = again.search_batch(&queries, 10);
            assert_eq!(hits, first.search_batch(&queries, 10));
            assert_eq!(
                hits[3],
                again.search(queries.row(3), 10),
                "one query as in a batch"
            );
            let r = testdata::recall(&exact.search_batch(&queries, 10), &hits);
            assert!(r >= 0.9, "{name} recall@10 {r}");
            let sampled = again.sampled_recall(10, 50, 7).unwrap();
            assert!(
                sampled > 0.8 && sampled <= 1.0,
                "{name} sampled recall {sampled}"
            );
            assert_eq!(again.sampled_recall(10, 50, 7), Some(sampled), "seeded");
        }
        // Every list scanned: the estimate sees the exact search (gemm blocking aside).
        let all = RetrievalConfig {
            ivf_nprobe: 1_000,
            ..config(IndexKind::Ivf, 600)
        };
        let (index, _) = dense_index(vectors.clone(), &all, dir.path(), "t:chunks").unwrap();
        assert!(index.sampled_recall(10, 50, 7).unwrap() >= 0.99);
    }

    #[test]
    fn tiled_search_equals_whole_row_selection() {
        // Coarse coordinates give exact ties in the scores, so the order of the hits is tested
        // where it is most fragile; small tiles make every query cross many tile edges.
        let (dim, n, m) = (4, 1_000, 37);
        let mut x: u64 = 3;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 61) as f32) - 3.5
        };
        let data: Vec<f32> = (0..n * dim).map(|_| next()).collect();
        let q: Vec<f32> = (0..m * dim).map(|_| next()).collect();
        let index = FlatIndex::new(Embeddings::new(dim, data.clone())).unwrap();
        let queries = Embeddings::new(dim, q);
        for (k, tile_queries, tile_elems) in [(10, 8, 8 * 37), (1, 5, 50), (200, 64, 64 * 999)] {
            let tiled = index.tiled_search_batch(&queries, k, tile_queries, tile_elems);
            for (j, hits) in tiled.iter().enumerate() {
                // Small integers: every product and sum is exact in f32, whatever the order.
                let scores: Vec<f32> = (0..n)
                    .map(|r| dot(queries.row(j), &data[r * dim..(r + 1) * dim]))
                    .collect();
                assert_eq!(hits, &select::top_k(&scores, k), "k={k} query {j}");
            }
        }
    }
}
