//! `knn`: k nearest neighbours (k = 15) by Euclidean distance on standardised features.
//!
//! A row's score for a class is the share of the inverse-distance weights `1 / (d + 1e-6)` of
//! its 15 nearest training rows that belong to the class (fewer neighbours when training has
//! fewer rows; ties in distance go to the lower training index). Squared distances come from
//! one matrix product per block of scored rows, `|a|^2 + |b|^2 - 2 a.b`.

use bench_core::{Result, RoutingRow, RoutingSchema, RoutingSet};
use ndarray::{s, Array1, Array2, Axis};

use super::prep::Standardizer;
use super::{boxed, fitted, model_entry, Model, PresentClasses};
use crate::entry::{Family, RouterEntry};

/// Neighbours that vote.
pub const K: usize = 15;
/// Rows scored per matrix product (bounds the distance block to 256 x n_train floats).
const BLOCK: usize = 256;

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
        let f = fitted(&self.fitted);
        let q = f.st.matrix(rows);
        let n_train = f.x.nrows();
        let k = self.k.clamp(1, n_train.max(1)).min(n_train);
        let mut out = Vec::with_capacity(rows.len());
        let mut cand: Vec<(f32, usize)> = Vec::with_capacity(n_train);
        for start in (0..rows.len()).step_by(BLOCK) {
            let qb = q.slice(s![start..(start + BLOCK).min(rows.len()), ..]);
            let prod = qb.dot(&f.x.t());
            for (qi, prow) in prod.rows().into_iter().enumerate() {
                let qn = qb.row(qi).dot(&qb.row(qi));
                cand.clear();
                cand.extend(
                    prow.iter()
                        .zip(&f.norms)
                        .enumerate()
                        .map(|(j, (&p, &nj))| ((qn + nj - 2.0 * p).max(0.0), j)),
                );
                let by =
                    |a: &(f32, usize), b: &(f32, usize)| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1));
                if k < cand.len() {
                    cand.select_nth_unstable_by(k - 1, by);
                }
                let mut s = vec![0.0f64; schema.n_classes()];
                let mut total = 0.0;
                for &(d2, j) in &cand[..k] {
                    let w = 1.0 / (f64::from(d2).sqrt() + 1e-6);
                    s[f.labels[j]] += w;
                    total += w;
                }
                s.iter_mut().for_each(|v| *v /= total);
                out.push(s);
            }
        }
        Ok(out)
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
}
