//! Cross-validated evaluation of routers: stratified k-fold or leave-one-corpus-out splits, the
//! per-fold measurements of `RouteEvalRow`, and their mean and spread over folds; also the rows
//! of a router whose decisions were worked out elsewhere (`decided_rows`: a published router's
//! own runs, a cascade).
//!
//! Each (router, sweep value, fold) gets a fresh router, fitted on the training rows only. The
//! rows it scores have their label and outcomes scrubbed unless its entry `sees_outcomes`
//! (Oracle), so no router can peek at what it is graded on. The `cannot-answer` fallback of the
//! correct rate is the training fold's most frequent optimal paradigm (Appendix D.3); regrets are
//! against Oracle on the same rows. Jobs run in parallel but are collected in a fixed order: the
//! numbers (not the timings) are the same on every run.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::Arc;
use std::time::Instant;

pub use bench_core::Measures;
use bench_core::{Result, RouteEvalRow, RoutePrediction, RoutingSet};
use rayon::prelude::*;

use crate::entry::RouterContext;
pub use crate::entry::{Candidate, MakeCandidate};

mod fold;
mod operating;
mod split;
mod types;
pub use fold::scrub;
use fold::{evaluate_fold, fallbacks, FoldResult};
pub(crate) use fold::{macro_f1, rank_of};
pub use operating::{choose_operating_point, inner_folds, INNER_FOLDS};
pub use split::{stratified_kfold, Fold, Split};
pub(crate) use types::EvalOptions;
pub use types::{Evaluation, Fallback, Notices, OperatingPoint};

/// Evaluates every entry (each value of its sweep) on every fold, with the default options
/// (the most-frequent fallback of the paper).
pub fn evaluate(
    set: &RoutingSet,
    entries: &[Candidate],
    folds: &[Fold],
    ctx: &RouterContext,
) -> Result<Evaluation> {
    evaluate_with(
        set,
        entries,
        folds,
        ctx,
        &EvalOptions {
            fallback: Fallback::MostFrequent,
            bills: Arc::default(),
            progress: None,
        },
    )
}

/// Evaluates every entry (each value of its sweep) on every fold.
pub(crate) fn evaluate_with(
    set: &RoutingSet,
    entries: &[Candidate],
    folds: &[Fold],
    ctx: &RouterContext,
    opts: &EvalOptions,
) -> Result<Evaluation> {
    set.validate()?;
    let mut skipped = Vec::new();
    let mut jobs = Vec::new();
    for e in entries {
        if e.needs_llm && ctx.llm.is_none() {
            skipped.push((
                e.name.clone(),
                "needs an LLM endpoint (offline run)".to_string(),
            ));
            continue;
        }
        if let Some(why) = e.missing_lane(&set.schema) {
            skipped.push((e.name.clone(), why));
            continue;
        }
        let params: Vec<Option<f64>> = if e.sweep.is_empty() {
            vec![None]
        } else {
            e.sweep.iter().map(|&p| Some(p)).collect()
        };
        for p in params {
            for (fi, f) in folds.iter().enumerate() {
                jobs.push((e, p, fi, f));
            }
        }
    }
    let fb = fallbacks(set, folds, ctx, opts.fallback)?;
    let progress = Progress::new(jobs.iter().map(|j| j.0.name.clone()), opts.progress.clone());
    let per_job: Vec<Result<FoldResult>> = jobs
        .par_iter()
        .map(|(e, p, fi, f)| {
            let bills = opts.pays_probe(e).then(|| opts.bills.as_slice());
            let r = evaluate_fold(set, e, *p, *fi as u32, f, ctx, &fb[*fi], bills);
            progress.job_done(&e.name, r.is_err());
            r
        })
        .collect();
    // A router that fails on any fold is reported with its first error and left out whole
    // (no partial rows); the others are still measured.
    let mut failed: Vec<(String, String)> = Vec::new();
    for ((e, ..), r) in jobs.iter().zip(&per_job) {
        if let Err(err) = r {
            if !failed.iter().any(|(n, _)| *n == e.name) {
                failed.push((e.name.clone(), err.to_string()));
            }
        }
    }
    let mut rows = Vec::new();
    let mut predictions = Vec::new();
    for ((e, ..), r) in jobs.iter().zip(per_job) {
        if let Ok(r) = r {
            if !failed.iter().any(|(n, _)| *n == e.name) {
                rows.extend(r.rows);
                predictions.extend(r.predictions);
            }
        }
    }
    let mut ev = Evaluation {
        rows,
        predictions,
        skipped,
        failed,
        operating_points: Vec::new(),
    };
    ev.operating_points = operating::fix_points(set, entries, folds, ctx, opts, &mut ev)?;
    Ok(ev)
}

/// Counts each router's finished jobs (its folds, times its sweep) and tells a line when a
/// router's last one ends, so a long evaluation shows where it is.
struct Progress {
    /// Per router name: jobs left, and whether one failed.
    left: BTreeMap<String, (AtomicUsize, AtomicBool)>,
    /// Routers finished so far; held while a line is told, so the counts come in order.
    finished: std::sync::Mutex<usize>,
    started: Instant,
    tell: Option<Notices>,
}

impl Progress {
    fn new(names: impl Iterator<Item = String>, tell: Option<Notices>) -> Self {
        let mut left: BTreeMap<String, (AtomicUsize, AtomicBool)> = BTreeMap::new();
        for name in names {
            *left.entry(name).or_default().0.get_mut() += 1;
        }
        Progress {
            left,
            finished: std::sync::Mutex::new(0),
            started: Instant::now(),
            tell,
        }
    }

    fn job_done(&self, name: &str, failed: bool) {
        let (Some(tell), Some((left, any_failed))) = (&self.tell, self.left.get(name)) else {
            return;
        };
        any_failed.fetch_or(failed, SeqCst);
        if left.fetch_sub(1, SeqCst) == 1 {
            let mut n = self.finished.lock().unwrap_or_else(|e| e.into_inner());
            *n += 1;
            let how = if any_failed.load(SeqCst) {
                "failed"
            } else {
                "done"
            };
            tell(&format!(
                "route eval: {name} {how} ({}/{} routers, {:.1} s)",
                *n,
                self.left.len(),
                self.started.elapsed().as_secs_f64()
            ));
        }
    }
}

/// One decided test question: its row in the set, the class played, whether that was correct,
/// the total cost and the probe's share of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Decided {
    /// Index of the row in the set.
    pub row: usize,
    /// The class played.
    pub class: usize,
    /// Whether the played paradigm was judged correct.
    pub correct: bool,
    /// Total cost, the probe's share included.
    pub cost: f64,
    /// The probe's share of `cost`.
    pub probe_cost: f64,
    /// Every class paid for, in the order run, each once (`class` among them).
    pub arms: Vec<usize>,
}

/// The measurement rows (per corpus and pooled `*`) and predictions of a router whose decisions
/// and their outcomes were worked out elsewhere (a published router's own runs, a cascade).
pub fn decided_rows(
    set: &RoutingSet,
    fold: u32,
    router: &str,
    param: Option<f64>,
    items: &[Decided],
) -> Evaluation {
    let mut ev = Evaluation::default();
    if items.is_empty() {
        return ev;
    }
    ev.predictions = items
        .iter()
        .map(|d| decided_prediction(set, fold, router, param, d))
        .collect();
    for (corpus, g) in decided_groups(set, items) {
        ev.rows.push(RouteEvalRow {
            router: router.to_string(),
            param,
            corpus: corpus.to_string(),
            fold,
            n: g.len() as u32,
            measures: decided_measures(set, &g),
        });
    }
    ev
}

/// Scores that rank class `c` first and every other class after it: what a decided question's
/// router "scored".
fn one_hot(k: usize, c: usize) -> Vec<f64> {
    let mut s = vec![0.0; k];
    s[c] = 1.0;
    s
}

/// The prediction of one decided question: the class played, its paradigm, every arm paid for.
fn decided_prediction(
    set: &RoutingSet,
    fold: u32,
    router: &str,
    param: Option<f64>,
    d: &Decided,
) -> RoutePrediction {
    let schema = &set.schema;
    let row = &set.rows[d.row];
    RoutePrediction {
        router: router.to_string(),
        param,
        fold,
        corpus: row.corpus.clone(),
        query_id: row.query_id.clone(),
        chosen: schema.classes[d.class].clone(),
        played: schema.paradigm_of(d.class).map(|p| p.as_str().to_string()),
        correct: d.correct,
        cost: d.cost,
        probe_cost: d.probe_cost,
        arms_played: fold::paradigm_names(schema, &d.arms),
        scores: one_hot(schema.n_classes(), d.class),
    }
}

/// The decided questions pooled (`*`) and per corpus, in corpus name order (`*` first).
fn decided_groups<'a>(
    set: &'a RoutingSet,
    items: &'a [Decided],
) -> BTreeMap<&'a str, Vec<&'a Decided>> {
    let mut groups: BTreeMap<&str, Vec<&Decided>> = BTreeMap::new();
    groups.insert("*", items.iter().collect());
    for d in items {
        groups
            .entry(set.rows[d.row].corpus.as_str())
            .or_default()
            .push(d);
    }
    groups
}

/// The measures of one group of decided questions; regrets are against Oracle on the same rows
/// (each row's label outcome), and no routing time is measured.
fn decided_measures(set: &RoutingSet, g: &[&Decided]) -> Measures {
    let k = set.schema.n_classes();
    let n = g.len() as f64;
    let truth: Vec<usize> = g.iter().map(|d| set.rows[d.row].label).collect();
    let pred: Vec<usize> = g.iter().map(|d| d.class).collect();
    let hits = truth.iter().zip(&pred).filter(|(a, b)| a == b).count() as f64;
    let cr = g.iter().filter(|d| d.correct).count() as f64 / n;
    let cost = g.iter().map(|d| d.cost).sum::<f64>() / n;
    let (mut oc, mut ot) = (0.0, 0.0);
    for d in g {
        let r = &set.rows[d.row];
        if let Some(o) = r.outcomes.get(r.label).copied().flatten() {
            oc += f64::from(u8::from(o.correct));
            ot += o.tokens;
        }
    }
    Measures {
        accuracy: hits / n,
        macro_f1: macro_f1(&truth, &pred, k),
        mrr: g
            .iter()
            .map(|d| 1.0 / rank_of(&one_hot(k, d.class), set.rows[d.row].label) as f64)
            .sum::<f64>()
            / n,
        correct_rate: cr,
        mean_tokens: cost,
        regret_correct: oc / n - cr,
        regret_tokens: cost - ot / n,
        latency_ms: 0.0,
        fit_ms: 0.0,
    }
}

/// Mean and sample standard deviation over folds of one (router, param, corpus).
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// The router's name.
    pub router: String,
    /// Its sweep value (λ), when it has one.
    pub param: Option<f64>,
    /// A corpus name, or `*` for all test rows together.
    pub corpus: String,
    /// Folds averaged over.
    pub folds: usize,
    /// Test rows over all folds.
    pub n: u64,
    /// Mean over folds.
    pub mean: Measures,
    /// Sample standard deviation over folds (0 with one fold).
    pub std: Measures,
}

/// Groups rows by (router, param, corpus), in first-seen router order and corpus name order
/// (`*` first), and averages over folds (each fold weighs the same). The spread is the sample
/// standard deviation (0 for one fold).
pub fn summarize(rows: &[RouteEvalRow]) -> Vec<Summary> {
    let mut order: Vec<(String, Option<u64>)> = Vec::new();
    let mut groups: BTreeMap<(usize, String), Vec<&RouteEvalRow>> = BTreeMap::new();
    for r in rows {
        let key = (r.router.clone(), r.param.map(f64::to_bits));
        let pos = order.iter().position(|k| *k == key).unwrap_or_else(|| {
            order.push(key);
            order.len() - 1
        });
        groups.entry((pos, r.corpus.clone())).or_default().push(r);
    }
    groups
        .into_iter()
        .map(|((pos, corpus), rs)| {
            let m = rs.len() as f64;
            let vals: Vec<[f64; 9]> = rs.iter().map(|r| r.measures.to_array()).collect();
            let mut mean = [0.0; 9];
            let mut std = [0.0; 9];
            for j in 0..9 {
                mean[j] = vals.iter().map(|v| v[j]).sum::<f64>() / m;
                if rs.len() > 1 {
                    std[j] = (vals.iter().map(|v| (v[j] - mean[j]).powi(2)).sum::<f64>()
                        / (m - 1.0))
                        .sqrt();
                }
            }
            Summary {
                router: order[pos].0.clone(),
                param: order[pos].1.map(f64::from_bits),
                corpus,
                folds: rs.len(),
                n: rs.iter().map(|r| u64::from(r.n)).sum(),
                mean: Measures::from_array(mean),
                std: Measures::from_array(std),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_and_f1_golden_values() {
        assert_eq!(rank_of(&[0.1, 0.7, 0.2], 1), 1);
        assert_eq!(rank_of(&[0.1, 0.7, 0.2], 0), 3);
        // Ties: lower class index ranks first.
        assert_eq!(rank_of(&[0.5, 0.5, 0.5], 2), 3);
        assert_eq!(rank_of(&[0.5, 0.5, 0.5], 0), 1);
        assert_eq!(rank_of(&[f64::NAN, 0.0], 0), 2);
        // truth [0,0,1,2], pred [0,1,1,1]: F1 class0 = 2*1/(2+1), class1 = 2*1/(1+3), class2 = 0.
        let f1 = macro_f1(&[0, 0, 1, 2], &[0, 1, 1, 1], 4);
        assert!((f1 - (2.0 / 3.0 + 0.5) / 3.0).abs() < 1e-12, "{f1}");
        assert_eq!(macro_f1(&[1, 1], &[1, 1], 3), 1.0);
    }

    #[test]
    fn summary_mean_and_sample_std() {
        let row = |fold: u32, acc: f64| RouteEvalRow {
            router: "r".into(),
            param: None,
            corpus: "*".into(),
            fold,
            n: 10,
            measures: bench_core::Measures {
                accuracy: acc,
                macro_f1: 0.0,
                mrr: 0.0,
                correct_rate: 0.0,
                mean_tokens: 0.0,
                regret_correct: 0.0,
                regret_tokens: 0.0,
                latency_ms: 0.0,
                fit_ms: 0.0,
            },
        };
        let s = summarize(&[row(0, 0.5), row(1, 0.7), row(2, 0.9)]);
        assert_eq!(s.len(), 1);
        assert!((s[0].mean.accuracy - 0.7).abs() < 1e-12);
        assert!((s[0].std.accuracy - 0.2).abs() < 1e-12);
        assert_eq!(s[0].n, 30);
    }
}
