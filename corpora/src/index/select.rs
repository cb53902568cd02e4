//! Partial top-K selection over one row of scores, in the index's deterministic order.

use std::cmp::Ordering;

/// One search result: a row of the index and its inner product with the query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// Row of the index (the position in the vectors it was built from).
    pub row: u32,
    /// Inner product with the query (the cosine for unit vectors).
    pub score: f32,
}

/// Best first: higher score, then lower row. NaN never reaches here (see `top_k`), so this is a
/// total order and the final sort is deterministic.
pub(super) fn better(a: &Hit, b: &Hit) -> Ordering {
    b.score
        .partial_cmp(&a.score)
        .unwrap_or(Ordering::Equal)
        .then(a.row.cmp(&b.row))
}

/// The `min(k, scores.len())` best `(row, score)` pairs, best first. NaN scores count as
/// negative infinity.
pub(super) fn top_k(scores: &[f32], k: usize) -> Vec<Hit> {
    let mut top = TopK::new(k.min(scores.len()));
    top.extend(scores, 0);
    top.finish()
}

/// A running top-`k` over scores that arrive in ascending row order, possibly in several
/// slices (the tiled batch search feeds one index tile at a time).
///
/// Keeps a buffer of up to `2k` candidates; when it fills, `select_nth_unstable_by` cuts it back
/// to the best `k` and the k-th score becomes a threshold that rejects most later scores with one
/// comparison. That is O(n) overall with O(k) memory, without a heap's per-insert log k. The
/// result does not depend on how the rows are sliced.
#[derive(Debug, Clone)]
pub(super) struct TopK {
    k: usize,
    buf: Vec<Hit>,
    /// Until the first cut every score is admitted; after it only those strictly above the
    /// threshold, since an equal score arriving later has a higher row than the kept k-th hit.
    threshold: Option<f32>,
}

impl TopK {
    pub(super) fn new(k: usize) -> Self {
        TopK {
            k,
            buf: Vec::with_capacity(2 * k),
            threshold: None,
        }
    }

    /// Offers `scores[i]` as row `first_row + i`; rows must keep ascending across calls.
    pub(super) fn extend(&mut self, scores: &[f32], first_row: u32) {
        let k = self.k;
        if k == 0 {
            return;
        }
        let cap = 2 * k;
        for (i, &score) in scores.iter().enumerate() {
            let score = if score.is_nan() {
                f32::NEG_INFINITY
            } else {
                score
            };
            if let Some(t) = self.threshold {
                if score <= t {
                    continue;
                }
            }
            self.buf.push(Hit {
                row: first_row + i as u32,
                score,
            });
            if self.buf.len() == cap {
                self.buf.select_nth_unstable_by(k - 1, better);
                self.buf.truncate(k);
                self.threshold = Some(self.buf[k - 1].score);
            }
        }
    }

    /// The best `k` hits offered, best first.
    pub(super) fn finish(mut self) -> Vec<Hit> {
        let k = self.k;
        if self.buf.len() > k {
            self.buf.select_nth_unstable_by(k - 1, better);
            self.buf.truncate(k);
        }
        self.buf.sort_unstable_by(better);
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(hits: &[Hit]) -> Vec<u32> {
        hits.iter().map(|h| h.row).collect()
    }

    /// A seeded score on a coarse grid (`x >> shift` over `steps`, less 1), so ties are common.
    fn coarse(x: &mut u64, shift: u32, steps: f32) -> f32 {
        *x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((*x >> shift) as f32) / steps - 1.0
    }

    /// Full sort of every score: the reference the buffered selection must reproduce.
    fn reference(scores: &[f32], k: usize) -> Vec<Hit> {
        let mut all: Vec<Hit> = scores
            .iter()
            .enumerate()
            .map(|(row, &s)| Hit {
                row: row as u32,
                score: if s.is_nan() { f32::NEG_INFINITY } else { s },
            })
            .collect();
        all.sort_by(better);
        all.truncate(k);
        all
    }

    #[test]
    fn empty_and_zero_k() {
        assert!(top_k(&[], 5).is_empty());
        assert!(top_k(&[1.0, 2.0], 0).is_empty());
    }

    #[test]
    fn k_larger_than_n_returns_all_sorted() {
        let hits = top_k(&[0.1, 0.9, -0.5, 0.3], 10);
        assert_eq!(rows(&hits), vec![1, 3, 0, 2]);
        assert_eq!(hits[0].score, 0.9);
    }

    #[test]
    fn ties_break_by_lower_row_across_cuts() {
        // k = 2 gives a buffer of 4, so the ties straddle several cuts.
        let scores = [0.5, 0.7, 0.5, 0.7, 0.5, 0.7, 0.9, 0.7];
        assert_eq!(rows(&top_k(&scores, 2)), vec![6, 1]);
        assert_eq!(rows(&top_k(&scores, 4)), vec![6, 1, 3, 5]);
        assert_eq!(rows(&top_k(&[0.0, -0.0, 0.0], 2)), vec![0, 1]);
    }

    #[test]
    fn nan_ranks_last() {
        let hits = top_k(&[f32::NAN, -1.0, f32::NAN, 2.0], 4);
        assert_eq!(rows(&hits), vec![3, 1, 0, 2]);
        assert_eq!(hits[2].score, f32::NEG_INFINITY);
    }

    #[test]
    fn matches_full_sort_on_many_patterns() {
        // Coarse values force many ties; several k relative to n exercise every cut path.
        let mut x: u64 = 7;
        for n in [1usize, 2, 3, 10, 57, 300, 1000] {
            let scores: Vec<f32> = (0..n).map(|_| coarse(&mut x, 59, 8.0)).collect();
            for k in [1usize, 2, 5, 17, 100, 1000, 2000] {
                assert_eq!(top_k(&scores, k), reference(&scores, k), "n={n} k={k}");
            }
        }
    }

    #[test]
    fn slicing_the_rows_changes_nothing() {
        let mut x: u64 = 11;
        let scores: Vec<f32> = (0..500).map(|_| coarse(&mut x, 60, 4.0)).collect();
        for k in [1usize, 3, 10, 64, 500] {
            for width in [1usize, 7, 64, 499] {
                let mut top = TopK::new(k);
                for (t, tile) in scores.chunks(width).enumerate() {
                    top.extend(tile, (t * width) as u32);
                }
                assert_eq!(top.finish(), reference(&scores, k), "k={k} width={width}");
            }
        }
    }
}
