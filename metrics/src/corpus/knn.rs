//! One exact k-nearest-neighbour pass shared by hubness (cosine top-k) and TwoNN (r1, r2).
//!
//! Candidates come from a blocked Gram matrix in a screen's precision (bfloat16 on AVX-512 BF16,
//! else float32 through gemm; parallel over block pairs, the symmetric half only); each row keeps
//! a small top list. The few candidates per row are then re-ranked in float64: cosine similarity
//! for the top-k, and Euclidean distances from float64 row differences for r1 and r2 (2 - 2cos
//! in float32 breaks on near-duplicates). The screen's error is bounded, so each row's result is
//! proved equal to [`knn_exact`]'s, or the row is screened again against every row.

use rayon::prelude::*;

pub use super::rows::{gram_block, UnitRows};
pub use super::screen::ScreenKernel;
use super::screen::{Screen, BLOCK};

/// Candidates kept per row beyond the k: the room the screen's rounding has before a row must
/// be screened again.
pub const CANDIDATE_MARGIN: usize = 6;

/// Gram entries tested together before any per-entry branch.
const SCAN_CHUNK: usize = 16;

/// Slots of a 16-lane top list (one AVX-512 register of float32).
const LANES: usize = 16;

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

/// `a` ranks before `b`: higher product, ties to the lower index. Any total order agreeing
/// with the products' numeric order serves the certificate; this one also makes the kept lists
/// independent of the order candidates arrive in.
#[inline]
fn better(sa: f32, ia: u32, sb: f32, ib: u32) -> bool {
    sa > sb || (sa == sb && ia < ib)
}

/// Per-row top lists, flat: row i owns `width` slots, sorted best first, empty slots last
/// (-inf, `u32::MAX`). With `cap <= 16` a row is one AVX-512 register of products and one of
/// indices, and an insertion is a compare, a popcount and a lane shift, without branches (the
/// scalar insertion's branch misses cost ~40 ns per candidate; appending to a buffer cut back by
/// a selection, tried first, spent 7-9 % of the pass in the selections).
struct TopLists {
    cap: usize,
    width: usize,
    simd: bool,
    score: Vec<f32>,
    index: Vec<u32>,
    /// The `cap`-th best product so far (-inf until `cap` are held). Products below it can
    /// never be kept.
    floor: Vec<f32>,
}

/// Each row's best `cap` candidates, best first: `len[i]` entries from `i * cap`.
struct Kept {
    score: Vec<f32>,
    index: Vec<u32>,
    len: Vec<u32>,
}

impl TopLists {
    fn new(rows: usize, cap: usize, avx512: bool) -> Self {
        let width = if cap <= LANES { LANES } else { cap };
        TopLists {
            cap,
            width,
            simd: avx512 && width == LANES,
            score: vec![f32::NEG_INFINITY; rows * width],
            index: vec![u32::MAX; rows * width],
            floor: vec![
                if cap == 0 {
                    f32::INFINITY
                } else {
                    f32::NEG_INFINITY
                };
                rows
            ],
        }
    }

    #[inline]
    fn push(&mut self, row: usize, s: f32, j: u32) {
        #[cfg(target_arch = "x86_64")]
        if self.simd {
            // SAFETY: `simd` is set only where the CPU has AVX-512F and rows are 16 wide.
            #[allow(unsafe_code)]
            unsafe {
                self.push16(row, s, j)
            };
            self.floor[row] = self.score[row * LANES + self.cap - 1];
            return;
        }
        let base = row * self.width;
        let last = base + self.cap - 1;
        if !better(s, j, self.score[last], self.index[last]) {
            return;
        }
        let mut pos = last;
        while pos > base && better(s, j, self.score[pos - 1], self.index[pos - 1]) {
            self.score[pos] = self.score[pos - 1];
            self.index[pos] = self.index[pos - 1];
            pos -= 1;
        }
        self.score[pos] = s;
        self.index[pos] = j;
        self.floor[row] = self.score[last];
    }

    /// The insertion on a 16-lane row: the lanes ranking before the candidate are a prefix
    /// (the row is sorted), so their count is its position; the lanes after it move one up.
    ///
    /// # Safety
    /// The CPU must have AVX-512F; `width` must be 16 and `row` a row of the lists.
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    #[target_feature(enable = "avx512f")]
    unsafe fn push16(&mut self, row: usize, s: f32, j: u32) {
        use std::arch::x86_64::*;
        let base = row * LANES;
        assert!(base + LANES <= self.score.len() && base + LANES <= self.index.len());
        let (sp, ip) = (
            self.score.as_mut_ptr().add(base),
            self.index.as_mut_ptr().add(base),
        );
        let (sc, ix) = (_mm512_loadu_ps(sp), _mm512_loadu_si512(ip.cast()));
        let (sv, jv) = (_mm512_set1_ps(s), _mm512_set1_epi32(j as i32));
        let before = _mm512_cmp_ps_mask::<_CMP_GT_OQ>(sc, sv)
            | (_mm512_cmp_ps_mask::<_CMP_EQ_OQ>(sc, sv) & _mm512_cmplt_epu32_mask(ix, jv));
        let pos = before.count_ones();
        if pos as usize >= self.cap {
            return;
        }
        let iota = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
        let after = !((1u32 << (pos + 1)) - 1) as u16;
        let from = _mm512_mask_sub_epi32(iota, after, iota, _mm512_set1_epi32(1));
        let at = 1u16 << pos;
        let sc = _mm512_mask_mov_ps(_mm512_permutexvar_ps(from, sc), at, sv);
        let ix = _mm512_mask_mov_epi32(_mm512_permutexvar_epi32(from, ix), at, jv);
        _mm512_storeu_ps(sp, sc);
        _mm512_storeu_si512(ip.cast(), ix);
    }

    /// Offers row `i`'s products with rows `first..` (`line`) to both sides' lists, testing
    /// sixteen at a time with AVX-512 compares where `simd` says the CPU has them.
    fn scan(&mut self, i: usize, first: usize, line: &[f32], simd: bool) {
        #[cfg(target_arch = "x86_64")]
        if simd {
            // SAFETY: `simd` is true only where the CPU has AVX-512F (`candidates` checks).
            #[allow(unsafe_code)]
            unsafe {
                self.scan_avx512(i, first, line)
            };
            return;
        }
        let _ = simd;
        self.scan_with(i, first, line, masks_scalar);
    }

    /// # Safety
    /// The CPU must have AVX-512F.
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    #[target_feature(enable = "avx512f")]
    unsafe fn scan_avx512(&mut self, i: usize, first: usize, line: &[f32]) {
        use std::arch::x86_64::*;
        self.scan_with(i, first, line, |chunk, floors, floor_i| {
            if chunk.len() < SCAN_CHUNK {
                return masks_scalar(chunk, floors, floor_i);
            }
            // SAFETY: both slices hold 16 floats (SCAN_CHUNK), the CPU has AVX-512F.
            unsafe {
                let s = _mm512_loadu_ps(chunk.as_ptr());
                let f = _mm512_loadu_ps(floors.as_ptr());
                let mi = _mm512_cmp_ps_mask::<_CMP_GE_OQ>(s, _mm512_set1_ps(floor_i));
                let mj = _mm512_cmp_ps_mask::<_CMP_GE_OQ>(s, f);
                (u32::from(mi), u32::from(mj))
            }
        });
    }

    /// The scan, with `masks(chunk, floors, floor_i)` giving each chunk's two bit masks
    /// (`chunk[t] >= floor_i`, `chunk[t] >= floors[t]`).
    #[inline(always)]
    fn scan_with(
        &mut self,
        i: usize,
        first: usize,
        line: &[f32],
        masks: impl Fn(&[f32], &[f32], f32) -> (u32, u32),
    ) {
        let mut floor_i = self.floor[i];
        let mut j = first;
        for chunk in line.chunks(SCAN_CHUNK) {
            // Masks of a whole chunk first (most chunks hold no candidate for either side once
            // the lists have filled), then only the set bits.
            let (mut mi, mut mj) = masks(chunk, &self.floor[j..j + chunk.len()], floor_i);
            // A floor only rises, so a bit set against an older floor is tested again.
            while mi != 0 {
                let t = mi.trailing_zeros() as usize;
                mi &= mi - 1;
                if chunk[t] >= floor_i {
                    self.push(i, chunk[t], (j + t) as u32);
                    floor_i = self.floor[i];
                }
            }
            while mj != 0 {
                let t = mj.trailing_zeros() as usize;
                mj &= mj - 1;
                let jj = j + t;
                if chunk[t] >= self.floor[jj] {
                    self.push(jj, chunk[t], i as u32);
                }
            }
            j += chunk.len();
        }
    }

    fn merge(mut self, other: TopLists) -> TopLists {
        for row in 0..self.floor.len() {
            let base = row * other.width;
            for p in base..base + other.cap {
                let (s, j) = (other.score[p], other.index[p]);
                if j == u32::MAX {
                    break;
                }
                if s >= self.floor[row] {
                    self.push(row, s, j);
                }
            }
        }
        self
    }

    /// Each row's best `cap`, sorted.
    fn finish(self) -> Kept {
        let (cap, width) = (self.cap, self.width);
        let rows = self.floor.len();
        let mut score = Vec::with_capacity(rows * cap);
        let mut index = Vec::with_capacity(rows * cap);
        let mut len = Vec::with_capacity(rows);
        for row in 0..rows {
            let held = &self.index[row * width..row * width + cap];
            len.push(held.iter().take_while(|&&j| j != u32::MAX).count() as u32);
            score.extend_from_slice(&self.score[row * width..row * width + cap]);
            index.extend_from_slice(held);
        }
        Kept { score, index, len }
    }
}

/// A chunk's two bit masks, `chunk[t] >= floor_i` and `chunk[t] >= floors[t]`, in plain code.
fn masks_scalar(chunk: &[f32], floors: &[f32], floor_i: f32) -> (u32, u32) {
    let (mut mi, mut mj) = (0u32, 0u32);
    for (t, (&s, &f)) in chunk.iter().zip(floors).enumerate() {
        mi |= u32::from(s >= floor_i) << t;
        mj |= u32::from(s >= f) << t;
    }
    (mi, mj)
}

/// Whether this CPU has AVX-512F.
fn avx512f() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// A pool thread's lists and Gram buffer, made on its first block pair.
type Slot = std::sync::Mutex<Option<(TopLists, Vec<f32>)>>;

/// Screened candidate lists of `cap` entries per row, from the upper half of the Gram matrix.
fn candidates(screen: &Screen<'_>, n: usize, cap: usize) -> Kept {
    let blocks = screen.padded.div_ceil(BLOCK);
    let pairs: Vec<(usize, usize)> = (0..blocks)
        .flat_map(|bi| (bi..blocks).map(move |bj| (bi, bj)))
        .collect();
    offer(screen, &pairs, n, cap).finish()
}

/// Offers the products of the block `pairs` to lists of `cap` per row, one set per pool thread
/// (made once: a rayon `fold` made one per split, each n x 16, and merged them all), merged.
/// Any partition of the pairs gives the same merged lists: each keeps its row's best `cap`
/// under a total order. (Offering the diagonal blocks first, to start every thread's lists
/// from their floors, saved only 6 % of the offers: not kept.)
fn offer(screen: &Screen<'_>, pairs: &[(usize, usize)], n: usize, cap: usize) -> TopLists {
    let simd = cfg!(target_arch = "x86_64") && avx512f();
    let threads = rayon::current_num_threads().max(1);
    let state: Vec<Slot> = (0..threads).map(|_| std::sync::Mutex::new(None)).collect();
    pairs.par_iter().for_each(|&(bi, bj)| {
        let slot = rayon::current_thread_index().unwrap_or(0) % threads;
        // Only this thread takes this slot, so the lock is never contended.
        let mut guard = state[slot].lock().unwrap_or_else(|e| e.into_inner());
        let (top, gram) =
            guard.get_or_insert_with(|| (TopLists::new(n, cap, simd), vec![0f32; BLOCK * BLOCK]));
        let (i0, i1) = screen.span(bi);
        let (j0, j1) = screen.span(bj);
        let w = j1 - j0;
        screen.gram_span((i0, i1), (j0, j1), gram);
        // Padding rows (the bfloat16 kernel's) are computed but never scanned.
        let (i1, j1) = (i1.min(n), j1.min(n));
        for i in i0..i1 {
            // Each unordered pair is visited once and feeds both rows' lists.
            let first = if bi == bj { i + 1 } else { j0 };
            if first >= j1 {
                continue;
            }
            let line = &gram[(i - i0) * w + (first - j0)..(i - i0) * w + (j1 - j0)];
            top.scan(i, first, line, simd);
        }
    });
    state
        .into_iter()
        .filter_map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
        .map(|(top, _)| top)
        .reduce(TopLists::merge)
        .unwrap_or_else(|| TopLists::new(n, cap, simd))
}

/// `(x_i . x_j, |x_i - x_j|)` for each candidate `j`, appended to `out` in `cand`'s order: four
/// candidates at a time, eight independent chains hiding the additions' latency, each sum still in
/// entry order. (AVX-512 gathers of eight candidates at a time measured slower on this CPU.)
fn dot_dist64(rows: &UnitRows, i: usize, cand: &[u32], out: &mut Vec<(f64, f64)>) {
    let a = rows.row64(i);
    let n = a.len();
    let mut quads = cand.chunks_exact(4);
    for q in &mut quads {
        // -0.0 starts a sum, as `Iterator::sum` does (an all -0.0 dot stays -0.0). Eight named
        // accumulators and zipped slices: with arrays and indexing the compiler kept the sums
        // on the stack (a store and reload in every chain) behind bounds checks.
        let [b0, b1, b2, b3] = [q[0], q[1], q[2], q[3]].map(|j| &rows.row64(j as usize)[..n]);
        let (mut d0, mut d1, mut d2, mut d3) = (-0.0f64, -0.0f64, -0.0f64, -0.0f64);
        let (mut e0, mut e1, mut e2, mut e3) = (-0.0f64, -0.0f64, -0.0f64, -0.0f64);
        for ((((&x, &y0), &y1), &y2), &y3) in a.iter().zip(b0).zip(b1).zip(b2).zip(b3) {
            d0 += x * y0;
            d1 += x * y1;
            d2 += x * y2;
            d3 += x * y3;
            e0 += (x - y0) * (x - y0);
            e1 += (x - y1) * (x - y1);
            e2 += (x - y2) * (x - y2);
            e3 += (x - y3) * (x - y3);
        }
        out.extend([
            (d0, e0.sqrt()),
            (d1, e1.sqrt()),
            (d2, e2.sqrt()),
            (d3, e3.sqrt()),
        ]);
    }
    for &j in quads.remainder() {
        let (mut d, mut e) = (-0.0f64, -0.0f64);
        for (&x, &y) in a.iter().zip(rows.row64(j as usize)) {
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

/// What the screen did in one pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScreenStats {
    /// The Gram products' kernel.
    pub kernel: ScreenKernel,
    /// Rows whose first candidates could not be certified and were screened again against
    /// every row.
    pub rescreened: usize,
}

/// Ranks row `i`'s candidates in float64 into `nb` (the top `nb.len()` by cosine, ties to the
/// lower index), `r1` and `r2`, and returns the threshold a row outside `cand` must stay below
/// to change none of them: the k-th best product, and the product a row would need to come
/// within the second distance (`|x_i - x_j|^2 = |x_i|^2 + |x_j|^2 - 2 x_i . x_j`, with
/// `norm_min` the smallest row norm), each with room for float64's own rounding.
fn rank(
    rows: &UnitRows,
    i: usize,
    cand: &[u32],
    (norm_i, norm_min): (f64, f64),
    nb: &mut [u32],
    r1: &mut f64,
    r2: &mut f64,
) -> f64 {
    let mut scored = Vec::with_capacity(cand.len());
    dot_dist64(rows, i, cand, &mut scored);
    let mut by_sim: Vec<(f64, f64, u32)> = scored
        .iter()
        .zip(cand)
        .map(|(&(dot, dist), &j)| (dot, dist, j))
        .collect();
    by_sim.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.2.cmp(&b.2)));
    for (slot, c) in nb.iter_mut().zip(&by_sim) {
        *slot = c.2;
    }
    let kth = match nb.len() {
        0 => f64::INFINITY,
        k => by_sim.get(k - 1).map_or(f64::NEG_INFINITY, |c| c.0),
    };
    by_sim.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.2.cmp(&b.2)));
    *r1 = by_sim.first().map_or(f64::NAN, |c| c.1);
    *r2 = by_sim.get(1).map_or(f64::NAN, |c| c.1);
    // A computed distance is within ~1e-13 (relative) of the true one, a computed product within
    // ~1e-13 of the true one: 1e-12 of slack covers both.
    let second = match by_sim.get(1) {
        Some(c) => 0.5 * (norm_i * norm_i + norm_min * norm_min - c.1 * c.1 * (1.0 + 1e-12)),
        None => f64::NEG_INFINITY,
    };
    kth.min(second) - 1e-12
}

/// The candidates (`cand`, screened products `scores` with row `i`) whose true product may reach
/// the `need`-th largest lower bound among them (`score - delta_i - delta_j`), into `keep`. The
/// `need` candidates with those bounds are all at least it, so a row below it by more than
/// float64's rounding can be neither among the `need` most similar nor, with `need >= 2`, among
/// the two nearest: only the kept ones need float64 products.
fn may_rank(
    cand: &[u32],
    scores: &[f32],
    delta: &[f64],
    delta_i: f64,
    need: usize,
    keep: &mut Vec<u32>,
) {
    keep.clear();
    if need == 0 || need >= cand.len() {
        keep.extend_from_slice(cand);
        return;
    }
    let mut lower: Vec<f64> = scores
        .iter()
        .zip(cand)
        .map(|(&s, &j)| f64::from(s) - delta_i - delta[j as usize])
        .collect();
    let (_, &mut bar, _) = lower.select_nth_unstable_by(need - 1, |a, b| b.total_cmp(a));
    let bar = bar - 1e-11;
    keep.extend(
        scores
            .iter()
            .zip(cand)
            .filter(|&(&s, &j)| f64::from(s) + delta_i + delta[j as usize] >= bar)
            .map(|(_, &j)| j),
    );
}

/// The k most cosine-similar other rows of every row, and the two smallest Euclidean distances,
/// through the fastest screen this CPU has ([`ScreenKernel::best`]).
pub fn knn_pass(rows: &UnitRows, k: usize) -> KnnResult {
    knn_pass_with(rows, k, ScreenKernel::best()).0
}

/// [`knn_pass`] through a chosen screen, with what the screen did. Every kernel gives the same
/// result, bit for bit: that of [`knn_exact`].
///
/// Each row keeps its best `k + CANDIDATE_MARGIN` screened products, re-ranked in float64. The
/// rows left out have screened products at most the worst kept one, so true products at most
/// that plus the screen's bound; when that stays below the row's threshold (its k-th float64
/// product, and the product a row would need to come within its second distance, each less
/// float64's own rounding) none of them could have ranked and the row is certified. The other
/// rows are screened again against every row, keeping all that may reach their threshold, and
/// ranked again.
pub fn knn_pass_with(rows: &UnitRows, k: usize, kernel: ScreenKernel) -> (KnnResult, ScreenStats) {
    let n = rows.rows;
    let k_eff = k.min(n.saturating_sub(1));
    let cap = (k.max(2) + CANDIDATE_MARGIN).min(n.saturating_sub(1));
    let screen = Screen::new(rows, kernel);
    let top = candidates(&screen, n, cap);
    let norms = &screen.norms;
    let norm_min = norms.iter().copied().fold(f64::INFINITY, f64::min);
    // With every other row a candidate, nothing was left out.
    let all_kept = cap >= n.saturating_sub(1);
    let width = k_eff.max(1);
    let mut neighbours = vec![0u32; n * width];
    let mut r1 = vec![f64::NAN; n];
    let mut r2 = vec![f64::NAN; n];
    let open: Vec<Option<f64>> = neighbours
        .par_chunks_mut(width)
        .zip(r1.par_iter_mut().zip(r2.par_iter_mut()))
        .enumerate()
        .map_init(Vec::new, |keep, (i, (nb, (r1, r2)))| {
            let len = top.len[i] as usize;
            let (cand, scores) = (
                &top.index[i * cap..i * cap + len],
                &top.score[i * cap..i * cap + len],
            );
            let delta_i = screen.delta[i];
            may_rank(cand, scores, &screen.delta, delta_i, k_eff.max(2), keep);
            let nb = &mut nb[..k_eff];
            let threshold = rank(rows, i, keep, (norms[i], norm_min), nb, r1, r2);
            if all_kept {
                return None;
            }
            let worst = top.score[i * cap + cap - 1];
            let bound = f64::from(worst) + screen.delta[i] + screen.delta_max;
            (bound >= threshold).then_some(threshold)
        })
        .collect();
    let (ids, thresholds): (Vec<u32>, Vec<f64>) = open
        .iter()
        .enumerate()
        .filter_map(|(i, t)| t.map(|t| (i as u32, t)))
        .unzip();
    let found = screen.above(&ids, &thresholds);
    let redone: Vec<(Vec<u32>, f64, f64)> = ids
        .par_iter()
        .zip(&found)
        .map(|(&i, cand)| {
            let i = i as usize;
            let mut nb = vec![0u32; k_eff];
            let (mut a, mut b) = (f64::NAN, f64::NAN);
            rank(rows, i, cand, (norms[i], norm_min), &mut nb, &mut a, &mut b);
            (nb, a, b)
        })
        .collect();
    for (&i, (nb, a, b)) in ids.iter().zip(redone) {
        let i = i as usize;
        neighbours[i * k_eff..(i + 1) * k_eff].copy_from_slice(&nb);
        (r1[i], r2[i]) = (a, b);
    }
    if k_eff == 0 {
        neighbours.clear();
    }
    let stats = ScreenStats {
        kernel: screen.kernel(),
        rescreened: ids.len(),
    };
    let result = KnnResult {
        k: k_eff,
        neighbours,
        r1,
        r2,
    };
    (result, stats)
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
