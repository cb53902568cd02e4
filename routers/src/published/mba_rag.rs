//! MBA-RAG (Tang et al., COLING 2025): routing as a contextual multi-armed bandit over the
//! paradigms, rewarded for a correct answer and penalised for its cost.
//!
//! Here a disjoint LinUCB (Li et al., 2010) on the standardised features plus a bias: per
//! paradigm a ridge model `A_a = I + sum x x^T`, `b_a = sum r x`. Training is one online pass
//! over the training rows in a seeded random order: at each row the arm with the highest upper
//! confidence bound `theta_a . x + ALPHA sqrt(x^T A_a^-1 x)` is pulled, and only that arm's
//! reward `1[correct] - MU cost / T` is observed (T: the mean training cost), as a deployed
//! bandit would see it. Routing is greedy: the highest `theta_a . x`. `A_a^-1` is kept by
//! Sherman-Morrison updates. MBA-RAG's own encoder (DistilBERT) and epsilon-greedy exploration
//! are replaced by these features and UCB exploration.
//!
//! The pass multiplies every arm's `A_a^-1` (404 x 404 float64 with the real features) by each
//! training row, so its time is those products: each inverse is kept as its upper triangle
//! ([`Packed`], half the memory) and the loops run at the CPU's SIMD width through pulp, 1.7x
//! less CPU than ndarray's products on the baseline x86-64 build (issue #31: 5-fold CV of
//! 100,000 rows).

use bench_core::{BenchError, Result, Router, RoutingRow, RoutingSchema, RoutingSet};
use ndarray::Array1;

use crate::cost::CostModel;
use crate::entry::{Family, RouterContext, RouterEntry};
use crate::models::prep::Standardizer;
use crate::models::{seed_for, ABSENT};
use crate::rng::SplitMix64;
use crate::seed_papers::outcome_of_class;

/// Exploration weight of the upper confidence bound.
pub const ALPHA: f64 = 0.5;
/// Cost penalty of the reward, per mean training cost.
pub const MU: f64 = 0.1;

/// The registry entry.
pub fn entry() -> RouterEntry {
    RouterEntry {
        name: "mba-rag",
        about: "MBA-RAG-style contextual bandit: LinUCB, one online pass, reward correct − 0.1·cost/mean cost",
        family: Family::Published,
        needs_llm: false,
        sees_outcomes: false,
        lanes: &[],
        sweep: &[],
        make: |ctx: &RouterContext, _param| Ok(Box::new(MbaRag::new(seed_for(ctx.seed, "mba-rag")))),
    }
}

/// A symmetric matrix by its upper triangle, row by row: row `i` holds columns `i..n`.
#[derive(Debug, Clone)]
struct Packed {
    n: usize,
    data: Vec<f64>,
}

impl Packed {
    fn identity(n: usize) -> Self {
        let mut p = Packed {
            n,
            data: vec![0.0; n * (n + 1) / 2],
        };
        for i in 0..n {
            let o = p.offset(i);
            p.data[o] = 1.0;
        }
        p
    }

    /// Where row `i` (its diagonal entry) starts.
    fn offset(&self, i: usize) -> usize {
        i * self.n - i * i.saturating_sub(1) / 2
    }

    /// `self x`, reading each stored entry once: entry (i, j > i) feeds both `y_i` and `y_j`.
    fn mul(&self, x: &[f64], y: &mut [f64]) {
        arch().dispatch(Mul(self, x, y));
    }

    /// `self -= u u^T / denom`.
    fn rank_one_down(&mut self, u: &[f64], denom: f64) {
        struct Down<'a>(&'a mut Packed, &'a [f64], f64);
        impl pulp::WithSimd for Down<'_> {
            type Output = ();
            #[inline(always)]
            fn with_simd<S: pulp::Simd>(self, _: S) {
                let Down(p, u, denom) = self;
                let mut o = 0;
                for i in 0..p.n {
                    let len = p.n - i;
                    let f = u[i] / denom;
                    for (a, &uj) in p.data[o..o + len].iter_mut().zip(&u[i..]) {
                        *a -= f * uj;
                    }
                    o += len;
                }
            }
        }
        arch().dispatch(Down(self, u, denom));
    }
}

/// [`Packed::mul`] at the SIMD width pulp dispatches to.
struct Mul<'a>(&'a Packed, &'a [f64], &'a mut [f64]);

impl pulp::WithSimd for Mul<'_> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, simd: S) {
        let Mul(p, x, y) = self;
        // Lanes of partial sums: eight, held in 8 / width vectors (one AVX-512, two
        // AVX2, eight scalars), so each lane adds the same products in the same order
        // and the result does not depend on the CPU.
        let per = 8 / (std::mem::size_of::<S::f64s>() / 8);
        y.iter_mut().for_each(|v| *v = 0.0);
        let mut o = 0;
        for i in 0..p.n {
            let len = p.n - i;
            let row = &p.data[o..o + len];
            o += len;
            let xi = x[i];
            let xiv = simd.splat_f64s(xi);
            let (head, rest) = y[i..].split_at_mut(1);
            let mut acc = [simd.splat_f64s(0.0); 8];
            let (rc, xc) = (row[1..].chunks_exact(8), x[i + 1..].chunks_exact(8));
            let (rr, xr) = (rc.remainder(), xc.remainder());
            for ((r, xs), ys) in rc.zip(xc).zip(rest.chunks_exact_mut(8)) {
                let (rv, _) = S::as_simd_f64s(r);
                let (xv, _) = S::as_simd_f64s(xs);
                let (yv, _) = S::as_mut_simd_f64s(ys);
                for t in 0..per {
                    acc[t] = simd.add_f64s(acc[t], simd.mul_f64s(rv[t], xv[t]));
                    yv[t] = simd.add_f64s(yv[t], simd.mul_f64s(rv[t], xiv));
                }
            }
            let lanes: &[f64] = pulp::bytemuck::cast_slice(&acc[..per]);
            let tail = len - 1 - rr.len();
            let mut s = row[0] * xi;
            for ((&r, &xv), yv) in rr.iter().zip(xr).zip(&mut rest[tail..]) {
                s += r * xv;
                *yv += r * xi;
            }
            head[0] += s
                + ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3]))
                + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
        }
    }
}

/// The CPU's widest SIMD (AVX-512 or AVX2 where present), detected once. The loops use separate
/// multiplies and adds (no fused multiply-add), so their results are the same at every width,
/// scalar included.
fn arch() -> pulp::Arch {
    static ARCH: std::sync::OnceLock<pulp::Arch> = std::sync::OnceLock::new();
    *ARCH.get_or_init(pulp::Arch::new)
}

#[derive(Debug)]
struct Arm {
    a_inv: Packed,
    b: Array1<f64>,
    pulls: usize,
    /// `A^-1 b`, set when training ends.
    theta: Array1<f64>,
}

/// The bandit's state.
#[derive(Debug)]
pub struct MbaRag {
    seed: u64,
    fitted: Option<(Standardizer, Vec<Option<Arm>>)>,
}

impl MbaRag {
    /// An unfitted bandit seeded by `seed`.
    pub fn new(seed: u64) -> Self {
        MbaRag { seed, fitted: None }
    }
}

fn design(st: &Standardizer, row: &RoutingRow) -> Array1<f64> {
    let mut out = vec![0f32; st.n_out()];
    st.write(&row.features, &mut out);
    let mut x: Vec<f64> = out.into_iter().map(f64::from).collect();
    x.push(1.0);
    Array1::from(x)
}

impl Router for MbaRag {
    fn name(&self) -> &str {
        "mba-rag"
    }

    fn fit(&mut self, train: &RoutingSet) -> Result<()> {
        if train.rows.is_empty() {
            return Err(BenchError::Invalid(
                "router mba-rag: no training rows".into(),
            ));
        }
        let st = Standardizer::fit_all(&train.rows, &train.schema);
        let d = st.n_out() + 1;
        let k = train.schema.n_classes() - 1;
        let has: Vec<bool> = (0..k)
            .map(|c| train.rows.iter().any(|r| outcome_of_class(r, c).is_some()))
            .collect();
        let mut arms: Vec<Option<Arm>> = has
            .iter()
            .map(|&h| {
                h.then(|| Arm {
                    a_inv: Packed::identity(d),
                    b: Array1::zeros(d),
                    pulls: 0,
                    theta: Array1::zeros(d),
                })
            })
            .collect();
        let scale = CostModel::fit(train).scale;
        let mut order: Vec<usize> = (0..train.rows.len()).collect();
        SplitMix64::new(self.seed).shuffle(&mut order);
        // A^-1 x of the best arm so far and of the arm being tried.
        let (mut best_ax, mut ax) = (vec![0.0; d], vec![0.0; d]);
        for i in order {
            let row = &train.rows[i];
            let x = design(&st, row);
            let xs = x.as_slice().expect("contiguous");
            // Pull the arm of highest UCB among those with a tuple for this row.
            let mut best: Option<(f64, usize)> = None;
            for (c, arm) in arms.iter().enumerate() {
                let (Some(arm), Some(_)) = (arm, outcome_of_class(row, c)) else {
                    continue;
                };
                arm.a_inv.mul(xs, &mut ax);
                let theta_x: f64 = ax.iter().zip(&arm.b).map(|(a, b)| a * b).sum();
                let quad: f64 = ax.iter().zip(xs).map(|(a, b)| a * b).sum();
                let ucb = theta_x + ALPHA * quad.max(0.0).sqrt();
                if best.is_none_or(|(u, _)| ucb > u) {
                    best = Some((ucb, c));
                    std::mem::swap(&mut best_ax, &mut ax);
                }
            }
            let Some((_, c)) = best else { continue };
            let o = outcome_of_class(row, c).expect("chosen among present");
            let reward = f64::from(u8::from(o.correct)) - MU * o.tokens / scale;
            let arm = arms[c].as_mut().expect("present");
            // Sherman-Morrison: (A + x x^T)^-1 = A^-1 - (A^-1 x)(A^-1 x)^T / (1 + x^T A^-1 x).
            let denom = 1.0 + best_ax.iter().zip(xs).map(|(a, b)| a * b).sum::<f64>();
            arm.a_inv.rank_one_down(&best_ax, denom);
            arm.b.scaled_add(reward, &x);
            arm.pulls += 1;
        }
        for arm in arms.iter_mut().flatten() {
            let mut theta = vec![0.0; d];
            arm.a_inv
                .mul(arm.b.as_slice().expect("contiguous"), &mut theta);
            arm.theta = Array1::from(theta);
        }
        self.fitted = Some((st, arms));
        Ok(())
    }

    fn scores(&self, schema: &RoutingSchema, row: &RoutingRow) -> Result<Vec<f64>> {
        let (st, arms) = self
            .fitted
            .as_ref()
            .ok_or_else(|| BenchError::Invalid("router mba-rag: scores asked before fit".into()))?;
        if arms.len() + 1 != schema.n_classes() || row.features.len() != st.mean.len() {
            return Err(BenchError::Invalid(format!(
                "router mba-rag: fitted on {} classes and {} features, asked to score {} and {}",
                arms.len() + 1,
                st.mean.len(),
                schema.n_classes(),
                row.features.len()
            )));
        }
        let x = design(st, row);
        let mut s: Vec<f64> = arms
            .iter()
            .map(|a| match a {
                Some(a) => a.theta.dot(&x),
                None => ABSENT,
            })
            .collect();
        s.push(ABSENT - 1.0);
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::test_support::{ctx, synthetic_accuracy};

    /// The packed triangle against the same updates on a dense matrix, at sizes around the
    /// product's 8-wide chunks.
    #[test]
    fn packed_products_match_the_dense_matrix() {
        let mut rng = SplitMix64::new(5);
        for n in [1, 2, 8, 9, 16, 17, 30] {
            let mut packed = Packed::identity(n);
            let mut dense: Vec<Vec<f64>> = (0..n)
                .map(|i| (0..n).map(|j| f64::from(u8::from(i == j))).collect())
                .collect();
            for _ in 0..5 {
                let u: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
                let denom = 2.0 + rng.next_f64();
                packed.rank_one_down(&u, denom);
                for i in 0..n {
                    for j in 0..n {
                        dense[i][j] -= u[i] * u[j] / denom;
                    }
                }
                let x: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
                let mut y = vec![f64::NAN; n];
                packed.mul(&x, &mut y);
                for i in 0..n {
                    let want: f64 = (0..n).map(|j| dense[i][j] * x[j]).sum();
                    assert!(
                        (y[i] - want).abs() < 1e-12 * (1.0 + want.abs()),
                        "n {n} row {i}: {} against {want}",
                        y[i]
                    );
                }
            }
        }
    }

    /// The dispatched product (AVX-512 or AVX2 here) and the scalar one are equal bit for bit,
    /// so the bandit's choices do not depend on the CPU.
    #[test]
    fn the_product_is_the_same_at_every_simd_width() {
        let mut rng = SplitMix64::new(9);
        for n in [3, 8, 21, 404] {
            let mut packed = Packed::identity(n);
            for _ in 0..3 {
                let u: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
                packed.rank_one_down(&u, 1.5 + rng.next_f64());
            }
            let x: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
            let (mut wide, mut scalar) = (vec![0.0; n], vec![0.0; n]);
            packed.mul(&x, &mut wide);
            pulp::WithSimd::with_simd(Mul(&packed, &x, &mut scalar), pulp::Scalar::new());
            assert_eq!(wide, scalar, "n {n}, dispatched to {:?}", arch());
        }
    }

    #[test]
    fn learns_the_synthetic_rule() {
        let mut r = (entry().make)(&ctx(0), None).unwrap();
        let acc = synthetic_accuracy(r.as_mut(), 1500, 1200, 5);
        assert!(acc > 0.6, "mba-rag held-out accuracy {acc}");
    }
}
