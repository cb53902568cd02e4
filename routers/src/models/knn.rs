//! `knn`: k nearest neighbours (k = 15) by Euclidean distance on standardised features.
//!
//! A row's score for a class is the share of the inverse-distance weights `1 / (d + 1e-6)` of
//! its 15 nearest training rows that belong to the class (fewer neighbours when training has
//! fewer rows; ties in distance go to the lower training index). Squared distances are
//! `|a|^2 + |b|^2 - 2 a.b`, the products from gemm (metrics' `gram_block`, AVX-512 where the
//! build and CPU have it) over tiles of [`Q_BLOCK`] scored rows by [`T_BLOCK`] training rows,
//! the tiles of scored rows in parallel; each scored row buffers the training rows nearer than
//! its current floor and cuts the buffer to its best `k` by selection (see `Nearest`). At
//! 100,000 routing rows a 5-fold CV makes 20,000 x 80,000 products of 403 features per fold
//! (6.4 TFLOP in all; issue #31). A block is always [`Q_BLOCK`] rows, zero-padded, so a row
//! scored alone gets the same bits as in a batch; the price is that scoring one row alone costs
//! a whole block's products, 128 times one row's (not timed).

use bench_core::{Result, RoutingRow, RoutingSchema, RoutingSet};
use metrics::corpus::knn::gram_block;
use ndarray::{Array1, Array2, Axis};
use rayon::prelude::*;

use super::prep::Standardizer;
use super::{
    boxed, fitted, mask_absent, model_entry, single, Model, ModelRouter, PresentClasses, State,
};
use crate::entry::{Family, RouterEntry};

/// Neighbours that vote.
pub const K: usize = 15;
/// Scored rows per tile (one rayon task).
pub const Q_BLOCK: usize = 128;
/// Training rows per product tile: a 128 x 512 float32 tile (256 KiB) stays in L2 while it is
/// scanned. Measured at 30,000 rows (2026-12-03, loaded machine): 64 x 2,048 spent 20 % of the
/// time repacking each training tile for every block of scored rows; 128 x 512 and 256 x 256
/// about 12 %, 1.45x faster overall.
pub const T_BLOCK: usize = 512;
/// Distances tested together before any per-row branch.
const SCAN_CHUNK: usize = 16;

/// The registry entry of `knn`.
pub fn entry() -> RouterEntry {
    model_entry(
        "knn",
        "15 nearest neighbours, Euclidean on standardised features, inverse-distance-weighted votes",
        Family::Ml,
        |_, _| {
            // Exact search with index tie-breaks: nothing random.
boxed("knn", Neighbours::default())
        },
    )
}

/// The standardised training rows and their labels.
#[derive(Debug, Clone)]
pub struct Neighbours {
    /// Neighbours that vote (default [`K`]).
    pub k: usize,
    fitted: Option<Fitted>,
}

impl Default for Neighbours {
    fn default() -> Self {
        Neighbours { k: K, fitted: None }
    }
}

#[derive(Debug, Clone)]
struct Fitted {
    st: Standardizer,
    x: Array2<f32>,
    norms: Array1<f32>,
    labels: Vec<usize>,
}

/// The `k` nearest training rows of one scored row, ties to the lower index. Candidates nearer
/// than the floor are buffered; at `2k` the buffer is cut to its `k` best by one selection,
/// whose worst becomes the floor: amortised O(1) per candidate whatever `k` is (util-knn asks
/// for up to 100 among a few thousand rows, where a sorted insert cost more than the product).
struct Nearest {
    k: usize,
    cand: Vec<(f32, usize)>,
    floor: f32,
}

/// Nearer first, then the lower index.
fn nearer(a: &(f32, usize), b: &(f32, usize)) -> std::cmp::Ordering {
    a.0.total_cmp(&b.0).then(a.1.cmp(&b.1))
}

impl Nearest {
    fn new(k: usize) -> Self {
        Nearest {
            k,
            cand: Vec::with_capacity(2 * k),
            floor: f32::INFINITY,
        }
    }

    /// A row must be nearer than this to enter.
    #[inline]
    fn floor(&self) -> f32 {
        self.floor
    }

    /// Offers training row `j` at squared distance `d2`; rows come in increasing `j`, so one at
    /// the floor's distance ranks after the kept row that set it and is not taken.
    #[inline]
    fn offer(&mut self, d2: f32, j: usize) {
        if self.k == 0 || d2 >= self.floor {
            return;
        }
        self.cand.push((d2, j));
        if self.cand.len() >= 2 * self.k {
            self.cut();
        }
    }

    fn cut(&mut self) {
        let k = self.k;
        self.cand.select_nth_unstable_by(k - 1, nearer);
        self.cand.truncate(k);
        self.floor = self.cand[k - 1].0;
    }

    /// The kept rows, nearest first.
    fn finish(mut self) -> Vec<(f32, usize)> {
        if self.cand.len() > self.k {
            self.cut();
        }
        self.cand.sort_unstable_by(nearer);
        self.cand
    }
}

impl Model for Neighbours {
    fn fit(&mut self, train: &RoutingSet, _: &PresentClasses) -> Result<()> {
        let st = Standardizer::fit_all(&train.rows, &train.schema);
        let x = st.matrix(&train.rows);
        let norms = x.map_axis(Axis(1), |r| r.dot(&r));
        self.fitted = Some(Fitted {
            st,
            x,
            norms,
            labels: train.labels(),
        });
        Ok(())
    }

    fn scores(&self, schema: &RoutingSchema, rows: &[RoutingRow]) -> Result<Vec<Vec<f64>>> {
        Ok(self.scores_ks(schema, rows, &[self.k]).swap_remove(0))
    }
}

impl Neighbours {
    /// The scores of `rows` with each of `ks` neighbours voting (outer index: `ks`), from one
    /// search for the largest: the k nearest under (distance, index) are the first k of any
    /// longer list, summed in the same order, so entry `g` is bit for bit what [`Model::scores`]
    /// gives with `k = ks[g]`. util-knn's grid asks for three neighbourhood sizes at once.
    ///
    /// # Panics
    /// Before [`Model::fit`].
    pub fn scores_ks(
        &self,
        schema: &RoutingSchema,
        rows: &[RoutingRow],
        ks: &[usize],
    ) -> Vec<Vec<Vec<f64>>> {
        let f = fitted(&self.fitted);
        let q = f.st.matrix(rows);
        let n_train = f.x.nrows();
        let clamp = |k: usize| k.clamp(1, n_train.max(1)).min(n_train);
        let search = Search {
            q: &q,
            xs: f.x.as_slice().expect("standard layout"),
            norms: f.norms.as_slice().expect("contiguous"),
            k: ks.iter().map(|&k| clamp(k)).max().unwrap_or(0),
        };
        let tiles: Vec<Vec<Vec<Vec<f64>>>> = (0..rows.len())
            .step_by(Q_BLOCK)
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|start| {
                let end = (start + Q_BLOCK).min(rows.len());
                search
                    .tile(start, end)
                    .into_iter()
                    .map(|nearest| {
                        let list = nearest.finish();
                        ks.iter()
                            .map(|&kg| votes(&list[..clamp(kg).min(list.len())], f, schema))
                            .collect::<Vec<_>>()
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        let mut out = vec![Vec::with_capacity(rows.len()); ks.len()];
        for per_k in tiles.into_iter().flatten() {
            for (o, s) in out.iter_mut().zip(per_k) {
                o.push(s);
            }
        }
        out
    }
}

/// One search of the `k` nearest training rows for the standardised scored rows `q`.
struct Search<'a> {
    /// The standardised scored rows.
    q: &'a Array2<f32>,
    /// The standardised training rows, row-major.
    xs: &'a [f32],
    /// Each training row's squared norm.
    norms: &'a [f32],
    /// Neighbours kept per scored row (the largest asked for).
    k: usize,
}

impl Search<'_> {
    /// The nearest training rows of scored rows `start..end` (at most [`Q_BLOCK`]), their
    /// products from gemm over [`T_BLOCK`] training rows at a time.
    fn tile(&self, start: usize, end: usize) -> Vec<Nearest> {
        let dim = self.q.ncols();
        let n_train = self.norms.len();
        let qs = self.q.as_slice().expect("standard layout");
        // Always a full block (zero rows pad the last): gemm's kernel then depends on nothing
        // but the tile, so a row scores the same alone as in any batch.
        let mut qb = vec![0f32; Q_BLOCK * dim];
        qb[..(end - start) * dim].copy_from_slice(&qs[start * dim..end * dim]);
        let qn: Vec<f32> = self
            .q
            .outer_iter()
            .skip(start)
            .take(end - start)
            .map(|r| r.dot(&r))
            .collect();
        let mut near: Vec<Nearest> = (start..end).map(|_| Nearest::new(self.k)).collect();
        let mut prod = vec![0f32; Q_BLOCK * T_BLOCK];
        for t0 in (0..n_train).step_by(T_BLOCK) {
            let t1 = (t0 + T_BLOCK).min(n_train);
            let w = t1 - t0;
            if dim == 0 {
                prod.fill(0.0);
            } else {
                gram_block(&qb, &self.xs[t0 * dim..t1 * dim], dim, &mut prod);
            }
            for (qi, nearest) in near.iter_mut().enumerate() {
                let line = &prod[qi * w..(qi + 1) * w];
                scan(nearest, line, &self.norms[t0..t1], qn[qi], t0);
            }
        }
        near
    }
}

/// Offers `nearest` the training rows from `t0` on whose products with its scored row (squared
/// norm `qn`) are `line`, their squared norms `norms`: squared distance `|a|^2 + |b|^2 - 2 a.b`,
/// at least 0. No allocation: this is the inner loop of the search.
#[inline]
fn scan(nearest: &mut Nearest, line: &[f32], norms: &[f32], qn: f32, t0: usize) {
    let d2 = |p: f32, nj: f32| (qn + nj - 2.0 * p).max(0.0);
    let mut j = t0;
    for (lc, nc) in line.chunks(SCAN_CHUNK).zip(norms.chunks(SCAN_CHUNK)) {
        // A branch-free test of the whole chunk first: once the list is full, most chunks hold
        // nothing nearer than its worst.
        let floor = nearest.floor();
        let hit = lc
            .iter()
            .zip(nc)
            .fold(false, |acc, (&p, &nj)| acc | (d2(p, nj) < floor));
        if hit {
            for ((jj, &p), &nj) in (j..).zip(lc).zip(nc) {
                nearest.offer(d2(p, nj), jj);
            }
        }
        j += lc.len();
    }
}

/// The class scores of one scored row from its nearest training rows `list` (nearest first):
/// each class's share of the inverse-distance weights `1 / (d + 1e-6)`.
fn votes(list: &[(f32, usize)], f: &Fitted, schema: &RoutingSchema) -> Vec<f64> {
    let mut s = vec![0.0f64; schema.n_classes()];
    let mut total = 0.0;
    for &(d2, j) in list {
        let w = 1.0 / (f64::from(d2).sqrt() + 1e-6);
        s[f.labels[j]] += w;
        total += w;
    }
    s.iter_mut().for_each(|v| *v /= total);
    s
}

impl ModelRouter<Neighbours> {
    /// [`bench_core::Router::scores_batch`] at each of `ks` neighbours from one search (see
    /// [`Neighbours::scores_ks`]): entry `g` equals the scores of this router with
    /// `k = ks[g]`, bit for bit.
    pub(crate) fn scores_batch_ks(
        &self,
        schema: &RoutingSchema,
        rows: &[RoutingRow],
        ks: &[usize],
    ) -> Result<Vec<Vec<Vec<f64>>>> {
        let classes = self.check(schema, rows)?;
        let mut all = match self.state {
            State::Single(c) => vec![single(c, schema.n_classes(), rows.len()); ks.len()],
            _ => self.model.scores_ks(schema, rows, ks),
        };
        for out in &mut all {
            mask_absent(classes, out);
        }
        Ok(all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::test_support::{ctx, synthetic_accuracy};

    #[test]
    fn learns_the_synthetic_rule() {
        let mut r = (entry().make)(&ctx(0), None).unwrap();
        let acc = synthetic_accuracy(r.as_mut(), 1200, 900, 7);
        assert!(acc > 0.6, "knn held-out accuracy {acc}");
    }

    #[test]
    fn an_exact_copy_of_a_training_row_votes_for_its_label() {
        let set = crate::synthetic::synthetic_set(200, 2);
        let mut r = (entry().make)(&ctx(0), None).unwrap();
        r.fit(&set).unwrap();
        let s = r.scores_batch(&set.schema, &set.rows[..20]).unwrap();
        for (row, sc) in set.rows[..20].iter().zip(&s) {
            // Weight 1e6 for the copy against at most 14 weights near 1.
            assert!(sc[row.label] > 0.9, "{:?}", sc);
            assert!((sc.iter().filter(|v| **v > 0.0).sum::<f64>() - 1.0).abs() < 1e-9);
        }
    }

    /// The scores from a plain float64 search over every training row: the tiles, the
    /// parallel blocks and each row's running list must not change who votes.
    #[test]
    fn tiled_search_matches_a_plain_full_sort() {
        // More training rows than one tile and more scored rows than one block.
        let set = crate::synthetic::synthetic_set(T_BLOCK + 700, 11);
        let (train, test) = (
            set.subset(&(0..T_BLOCK + 500).collect::<Vec<_>>()),
            &set.rows[T_BLOCK + 500..],
        );
        let mut m = Neighbours::default();
        m.fit(&train, &PresentClasses::of(&train)).unwrap();
        let got = m.scores(&set.schema, test).unwrap();
        let f = fitted(&m.fitted);
        let q = f.st.matrix(test);
        for (qi, g) in got.iter().enumerate() {
            let mut d: Vec<(f64, usize)> =
                f.x.outer_iter()
                    .enumerate()
                    .map(|(j, x)| {
                        let d2: f64 = x
                            .iter()
                            .zip(q.row(qi))
                            .map(|(&a, &b)| (f64::from(a) - f64::from(b)).powi(2))
                            .sum();
                        (d2, j)
                    })
                    .collect();
            d.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let mut want = vec![0.0; set.schema.n_classes()];
            for &(d2, j) in &d[..K] {
                want[f.labels[j]] += 1.0 / (d2.sqrt() + 1e-6);
            }
            let total: f64 = want.iter().sum();
            for (w, g) in want.iter().zip(g) {
                assert!(
                    (w / total - g).abs() < 1e-4,
                    "row {qi}: {g:?} against {want:?}"
                );
            }
        }
    }

    #[test]
    fn the_running_list_keeps_the_nearest_and_the_lower_index_on_ties() {
        let mut n = Nearest::new(3);
        let d = [5.0, 1.0, 3.0, 1.0, 3.0, 0.5, 3.0, 1.0, 4.0, 0.5, 2.0];
        for (j, d2) in d.into_iter().enumerate() {
            n.offer(d2, j);
        }
        // Past 2k = 6 offers the buffer was cut once (floor 1.0): the later 1.0 (j 7) ranks
        // after j 1 and j 3 and stays out.
        assert_eq!(n.finish(), vec![(0.5, 5), (0.5, 9), (1.0, 1)]);
        let mut n = Nearest::new(4);
        for (j, d2) in d.into_iter().enumerate() {
            n.offer(d2, j);
        }
        assert_eq!(n.finish(), vec![(0.5, 5), (0.5, 9), (1.0, 1), (1.0, 3)]);
    }
}
