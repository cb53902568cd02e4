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
///
/// Keeps a buffer of up to `2k` candidates; when it fills, `select_nth_unstable_by` cuts it back
/// to the best `k` and the k-th score becomes a threshold that rejects most later scores with one
/// comparison. That is O(n) overall with O(k) memory, without a heap's per-insert log k.
pub(super) fn top_k(scores: &[f32], k: usize) -> Vec<Hit> {
    let k = k.min(scores.len());
    if k == 0 {
        return Vec::new();
    }
    let cap = 2 * k;
    let mut buf: Vec<Hit> = Vec::with_capacity(cap);
    // Until the first cut every score is admitted; after it only those strictly above the
    // threshold, since an equal score here has a higher row than the kept k-th hit.
    let mut threshold: Option<f32> = None;
    for (row, &score) in scores.iter().enumerate() {
        let score = if score.is_nan() {
            f32::NEG_INFINITY
        } else {
            score
        };
        if let Some(t) = threshold {
            if score <= t {
                continue;
            }
        }
        buf.push(Hit {
            row: row as u32,
            score,
        });
        if buf.len() == cap {
            buf.select_nth_unstable_by(k - 1, better);
            buf.truncate(k);
            threshold = Some(buf[k - 1].score);
        }
    }
    if buf.len() > k {
        buf.select_nth_unstable_by(k - 1, better);
        buf.truncate(k);
    }
    buf.sort_unstable_by(better);
    buf
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(hits: &[Hit]) -> Vec<u32> {
        hits.iter().map(|h| h.row).collect()
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
            let scores: Vec<f32> = (0..n)
                .map(|_| {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    ((x >> 59) as f32) / 8.0 - 1.0
                })
                .collect();
            for k in [1usize, 2, 5, 17, 100, 1000, 2000] {
                assert_eq!(top_k(&scores, k), reference(&scores, k), "n={n} k={k}");
            }
        }
    }
}
