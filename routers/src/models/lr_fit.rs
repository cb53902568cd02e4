//! `lr`'s fit: linfa's multinomial logistic regression, the same arithmetic, without repacking the training matrix on every product.
//!
//! linfa-logistic 0.8 minimises its loss with argmin's L-BFGS and computes every cost and every
//! gradient with ndarray products `X . W` and `X^T . G`, which ndarray hands to matrixmultiply's
//! dgemm. With two to seven columns those calls copy ("pack") the whole training matrix before
//! multiplying: a profile of `util-lr` (5-fold CV, 8,000 rows x 403 features) spent 47 % of its
//! time in `pack_avx2` and 30 % in the kernel. This module runs the same L-BFGS on the same loss
//! (memory 10, More-Thuente, linfa's parameter arithmetic operation for operation) with the two
//! products from [`super::products::TrainingMatrix`], which keeps `X` once and multiplies in
//! matrixmultiply's order, so each product is ndarray's bit for bit; the cost and the gradient
//! at the same point share one `X . W` (argmin asks for both). So every L-BFGS iterate and the
//! fitted model are linfa's: `fit_matches_linfa_bit_for_bit` checks it against linfa itself.
//! Where that cannot be done (no AVX2 and FMA, off x86-64) the products are ndarray's own.

use std::sync::Mutex;

use argmin::core::{CostFunction, Executor, Gradient};
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;
use argmin_math::{
    ArgminAdd, ArgminDot, ArgminL1Norm, ArgminL2Norm, ArgminMinMax, ArgminMul, ArgminSignum,
    ArgminSub, ArgminZeroLike,
};
use ndarray::{s, Array1, Array2, ArrayView2, Axis, Zip};

use super::products::TrainingMatrix;

/// A multinomial logistic regression fitted as linfa's `MultiLogisticRegression` fits it:
/// weights `W` (features x classes), intercepts `b` and the sorted class labels.
#[derive(Debug, Clone)]
pub(crate) struct MultiLogistic {
    pub(crate) params: Array2<f64>,
    pub(crate) intercept: Array1<f64>,
    pub(crate) classes: Vec<usize>,
}

impl MultiLogistic {
    /// Class probabilities, columns in [`MultiLogistic::classes`] order; linfa's
    /// `predict_probabilities` step for step.
    pub(crate) fn predict_probabilities(&self, x: &Array2<f64>) -> Array2<f64> {
        let mut probs = x.dot(&self.params) + &self.intercept;
        for mut row in probs.rows_mut() {
            let max = row.iter().copied().reduce(f64::max).unwrap_or(0.0);
            row.mapv_inplace(|n| (n - max).exp());
            let sum = row.sum();
            row.mapv_inplace(|n| n / sum);
        }
        probs
    }
}

/// Fits `-sum_i ln softmax(x_i W + b)_{y_i} + alpha/2 ||W||^2` by L-BFGS (memory 10, More-Thuente
/// line search, gradient tolerance `tolerance`, at most `max_iterations` iterations) from zero,
/// exactly as linfa-logistic 0.8 does with an intercept.
pub(crate) fn fit_multinomial(
    x: Array2<f32>,
    labels: &[usize],
    alpha: f64,
    max_iterations: u64,
    tolerance: f64,
) -> Result<MultiLogistic, String> {
    if !alpha.is_finite() || alpha < 0.0 {
        return Err(format!("alpha {alpha} is not a finite non-negative number"));
    }
    if !tolerance.is_finite() || tolerance <= 0.0 {
        return Err(format!("gradient tolerance {tolerance} is not positive"));
    }
    if x.nrows() != labels.len() {
        return Err(format!(
            "{} rows of features against {} labels",
            x.nrows(),
            labels.len()
        ));
    }
    if x.iter().any(|v| !v.is_finite()) {
        return Err("a feature value is not finite".into());
    }
    let mut classes = labels.to_vec();
    classes.sort_unstable();
    classes.dedup();
    let mut target = Array2::zeros((labels.len(), classes.len()));
    for (mut row, l) in target.rows_mut().into_iter().zip(labels) {
        row[classes.binary_search(l).expect("a label of the set")] = 1.0;
    }
    let nf = x.ncols();
    let init = Param(Array2::zeros((nf + 1, classes.len())));
    let problem = Problem::new(x, target, alpha);
    let solver = LBFGS::new(MoreThuenteLineSearch::new(), 10)
        .with_tolerance_grad(tolerance)
        .map_err(|e| e.to_string())?;
    let result = Executor::new(problem, solver)
        .configure(|state| state.param(init).max_iters(max_iterations))
        .run()
        .map_err(|e| e.to_string())?;
    let w = result
        .state
        .best_param
        .map_or_else(|| Array2::zeros((nf + 1, classes.len())), |p| p.0);
    Ok(MultiLogistic {
        params: w.slice(s![..nf, ..]).to_owned(),
        intercept: w.row(nf).to_owned(),
        classes,
    })
}

/// The loss, its gradient and the training data, packed once.
struct Problem {
    x: TrainingMatrix,
    nf: usize,
    target: Array2<f64>,
    alpha: f64,
    /// The last point's `log softmax(X W + b)`: argmin asks for the cost and the gradient at the
    /// same point one after the other.
    memo: Mutex<Option<(Array2<f64>, Array2<f64>)>>,
}

impl Problem {
    fn new(x: Array2<f32>, target: Array2<f64>, alpha: f64) -> Self {
        Problem {
            nf: x.ncols(),
            x: TrainingMatrix::new(x),
            target,
            alpha,
            memo: Mutex::new(None),
        }
    }

    /// `H - log_sum_exp(H)` row by row, `H = X W + b`: linfa's `multi_logistic_prob_params`.
    fn log_prob(&self, w: &Array2<f64>) -> Array2<f64> {
        let mut memo = self.memo.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((p, lp)) = memo.as_ref() {
            if p == w {
                return lp.clone();
            }
        }
        let nf = self.nf;
        let params = w.slice(s![..nf, ..]);
        let xw = self.x.xw(&params);
        let h = xw + w.row(nf);
        // linfa's `log_sum_exp` over axis 1: the whole matrix's max, then a fold per row.
        let max = h
            .iter()
            .copied()
            .reduce(f64::max)
            .expect("a non-empty matrix");
        let reduced = h.fold_axis(Axis(1), 0.0, |acc, e| *acc + (*e - max).exp());
        let lse = reduced.mapv_into(|e| e.max(1e-15).ln() + max);
        let lp = &h - &lse.into_shape_with_order((h.nrows(), 1)).expect("a column");
        *memo = Some((w.clone(), lp.clone()));
        lp
    }
}

fn elem_dot(a: &ArrayView2<'_, f64>, b: &ArrayView2<'_, f64>) -> f64 {
    Zip::from(a).and(b).fold(0.0, |acc, &a, &b| acc + a * b)
}

impl CostFunction for Problem {
    type Param = Param;
    type Output = f64;

    fn cost(&self, p: &Param) -> Result<f64, argmin::core::Error> {
        let lp = self.log_prob(&p.0);
        let params = p.0.slice(s![..self.nf, ..]);
        Ok(-elem_dot(&lp.view(), &self.target.view())
            + 0.5 * self.alpha * elem_dot(&params, &params))
    }
}

impl Gradient for Problem {
    type Param = Param;
    type Gradient = Param;

    fn gradient(&self, p: &Param) -> Result<Param, argmin::core::Error> {
        let nf = self.nf;
        let prob = self.log_prob(&p.0).mapv_into(f64::exp);
        let diff = prob - &self.target;
        let params = p.0.slice(s![..nf, ..]);
        let xtd = self.x.xtd(&diff.view());
        let dw = xtd + &(&params * self.alpha);
        let mut grad = Array2::zeros(p.0.raw_dim());
        grad.slice_mut(s![..nf, ..]).assign(&dw);
        grad.row_mut(nf).assign(&diff.sum_axis(Axis(0)));
        Ok(Param(grad))
    }
}

/// The optimiser's parameter: linfa-logistic's `ArgminParam` for matrices, operation for
/// operation (its type is private), so that L-BFGS takes the same steps.
#[derive(Debug, Clone, PartialEq, Default)]
struct Param(Array2<f64>);

impl ArgminSub<f64, Param> for Param {
    fn sub(&self, other: &f64) -> Param {
        Param(&self.0 - *other)
    }
}

impl ArgminSub<Param, Param> for Param {
    fn sub(&self, other: &Param) -> Param {
        Param(&self.0 - &other.0)
    }
}

impl ArgminAdd<f64, Param> for Param {
    fn add(&self, other: &f64) -> Param {
        Param(&self.0 + *other)
    }
}

impl ArgminAdd<Param, Param> for Param {
    fn add(&self, other: &Param) -> Param {
        Param(&self.0 + &other.0)
    }
}

impl ArgminDot<Param, f64> for Param {
    fn dot(&self, other: &Param) -> f64 {
        elem_dot(&self.0.view(), &other.0.view())
    }
}

impl ArgminL1Norm<f64> for Param {
    // linfa's, as it is (a square root of the squares).
    fn l1_norm(&self) -> f64 {
        elem_dot(&self.0.view(), &self.0.view()).sqrt()
    }
}

impl ArgminL2Norm<f64> for Param {
    fn l2_norm(&self) -> f64 {
        elem_dot(&self.0.view(), &self.0.view()).sqrt()
    }
}

impl ArgminMul<f64, Param> for Param {
    fn mul(&self, other: &f64) -> Param {
        Param(&self.0 * *other)
    }
}

impl ArgminMul<Param, Param> for Param {
    fn mul(&self, other: &Param) -> Param {
        Param(&self.0 * &other.0)
    }
}

impl ArgminMul<Param, Param> for f64 {
    fn mul(&self, other: &Param) -> Param {
        Param(&other.0 * *self)
    }
}

impl ArgminSignum for Param {
    fn signum(self) -> Param {
        self
    }
}

impl ArgminZeroLike for Param {
    fn zero_like(&self) -> Param {
        Param(Array2::zeros(self.0.raw_dim()))
    }
}

impl ArgminMinMax for Param {
    fn min(x: &Self, y: &Self) -> Param {
        Param(
            Zip::from(&x.0)
                .and(&y.0)
                .map_collect(|&a, &b| if a < b { a } else { b }),
        )
    }

    fn max(x: &Self, y: &Self) -> Param {
        Param(
            Zip::from(&x.0)
                .and(&y.0)
                .map_collect(|&a, &b| if a > b { a } else { b }),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use linfa::prelude::*;
    use linfa_logistic::MultiLogisticRegression;

    fn data(m: usize, nf: usize, nc: usize, seed: u64) -> (Array2<f32>, Vec<usize>) {
        let mut rng = crate::SplitMix64::new(seed);
        let x = Array2::from_shape_fn((m, nf), |_| (rng.next_f64() * 2.0 - 1.0) as f32);
        // Labels from a noisy linear rule, so the fit has something to learn.
        let labels = x
            .rows()
            .into_iter()
            .map(|r| {
                let s: f64 = r.iter().take(5).map(|&v| f64::from(v)).sum::<f64>() + rng.next_f64();
                (((s + 3.0).max(0.0) * nc as f64 / 7.0) as usize).min(nc - 1)
            })
            .collect();
        (x, labels)
    }

    /// Fits linfa and this module on the same data: weights, intercepts and predicted
    /// probabilities must be equal bit for bit.
    fn check(m: usize, nf: usize, nc: usize, alpha: f64, iterations: u64) {
        let (x, y) = data(m, nf, nc, (m * 31 + nf) as u64);
        let linfa = MultiLogisticRegression::default()
            .alpha(alpha)
            .max_iterations(iterations)
            .fit(&Dataset::new(x.mapv(f64::from), Array1::from(y.clone())))
            .unwrap();
        let ours = fit_multinomial(x.clone(), &y, alpha, iterations, 1e-4).unwrap();
        let bits = |a: &Array2<f64>| a.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(ours.classes, linfa.classes(), "{m}x{nf}, {nc} classes");
        assert_eq!(bits(&ours.params), bits(linfa.params()), "{m}x{nf}");
        assert_eq!(
            ours.intercept
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>(),
            linfa
                .intercept()
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>()
        );
        assert_eq!(
            bits(&ours.predict_probabilities(&x.mapv(f64::from))),
            bits(&linfa.predict_probabilities(&x.mapv(f64::from)))
        );
    }

    #[test]
    fn fit_matches_linfa_bit_for_bit() {
        // Rows and features on both sides of a panel and a stretch; two to seven classes.
        check(700, 403, 2, 10.0, 30);
        check(531, 300, 7, 10.0, 30);
        check(61, 9, 3, 1000.0, 30);
        check(1200, 40, 5, 0.1, 100);
        // More classes than the register-tiled kernels take: the one-class-at-a-time loops.
        check(450, 37, 9, 1.0, 20);
        // No features at all (only the intercepts are fitted).
        check(50, 0, 3, 10.0, 30);
    }

    #[test]
    fn bad_input_is_an_error() {
        let x = Array2::from_elem((3, 2), f32::NAN);
        assert!(fit_multinomial(x, &[0, 1, 0], 1.0, 5, 1e-4)
            .unwrap_err()
            .contains("not finite"));
        let x = Array2::zeros((3, 2));
        assert!(fit_multinomial(x, &[0, 1], 1.0, 5, 1e-4).is_err());
    }
}
