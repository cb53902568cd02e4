//! The cost-aware router: for each paradigm, utility = P(correct | features, paradigm)
//! − λ · E[tokens | paradigm] / T, and the highest utility wins. One λ is one router; the
//! registry's sweep runs a grid of λ, so the evaluation draws a correct-rate / tokens curve.
//!
//! - P(correct | features, paradigm): one ridge regression per paradigm class (a linear
//!   probability model, clipped to [0, 1]) on the standardised features of the training rows
//!   that have that paradigm's tuple, intercept unpenalised, L2 weight [`RIDGE`]. Ridge rather
//!   than a logistic fit: all classes share one Gram matrix and one Cholesky factorisation, which
//!   keeps a 5-fold × 12-λ sweep over 400-dim features cheap.
//! - E[tokens | paradigm]: the training mean of the paradigm's total tokens on the row's corpus,
//!   or over all training rows when the corpus has no training tuple of that paradigm.
//! - T, the token scale: the mean total tokens over every training (row, paradigm) tuple. With
//!   this normalisation λ reads as "how much probability of a correct answer one average
//!   paradigm call is worth": λ = 0 ignores tokens, λ = 1 trades a certain correct answer for one
//!   average call, and once λ · (t_j − t_cheapest) / T exceeds 1 for every paradigm j the cheapest
//!   one always wins. [`SWEEP`] spans 0 and 10^-2 to 10^3 in half decades, so its top holds
//!   "cheapest always" whenever the paradigms' mean tokens differ by more than 0.1% of T.
//! - `cannot-answer` is never chosen (it scores below every paradigm); a paradigm with no training
//!   tuple scores below `cannot-answer`.
//!
//! The fit does not depend on λ, so the routers of one sweep fitted on the same training rows
//! share it: a small process-wide cache keyed by a fingerprint of the rows (features, outcomes,
//! ids, schema) returns the fit made for an earlier λ. The first λ of a fold pays the fit time.

use std::sync::Arc;

use bench_core::{BenchError, Result, Router, RoutingRow, RoutingSchema, RoutingSet};
use ndarray::{Array1, Array2, Axis};

use super::outcome_of_class;
use crate::cost::CostModel;
use crate::entry::{Family, FitCache, RouterContext, RouterEntry};
use crate::models::prep::Standardizer;
use crate::rng::{hash_str, mix64};

/// L2 weight of the per-paradigm ridge regressions (on standardised features).
pub const RIDGE: f64 = 1.0;

/// λ grid: 0, then 10^-2 .. 10^3 in half-decade steps.
pub const SWEEP: &[f64] = &[
    0.0,
    0.01,
    0.031_622_776_601_683_79,
    0.1,
    0.316_227_766_016_837_94,
    1.0,
    3.162_277_660_168_379,
    10.0,
    31.622_776_601_683_79,
    100.0,
    316.227_766_016_837_94,
    1000.0,
];

/// The registry entry.
pub fn entry() -> RouterEntry {
    RouterEntry {
        name: "cost-aware",
        about: "argmax P(correct | x, paradigm) − λ·E[tokens | paradigm, corpus]/mean tokens; λ swept 0 → 1000",
        family: Family::CostAware,
        needs_llm: false,
        sees_outcomes: false,
        lanes: &[],
        sweep: SWEEP,
        make: |ctx: &RouterContext, param| {
            let lambda = param.unwrap_or(0.0);
            if !(lambda.is_finite() && lambda >= 0.0) {
                return Err(BenchError::Invalid(format!(
                    "router cost-aware: λ must be a finite number >= 0, got {lambda}"
                )));
            }
            Ok(Box::new(CostAware::new(lambda).sharing(&ctx.fits)))
        },
    }
}

/// What a fit learns, independent of λ.
#[derive(Debug)]
pub struct Core {
    st: Standardizer,
    /// Per paradigm class: (weights, intercept), `None` without training tuples.
    models: Vec<Option<(Array1<f64>, f64)>>,
    /// E[tokens | paradigm, corpus].
    cost: CostModel,
    /// The token scale T.
    pub scale: f64,
}

impl Core {
    fn fit(train: &RoutingSet) -> Result<Core> {
        let k = train.schema.n_classes() - 1;
        if train.rows.is_empty() {
            return Err(BenchError::Invalid(
                "router cost-aware: no training rows".into(),
            ));
        }
        let st = Standardizer::fit_all(&train.rows, &train.schema);
        let x: Array2<f64> = st.matrix(&train.rows).mapv(f64::from);

        let mut models = vec![None; k];
        // Classes with a tuple on every row share the full Gram matrix; others get their own.
        let mut full: Vec<(usize, Array1<f64>)> = Vec::new();
        // c is a class: it indexes the rows' outcomes as well as `models`.
        #[allow(clippy::needless_range_loop)]
        for c in 0..k {
            let have: Vec<usize> = (0..train.rows.len())
                .filter(|&i| outcome_of_class(&train.rows[i], c).is_some())
                .collect();
            if have.is_empty() {
                continue;
            }
            let y: Array1<f64> = have
                .iter()
                .map(|&i| {
                    f64::from(u8::from(
                        outcome_of_class(&train.rows[i], c)
                            .expect("filtered")
                            .correct,
                    ))
                })
                .collect();
            if have.len() == train.rows.len() {
                full.push((c, y));
            } else {
                let xs = x.select(Axis(0), &have);
                models[c] = Some(ridge(&xs, &[y])?.remove(0));
            }
        }
        if !full.is_empty() {
            let ys: Vec<Array1<f64>> = full.iter().map(|(_, y)| y.clone()).collect();
            for ((c, _), m) in full.iter().zip(ridge(&x, &ys)?) {
                models[*c] = Some(m);
            }
        }
        if models.iter().all(Option::is_none) {
            return Err(BenchError::Invalid(
                "router cost-aware: no training row has any paradigm outcome".into(),
            ));
        }
        let cost = CostModel::fit(train);
        Ok(Core {
            st,
            models,
            scale: cost.scale,
            cost,
        })
    }

    /// P(correct) per paradigm class for a row (`None`: no training tuple).
    pub fn p_correct(&self, row: &RoutingRow) -> Vec<Option<f64>> {
        let x: Array1<f64> = self
            .st
            .matrix(std::slice::from_ref(row))
            .row(0)
            .mapv(f64::from);
        self.models
            .iter()
            .map(|m| m.as_ref().map(|(w, b)| (x.dot(w) + b).clamp(0.0, 1.0)))
            .collect()
    }

    /// `E[tokens]` per paradigm class for a row's corpus.
    pub fn expected_tokens(&self, row: &RoutingRow) -> Vec<Option<f64>> {
        self.cost.expected(row)
    }
}

/// Ridge regressions of several targets on the same rows: for each y, the weights w and
/// intercept b minimising ||y − X w − b||² + RIDGE ||w||² (b unpenalised: fitted on centred data).
fn ridge(x: &Array2<f64>, ys: &[Array1<f64>]) -> Result<Vec<(Array1<f64>, f64)>> {
    let n = x.nrows() as f64;
    let mu = x
        .mean_axis(Axis(0))
        .unwrap_or_else(|| Array1::zeros(x.ncols()));
    let xc = x - &mu;
    let mut g = xc.t().dot(&xc);
    for i in 0..g.nrows() {
        g[[i, i]] += RIDGE;
    }
    let l = cholesky(&g)?;
    ys.iter()
        .map(|y| {
            let ybar = y.sum() / n;
            let rhs = xc.t().dot(&(y - ybar));
            let w = cholesky_solve(&l, &rhs);
            let b = ybar - mu.dot(&w);
            Ok((w, b))
        })
        .collect()
}

/// Lower-triangular L with L Lᵀ = A, for a symmetric positive definite A.
fn cholesky(a: &Array2<f64>) -> Result<Array2<f64>> {
    let n = a.nrows();
    let mut l = Array2::<f64>::zeros((n, n));
    for j in 0..n {
        let mut diag = a[[j, j]];
        for k in 0..j {
            diag -= l[[j, k]] * l[[j, k]];
        }
        if diag.is_nan() || diag <= 0.0 {
            return Err(BenchError::Other(format!(
                "router cost-aware: the ridge system is not positive definite (pivot {j}: {diag})"
            )));
        }
        let djj = diag.sqrt();
        l[[j, j]] = djj;
        for i in j + 1..n {
            let mut s = a[[i, j]];
            for k in 0..j {
                s -= l[[i, k]] * l[[j, k]];
            }
            l[[i, j]] = s / djj;
        }
    }
    Ok(l)
}

/// Solves L Lᵀ w = b.
fn cholesky_solve(l: &Array2<f64>, b: &Array1<f64>) -> Array1<f64> {
    let n = b.len();
    let mut z = Array1::<f64>::zeros(n);
    for i in 0..n {
        let mut s = b[i];
        for k in 0..i {
            s -= l[[i, k]] * z[k];
        }
        z[i] = s / l[[i, i]];
    }
    let mut w = Array1::<f64>::zeros(n);
    for i in (0..n).rev() {
        let mut s = z[i];
        for k in i + 1..n {
            s -= l[[k, i]] * w[k];
        }
        w[i] = s / l[[i, i]];
    }
    w
}

/// A fingerprint of everything a fit reads.
pub(crate) fn fingerprint(train: &RoutingSet) -> u64 {
    let mut h = hash_str(RIDGE.to_bits(), &train.schema.classes.join("\u{1f}"));
    h = mix64(h ^ hash_str(0, &train.schema.feature_names.join("\u{1f}")));
    for r in &train.rows {
        h = mix64(h ^ hash_str(1, &r.corpus));
        h = mix64(h ^ hash_str(2, &r.query_id));
        for v in &r.features {
            h = mix64(h ^ v.to_bits());
        }
        for o in &r.outcomes {
            h = match o {
                Some(o) => mix64(
                    h ^ u64::from(o.correct)
                        ^ o.tokens.to_bits().rotate_left(1)
                        ^ o.semantic_f1.to_bits().rotate_left(7),
                ),
                None => mix64(h ^ 0x9E37),
            };
        }
    }
    h
}

/// The cost-aware router at one λ.
#[derive(Debug)]
pub struct CostAware {
    /// λ: the weight of E[tokens] / T against P(correct).
    pub lambda: f64,
    core: Option<Arc<Core>>,
    /// Where the routers of a sweep share the λ-independent fit.
    fits: FitCache,
}

impl CostAware {
    /// An unfitted router at `lambda`, with a fit cache of its own.
    pub fn new(lambda: f64) -> Self {
        CostAware {
            lambda,
            core: None,
            fits: FitCache::default(),
        }
    }

    /// Shares the λ-independent fit through `fits` (the evaluation's).
    pub fn sharing(mut self, fits: &FitCache) -> Self {
        self.fits = fits.clone();
        self
    }

    /// The fitted, λ-independent part (`None` before `fit`); only the tests call it.
    #[allow(dead_code)]
    pub fn core(&self) -> Option<&Core> {
        self.core.as_deref()
    }

    /// Utility per paradigm class (`None`: no training tuple).
    pub fn utilities(&self, row: &RoutingRow) -> Result<Vec<Option<f64>>> {
        let core = self.core.as_ref().ok_or_else(|| {
            BenchError::Invalid("router cost-aware: scores asked before fit".into())
        })?;
        if row.features.len() != core.st.mean.len() {
            return Err(BenchError::Invalid(format!(
                "router cost-aware: row {} has {} features, the training rows had {}",
                row.query_id,
                row.features.len(),
                core.st.mean.len()
            )));
        }
        let p = core.p_correct(row);
        let t = core.expected_tokens(row);
        Ok(p.into_iter()
            .zip(t)
            .map(|(p, t)| Some(p? - self.lambda * t? / core.scale))
            .collect())
    }
}

impl Router for CostAware {
    fn name(&self) -> &str {
        "cost-aware"
    }

    fn fit(&mut self, train: &RoutingSet) -> Result<()> {
        // Keyed by the rows alone: the fit depends on nothing else.
        let key = mix64(fingerprint(train) ^ 0xC057_A3A7E);
        self.core = Some(self.fits.get_or_fit(key, || Core::fit(train))?);
        Ok(())
    }

    fn scores(&self, schema: &RoutingSchema, row: &RoutingRow) -> Result<Vec<f64>> {
        let u = self.utilities(row)?;
        if u.len() + 1 != schema.n_classes() {
            return Err(BenchError::Invalid(format!(
                "router cost-aware: fitted on {} paradigm classes, asked to score {}",
                u.len(),
                schema.n_classes() - 1
            )));
        }
        let floor = u.iter().flatten().copied().fold(f64::INFINITY, f64::min);
        let floor = if floor.is_finite() { floor } else { 0.0 };
        let mut scores: Vec<f64> = u.iter().map(|v| v.unwrap_or(floor - 2.0)).collect();
        scores.push(floor - 1.0);
        Ok(scores)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed_papers::testutil::{outcome, row, schema};
    use crate::synthetic::{synthetic_set, SYNTHETIC_TOKENS};
    use bench_core::{routing::argmax, ParadigmId as P};

    /// Constant features: the ridge fits reduce to the training means of `correct`.
    fn two_paradigms() -> RoutingSet {
        let s = schema(&[P::Naive, P::Graph], 1);
        let rows = (0..10)
            .map(|i| {
                let mut r = row(&s, &format!("q{i}"), "q", vec![1.0]);
                // naive correct on 5 of 10 rows (100 tokens), graph on 9 of 10 (1,000 tokens).
                r.outcomes[0] = outcome(i < 5, 0.5, 100.0);
                r.outcomes[1] = outcome(i < 9, 0.5, 1000.0);
                r
            })
            .collect();
        RoutingSet { schema: s, rows }
    }

    #[test]
    fn utilities_follow_the_formula_on_a_golden_case() {
        let set = two_paradigms();
        let mut r = CostAware::new(0.2);
        r.fit(&set).unwrap();
        let core = r.core().unwrap();
        // T = mean of 10 x 100 and 10 x 1,000 = 550.
        assert!((core.scale - 550.0).abs() < 1e-9);
        let x = &set.rows[0];
        let p = core.p_correct(x);
        assert!(
            (p[0].unwrap() - 0.5).abs() < 1e-9 && (p[1].unwrap() - 0.9).abs() < 1e-9,
            "{p:?}"
        );
        let u = r.utilities(x).unwrap();
        assert!((u[0].unwrap() - (0.5 - 0.2 * 100.0 / 550.0)).abs() < 1e-9);
        assert!((u[1].unwrap() - (0.9 - 0.2 * 1000.0 / 550.0)).abs() < 1e-9);
        // Break-even at λ* = 0.4 / (900 / 550) = 0.2444...: graph below, naive above.
        let s = &set.schema;
        let pick = |lambda: f64| {
            let mut r = CostAware::new(lambda);
            r.fit(&set).unwrap();
            s.classes[r.predict(s, x).unwrap()].clone()
        };
        assert_eq!(pick(0.0), "graph");
        assert_eq!(pick(0.24), "graph");
        assert_eq!(pick(0.25), "naive");
        assert_eq!(pick(1e3), "naive");
        // cannot-answer is never the choice.
        let sc = r.scores(s, x).unwrap();
        assert!(sc[2] < sc[0] && sc[2] < sc[1]);
    }

    #[test]
    fn tokens_are_per_corpus_with_the_overall_mean_as_fallback() {
        let mut set = two_paradigms();
        for (i, r) in set.rows.iter_mut().enumerate() {
            if i % 2 == 1 {
                r.corpus = "big".into();
                r.outcomes[1] = outcome(i < 9, 0.5, 3000.0);
            }
        }
        let mut r = CostAware::new(1.0);
        r.fit(&set).unwrap();
        let core = r.core().unwrap();
        let t = |corpus: &str| {
            let mut x = set.rows[0].clone();
            x.corpus = corpus.into();
            core.expected_tokens(&x)
        };
        assert_eq!(t("c"), vec![Some(100.0), Some(1000.0)]);
        assert_eq!(t("big"), vec![Some(100.0), Some(3000.0)]);
        assert_eq!(t("unseen"), vec![Some(100.0), Some(2000.0)]);
    }

    #[test]
    fn sweep_ends_pick_most_likely_correct_and_cheapest() {
        let set = synthetic_set(600, 11);
        let train = set.subset(&(0..400).collect::<Vec<_>>());
        let test = set.subset(&(400..600).collect::<Vec<_>>());
        let s = &test.schema;
        let mut zero = CostAware::new(0.0);
        zero.fit(&train).unwrap();
        let core = zero.core().unwrap();
        for x in &test.rows {
            // λ = 0: the argmax of the predicted P(correct).
            let p: Vec<f64> = core.p_correct(x).into_iter().map(|v| v.unwrap()).collect();
            assert_eq!(zero.predict(s, x).unwrap(), argmax(&p));
        }
        let mut huge = CostAware::new(*SWEEP.last().unwrap());
        huge.fit(&train).unwrap();
        let cheapest = SYNTHETIC_TOKENS
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(b.1))
            .unwrap()
            .0;
        assert!(test
            .rows
            .iter()
            .all(|x| huge.predict(s, x).unwrap() == cheapest));
        // Most-likely-correct beats cheapest on correctness (llm-only is rarely right here).
        let correct = |r: &CostAware| {
            test.rows
                .iter()
                .filter(|x| {
                    let c = r.predict(s, x).unwrap();
                    x.outcomes[c].is_some_and(|o| o.correct)
                })
                .count()
        };
        assert!(
            correct(&zero) > correct(&huge) + 40,
            "{} vs {}",
            correct(&zero),
            correct(&huge)
        );
    }

    #[test]
    fn mean_tokens_never_increase_along_the_sweep() {
        let set = synthetic_set(800, 12);
        let train = set.subset(&(0..600).collect::<Vec<_>>());
        let test = set.subset(&(600..800).collect::<Vec<_>>());
        let s = &test.schema;
        let mut last = (f64::INFINITY, f64::INFINITY);
        let mut means = Vec::new();
        for &lambda in entry().sweep {
            let mut r = CostAware::new(lambda);
            r.fit(&train).unwrap();
            let core = r.core().unwrap();
            let (mut actual, mut expected) = (0.0, 0.0);
            for x in &test.rows {
                let c = r.predict(s, x).unwrap();
                actual += x.outcomes[c].unwrap().tokens;
                expected += core.expected_tokens(x)[c].unwrap();
            }
            let now = (actual / 200.0, expected / 200.0);
            assert!(
                now.0 <= last.0 && now.1 <= last.1,
                "λ {lambda}: {now:?} after {last:?}"
            );
            last = now;
            means.push(now.0);
        }
        // The curve moves: from the rule's mix down to llm-only's ~200 tokens.
        assert!(
            means[0] > 1500.0 && *means.last().unwrap() < 250.0,
            "{means:?}"
        );
        assert!(SWEEP.windows(2).all(|w| w[0] < w[1]));
        assert!(SWEEP[1..]
            .windows(2)
            .all(|w| ((w[1] / w[0]) - 10f64.sqrt()).abs() < 1e-9));
    }

    #[test]
    fn make_rejects_a_bad_lambda() {
        let ctx = RouterContext::new(0);
        assert!((entry().make)(&ctx, Some(-1.0)).is_err());
        assert!((entry().make)(&ctx, Some(f64::NAN)).is_err());
        assert!((entry().make)(&ctx, None).is_ok());
    }
}
