//! `svm`: one-vs-rest linear support vector machines on standardised features.
//!
//! Each class present in training gets a binary L2-regularised hinge-loss SVM,
//! `min 1/2 ||w||^2 + C sum_i max(0, 1 - y_i (w x_i + b))` with C = 1 and the bias as a constant
//! feature 1 (LIBLINEAR's convention), solved by dual coordinate descent (Hsieh et al. 2008):
//! seeded random order each epoch, at most 30 epochs, stop when the projected-gradient spread
//! falls below 0.1. A row's score for a class is that machine's decision value `w x + b`.
//!
//! Kernel choice: linear, not the paper's RBF. An RBF machine needs the n x n kernel (6,400 rows:
//! 41 M entries per fold, ~16 GFLOP to compute) or smartcore's LASVM, which keeps support
//! vectors in a hash-map cache, copies every support vector on every prediction and borrows
//! its training matrix for its lifetime: measured with `examples/perf_models.rs --smartcore`,
//! one binary RBF problem on 6,400 x 403 rows took 104 s to fit and 14 s to score its own
//! training rows, against a 30 s goal for the whole zoo's cross-validation. With a 384-dim text
//! embedding among the features a linear machine is the usual choice, and it fits in a few
//! passes over the data.

use bench_core::{Result, RoutingRow, RoutingSchema, RoutingSet};
use ndarray::Array2;

use super::prep::Standardizer;
use super::{boxed, fitted, model_entry, seed_for, Model, PresentClasses};
use crate::entry::{Family, RouterEntry};
use crate::rng::SplitMix64;

/// Penalty on the hinge loss (LIBLINEAR's C).
pub const C: f32 = 1.0;
/// Most passes of dual coordinate descent per machine.
pub const MAX_EPOCHS: usize = 30;
/// Stop when max - min projected gradient is below this (LIBLINEAR's default for the dual).
pub const TOLERANCE: f32 = 0.1;

/// The registry entry of `svm`.
pub fn entry() -> RouterEntry {
    model_entry(
        "svm",
        "one-vs-rest linear SVMs (hinge loss, C 1, dual coordinate descent), decision values as scores",
        Family::Ml,
        |ctx, _| {
            boxed("svm", LinearSvm::new(seed_for(ctx.seed, "svm")))
        },
    )
}

/// A class index and its weight vector (bias last).
type Machine = (usize, Vec<f32>);

/// One weight vector (bias last) per present class.
#[derive(Debug, Clone)]
pub struct LinearSvm {
    seed: u64,
    fitted: Option<(Standardizer, Vec<Machine>)>,
}

impl LinearSvm {
    /// Unfitted machines; `seed` orders the coordinate passes.
    pub fn new(seed: u64) -> Self {
        LinearSvm { seed, fitted: None }
    }
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Dual coordinate descent for one binary problem; returns `w` with the bias last.
fn train_binary(x: &Array2<f32>, y: &[f32], rng: &mut SplitMix64) -> Vec<f32> {
    let (n, d) = x.dim();
    let mut w = vec![0.0f32; d + 1];
    let mut alpha = vec![0.0f32; n];
    let q: Vec<f32> = x
        .rows()
        .into_iter()
        .map(|r| dot(r.as_slice().expect("row"), r.as_slice().expect("row")) + 1.0)
        .collect();
    let mut order: Vec<usize> = (0..n).collect();
    for _ in 0..MAX_EPOCHS {
        rng.shuffle(&mut order);
        let (mut pg_max, mut pg_min) = (f32::NEG_INFINITY, f32::INFINITY);
        for &i in &order {
            let xi = x.row(i);
            let xi = xi.as_slice().expect("row");
            let g = y[i] * (dot(&w[..d], xi) + w[d]) - 1.0;
            let pg = if alpha[i] == 0.0 {
                g.min(0.0)
            } else if alpha[i] >= C {
                g.max(0.0)
            } else {
                g
            };
            pg_max = pg_max.max(pg);
            pg_min = pg_min.min(pg);
            if pg != 0.0 {
                let old = alpha[i];
                alpha[i] = (old - g / q[i]).clamp(0.0, C);
                let step = (alpha[i] - old) * y[i];
                if step != 0.0 {
                    w[..d]
                        .iter_mut()
                        .zip(xi)
                        .for_each(|(wj, xj)| *wj += step * xj);
                    w[d] += step;
                }
            }
        }
        if pg_max - pg_min < TOLERANCE {
            break;
        }
    }
    w
}

impl Model for LinearSvm {
    fn fit(&mut self, train: &RoutingSet, present: &PresentClasses) -> Result<()> {
        let st = Standardizer::fit_all(&train.rows, &train.schema);
        let x = st.matrix(&train.rows);
        let mut rng = SplitMix64::new(self.seed);
        let machines = present
            .indices()
            .into_iter()
            .map(|c| {
                let y: Vec<f32> = train
                    .rows
                    .iter()
                    .map(|r| if r.label == c { 1.0 } else { -1.0 })
                    .collect();
                (c, train_binary(&x, &y, &mut rng))
            })
            .collect();
        self.fitted = Some((st, machines));
        Ok(())
    }

    fn scores(&self, schema: &RoutingSchema, rows: &[RoutingRow]) -> Result<Vec<Vec<f64>>> {
        let (st, machines) = fitted(&self.fitted);
        let x = st.matrix(rows);
        let d = x.ncols();
        Ok(x.rows()
            .into_iter()
            .map(|r| {
                let r = r.as_slice().expect("row");
                let mut s = vec![0.0; schema.n_classes()];
                for (c, w) in machines {
                    s[*c] = f64::from(dot(&w[..d], r) + w[d]);
                }
                s
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::test_support::{ctx, synthetic_accuracy};

    #[test]
    fn learns_the_synthetic_rule() {
        let mut r = (entry().make)(&ctx(0), None).unwrap();
        let acc = synthetic_accuracy(r.as_mut(), 1200, 900, 6);
        assert!(acc > 0.85, "svm held-out accuracy {acc}");
    }

    #[test]
    fn separable_binary_problem_gets_the_max_margin_direction() {
        // Points at x = -2, -1 (class -1) and 1, 2 (class +1): the hard-margin solution is
        // w = 1, b = 0, which C = 1 reaches (all dual variables stay below C).
        let x = Array2::from_shape_vec((4, 1), vec![-2.0, -1.0, 1.0, 2.0]).unwrap();
        let y = vec![-1.0, -1.0, 1.0, 1.0];
        let w = train_binary(&x, &y, &mut SplitMix64::new(1));
        assert!((w[0] - 1.0).abs() < 0.1 && w[1].abs() < 0.1, "{w:?}");
    }
}
