//! Approximate inner-product search by inverted lists (IVF-Flat): spherical k-means centroids
//! over the rows, every row filed under its nearest centroid, a query scanning the rows of its
//! `nprobe` nearest lists. Built once per vector set, stored in the cache, reloaded on resume.
//!
//! Why not a library (docs/performance.md has the measurements): faiss's IVF needs cmake and a
//! system BLAS to build (the `faiss` feature), which a fresh machine lacks; the pure-Rust HNSW
//! graphs (hnsw_rs, and USearch tried beside it) miss the recall/throughput goal on two cores.
//! What an IVF needs is a k-means and a matrix product; the product is the exact index's gemm.
//!
//! The batched search scans every probed list once per batch, as one gemm of the list's rows
//! against all the queries that probe it, so a batch keeps the exact search's kernel and reads
//! each list once however many queries probe it.

use std::fs;
use std::io::Write;
use std::path::Path;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::rows::{products, Rows};
use super::select::{self, Hit, TopK};
use super::stored::{
    file_digest, read_manifest, store_path, vectors_digest, write_dir_atomically, write_manifest,
};
use super::Origin;
use crate::error::{CorpusError, Result};

/// Build and search settings. Measured on the clustered synthetic set of `examples/perf_ann.rs`
/// (docs/performance.md has the curve).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IvfParams {
    /// Number of lists; 0 picks `round(2 sqrt(rows))` (2,000 at 1M rows).
    pub lists: usize,
    /// Lists each query scans (the search-time knob; not part of the stored index).
    pub nprobe: usize,
    /// k-means trains on `lists * train_per_list` sampled rows (all rows when fewer).
    pub train_per_list: usize,
    /// k-means (Lloyd) iterations.
    pub iterations: usize,
    /// Seed of the training sample and of the initial centroids.
    pub seed: u64,
}

impl Default for IvfParams {
    fn default() -> Self {
        IvfParams {
            lists: 0,
            nprobe: 24,
            train_per_list: 128,
            iterations: 25,
            seed: 0x1F_2026,
        }
    }
}

impl IvfParams {
    /// The list count used for `rows` rows: `lists`, or `round(2 sqrt(rows))` when 0, at most
    /// `rows` and at least 1.
    pub fn lists_for(&self, rows: usize) -> usize {
        let want = if self.lists == 0 {
            (2.0 * (rows as f64).sqrt()).round() as usize
        } else {
            self.lists
        };
        want.clamp(1, rows.max(1))
    }

    fn validate(&self) -> Result<()> {
        if self.nprobe == 0 || self.train_per_list == 0 || self.iterations == 0 {
            return Err(CorpusError::Index(format!(
                "ivf parameters {self:?}: nprobe, train_per_list and iterations must be at least 1"
            )));
        }
        Ok(())
    }
}

/// Inverted lists over a set of [`Rows`] (row `i` is hit `row == i`), with their own copy of
/// the rows in list order so that a list is one contiguous block for gemm.
pub struct IvfIndex {
    params: IvfParams,
    dim: usize,
    /// `lists x dim`, unit length.
    centroids: Vec<f32>,
    /// List `l` holds `ids[offsets[l]..offsets[l + 1]]`, ascending.
    offsets: Vec<usize>,
    ids: Vec<u32>,
    /// Row `ids[j]` of the indexed vectors at `j * dim`.
    vectors: Vec<f32>,
}

impl std::fmt::Debug for IvfIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IvfIndex")
            .field("params", &self.params)
            .field("lists", &self.lists())
            .field("rows", &self.ids.len())
            .finish()
    }
}

/// Rows scored per gemm block while assigning rows to centroids.
const ASSIGN_BLOCK: usize = 256;

impl IvfIndex {
    /// Trains the centroids on a seeded sample of `flat` and files every row under its nearest.
    pub fn build(flat: &Rows, params: IvfParams) -> Result<Self> {
        params.validate()?;
        let (n, d) = (flat.len(), flat.dim());
        let lists = params.lists_for(n);
        let centroids = if n == 0 {
            Vec::new()
        } else {
            train(flat, lists, &params)
        };
        let lists = centroids.len() / d;
        let assigned = nearest(&flat.data, d, &centroids);
        Ok(Self::from_assignment(
            flat, params, centroids, &assigned, lists,
        ))
    }

    fn from_assignment(
        flat: &Rows,
        params: IvfParams,
        centroids: Vec<f32>,
        assigned: &[u32],
        lists: usize,
    ) -> Self {
        let d = flat.dim();
        let mut offsets = vec![0usize; lists + 1];
        for &l in assigned {
            offsets[l as usize + 1] += 1;
        }
        for l in 0..lists {
            offsets[l + 1] += offsets[l];
        }
        let mut next = offsets.clone();
        let mut ids = vec![0u32; assigned.len()];
        for (row, &l) in assigned.iter().enumerate() {
            ids[next[l as usize]] = row as u32;
            next[l as usize] += 1;
        }
        Self::with_lists(flat, params, d, centroids, offsets, ids)
    }

    fn with_lists(
        flat: &Rows,
        params: IvfParams,
        dim: usize,
        centroids: Vec<f32>,
        offsets: Vec<usize>,
        ids: Vec<u32>,
    ) -> Self {
        let mut vectors = vec![0.0f32; ids.len() * dim];
        vectors
            .par_chunks_mut(dim.max(1))
            .zip(ids.par_iter())
            .for_each(|(out, &id)| out.copy_from_slice(flat.row(id as usize)));
        IvfIndex {
            params,
            dim,
            centroids,
            offsets,
            ids,
            vectors,
        }
    }

    /// The settings it was built with (and searches with).
    pub fn params(&self) -> IvfParams {
        self.params
    }

    /// Number of lists.
    pub fn lists(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Number of indexed rows.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether no row is indexed.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Sizes of the lists, in list order.
    pub fn list_sizes(&self) -> Vec<usize> {
        self.offsets.windows(2).map(|w| w[1] - w[0]).collect()
    }

    /// A short name for tables and logs, e.g. `ivf(lists=2000,nprobe=24)`.
    pub fn describe(&self) -> String {
        format!("ivf(lists={},nprobe={})", self.lists(), self.params.nprobe)
    }

    /// [`IvfIndex::search_batch_with`] for one query.
    pub fn search_with(&self, query: &[f32], k: usize, nprobe: usize) -> Vec<Hit> {
        self.search_batch_with(query, k, nprobe)
            .pop()
            .unwrap_or_default()
    }

    /// [`IvfIndex::search_with`] at the stored `nprobe`.
    pub fn search(&self, query: &[f32], k: usize) -> Vec<Hit> {
        self.search_with(query, k, self.params.nprobe)
    }

    /// The best `k` rows of the `nprobe` lists nearest each row of `queries` (row-major,
    /// `dim` wide), best first by score then row. A score is the gemm inner product of the
    /// query and the row, as the exact batched search computes it.
    pub fn search_batch_with(&self, queries: &[f32], k: usize, nprobe: usize) -> Vec<Vec<Hit>> {
        let d = self.dim;
        assert!(
            queries.len().is_multiple_of(d),
            "queries are not a whole number of {d}-dimensional rows"
        );
        let m = queries.len() / d;
        if m == 0 {
            return Vec::new();
        }
        if k == 0 || self.is_empty() {
            return vec![Vec::new(); m];
        }
        // Which lists each query scans, then which queries each list is scanned for.
        let probes = top_lists(queries, d, &self.centroids, nprobe.max(1));
        let filled = |l: usize| self.offsets[l + 1] > self.offsets[l];
        let found: Vec<(u32, Vec<Hit>)> = if m == 1 {
            // One query (a paradigm's own search): its lists in turn, no inversion.
            probes[0]
                .iter()
                .map(|h| h.row as usize)
                .filter(|&l| filled(l))
                .flat_map(|l| self.scan(l, &[0], queries, k))
                .collect()
        } else {
            let mut by_list: Vec<Vec<u32>> = vec![Vec::new(); self.lists()];
            for (q, lists) in probes.iter().enumerate() {
                for h in lists {
                    by_list[h.row as usize].push(q as u32);
                }
            }
            // One gemm per list against its queries; each query keeps its list's top k.
            by_list
                .par_iter()
                .enumerate()
                .filter(|(l, qs)| !qs.is_empty() && filled(*l))
                .flat_map_iter(|(l, qs)| self.scan(l, qs, queries, k))
                .collect()
        };
        let mut per_query: Vec<Vec<Hit>> = vec![Vec::new(); m];
        for (q, hits) in found {
            per_query[q as usize].extend(hits);
        }
        per_query.par_iter_mut().for_each(|hits| {
            if hits.len() > k {
                hits.select_nth_unstable_by(k - 1, select::better);
                hits.truncate(k);
            }
            hits.sort_unstable_by(select::better);
        });
        per_query
    }

    /// The top `k` rows of list `l` for each query in `qs`.
    fn scan(&self, l: usize, qs: &[u32], queries: &[f32], k: usize) -> Vec<(u32, Vec<Hit>)> {
        let d = self.dim;
        let (lo, hi) = (self.offsets[l], self.offsets[l + 1]);
        let n = hi - lo;
        let mut lhs = Vec::with_capacity(qs.len() * d);
        for &q in qs {
            lhs.extend_from_slice(&queries[q as usize * d..(q as usize + 1) * d]);
        }
        let mut scores = vec![0.0f32; qs.len() * n];
        products(
            &lhs,
            qs.len(),
            &self.vectors[lo * d..hi * d],
            n,
            d,
            &mut scores,
            1,
        );
        let ids = &self.ids[lo..hi];
        qs.iter()
            .zip(scores.chunks_exact(n))
            .map(|(&q, row)| {
                let mut top = TopK::new(k.min(n));
                top.extend(row, 0);
                let hits = top
                    .finish()
                    .into_iter()
                    .map(|h| Hit {
                        row: ids[h.row as usize],
                        score: h.score,
                    })
                    .collect();
                (q, hits)
            })
            .collect()
    }

    /// The stored index for these vectors and build settings under `dir`, or a new one built
    /// and stored there. `key` names the vector set (it also goes into the file name). The
    /// stored `nprobe` is `params.nprobe`, whatever the stored copy was searched with.
    pub fn load_or_build(
        dir: &Path,
        key: &str,
        flat: &Rows,
        params: IvfParams,
    ) -> Result<(Self, Origin)> {
        params.validate()?;
        let vectors_sha256 = vectors_digest(flat);
        let build = BuildKey::of(&params, flat.len());
        let target = store_path(
            dir,
            "ivf",
            key,
            &[
                vectors_sha256.as_bytes(),
                serde_json::to_string(&build)
                    .expect("build key serialises")
                    .as_bytes(),
            ],
        );
        if let Some(index) = Self::load(&target, flat, params, &build, &vectors_sha256)? {
            return Ok((index, Origin::Cached));
        }
        let index = Self::build(flat, params)?;
        index.store(&target, flat, &build, &vectors_sha256)?;
        Ok((index, Origin::Built))
    }

    fn load(
        target: &Path,
        flat: &Rows,
        params: IvfParams,
        build: &BuildKey,
        vectors_sha256: &str,
    ) -> Result<Option<Self>> {
        let Some(m) = read_manifest::<Manifest>(target) else {
            return Ok(None);
        };
        let fits = m.format == FORMAT
            && &m.build == build
            && m.rows == flat.len()
            && m.dim == flat.dim()
            && m.vectors_sha256 == vectors_sha256;
        if !fits {
            return Ok(None);
        }
        let path = target.join(DATA);
        match file_digest(&path) {
            Ok(got) if got == m.data_sha256 => {}
            _ => {
                tracing::warn!(
                    "{}: {DATA} does not match its manifest, rebuilding",
                    target.display()
                );
                return Ok(None);
            }
        }
        let bytes = fs::read(&path)
            .map_err(|e| CorpusError::io(format!("reading {}", path.display()), e))?;
        let Some((centroids, offsets, ids)) = decode(&bytes, m.lists, flat.dim(), flat.len())
        else {
            tracing::warn!("{}: {DATA} is malformed, rebuilding", target.display());
            return Ok(None);
        };
        Ok(Some(Self::with_lists(
            flat,
            params,
            flat.dim(),
            centroids,
            offsets,
            ids,
        )))
    }

    fn store(
        &self,
        target: &Path,
        flat: &Rows,
        build: &BuildKey,
        vectors_sha256: &str,
    ) -> Result<()> {
        write_dir_atomically(target, |tmp| {
            let path = tmp.join(DATA);
            let file = fs::File::create(&path)
                .map_err(|e| CorpusError::io(format!("creating {}", path.display()), e))?;
            let mut w = std::io::BufWriter::new(file);
            let mut put = |bytes: &[u8]| {
                w.write_all(bytes)
                    .map_err(|e| CorpusError::io(format!("writing {}", path.display()), e))
            };
            for v in &self.centroids {
                put(&v.to_le_bytes())?;
            }
            for &o in &self.offsets {
                put(&(o as u64).to_le_bytes())?;
            }
            for &id in &self.ids {
                put(&id.to_le_bytes())?;
            }
            w.flush()
                .map_err(|e| CorpusError::io(format!("writing {}", path.display()), e))?;
            drop(w);
            let manifest = Manifest {
                format: FORMAT,
                build: build.clone(),
                lists: self.lists(),
                rows: flat.len(),
                dim: flat.dim(),
                vectors_sha256: vectors_sha256.to_string(),
                data_sha256: file_digest(&path)?,
            };
            write_manifest(tmp, &manifest)
        })
    }
}

/// The build settings a stored index depends on (not `nprobe`, a search setting).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct BuildKey {
    lists: usize,
    train_per_list: usize,
    iterations: usize,
    seed: u64,
}

impl BuildKey {
    fn of(p: &IvfParams, rows: usize) -> Self {
        BuildKey {
            lists: p.lists_for(rows),
            train_per_list: p.train_per_list,
            iterations: p.iterations,
            seed: p.seed,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Manifest {
    format: u32,
    build: BuildKey,
    lists: usize,
    rows: usize,
    dim: usize,
    vectors_sha256: String,
    data_sha256: String,
}

const FORMAT: u32 = 1;
/// Centroids (f32), list offsets (u64), row ids (u32), all little-endian.
const DATA: &str = "lists.bin";

type Lists = (Vec<f32>, Vec<usize>, Vec<u32>);

/// Parses `DATA`; `None` unless the sizes and every offset and id are consistent.
fn decode(bytes: &[u8], lists: usize, dim: usize, rows: usize) -> Option<Lists> {
    let want = lists * dim * 4 + (lists + 1) * 8 + rows * 4;
    if bytes.len() != want {
        return None;
    }
    let (c, rest) = bytes.split_at(lists * dim * 4);
    let (o, i) = rest.split_at((lists + 1) * 8);
    let centroids: Vec<f32> = c
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let offsets: Vec<usize> = o
        .chunks_exact(8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap()) as usize)
        .collect();
    let ids: Vec<u32> = i
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let offsets_ok = offsets.first() == Some(&0)
        && offsets.last() == Some(&rows)
        && offsets.windows(2).all(|w| w[0] <= w[1]);
    let ids_ok = ids.iter().all(|&id| (id as usize) < rows);
    (offsets_ok && ids_ok && centroids.iter().all(|v| v.is_finite()))
        .then_some((centroids, offsets, ids))
}

/// Spherical k-means (Lloyd) on a seeded sample: centroids are unit-length means, a row belongs
/// to the centroid of largest inner product. Starts from `lists` distinct sampled rows; a list
/// left empty takes a sampled row of the largest list, so every centroid stays in use.
fn train(flat: &Rows, lists: usize, p: &IvfParams) -> Vec<f32> {
    let (n, d) = (flat.len(), flat.dim());
    let mut rng = bench_core::rng::SplitMix64::new(p.seed);
    let mut order: Vec<u32> = (0..n as u32).collect();
    rng.shuffle(&mut order);
    let take = (lists * p.train_per_list).min(n);
    let mut sample = Vec::with_capacity(take * d);
    for &r in &order[..take] {
        sample.extend_from_slice(flat.row(r as usize));
    }
    let mut centroids = sample[..lists * d].to_vec();
    for _ in 0..p.iterations {
        let assigned = nearest(&sample, d, &centroids);
        let mut sums = vec![0.0f64; lists * d];
        let mut counts = vec![0usize; lists];
        for (row, &l) in sample.chunks_exact(d).zip(&assigned) {
            counts[l as usize] += 1;
            for (s, v) in sums[l as usize * d..][..d].iter_mut().zip(row) {
                *s += f64::from(*v);
            }
        }
        for l in 0..lists {
            let c = &mut centroids[l * d..(l + 1) * d];
            if counts[l] == 0 {
                let big = (0..lists)
                    .max_by_key(|&j| (counts[j], usize::MAX - j))
                    .unwrap();
                let members: Vec<usize> = (0..assigned.len())
                    .filter(|&i| assigned[i] as usize == big)
                    .collect();
                let pick = members[rng.below(members.len())];
                c.copy_from_slice(&sample[pick * d..(pick + 1) * d]);
                continue;
            }
            let s = &sums[l * d..(l + 1) * d];
            let norm = s.iter().map(|x| x * x).sum::<f64>().sqrt();
            for (c, x) in c.iter_mut().zip(s) {
                *c = if norm > 0.0 { (x / norm) as f32 } else { 0.0 };
            }
        }
    }
    centroids
}

/// For each row of `rows` (`dim` wide), the centroid of largest inner product (lowest index
/// on a tie), in parallel blocks of one gemm each.
fn nearest(rows: &[f32], dim: usize, centroids: &[f32]) -> Vec<u32> {
    top_lists(rows, dim, centroids, 1)
        .into_iter()
        .map(|h| h.first().map_or(0, |h| h.row))
        .collect()
}

/// For each row of `rows`, the `k` centroids of largest inner product, best first.
fn top_lists(rows: &[f32], dim: usize, centroids: &[f32], k: usize) -> Vec<Vec<Hit>> {
    let c = centroids.len() / dim;
    if c == 0 {
        return vec![Vec::new(); rows.len() / dim];
    }
    rows.par_chunks(ASSIGN_BLOCK * dim)
        .flat_map_iter(|block| {
            let b = block.len() / dim;
            let mut scores = vec![0.0f32; b * c];
            products(block, b, centroids, c, dim, &mut scores, 1);
            scores
                .chunks_exact(c)
                .map(|row| select::top_k(row, k))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[cfg(test)]
#[path = "ivf_tests.rs"]
mod tests;
