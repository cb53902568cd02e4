//! Operating points fixed before the test: a swept router's parameter (λ, τ, ...) is chosen per
//! outer fold by inner cross-validation on that fold's training rows, and the router's own row
//! (`param: None`) is the sweep's row at that point. The sweep rows stay, for curves; a number
//! picked as the best of the test rows is never a result.

use std::collections::BTreeMap;

use bench_core::{BenchError, Result, RoutingSet};
use rayon::prelude::*;

use super::fold::{evaluate_fold, fallbacks};
use super::split::{stratified_kfold, Fold};
use super::types::{EvalOptions, Evaluation, OperatingPoint};
use crate::entry::{Candidate, RouterContext};
use crate::rng::mix64;

/// Inner folds per outer fold.
pub const INNER_FOLDS: usize = 3;

/// The pre-registered rule: the highest inner correct rate; ties (within 1e-12) go to the lower
/// mean cost, then to the earlier sweep value. Returns the index of the chosen point; 0 for an
/// empty slice. A NaN correct rate never wins.
pub fn choose_operating_point(points: &[(f64, f64, f64)]) -> usize {
    let mut best = 0;
    for (i, &(_, cr, cost)) in points.iter().enumerate().skip(1) {
        let (_, bcr, bcost) = points[best];
        let better =
            cr > bcr + 1e-12 || ((cr - bcr).abs() <= 1e-12 && cost < bcost) || bcr.is_nan();
        if better && !cr.is_nan() {
            best = i;
        }
    }
    best
}

/// Stratified inner folds of `outer`'s training rows, as indices into `set`; seeded by the
/// outer fold's seed. Fewer training rows than inner folds is an error naming the fold.
pub fn inner_folds(set: &RoutingSet, outer: &Fold, seed: u64) -> Result<Vec<Fold>> {
    if outer.train.len() < 2 * INNER_FOLDS {
        return Err(BenchError::Invalid(format!(
            "an operating point needs at least {} training rows for its {INNER_FOLDS} inner folds, the fold has {}",
            2 * INNER_FOLDS,
            outer.train.len()
        )));
    }
    let labels = set.labels();
    let inner_labels: Vec<usize> = outer.train.iter().map(|&i| labels[i]).collect();
    let folds = stratified_kfold(&inner_labels, INNER_FOLDS, mix64(seed ^ 0x1AAE_F01D))?;
    Ok(folds
        .into_iter()
        .map(|f| Fold {
            train: f.train.iter().map(|&i| outer.train[i]).collect(),
            test: f.test.iter().map(|&i| outer.train[i]).collect(),
        })
        .collect())
}

/// The fold number an inner fold's router is seeded and labelled with: far from any outer fold.
pub(crate) fn inner_fold_id(outer: usize, inner: usize) -> u32 {
    (1 << 20) + (outer * INNER_FOLDS + inner) as u32
}

/// One inner evaluation: a swept entry at one value on one inner fold of one outer fold.
struct InnerJob<'a> {
    entry: &'a Candidate,
    param: f64,
    outer: usize,
    inner: usize,
}

/// Adds, for every entry with a sweep that ran, its rows and predictions at the point chosen on
/// each outer fold's training rows, as `param: None`, and returns the chosen points. Where the
/// inner folds cannot be formed or an inner fit fails, the sweep's first value (the documented
/// default) is the point, with an empty `inner`.
pub(super) fn fix_points(
    set: &RoutingSet,
    entries: &[Candidate],
    folds: &[Fold],
    ctx: &RouterContext,
    opts: &EvalOptions,
    ev: &mut Evaluation,
) -> Result<Vec<OperatingPoint>> {
    let ran = |e: &&Candidate| {
        !e.sweep.is_empty()
            && !ev.failed.iter().any(|(n, _)| *n == e.name)
            && ev.rows.iter().any(|r| r.router == e.name)
    };
    let swept: Vec<&Candidate> = entries.iter().filter(ran).collect();
    if swept.is_empty() {
        return Ok(Vec::new());
    }
    let inner = inner_scores(set, (&swept, folds), ctx, opts)?;
    let mut points = Vec::new();
    for e in &swept {
        for fi in 0..folds.len() {
            let scored: Option<Vec<(f64, f64, f64)>> = e
                .sweep
                .iter()
                .map(|&p| {
                    let m = inner
                        .get(&(e.name.clone(), fi, p.to_bits()))
                        .copied()
                        .flatten();
                    m.map(|(cr, cost)| (p, cr, cost))
                })
                .collect();
            let (param, inner) = match scored {
                Some(v) if e.sweep.len() > 1 => (v[choose_operating_point(&v)].0, v),
                _ => (e.sweep[0], Vec::new()),
            };
            points.push(OperatingPoint {
                router: e.name.clone(),
                fold: fi as u32,
                param,
                inner,
            });
        }
    }
    for op in &points {
        let at = |r: &str, p: Option<f64>, f: u32| {
            r == op.router && p.map(f64::to_bits) == Some(op.param.to_bits()) && f == op.fold
        };
        let rows: Vec<_> = ev
            .rows
            .iter()
            .filter(|r| at(&r.router, r.param, r.fold))
            .cloned()
            .collect();
        ev.rows.extend(rows.into_iter().map(|mut r| {
            r.param = None;
            r
        }));
        let preds: Vec<_> = ev
            .predictions
            .iter()
            .filter(|p| at(&p.router, p.param, p.fold))
            .cloned()
            .collect();
        ev.predictions.extend(preds.into_iter().map(|mut p| {
            p.param = None;
            p
        }));
    }
    Ok(points)
}

/// Per fold, per test row: the class a `cannot-answer` prediction plays.
type Fallbacks = Vec<Vec<Option<usize>>>;

/// Pooled inner correct rate and mean cost per (router, outer fold, value bits); `None` where an
/// inner fit of that outer fold failed or its inner folds could not be formed.
type InnerScores = BTreeMap<InnerKey, Option<(f64, f64)>>;

/// (router, outer fold, the value's bits).
type InnerKey = (String, usize, u64);

fn inner_scores(
    set: &RoutingSet,
    (swept, folds): (&[&Candidate], &[Fold]),
    ctx: &RouterContext,
    opts: &EvalOptions,
) -> Result<InnerScores> {
    let needs = swept.iter().any(|e| e.sweep.len() > 1);
    let inner: Vec<Option<Vec<Fold>>> = folds
        .iter()
        .enumerate()
        .map(|(fi, f)| {
            needs
                .then(|| inner_folds(set, f, mix64(ctx.seed ^ fi as u64)).ok())
                .flatten()
        })
        .collect();
    let fb: Vec<Fallbacks> = inner
        .iter()
        .map(|g| {
            g.as_ref()
                .map_or(Ok(Vec::new()), |g| fallbacks(set, g, ctx, opts.fallback))
        })
        .collect::<Result<_>>()?;
    let mut jobs = Vec::new();
    for e in swept.iter().filter(|e| e.sweep.len() > 1) {
        for (fi, g) in inner.iter().enumerate() {
            for j in 0..g.as_ref().map_or(0, Vec::len) {
                for &param in &e.sweep {
                    jobs.push(InnerJob {
                        entry: e,
                        param,
                        outer: fi,
                        inner: j,
                    });
                }
            }
        }
    }
    let results: Vec<Option<(usize, f64)>> = jobs
        .par_iter()
        .map(|j| {
            let g = &inner[j.outer].as_ref().expect("jobs only for formed folds")[j.inner];
            let bills = opts.pays_probe(j.entry).then(|| opts.bills.as_slice());
            let id = inner_fold_id(j.outer, j.inner);
            let fb = &fb[j.outer][j.inner];
            evaluate_fold(set, j.entry, Some(j.param), id, g, ctx, fb, bills)
                .ok()
                .map(|r| {
                    let right = r.predictions.iter().filter(|p| p.correct).count();
                    (right, r.predictions.iter().map(|p| p.cost).sum::<f64>())
                })
        })
        .collect();
    Ok(pool(&jobs, results, &inner))
}

/// Pools each (router, outer fold, value)'s inner folds: correct rate and mean cost over their
/// test rows; `None` for every value of an outer fold where any inner fit failed.
fn pool(
    jobs: &[InnerJob<'_>],
    results: Vec<Option<(usize, f64)>>,
    inner: &[Option<Vec<Fold>>],
) -> InnerScores {
    // Per key: (questions right, summed cost, questions), `None` once an inner fit failed.
    let mut sums: BTreeMap<InnerKey, Option<(usize, f64, usize)>> = BTreeMap::new();
    for (j, r) in jobs.iter().zip(results) {
        let n = inner[j.outer].as_ref().map_or(0, |g| g[j.inner].test.len());
        let key = (j.entry.name.clone(), j.outer, j.param.to_bits());
        let slot = sums.entry(key).or_insert(Some((0, 0.0, 0)));
        *slot = match (*slot, r) {
            (Some((a, c, m)), Some((right, cost))) => Some((a + right, c + cost, m + n)),
            _ => None,
        };
    }
    // A failed inner fit of any value spoils the whole outer fold's comparison.
    let spoiled: Vec<(String, usize)> = sums
        .iter()
        .filter(|(_, v)| v.is_none())
        .map(|((n, fi, _), _)| (n.clone(), *fi))
        .collect();
    sums.into_iter()
        .map(|((name, fi, bits), v)| {
            let ok = !spoiled.contains(&(name.clone(), fi));
            let m = v.filter(|_| ok).filter(|v| v.2 > 0);
            let m = m.map(|(right, cost, n)| (right as f64 / n as f64, cost / n as f64));
            ((name, fi, bits), m)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_takes_the_best_rate_then_the_cheaper_then_the_earlier() {
        assert_eq!(choose_operating_point(&[]), 0);
        assert_eq!(
            choose_operating_point(&[(0.0, 0.5, 9.0), (0.1, 0.6, 9.0), (1.0, 0.55, 1.0)]),
            1
        );
        // Equal rates: the cheaper wins; equal both: the first.
        assert_eq!(
            choose_operating_point(&[(0.0, 0.6, 9.0), (0.1, 0.6, 3.0), (1.0, 0.6, 3.0)]),
            1
        );
        assert_eq!(
            choose_operating_point(&[(0.0, f64::NAN, 1.0), (0.1, 0.2, 5.0)]),
            1
        );
        assert_eq!(
            choose_operating_point(&[(0.0, 0.2, 5.0), (0.1, f64::NAN, 1.0)]),
            0
        );
    }

    #[test]
    fn inner_folds_partition_the_outer_training_rows_only() {
        let set = crate::synthetic_set(90, 3);
        let outer = stratified_kfold(&set.labels(), 5, 3).unwrap();
        for (fi, f) in outer.iter().enumerate() {
            let inner = inner_folds(&set, f, fi as u64).unwrap();
            assert_eq!(inner.len(), INNER_FOLDS);
            let mut seen: Vec<usize> = inner.iter().flat_map(|g| g.test.clone()).collect();
            seen.sort_unstable();
            assert_eq!(
                seen, f.train,
                "inner tests cover the outer training rows once"
            );
            for g in &inner {
                assert!(g.train.iter().chain(&g.test).all(|i| !f.test.contains(i)));
                assert_eq!(g.train.len() + g.test.len(), f.train.len());
            }
        }
        let tiny = Fold {
            train: vec![0, 1, 2],
            test: vec![3],
        };
        assert!(inner_folds(&set, &tiny, 0).is_err());
    }

    /// Always plays class `param` (a swept router whose value is the class).
    #[derive(Debug)]
    struct Pick(usize);

    impl bench_core::Router for Pick {
        fn name(&self) -> &str {
            "pick"
        }
        fn fit(&mut self, _: &RoutingSet) -> Result<()> {
            Ok(())
        }
        fn scores(
            &self,
            schema: &bench_core::RoutingSchema,
            _: &bench_core::RoutingRow,
        ) -> Result<Vec<f64>> {
            Ok((0..schema.n_classes())
                .map(|c| f64::from(u8::from(c == self.0)))
                .collect())
        }
    }

    #[test]
    fn a_router_is_summarised_at_the_point_its_training_rows_chose_not_the_test_best() {
        // Training rows favour class 0, test rows class 1: the best test row is λ = 1, the
        // point fixed on the training rows is λ = 0, and the router's own row is λ = 0's.
        let mut set = crate::synthetic_set(120, 5);
        for (i, r) in set.rows.iter_mut().enumerate() {
            let (first, second) = if i < 80 {
                (i % 10 < 7, i % 10 >= 7)
            } else {
                (i % 10 < 1, i % 10 >= 1)
            };
            for (c, o) in r.outcomes.iter_mut().enumerate() {
                if let Some(o) = o {
                    o.correct = match c {
                        0 => first,
                        1 => second,
                        _ => false,
                    };
                }
            }
        }
        assert!(set
            .rows
            .iter()
            .all(|r| r.outcomes[0].is_some() && r.outcomes[1].is_some()));
        let pick = Candidate {
            name: "pick".into(),
            family: crate::entry::Family::Ml,
            needs_llm: false,
            sees_outcomes: false,
            sweep: vec![0.0, 1.0],
            lanes: Vec::new(),
            make: std::sync::Arc::new(|_: &RouterContext, p: Option<f64>| {
                Ok(Box::new(Pick(p.unwrap_or(0.0) as usize)) as Box<dyn bench_core::Router>)
            }),
        };
        let fold = Fold {
            train: (0..80).collect(),
            test: (80..120).collect(),
        };
        let ev = super::super::evaluate(&set, &[pick], &[fold], &RouterContext::new(9)).unwrap();
        assert_eq!(ev.operating_points.len(), 1);
        let op = &ev.operating_points[0];
        assert_eq!(op.param, 0.0, "{op:?}");
        assert!(op.inner[0].1 > op.inner[1].1, "{op:?}");
        let pooled = |p: Option<f64>| {
            super::super::summarize(&ev.rows)
                .into_iter()
                .find(|s| s.param == p && s.corpus == "*")
                .unwrap()
                .mean
                .correct_rate
        };
        assert!(pooled(Some(1.0)) > pooled(Some(0.0)) + 0.5);
        assert_eq!(pooled(None), pooled(Some(0.0)));
        let fixed: Vec<_> = ev
            .predictions
            .iter()
            .filter(|p| p.param.is_none())
            .collect();
        assert_eq!(fixed.len(), 40);
        assert!(fixed.iter().all(|p| p.chosen == set.schema.classes[0]));
    }
}
