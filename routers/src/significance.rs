//! Paired significance of a router against a baseline on the same test questions: the difference
//! in correct rate with a paired bootstrap percentile interval, and the exact McNemar test.
//!
//! Pairs are the (corpus, query id) questions both were tested on (every question is tested once
//! per evaluation under k-fold, leave-one-corpus-out and the given split). The bootstrap draws
//! the questions with replacement, `resamples` times from a seeded generator, and takes the
//! 2.5 and 97.5 percentiles of the resampled differences (linear interpolation between order
//! statistics). McNemar's exact p-value is two-sided: `min(1, 2 P(X <= min(b, c)))` with
//! `X ~ Binomial(b + c, 1/2)`, where b counts questions only the router answered and c those
//! only the baseline answered; 1 when there is no discordant pair.

use std::collections::BTreeMap;

use bench_core::{RouteEvalTest, RoutePrediction};
use statrs::distribution::{Binomial, DiscreteCDF};

use crate::rng::SplitMix64;

/// Bootstrap resamples per evaluation (seeded).
pub const RESAMPLES: u32 = 10_000;

/// Two-sided exact McNemar p-value for `wins` and `losses` discordant pairs.
pub fn mcnemar_exact(wins: u32, losses: u32) -> f64 {
    let n = u64::from(wins + losses);
    if n == 0 {
        return 1.0;
    }
    let k = u64::from(wins.min(losses));
    let cdf = Binomial::new(0.5, n).map(|b| b.cdf(k)).unwrap_or(1.0);
    (2.0 * cdf).min(1.0)
}

/// The q-quantile (0..=1) of sorted values, interpolating linearly between order statistics.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let h = (sorted.len() - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// Paired comparisons of several routers' per-question correctness against one baseline's, all
/// on the same bootstrap resamples. `routers[j]` and `baseline` are indexed by question; every
/// vector has the same length. Returns, per router: (diff, ci_low, ci_high, wins, losses, p).
pub fn paired_tests(
    routers: &[Vec<bool>],
    baseline: &[bool],
    resamples: u32,
    seed: u64,
) -> Vec<(f64, f64, f64, u32, u32, f64)> {
    let n = baseline.len();
    // Per router, its discordant questions and their sign (+1: only the router is right).
    let discordant: Vec<Vec<(usize, f64)>> = routers
        .iter()
        .map(|r| {
            (0..n)
                .filter(|&i| r[i] != baseline[i])
                .map(|i| (i, if r[i] { 1.0 } else { -1.0 }))
                .collect()
        })
        .collect();
    let mut draws: Vec<Vec<f64>> = vec![Vec::with_capacity(resamples as usize); routers.len()];
    if n > 0 {
        let mut rng = SplitMix64::new(seed);
        let mut counts = vec![0u32; n];
        for _ in 0..resamples {
            counts.iter_mut().for_each(|c| *c = 0);
            for _ in 0..n {
                counts[rng.below(n)] += 1;
            }
            for (d, out) in discordant.iter().zip(draws.iter_mut()) {
                let s: f64 = d.iter().map(|&(i, v)| f64::from(counts[i]) * v).sum();
                out.push(s / n as f64);
            }
        }
    }
    discordant
        .iter()
        .zip(draws)
        .map(|(d, mut ds)| {
            let wins = d.iter().filter(|x| x.1 > 0.0).count() as u32;
            let losses = d.len() as u32 - wins;
            let diff = if n == 0 {
                0.0
            } else {
                (f64::from(wins) - f64::from(losses)) / n as f64
            };
            ds.sort_by(f64::total_cmp);
            let (lo, hi) = if ds.is_empty() {
                (diff, diff)
            } else {
                (quantile(&ds, 0.025), quantile(&ds, 0.975))
            };
            (diff, lo, hi, wins, losses, mcnemar_exact(wins, losses))
        })
        .collect()
}

/// A (router, param bits) of the predictions.
type RouterKey = (String, Option<u64>);
/// One router's outcome per (corpus, query id).
type Outcomes<'a> = BTreeMap<(&'a str, &'a str), bool>;
/// A router, its param bits, and its and the baseline's outcomes on the questions both saw.
type PairedOutcomes = (String, Option<u64>, Vec<bool>, Vec<bool>);
/// One paired test: (diff, CI low, CI high, wins, losses, McNemar p).
type PairedTest = (f64, f64, f64, u32, u32, f64);

/// Every (router, param) of `predictions` against `baseline` (a router name, its param-less
/// predictions), paired by (corpus, query id). `None` when the baseline has no predictions.
pub fn compare_to(
    predictions: &[RoutePrediction],
    baseline: &str,
    resamples: u32,
    seed: u64,
) -> Option<Vec<RouteEvalTest>> {
    let (by_router, order) = outcomes_by_router(predictions);
    let base = by_router.get(&(baseline.to_string(), None))?;
    let keys: Vec<&(&str, &str)> = base.keys().collect();
    let vectors = paired_with_baseline(&by_router, &order, baseline, base, &keys);
    let base_vec: Vec<bool> = keys.iter().map(|k| base[*k]).collect();
    let results = test_all(&vectors, &base_vec, resamples, seed);
    let mut out = Vec::with_capacity(vectors.len());
    for (j, (router, param, r, _)) in vectors.into_iter().enumerate() {
        let (diff, ci_low, ci_high, wins, losses, p) = results[&j];
        out.push(RouteEvalTest {
            router,
            param: param.map(f64::from_bits),
            baseline: baseline.to_string(),
            n: r.len() as u32,
            diff,
            ci_low,
            ci_high,
            wins,
            losses,
            p_mcnemar: p,
            resamples,
        });
    }
    Some(out)
}

/// Each (router, param)'s outcome per question, and the routers in order of first prediction.
fn outcomes_by_router(
    predictions: &[RoutePrediction],
) -> (BTreeMap<RouterKey, Outcomes<'_>>, Vec<RouterKey>) {
    let mut by_router: BTreeMap<RouterKey, Outcomes<'_>> = BTreeMap::new();
    let mut order: Vec<RouterKey> = Vec::new();
    for p in predictions {
        let key = (p.router.clone(), p.param.map(f64::to_bits));
        if !by_router.contains_key(&key) {
            order.push(key.clone());
        }
        by_router
            .entry(key)
            .or_default()
            .insert((p.corpus.as_str(), p.query_id.as_str()), p.correct);
    }
    (by_router, order)
}

/// Every router but the baseline, in `order`, with its and the baseline's outcomes on the
/// questions both were tested on, in the baseline's order (`keys`).
fn paired_with_baseline(
    by_router: &BTreeMap<RouterKey, Outcomes<'_>>,
    order: &[RouterKey],
    baseline: &str,
    base: &Outcomes<'_>,
    keys: &[&(&str, &str)],
) -> Vec<PairedOutcomes> {
    let mut vectors = Vec::new();
    for key in order {
        if key.0 == baseline && key.1.is_none() {
            continue;
        }
        let r = &by_router[key];
        let paired: Vec<(bool, bool)> = keys
            .iter()
            .filter_map(|k| r.get(*k).map(|&v| (v, base[*k])))
            .collect();
        let rv: Vec<bool> = paired.iter().map(|p| p.0).collect();
        let bv: Vec<bool> = paired.iter().map(|p| p.1).collect();
        vectors.push((key.0.clone(), key.1, rv, bv));
    }
    vectors
}

/// The paired test of each router (by its index in `vectors`). Routers tested on every
/// baseline question (`base_vec`) share one resample set; the rare partial ones (a router that
/// saw fewer questions) get their own.
fn test_all(
    vectors: &[PairedOutcomes],
    base_vec: &[bool],
    resamples: u32,
    seed: u64,
) -> BTreeMap<usize, PairedTest> {
    let full: Vec<usize> = (0..vectors.len())
        .filter(|&j| vectors[j].3.len() == base_vec.len())
        .collect();
    let shared = paired_tests(
        &full
            .iter()
            .map(|&j| vectors[j].2.clone())
            .collect::<Vec<_>>(),
        base_vec,
        resamples,
        seed,
    );
    let mut results: BTreeMap<usize, PairedTest> = full.iter().copied().zip(shared).collect();
    for (j, v) in vectors.iter().enumerate() {
        results
            .entry(j)
            .or_insert_with(|| paired_tests(std::slice::from_ref(&v.2), &v.3, resamples, seed)[0]);
    }
    results
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcnemar_golden_values() {
        // b = 1, c = 5: 2 * P(X <= 1 | n = 6) = 2 * (1 + 6) / 64.
        assert!((mcnemar_exact(1, 5) - 14.0 / 64.0).abs() < 1e-12);
        assert!((mcnemar_exact(5, 1) - 14.0 / 64.0).abs() < 1e-12);
        // b = c: the two tails cover everything.
        assert_eq!(mcnemar_exact(3, 3), 1.0);
        assert_eq!(mcnemar_exact(0, 0), 1.0);
        // b = 0, c = 10: 2 / 1024.
        assert!((mcnemar_exact(0, 10) - 2.0 / 1024.0).abs() < 1e-15);
    }

    #[test]
    fn quantiles_interpolate() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&v, 0.0), 1.0);
        assert_eq!(quantile(&v, 1.0), 4.0);
        assert!((quantile(&v, 0.5) - 2.5).abs() < 1e-12);
        assert!((quantile(&v, 0.025) - 1.075).abs() < 1e-12);
    }

    #[test]
    fn bootstrap_of_identical_or_always_better_routers_is_degenerate() {
        let base = vec![true, false, true, false];
        let r = paired_tests(&[base.clone(), vec![true; 4]], &base, 500, 1);
        assert_eq!(r[0], (0.0, 0.0, 0.0, 0, 0, 1.0));
        // Better on exactly the two questions the baseline missed: diff 0.5; a resample's
        // difference is (number of those two questions drawn) / 4, in [0, 1].
        let (diff, lo, hi, w, l, _) = r[1];
        assert_eq!((diff, w, l), (0.5, 2, 0));
        assert!(
            (0.0..=0.5).contains(&lo) && (0.5..=1.0).contains(&hi),
            "{lo} {hi}"
        );
    }

    #[test]
    fn bootstrap_interval_matches_the_normal_approximation() {
        // 2,000 questions, router right and baseline wrong on 200, the reverse on 100:
        // diff = 0.05, sd of the mean of d = sqrt((300/2000 - 0.05^2) / 2000) = 0.008584.
        let n = 2000;
        let base: Vec<bool> = (0..n)
            .map(|i| (200..300).contains(&i) || i >= 1000)
            .collect();
        let router: Vec<bool> = (0..n).map(|i| !(200..1000).contains(&i)).collect();
        let r = paired_tests(&[router], &base, 10_000, 42);
        let (diff, lo, hi, w, l, p) = r[0];
        assert_eq!((w, l), (200, 100));
        assert!((diff - 0.05).abs() < 1e-12);
        let sd = ((300.0 / 2000.0 - 0.0025) / 2000.0f64).sqrt();
        assert!((lo - (0.05 - 1.96 * sd)).abs() < 0.0015, "{lo}");
        assert!((hi - (0.05 + 1.96 * sd)).abs() < 0.0015, "{hi}");
        assert!(p < 1e-7, "{p}");
        // Same seed, same interval.
        let base2 = base.clone();
        let again = paired_tests(
            &[(0..n).map(|i| !(200..1000).contains(&i)).collect()],
            &base2,
            10_000,
            42,
        );
        assert_eq!(again[0], r[0]);
    }
}
