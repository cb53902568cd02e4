//! Sparse storage of the factor: rows, the core's blocked triangle and the sweep's balanced pieces.

use super::*;

/// A sparse matrix by rows: columns (u32) and values (`()` for a pattern).
#[derive(Debug, Clone)]
pub(super) struct SparseRows<T> {
    pub(super) offsets: Vec<u32>,
    pub(super) cols: Vec<u32>,
    pub(super) vals: Vec<T>,
}

impl<T> Default for SparseRows<T> {
    fn default() -> Self {
        SparseRows {
            offsets: vec![0],
            cols: Vec::new(),
            vals: Vec::new(),
        }
    }
}

impl<T> SparseRows<T> {
    pub(super) fn row(&self, i: usize) -> std::ops::Range<usize> {
        self.offsets[i] as usize..self.offsets[i + 1] as usize
    }

    pub(super) fn push_row(&mut self, entries: impl IntoIterator<Item = (u32, T)>) {
        for (c, v) in entries {
            self.cols.push(c);
            self.vals.push(v);
        }
        self.offsets.push(self.cols.len() as u32);
    }
}

/// The strict lower triangle `L` of the core for the CG's two sweeps, in blocks of [`BLOCK`]
/// entries, rows in increasing order; each row's entries padded to whole blocks with zero
/// weights on the row's own position (finite whenever the sweep's input is), rows without
/// entries left out. No loop runs a row-dependent number of times, so a sweep pays no branch
/// misprediction at a row's end, and the upper sweep reads `L` by columns (a scatter), so both
/// sweeps stream the same memory: on the MuSiQue-sized core the pair of sweeps ran ~1.25x
/// faster than gathers over CSR rows of `L` and `L^T` with the caches warm and ~1.6x with them
/// cold, as they are after a query's certificate (a microbenchmark of the pair; a lone CSR
/// sweep repeated looks faster than it runs inside CG, the predictor learning the repeated row
/// lengths).
/// Columns are `u16` where the core allows ([`Triangle`]): a sweep streams the whole
/// triangle, so its bytes count.
#[derive(Debug, Clone, Default)]
pub(super) struct BlockedTriangle<C> {
    pub(super) cols: Vec<[C; BLOCK]>,
    pub(super) vals: Vec<[f64; BLOCK]>,
    /// Each block's row, [`FIRST`] set on the row's first block.
    pub(super) rows: Vec<u32>,
    /// Entries before padding.
    pub(super) entries: usize,
}

/// Entries per block of [`BlockedTriangle`] (8 measured best for the pair of sweeps; 6 a little slower,
/// 16 slower).
pub(super) const BLOCK: usize = 8;
/// Marks a row's first block in [`BlockedTriangle::rows`].
pub(super) const FIRST: u32 = 1 << 31;

impl<C: Copy + Into<u32> + TryFrom<u32>> BlockedTriangle<C> {
    /// Rows `0, 1, ...`, each with its entries (columns below the row, ascending).
    pub(super) fn from_rows(rows: impl Iterator<Item = Vec<(u32, f64)>>) -> Self {
        let mut blocks = BlockedTriangle {
            cols: Vec::new(),
            vals: Vec::new(),
            rows: Vec::new(),
            entries: 0,
        };
        for (i, row) in rows.enumerate() {
            blocks.push_row(i, &row);
        }
        blocks
    }

    /// Appends row `row` (after every earlier row) with its entries, columns below `row`.
    pub(super) fn push_row(&mut self, row: usize, entries: &[(u32, f64)]) {
        assert!(row < FIRST as usize, "core of 2^31 nodes or more");
        let narrow = |c: u32| C::try_from(c).ok().expect("a column past the index type");
        self.entries += entries.len();
        for (k, chunk) in entries.chunks(BLOCK).enumerate() {
            let (mut cols, mut vals) = ([narrow(row as u32); BLOCK], [0.0; BLOCK]);
            for (j, &(c, w)) in chunk.iter().enumerate() {
                (cols[j], vals[j]) = (narrow(c), w);
            }
            self.cols.push(cols);
            self.vals.push(vals);
            self.rows.push(row as u32 | if k == 0 { FIRST } else { 0 });
        }
    }

    /// `v <- (I + L)^-1 v` for `B` vectors at once, interleaved (`v[i][lane]`): rows first to
    /// last, each gathering its columns, one pass over the triangle for all lanes. Each lane
    /// gets the same operations in the same order whatever `B` is, so its result is bit for bit
    /// the one-lane sweep's.
    pub(super) fn solve_lower_lanes<const B: usize>(&self, v: &mut [[f64; B]]) {
        let Some(last) = v.len().checked_sub(1) else {
            return;
        };
        let mut s = [0.0; B];
        for ((cols, vals), &r) in self.cols.iter().zip(&self.vals).zip(&self.rows) {
            let row = clamp(r & !FIRST, last);
            let mut p = [[0.0; B]; BLOCK];
            for ((p, &c), &w) in p.iter_mut().zip(cols).zip(vals) {
                let x = &v[clamp(c.into(), last)];
                for l in 0..B {
                    p[l] = w * x[l];
                }
            }
            // Pairwise, in a fixed order.
            let mut m = BLOCK;
            while m > 1 {
                let h = m / 2;
                for j in 0..h {
                    let far = p[m - 1 - j];
                    for l in 0..B {
                        p[j][l] += far[l];
                    }
                }
                m -= h;
            }
            let start = if r & FIRST != 0 { v[row] } else { s };
            for l in 0..B {
                s[l] = start[l] - p[0][l];
            }
            v[row] = s;
        }
    }

    /// `v <- (I + L^T)^-1 v` for `B` interleaved vectors: rows last to first, each final once
    /// reached and scattered into its columns; bit for bit per lane whatever `B` is.
    pub(super) fn solve_upper_lanes<const B: usize>(&self, v: &mut [[f64; B]]) {
        let Some(last) = v.len().checked_sub(1) else {
            return;
        };
        for ((cols, vals), &r) in self.cols.iter().zip(&self.vals).zip(&self.rows).rev() {
            let x = v[clamp(r & !FIRST, last)];
            for (&c, &w) in cols.iter().zip(vals) {
                let t = &mut v[clamp(c.into(), last)];
                for l in 0..B {
                    t[l] -= w * x[l];
                }
            }
        }
    }
}

/// The core's strict lower triangle, with the narrowest column type its size allows.
#[derive(Debug, Clone)]
pub(super) enum Triangle {
    Narrow(BlockedTriangle<u16>),
    Wide(BlockedTriangle<u32>),
}

impl Triangle {
    /// Rows `0..n` of `n`, each with its entries (columns below the row, ascending).
    pub(super) fn new(n: usize, rows: impl Iterator<Item = Vec<(u32, f64)>>) -> Triangle {
        if n <= usize::from(u16::MAX) + 1 {
            Triangle::Narrow(BlockedTriangle::from_rows(rows))
        } else {
            Triangle::Wide(BlockedTriangle::from_rows(rows))
        }
    }

    pub(super) fn entries(&self) -> usize {
        match self {
            Triangle::Narrow(b) => b.entries,
            Triangle::Wide(b) => b.entries,
        }
    }

    /// One vector's lower sweep (the one-lane case of [`Triangle::solve_lower_lanes`]).
    #[cfg(test)]
    pub(super) fn solve_lower(&self, v: &mut [f64]) {
        self.solve_lower_lanes(v.as_chunks_mut::<1>().0);
    }

    /// One vector's upper sweep.
    #[cfg(test)]
    pub(super) fn solve_upper(&self, v: &mut [f64]) {
        self.solve_upper_lanes(v.as_chunks_mut::<1>().0);
    }

    pub(super) fn solve_lower_lanes<const B: usize>(&self, v: &mut [[f64; B]]) {
        match self {
            Triangle::Narrow(b) => b.solve_lower_lanes(v),
            Triangle::Wide(b) => b.solve_lower_lanes(v),
        }
    }

    pub(super) fn solve_upper_lanes<const B: usize>(&self, v: &mut [[f64; B]]) {
        match self {
            Triangle::Narrow(b) => b.solve_upper_lanes(v),
            Triangle::Wide(b) => b.solve_upper_lanes(v),
        }
    }
}

/// Index `c`, known to be at most `last`, in a form whose bound the compiler sees: the bounds
/// check of a gather `v[c]` then goes away (a `min` costs less than a compare and branch per
/// entry; ~1.25x on the core's triangular sweeps).
#[inline(always)]
pub(super) fn clamp(c: u32, last: usize) -> usize {
    debug_assert!(c as usize <= last, "column {c} past {last}");
    (c as usize).min(last)
}

/// Bounds `lo = b0 < b1 < ... = hi` of [`SWEEP_PIECES`] pieces of about equal total `weight`
/// (fewer when the range is short; just `[lo]` when it is empty).
pub(super) fn balanced_pieces(lo: usize, hi: usize, weight: impl Fn(usize) -> usize) -> Vec<u32> {
    let total: usize = (lo..hi).map(&weight).sum();
    let mut bounds = vec![lo as u32];
    let mut sum = 0;
    for p in lo..hi {
        sum += weight(p);
        // Piece `k` ends once the running weight reaches `k / SWEEP_PIECES` of the total.
        if sum * SWEEP_PIECES >= total * bounds.len() || p + 1 == hi {
            bounds.push(p as u32 + 1);
        }
    }
    bounds
}
