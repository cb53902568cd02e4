//! Cross-validated evaluation of routers: stratified k-fold or leave-one-corpus-out splits, the
//! per-fold measurements of `RouteEvalRow`, and their mean and spread over folds.
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

use bench_core::routing::argmax;
use bench_core::{
    BenchError, Result, RouteEvalRow, RoutePrediction, Router, RoutingRow, RoutingSet, SplitTag,
};
use rayon::prelude::*;

use crate::baselines::most_frequent_optimal_class;
pub use crate::entry::{Candidate, MakeCandidate};
use crate::entry::{Family, RouterContext};
use crate::rng::{mix64, SplitMix64};

mod fold;
use fold::{evaluate_fold, FoldResult};

/// Row indices of one fold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fold {
    /// Rows the router is fitted on.
    pub train: Vec<usize>,
    /// Rows it is scored on.
    pub test: Vec<usize>,
}

/// How the rows are split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    /// Stratified k-fold by label.
    KFold(usize),
    /// Leave one corpus out: one fold per corpus.
    Loco,
    /// The data's own split: train on rows of runs tagged `train`, test on those tagged `test`.
    Given,
}

impl Split {
    /// The name `parse` reads back (`kfold`, `loco`, `given`).
    pub fn name(self) -> &'static str {
        match self {
            Split::KFold(_) => "kfold",
            Split::Loco => "loco",
            Split::Given => "given",
        }
    }

    /// Parses `kfold`, `loco` or `given`; `folds` is used by k-fold.
    pub fn parse(s: &str, folds: usize) -> Result<Split> {
        match s.trim() {
            "kfold" => Ok(Split::KFold(folds)),
            "loco" => Ok(Split::Loco),
            "given" => Ok(Split::Given),
            other => Err(BenchError::Invalid(format!(
                "unknown split {other:?}: expected kfold (stratified k-fold), loco (leave one corpus out) or given (train on runs tagged train, test on runs tagged test)"
            ))),
        }
    }

    /// The folds of `set`; `tags` (one per row, the split tag of the row's run) is read by
    /// `given` only.
    pub fn folds(
        self,
        set: &RoutingSet,
        seed: u64,
        tags: &[Option<SplitTag>],
    ) -> Result<Vec<Fold>> {
        match self {
            Split::KFold(k) => stratified_kfold(&set.labels(), k, seed),
            Split::Loco => leave_one_corpus_out(set),
            Split::Given => given_fold(set, tags).map(|f| vec![f]),
        }
    }
}

/// One fold: train on the rows tagged `train`, test on those tagged `test`.
pub(crate) fn given_fold(set: &RoutingSet, tags: &[Option<SplitTag>]) -> Result<Fold> {
    if tags.len() != set.rows.len() {
        return Err(BenchError::Invalid(format!(
            "--split given: {} split tags for {} rows",
            tags.len(),
            set.rows.len()
        )));
    }
    let pick =
        |t: SplitTag| -> Vec<usize> { (0..tags.len()).filter(|&i| tags[i] == Some(t)).collect() };
    let (train, test) = (pick(SplitTag::Train), pick(SplitTag::Test));
    if train.is_empty() || test.is_empty() {
        return Err(BenchError::Invalid(format!(
            "--split given needs rows tagged train and test; the data set has {} train and {} test rows",
            train.len(),
            test.len()
        )));
    }
    Ok(Fold { train, test })
}

/// Stratified k-fold: each class's rows are shuffled (seeded) and dealt to the folds in turn,
/// continuing where the previous class stopped, so every fold gets each class's share to within
/// one row and the folds' sizes differ by at most one. Folds are disjoint and cover every row;
/// indices are sorted within a fold.
pub fn stratified_kfold(labels: &[usize], k: usize, seed: u64) -> Result<Vec<Fold>> {
    if k < 2 {
        return Err(BenchError::Invalid(format!(
            "k-fold needs at least 2 folds, got {k}"
        )));
    }
    if labels.len() < k {
        return Err(BenchError::Invalid(format!(
            "{k} folds need at least {k} rows, the data set has {}",
            labels.len()
        )));
    }
    let mut by_class: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, &l) in labels.iter().enumerate() {
        by_class.entry(l).or_default().push(i);
    }
    let mut rng = SplitMix64::new(seed);
    let mut test: Vec<Vec<usize>> = vec![Vec::new(); k];
    let mut next = 0;
    for rows in by_class.values_mut() {
        rng.shuffle(rows);
        for &i in rows.iter() {
            test[next].push(i);
            next = (next + 1) % k;
        }
    }
    Ok(test
        .into_iter()
        .map(|mut t| {
            t.sort_unstable();
            let mut in_test = vec![false; labels.len()];
            t.iter().for_each(|&i| in_test[i] = true);
            Fold {
                train: (0..labels.len()).filter(|&i| !in_test[i]).collect(),
                test: t,
            }
        })
        .collect())
}

/// One fold per corpus (sorted by name): test on it, train on the others.
pub(crate) fn leave_one_corpus_out(set: &RoutingSet) -> Result<Vec<Fold>> {
    let mut corpora: Vec<&str> = set.rows.iter().map(|r| r.corpus.as_str()).collect();
    corpora.sort_unstable();
    corpora.dedup();
    if corpora.len() < 2 {
        return Err(BenchError::Invalid(format!(
            "leave-one-corpus-out needs at least 2 corpora, the data set has {}",
            corpora.len()
        )));
    }
    Ok(corpora
        .iter()
        .map(|c| {
            let (test, train) = (0..set.rows.len()).partition(|&i| set.rows[i].corpus == *c);
            Fold { train, test }
        })
        .collect())
}

/// A row as a router that may not see outcomes gets it.
pub fn scrub(row: &RoutingRow) -> RoutingRow {
    RoutingRow {
        label: 0,
        outcomes: vec![None; row.outcomes.len()],
        ..row.clone()
    }
}

/// Which paradigm a `cannot-answer` prediction plays when the correct rate is measured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Fallback {
    /// The training fold's most frequent optimal paradigm (the paper's Appendix D.3).
    MostFrequent,
    /// Per question, the paradigm a calibrated utility estimate fitted on the training fold
    /// ranks first (`util-lr` at λ = 0): a classifier's `cannot-answer` then costs nothing.
    #[default]
    Utility,
}

impl Fallback {
    /// The name `parse` reads back (`most-frequent`, `utility`).
    pub fn name(self) -> &'static str {
        match self {
            Fallback::MostFrequent => "most-frequent",
            Fallback::Utility => "utility",
        }
    }

    /// Parses `most-frequent` or `utility`.
    pub fn parse(s: &str) -> Result<Fallback> {
        match s.trim() {
            "most-frequent" => Ok(Fallback::MostFrequent),
            "utility" => Ok(Fallback::Utility),
            other => Err(BenchError::Invalid(format!(
                "unknown fallback {other:?}: expected utility (per question, the paradigm the training folds' utility estimate ranks first) or most-frequent (the paper's: the most frequent optimal paradigm)"
            ))),
        }
    }
}

/// How `evaluate_with` measures.
#[derive(Clone, Default)]
pub(crate) struct EvalOptions {
    /// What a `cannot-answer` prediction plays.
    pub fallback: Fallback,
    /// Per row of the set, the probe's bill: every router that reads features (all but the
    /// baselines and Oracle) pays it (`crate::probe`). Empty: no probe was read.
    pub bills: Arc<Vec<crate::probe::ProbeBill>>,
    /// Told a line as each router finishes all its folds (`None`: nothing is said).
    pub progress: Option<crate::protocol::Notices>,
}

impl EvalOptions {
    /// Whether `entry` pays the probe: it reads the features the probe fed.
    fn pays_probe(&self, entry: &Candidate) -> bool {
        !self.bills.is_empty() && entry.family != Family::Baseline && !entry.sees_outcomes
    }
}

/// What `evaluate` measured, and the routers it could not run.
#[derive(Debug, Clone, Default)]
pub struct Evaluation {
    /// Per (router, sweep value, fold), one row per corpus and one pooled (`*`).
    pub rows: Vec<RouteEvalRow>,
    /// Every test question of every fold, per router and sweep value.
    pub predictions: Vec<RoutePrediction>,
    /// (router, reason) for entries that were not run: an LLM router offline, a seed router
    /// whose lanes the data set lacks. A skip is not a failure.
    pub skipped: Vec<(String, String)>,
    /// (router, first error) for entries that failed on some fold (left out whole).
    pub failed: Vec<(String, String)>,
}

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

/// Per fold, per test row: the paradigm class a `cannot-answer` prediction plays.
fn fallbacks(
    set: &RoutingSet,
    folds: &[Fold],
    ctx: &RouterContext,
    fallback: Fallback,
) -> Result<Vec<Vec<Option<usize>>>> {
    folds
        .par_iter()
        .enumerate()
        .map(|(fi, f)| {
            let train = set.subset(&f.train);
            let constant = most_frequent_optimal_class(&set.schema, &train.rows);
            if fallback == Fallback::MostFrequent {
                return Ok(vec![constant; f.test.len()]);
            }
            // The fold's seed, as the util-lr candidates of the same fold get it: they share
            // this fit.
            let mut u = crate::utility::fallback_router(mix64(ctx.seed ^ fi as u64), &ctx.fits);
            u.fit(&train)?;
            let rows: Vec<RoutingRow> = f.test.iter().map(|&i| scrub(&set.rows[i])).collect();
            let scores = u.scores_batch(&set.schema, &rows)?;
            let ca = set.schema.cannot_answer();
            Ok(scores.iter().map(|s| Some(argmax(&s[..ca]))).collect())
        })
        .collect()
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
    Ok(Evaluation {
        rows,
        predictions,
        skipped,
        failed,
    })
}

/// Counts each router's finished jobs (its folds, times its sweep) and tells a line when a
/// router's last one ends, so a long evaluation shows where it is.
struct Progress {
    /// Per router name: jobs left, and whether one failed.
    left: BTreeMap<String, (AtomicUsize, AtomicBool)>,
    /// Routers finished so far; held while a line is told, so the counts come in order.
    finished: std::sync::Mutex<usize>,
    started: Instant,
    tell: Option<crate::protocol::Notices>,
}

impl Progress {
    fn new(names: impl Iterator<Item = String>, tell: Option<crate::protocol::Notices>) -> Self {
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

/// Rank (1-based) of class `truth` when classes are ordered by score, higher first, ties by
/// lower class index; NaN ranks last.
pub(crate) fn rank_of(scores: &[f64], truth: usize) -> usize {
    let key = |v: f64| if v.is_nan() { f64::NEG_INFINITY } else { v };
    let t = key(scores[truth]);
    1 + scores
        .iter()
        .enumerate()
        .filter(|&(j, &s)| key(s) > t || (key(s) == t && j < truth))
        .count()
}

/// Macro F1 over the classes present in the truth or the predictions.
pub(crate) fn macro_f1(truth: &[usize], pred: &[usize], n_classes: usize) -> f64 {
    let mut tp = vec![0usize; n_classes];
    let mut n_true = vec![0usize; n_classes];
    let mut n_pred = vec![0usize; n_classes];
    for (&t, &p) in truth.iter().zip(pred) {
        n_true[t] += 1;
        n_pred[p] += 1;
        if t == p {
            tp[t] += 1;
        }
    }
    let present: Vec<usize> = (0..n_classes)
        .filter(|&c| n_true[c] + n_pred[c] > 0)
        .collect();
    if present.is_empty() {
        return 0.0;
    }
    present
        .iter()
        .map(|&c| 2.0 * tp[c] as f64 / (n_true[c] + n_pred[c]) as f64)
        .sum::<f64>()
        / present.len() as f64
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

/// The averaged measurements.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Measures {
    /// Share of test rows whose label the router ranked first.
    pub accuracy: f64,
    /// Macro-averaged F1 over the classes.
    pub macro_f1: f64,
    /// Mean reciprocal rank of the label in the router's scores.
    pub mrr: f64,
    /// Share of questions the played paradigm answered correctly.
    pub correct_rate: f64,
    /// Mean tokens per query: the chosen paradigm's plus the router's own cost.
    pub mean_tokens: f64,
    /// Oracle's correct rate minus this router's.
    pub regret_correct: f64,
    /// This router's mean tokens minus Oracle's.
    pub regret_tokens: f64,
    /// Mean wall time to route one query, in milliseconds (fit excluded).
    pub latency_ms: f64,
    /// Mean wall time of `fit` per fold, in milliseconds.
    pub fit_ms: f64,
}

impl Measures {
    fn of(r: &RouteEvalRow) -> [f64; 9] {
        [
            r.accuracy,
            r.macro_f1,
            r.mrr,
            r.correct_rate,
            r.mean_tokens,
            r.regret_correct,
            r.regret_tokens,
            r.latency_ms,
            r.fit_ms,
        ]
    }

    fn from(v: [f64; 9]) -> Measures {
        Measures {
            accuracy: v[0],
            macro_f1: v[1],
            mrr: v[2],
            correct_rate: v[3],
            mean_tokens: v[4],
            regret_correct: v[5],
            regret_tokens: v[6],
            latency_ms: v[7],
            fit_ms: v[8],
        }
    }
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
            let vals: Vec<[f64; 9]> = rs.iter().map(|r| Measures::of(r)).collect();
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
                mean: Measures::from(mean),
                std: Measures::from(std),
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
            accuracy: acc,
            macro_f1: 0.0,
            mrr: 0.0,
            correct_rate: 0.0,
            mean_tokens: 0.0,
            regret_correct: 0.0,
            regret_tokens: 0.0,
            latency_ms: 0.0,
            fit_ms: 0.0,
        };
        let s = summarize(&[row(0, 0.5), row(1, 0.7), row(2, 0.9)]);
        assert_eq!(s.len(), 1);
        assert!((s[0].mean.accuracy - 0.7).abs() < 1e-12);
        assert!((s[0].std.accuracy - 0.2).abs() < 1e-12);
        assert_eq!(s[0].n, 30);
    }
}
