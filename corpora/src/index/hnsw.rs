//! Approximate inner-product search: an HNSW graph (the `hnsw_rs` crate), built once per vector
//! set, stored in the cache directory and reloaded on resume.
//!
//! The graph only proposes candidates: every returned hit is scored again with the same dot
//! product as [`super::FlatIndex::search`], so a score never depends on the graph, only which
//! rows are found does. Files are written to a temporary directory and renamed into place, with
//! a manifest holding the sha256 of each file, so a torn or altered copy is rebuilt, not read.

use std::path::Path;

use hnsw_rs::prelude::{AnnT, Distance, Hnsw, HnswIo};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::rows::{dot, Rows};
use super::select::{self, Hit};
use super::stored::{
    file_digest, read_manifest, store_path, vectors_digest, write_dir_atomically, write_manifest,
    Origin,
};
use crate::error::{CorpusError, Result};

/// Graph and search settings. Measured on the clustered synthetic set of `examples/perf_ann.rs`
/// (docs/performance.md): these defaults reach recall@100 0.78 at `ef_search` 200 on 100,000
/// vectors; a 1,000,000-vector graph of m = 16, ef_construction = 128 reaches 0.80 at 200 and
/// 0.93 at 512. Neither reaches 0.95 faster than the exact batched search on two cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HnswParams {
    /// Links per node and layer (hnsw_rs's `max_nb_connection`; layer 0 keeps twice as many).
    pub m: usize,
    /// Candidate list size while inserting.
    pub ef_construction: usize,
    /// Candidate list size while searching (at least k is used).
    pub ef_search: usize,
}

impl Default for HnswParams {
    fn default() -> Self {
        HnswParams {
            m: 24,
            ef_construction: 200,
            ef_search: 200,
        }
    }
}

/// `1 - <a, b>` for unit vectors: hnsw_rs wants a distance (smaller is nearer). Clamped at 0
/// because rounding can push the product of two equal unit vectors just above 1. The product
/// runs on the widest SIMD this CPU has (pulp picks AVX-512 or AVX2 at run time): the graph's
/// walk is almost all distance evaluations. Hits are then scored with the index's own product.
#[derive(Debug, Clone, Copy, Default)]
pub struct DotDistance;

impl Distance<f32> for DotDistance {
    fn eval(&self, a: &[f32], b: &[f32]) -> f32 {
        (1.0 - simd_dot(a, b)).max(0.0)
    }
}

/// Inner product with four vector accumulators, dispatched to the CPU's widest SIMD.
pub fn simd_dot(a: &[f32], b: &[f32]) -> f32 {
    struct Dot<'a>(&'a [f32], &'a [f32]);
    impl pulp::WithSimd for Dot<'_> {
        type Output = f32;
        #[inline(always)]
        fn with_simd<S: pulp::Simd>(self, simd: S) -> f32 {
            let n = self.0.len().min(self.1.len());
            let (ah, at) = S::as_simd_f32s(&self.0[..n]);
            let (bh, bt) = S::as_simd_f32s(&self.1[..n]);
            let mut acc = [simd.splat_f32s(0.0); 4];
            let (ac, bc) = (ah.chunks_exact(4), bh.chunks_exact(4));
            let (ar, br) = (ac.remainder(), bc.remainder());
            for (x, y) in ac.zip(bc) {
                for l in 0..4 {
                    acc[l] = simd.mul_add_f32s(x[l], y[l], acc[l]);
                }
            }
            for (x, y) in ar.iter().zip(br) {
                acc[0] = simd.mul_add_f32s(*x, *y, acc[0]);
            }
            let sum = simd.add_f32s(simd.add_f32s(acc[0], acc[1]), simd.add_f32s(acc[2], acc[3]));
            let tail: f32 = at.iter().zip(bt).map(|(x, y)| x * y).sum();
            simd.reduce_sum_f32s(sum) + tail
        }
    }
    // Detecting the CPU's features costs about as much as one product: do it once.
    static ARCH: std::sync::OnceLock<pulp::Arch> = std::sync::OnceLock::new();
    ARCH.get_or_init(pulp::Arch::new).dispatch(Dot(a, b))
}

/// The on-disk description of a stored graph; the sha256 fields guard both hnsw_rs files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Manifest {
    format: u32,
    params: HnswParams,
    rows: usize,
    dim: usize,
    vectors_sha256: String,
    graph_sha256: String,
    data_sha256: String,
}

const FORMAT: u32 = 1;
const BASENAME: &str = "graph";

/// An HNSW graph over a set of [`Rows`], the vectors of a [`super::FlatIndex`] (row `i` is
/// inserted with id `i`).
pub struct HnswIndex {
    graph: Hnsw<'static, f32, DotDistance>,
    params: HnswParams,
    rows: usize,
}

impl std::fmt::Debug for HnswIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HnswIndex")
            .field("params", &self.params)
            .field("rows", &self.rows)
            .finish()
    }
}

impl HnswIndex {
    /// Inserts every row of `flat` (in parallel on the current rayon pool).
    pub fn build(flat: &Rows, params: HnswParams) -> Result<Self> {
        if params.m == 0 || params.m > 255 || params.ef_construction == 0 || params.ef_search == 0 {
            return Err(CorpusError::Index(format!(
                "hnsw parameters {params:?}: m must lie in [1, 255], ef values must be at least 1"
            )));
        }
        let rows = flat.len();
        let graph = Hnsw::new(
            params.m,
            rows.max(1),
            16,
            params.ef_construction,
            DotDistance,
        );
        let items: Vec<(&[f32], usize)> = (0..rows).map(|i| (flat.row(i), i)).collect();
        graph.parallel_insert_slice(&items);
        let mut index = HnswIndex {
            graph,
            params,
            rows,
        };
        index.graph.set_searching_mode(true);
        Ok(index)
    }

    /// The settings it was built with (and searches with).
    pub fn params(&self) -> HnswParams {
        self.params
    }

    /// Number of indexed rows.
    pub fn len(&self) -> usize {
        self.rows
    }

    /// Whether no row is indexed.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// A short name for tables and logs, e.g. `hnsw(m=24,efc=200,ef=200)`.
    pub fn describe(&self) -> String {
        let p = self.params;
        format!(
            "hnsw(m={},efc={},ef={})",
            p.m, p.ef_construction, p.ef_search
        )
    }

    /// Candidate rows for `query` with a search list of `ef` (raised to `k`), scored exactly
    /// against `flat` and ranked as the exact index ranks (score, then row).
    pub fn search_with(&self, flat: &Rows, query: &[f32], k: usize, ef: usize) -> Vec<Hit> {
        if k == 0 || self.rows == 0 {
            return Vec::new();
        }
        let found = self.graph.search(query, k, ef.max(k));
        let mut hits: Vec<Hit> = found
            .iter()
            .map(|n| Hit {
                row: n.d_id as u32,
                score: dot(query, flat.row(n.d_id)),
            })
            .collect();
        hits.sort_unstable_by(select::better);
        hits.truncate(k);
        hits
    }

    /// [`HnswIndex::search_with`] at the stored `ef_search`.
    pub fn search(&self, flat: &Rows, query: &[f32], k: usize) -> Vec<Hit> {
        self.search_with(flat, query, k, self.params.ef_search)
    }

    /// One search per row of `queries` (row-major, `flat.dim()` wide), in parallel.
    pub fn search_batch_with(
        &self,
        flat: &Rows,
        queries: &[f32],
        k: usize,
        ef: usize,
    ) -> Vec<Vec<Hit>> {
        queries
            .par_chunks(flat.dim())
            .map(|q| self.search_with(flat, q, k, ef))
            .collect()
    }

    /// The stored graph for these vectors and parameters under `dir`, or a new one built and
    /// stored there. `key` names the vector set (it also goes into the file name).
    pub fn load_or_build(
        dir: &Path,
        key: &str,
        flat: &Rows,
        params: HnswParams,
    ) -> Result<(Self, Origin)> {
        let vectors_sha256 = vectors_digest(flat);
        let target = store_path(
            dir,
            "hnsw",
            key,
            &[
                vectors_sha256.as_bytes(),
                &(params.m as u64).to_le_bytes(),
                &(params.ef_construction as u64).to_le_bytes(),
            ],
        );
        if let Some(index) = Self::load(&target, flat, params, &vectors_sha256)? {
            return Ok((index, Origin::Cached));
        }
        let index = Self::build(flat, params)?;
        index.store(&target, flat, &vectors_sha256)?;
        Ok((index, Origin::Built))
    }

    /// Reads a stored graph when its manifest matches and both files hash as recorded; `None`
    /// when there is nothing (or nothing valid) to read.
    fn load(
        target: &Path,
        flat: &Rows,
        params: HnswParams,
        vectors_sha256: &str,
    ) -> Result<Option<Self>> {
        let Some(m) = read_manifest::<Manifest>(target) else {
            return Ok(None);
        };
        let want_files = [
            (format!("{BASENAME}.hnsw.graph"), &m.graph_sha256),
            (format!("{BASENAME}.hnsw.data"), &m.data_sha256),
        ];
        let fits = m.format == FORMAT
            && m.params == params
            && m.rows == flat.len()
            && m.dim == flat.dim()
            && m.vectors_sha256 == vectors_sha256;
        if !fits {
            return Ok(None);
        }
        for (name, want) in want_files {
            match file_digest(&target.join(&name)) {
                Ok(got) if &got == want => {}
                _ => {
                    tracing::warn!(
                        "{}: {name} does not match its manifest, rebuilding",
                        target.display()
                    );
                    return Ok(None);
                }
            }
        }
        // hnsw_rs's reloaded graph borrows its loader for the graph's lifetime; the loader is a
        // few paths and counters, kept for the process's life so the index can own its graph.
        let io: &'static HnswIo = Box::leak(Box::new(HnswIo::new(target, BASENAME)));
        let mut graph: Hnsw<'static, f32, DotDistance> = io
            .load_hnsw_with_dist(DotDistance)
            .map_err(|e| CorpusError::Index(format!("reading {}: {e}", target.display())))?;
        if graph.get_nb_point() != flat.len() {
            return Ok(None);
        }
        graph.set_searching_mode(true);
        Ok(Some(HnswIndex {
            graph,
            params,
            rows: flat.len(),
        }))
    }

    /// Writes the graph into a fresh sibling directory, then renames it to `target`.
    fn store(&self, target: &Path, flat: &Rows, vectors_sha256: &str) -> Result<()> {
        write_dir_atomically(target, |tmp| {
            let written = self
                .graph
                .file_dump(tmp, BASENAME)
                .map_err(|e| CorpusError::Index(format!("writing {}: {e}", tmp.display())))?;
            if written != BASENAME {
                return Err(CorpusError::Index(format!(
                    "hnsw_rs wrote {written} instead of {BASENAME} in {}",
                    tmp.display()
                )));
            }
            let manifest = Manifest {
                format: FORMAT,
                params: self.params,
                rows: flat.len(),
                dim: flat.dim(),
                vectors_sha256: vectors_sha256.to_string(),
                graph_sha256: file_digest(&tmp.join(format!("{BASENAME}.hnsw.graph")))?,
                data_sha256: file_digest(&tmp.join(format!("{BASENAME}.hnsw.data")))?,
            };
            write_manifest(tmp, &manifest)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::testdata::{clustered, recall};
    use crate::index::FlatIndex;
    use std::fs;

    #[test]
    fn recall_against_exact_on_a_seeded_set() {
        let flat = FlatIndex::new(clustered(3_000, 32, 11)).unwrap();
        let queries = clustered(100, 32, 12);
        let exact = flat.search_batch(&queries, 10);
        let params = HnswParams {
            m: 16,
            ef_construction: 100,
            ef_search: 100,
        };
        let index = HnswIndex::build(flat.rows(), params).unwrap();
        let approx = index.search_batch_with(flat.rows(), &queries.data, 10, 100);
        let r = recall(&exact, &approx);
        assert!(r >= 0.95, "recall@10 {r}");
        // Scores are exact dot products, ranked like the exact index.
        for hits in &approx {
            for w in hits.windows(2) {
                assert!(select::better(&w[0], &w[1]).is_lt());
            }
        }
        // A larger search list finds at least as much on this set.
        let wide = recall(
            &exact,
            &index.search_batch_with(flat.rows(), &queries.data, 10, 400),
        );
        assert!(
            wide >= r - 1e-9 && wide >= 0.99,
            "recall@10 at ef 400: {wide}"
        );
    }

    #[test]
    fn stored_graph_is_reused_and_a_damaged_one_rebuilt() {
        let dir = tempfile::tempdir().unwrap();
        let flat = FlatIndex::new(clustered(800, 16, 5)).unwrap();
        let queries = clustered(20, 16, 6);
        let params = HnswParams {
            m: 8,
            ef_construction: 50,
            ef_search: 50,
        };
        let (a, origin) =
            HnswIndex::load_or_build(dir.path(), "t:chunks", flat.rows(), params).unwrap();
        assert_eq!(origin, Origin::Built);
        let (b, origin) =
            HnswIndex::load_or_build(dir.path(), "t:chunks", flat.rows(), params).unwrap();
        assert_eq!(origin, Origin::Cached);
        assert_eq!(
            a.search_batch_with(flat.rows(), &queries.data, 5, 50),
            b.search_batch_with(flat.rows(), &queries.data, 5, 50)
        );
        // Other parameters: another graph.
        let other = HnswParams { m: 12, ..params };
        let (_, origin) =
            HnswIndex::load_or_build(dir.path(), "t:chunks", flat.rows(), other).unwrap();
        assert_eq!(origin, Origin::Built);
        // A truncated data file fails its digest and is rebuilt, not read.
        let stored = fs::read_dir(dir.path().join("hnsw"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| {
                let m: Manifest =
                    serde_json::from_str(&fs::read_to_string(p.join("manifest.json")).unwrap())
                        .unwrap();
                m.params == params
            })
            .unwrap();
        let data = stored.join(format!("{BASENAME}.hnsw.data"));
        let bytes = fs::read(&data).unwrap();
        fs::write(&data, &bytes[..bytes.len() / 2]).unwrap();
        let (_, origin) =
            HnswIndex::load_or_build(dir.path(), "t:chunks", flat.rows(), params).unwrap();
        assert_eq!(origin, Origin::Built);
        // Other vectors: another graph.
        let flat2 = FlatIndex::new(clustered(800, 16, 7)).unwrap();
        let (_, origin) =
            HnswIndex::load_or_build(dir.path(), "t:chunks", flat2.rows(), params).unwrap();
        assert_eq!(origin, Origin::Built);
    }

    #[test]
    fn simd_dot_matches_the_plain_product() {
        for n in [0usize, 1, 7, 16, 63, 384, 385] {
            let a: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..n).map(|i| (i as f32 * 0.11).cos()).collect();
            let plain: f64 = a
                .iter()
                .zip(&b)
                .map(|(x, y)| f64::from(*x) * f64::from(*y))
                .sum();
            assert!((f64::from(simd_dot(&a, &b)) - plain).abs() < 1e-4, "n={n}");
        }
    }

    #[test]
    fn bad_parameters_are_refused() {
        let flat = FlatIndex::new(clustered(10, 4, 1)).unwrap();
        let bad = HnswParams {
            m: 0,
            ..HnswParams::default()
        };
        assert!(matches!(
            HnswIndex::build(flat.rows(), bad),
            Err(CorpusError::Index(_))
        ));
    }
}
