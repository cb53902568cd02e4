//! One exact k-nearest-neighbour pass shared by hubness (cosine top-k) and TwoNN (r1, r2).
//!
//! Candidates come from a blocked float32 Gram matrix (gemm, parallel over block pairs, the
//! symmetric half only); each row keeps a small top list. The few candidates per row are then
//! re-ranked in float64: cosine similarity for the top-k, and Euclidean distances from float64
//! row differences for r1 and r2 (2 - 2cos in float32 breaks on near-duplicates).

use rayon::prelude::*;

/// Extra float32 candidates kept per row so that float32 rounding cannot push a true float64
/// neighbour out of the list before the re-ranking.
pub const CANDIDATE_MARGIN: usize = 6;

/// Rows per Gram block: a 512 x 512 float32 block (1 MiB) stays in L2 while it is scanned.
const BLOCK: usize = 512;

/// Gram entries tested together before any per-entry branch.
const SCAN_CHUNK: usize = 16;

/// L2-normalised rows, in float64 (for exact distances) and float32 (for the Gram matrix).
#[derive(Debug, Clone)]
pub struct UnitRows {
    /// Number of rows.
    pub rows: usize,
    /// Row dimension.
    pub dim: usize,
    /// Row-major rows in float64.
    pub f64: Vec<f64>,
    /// The same rows in float32.
    pub f32: Vec<f32>,
}

impl UnitRows {
    /// Row `i` in float64.
    pub fn row64(&self, i: usize) -> &[f64] {
        &self.f64[i * self.dim..(i + 1) * self.dim]
    }
}

/// Result of the pass.
#[derive(Debug, Clone)]
pub struct KnnResult {
    /// Neighbours kept per row: min(k, rows - 1).
    pub k: usize,
    /// `rows x k` row indices, most cosine-similar first, ties to the lower index.
    pub neighbours: Vec<u32>,
    /// Euclidean distance (float64) to the nearest other row; NaN when rows < 2.
    pub r1: Vec<f64>,
    /// Euclidean distance (float64) to the second nearest other row; NaN when rows < 3.
    pub r2: Vec<f64>,
}

impl KnnResult {
    /// The `k` neighbours of row `i`, nearest first.
    pub fn neighbours_of(&self, i: usize) -> &[u32] {
        &self.neighbours[i * self.k..(i + 1) * self.k]
    }
}

/// `a` ranks before `b`: higher score, ties to the lower index.
#[inline]
fn better(sa: f32, ia: u32, sb: f32, ib: u32) -> bool {
    sa > sb || (sa == sb && ia < ib)
}

/// Per-row top lists, flat: row i owns `cap` slots, kept sorted best first.
struct TopLists {
    cap: usize,
    score: Vec<f32>,
    index: Vec<u32>,
    len: Vec<u32>,
    /// Score of the worst kept entry once full; -inf before, so every candidate is tried.
    floor: Vec<f32>,
}

impl TopLists {
    fn new(rows: usize, cap: usize) -> Self {
        TopLists {
            cap,
            score: vec![f32::NEG_INFINITY; rows * cap],
            index: vec![u32::MAX; rows * cap],
            len: vec![0; rows],
            floor: vec![f32::NEG_INFINITY; rows],
        }
    }

    #[inline]
    fn push(&mut self, row: usize, s: f32, j: u32) {
        let base = row * self.cap;
        let len = self.len[row] as usize;
        let mut pos = if len == self.cap {
            let last = base + self.cap - 1;
            if !better(s, j, self.score[last], self.index[last]) {
                return;
            }
            self.cap - 1
        } else {
            self.len[row] += 1;
            len
        };
        while pos > 0 && better(s, j, self.score[base + pos - 1], self.index[base + pos - 1]) {
            self.score[base + pos] = self.score[base + pos - 1];
            self.index[base + pos] = self.index[base + pos - 1];
            pos -= 1;
        }
        self.score[base + pos] = s;
        self.index[base + pos] = j;
        if self.len[row] as usize == self.cap {
            self.floor[row] = self.score[base + self.cap - 1];
        }
    }

    fn merge(mut self, other: TopLists) -> TopLists {
        for row in 0..self.len.len() {
            let base = row * other.cap;
            for p in 0..other.len[row] as usize {
                self.push(row, other.score[base + p], other.index[base + p]);
            }
        }
        self
    }
}

/// `out[i * b_rows + j] = a_i . b_j` for row-major `a` (a_rows x dim) and `b` (b_rows x dim),
/// through gemm on the calling thread (its AVX-512 kernels where the build has `x86-v4` and the
/// CPU has them). Also the routers' kNN product, so one safe wrapper owns the `unsafe` call.
///
/// # Panics
/// When `a` or `b` is not a whole number of `dim`-wide rows, or `out` is shorter than
/// `a_rows * b_rows`.
#[allow(unsafe_code)]
pub fn gram_block(a: &[f32], b: &[f32], dim: usize, out: &mut [f32]) {
    let (a_rows, b_rows) = (a.len() / dim, b.len() / dim);
    assert!(a.len() == a_rows * dim && b.len() == b_rows * dim);
    assert!(out.len() >= a_rows * b_rows);
    // SAFETY: the asserts above keep every access in bounds: dst is a_rows x b_rows with row
    // stride b_rows inside `out`; lhs is `a` (row stride dim); rhs is b^T, element (p, j) at
    // b[j * dim + p]. The three slices cannot alias (`out` is a unique borrow).
    unsafe {
        gemm::gemm(
            a_rows,
            b_rows,
            dim,
            out.as_mut_ptr(),
            1,
            b_rows as isize,
            false,
            a.as_ptr(),
            1,
            dim as isize,
            b.as_ptr(),
            dim as isize,
            1,
            0.0,
            1.0,
            false,
            false,
            false,
            // Parallelism comes from rayon over block pairs.
            gemm::Parallelism::None,
        );
    }
}

/// A pool thread's lists and Gram buffer, made on its first block pair.
type Slot = std::sync::Mutex<Option<(TopLists, Vec<f32>)>>;

/// Float32 candidate lists of `cap` entries per row, from the upper half of the Gram matrix.
fn candidates(rows: &UnitRows, cap: usize) -> TopLists {
    let (n, dim) = (rows.rows, rows.dim);
    let blocks = n.div_ceil(BLOCK);
    let pairs: Vec<(usize, usize)> = (0..blocks)
        .flat_map(|bi| (bi..blocks).map(move |bj| (bi, bj)))
        .collect();
    let span = |b: usize| (b * BLOCK, ((b + 1) * BLOCK).min(n));
    // One list set and Gram buffer per pool thread, made once: a rayon `fold` made one per
    // split (each n x cap, zeroed pages) and merged them all. Any partition of the pairs gives
    // the same merged lists: each keeps its row's best `cap` under a total order.
    let threads = rayon::current_num_threads().max(1);
    let state: Vec<Slot> = (0..threads).map(|_| std::sync::Mutex::new(None)).collect();
    pairs.par_iter().for_each(|&(bi, bj)| {
        let slot = rayon::current_thread_index().unwrap_or(0) % threads;
        // Only this thread takes this slot, so the lock is never contended.
        let mut guard = state[slot].lock().unwrap_or_else(|e| e.into_inner());
        let (top, gram) =
            guard.get_or_insert_with(|| (TopLists::new(n, cap), vec![0f32; BLOCK * BLOCK]));
        let (i0, i1) = span(bi);
        let (j0, j1) = span(bj);
        let w = j1 - j0;
        gram_block(
            &rows.f32[i0 * dim..i1 * dim],
            &rows.f32[j0 * dim..j1 * dim],
            dim,
            gram,
        );
        for i in i0..i1 {
            // Each unordered pair is visited once and feeds both rows' lists.
            let first = if bi == bj { i + 1 } else { j0 };
            let line = &gram[(i - i0) * w + (first - j0)..(i - i0 + 1) * w];
            let mut floor_i = top.floor[i];
            let mut j = first;
            for chunk in line.chunks(SCAN_CHUNK) {
                // Branch-free test of a whole chunk first: most chunks hold no candidate for
                // either side once the lists are full.
                let hit = chunk
                    .iter()
                    .zip(&top.floor[j..j + chunk.len()])
                    .fold(false, |acc, (&s, &f)| acc | (s >= floor_i) | (s >= f));
                if hit {
                    for (jj, &s) in (j..).zip(chunk) {
                        if s >= floor_i {
                            top.push(i, s, jj as u32);
                            floor_i = top.floor[i];
                        }
                        if s >= top.floor[jj] {
                            top.push(jj, s, i as u32);
                        }
                    }
                }
                j += chunk.len();
            }
        }
    });
    state
        .into_iter()
        .filter_map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
        .map(|(top, _)| top)
        .reduce(TopLists::merge)
        .unwrap_or_else(|| TopLists::new(n, cap))
}

/// `(a . b, |a - b|)` of `a` against each row of `others`, four rows at a time: each sum runs
/// over the entries in order, as a plain loop would (so the values are the same bit for bit),
/// while the eight independent chains hide the additions' latency.
fn dot_dist64(a: &[f64], others: &[&[f64]], out: &mut Vec<(f64, f64)>) {
    let n = a.len();
    let mut quads = others.chunks_exact(4);
    for q in &mut quads {
        // -0.0 starts a sum, as `Iterator::sum` does (an all -0.0 dot stays -0.0).
        let (mut d, mut e) = ([-0.0f64; 4], [-0.0f64; 4]);
        let b = [&q[0][..n], &q[1][..n], &q[2][..n], &q[3][..n]];
        for (p, &x) in a.iter().enumerate() {
            for r in 0..4 {
                let y = b[r][p];
                d[r] += x * y;
                e[r] += (x - y) * (x - y);
            }
        }
        out.extend((0..4).map(|r| (d[r], e[r].sqrt())));
    }
    for b in quads.remainder() {
        let (mut d, mut e) = (-0.0f64, -0.0f64);
        for (&x, &y) in a.iter().zip(b.iter()) {
            d += x * y;
            e += (x - y) * (x - y);
        }
        out.push((d, e.sqrt()));
    }
}

fn dot64(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn dist64(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt()
}

/// The k most cosine-similar other rows of every row, and the two smallest Euclidean distances.
pub fn knn_pass(rows: &UnitRows, k: usize) -> KnnResult {
    let n = rows.rows;
    let k_eff = k.min(n.saturating_sub(1));
    let cap = (k.max(2) + CANDIDATE_MARGIN).min(n.saturating_sub(1));
    let top = candidates(rows, cap);
    let mut neighbours = vec![0u32; n * k_eff.max(1)];
    let mut r1 = vec![f64::NAN; n];
    let mut r2 = vec![f64::NAN; n];
    neighbours
        .par_chunks_mut(k_eff.max(1))
        .zip(r1.par_iter_mut().zip(r2.par_iter_mut()))
        .enumerate()
        .for_each(|(i, (nb, (r1, r2)))| {
            let xi = rows.row64(i);
            let len = top.len[i] as usize;
            let cand = &top.index[i * cap..i * cap + len];
            let others: Vec<&[f64]> = cand.iter().map(|&j| rows.row64(j as usize)).collect();
            let mut scored = Vec::with_capacity(len);
            dot_dist64(xi, &others, &mut scored);
            let mut by_sim: Vec<(f64, f64, u32)> = scored
                .iter()
                .zip(cand)
                .map(|(&(dot, dist), &j)| (dot, dist, j))
                .collect();
            by_sim.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.2.cmp(&b.2)));
            if k_eff > 0 {
                for (slot, c) in nb.iter_mut().zip(&by_sim) {
                    *slot = c.2;
                }
            }
            by_sim.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.2.cmp(&b.2)));
            if let Some(c) = by_sim.first() {
                *r1 = c.1;
            }
            if let Some(c) = by_sim.get(1) {
                *r2 = c.1;
            }
        });
    if k_eff == 0 {
        neighbours.clear();
    }
    KnnResult {
        k: k_eff,
        neighbours,
        r1,
        r2,
    }
}

/// Brute-force float64 reference of [`knn_pass`] (quadratic; for tests and small inputs).
pub fn knn_exact(rows: &UnitRows, k: usize) -> KnnResult {
    let n = rows.rows;
    let k_eff = k.min(n.saturating_sub(1));
    let mut neighbours = Vec::with_capacity(n * k_eff);
    let mut r1 = vec![f64::NAN; n];
    let mut r2 = vec![f64::NAN; n];
    for i in 0..n {
        let xi = rows.row64(i);
        let mut all: Vec<(f64, f64, u32)> = (0..n)
            .filter(|&j| j != i)
            .map(|j| {
                (
                    dot64(xi, rows.row64(j)),
                    dist64(xi, rows.row64(j)),
                    j as u32,
                )
            })
            .collect();
        all.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.2.cmp(&b.2)));
        neighbours.extend(all.iter().take(k_eff).map(|c| c.2));
        all.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.2.cmp(&b.2)));
        r1[i] = all.first().map_or(f64::NAN, |c| c.1);
        r2[i] = all.get(1).map_or(f64::NAN, |c| c.1);
    }
    KnnResult {
        k: k_eff,
        neighbours,
        r1,
        r2,
    }
}
