//! One (router, sweep value, fold) of the evaluation: fit on the training rows, score the
//! scrubbed test rows, and measure the choices per corpus and pooled.

use std::collections::BTreeMap;
use std::time::Instant;

use bench_core::routing::argmax;
use bench_core::{
    BenchError, Measures, Result, RouteEvalRow, RoutePrediction, Router, RoutingRow, RoutingSchema,
    RoutingSet,
};

use rayon::prelude::*;

use super::split::Fold;
use super::types::Fallback;
use crate::baselines::most_frequent_optimal_class;
use crate::entry::Candidate;
use crate::entry::RouterContext;
use crate::probe_columns::ProbeBill;
use crate::rng::mix64;

/// One (router, sweep value, fold): its measurement rows and per-question predictions.
pub(super) struct FoldResult {
    pub(super) rows: Vec<RouteEvalRow>,
    pub(super) predictions: Vec<RoutePrediction>,
}

/// Fits `entry` on the fold's training rows, scores its test rows (scrubbed of labels and
/// outcomes unless the router sees outcomes) and measures the choices per corpus and pooled.
#[allow(clippy::too_many_arguments)]
pub(super) fn evaluate_fold(
    set: &RoutingSet,
    entry: &Candidate,
    param: Option<f64>,
    fold: u32,
    f: &Fold,
    ctx: &RouterContext,
    fallback: &[Option<usize>],
    bills: Option<&[crate::probe_columns::ProbeBill]>,
) -> Result<FoldResult> {
    let schema = &set.schema;
    let truth_rows: Vec<&RoutingRow> = f.test.iter().map(|&i| &set.rows[i]).collect();
    let test_rows: Vec<RoutingRow> = truth_rows
        .iter()
        .map(|r| {
            if entry.sees_outcomes {
                (*r).clone()
            } else {
                scrub(r)
            }
        })
        .collect();
    let ctx_err = |m: String| {
        BenchError::Invalid(format!(
            "router {}{} fold {fold}: {m}",
            entry.name,
            param.map(|p| format!(" (param {p})")).unwrap_or_default()
        ))
    };
    let fold_ctx = RouterContext {
        seed: mix64(ctx.seed ^ u64::from(fold)),
        llm: ctx.llm.clone(),
        // The folds' routers share their fits with the whole evaluation (a λ sweep fits once).
        fits: ctx.fits.clone(),
    };
    let router = (entry.make)(&fold_ctx, param)?;
    let scored = fit_and_score(router, set, f, &test_rows, &ctx_err)?;
    let play = Play {
        truth_rows: &truth_rows,
        test: &f.test,
        fallback,
        bills,
        cannot_answer: schema.cannot_answer(),
    };
    let pred: Vec<usize> = scored.scores.iter().map(|s| argmax(s)).collect();
    let predictions = (0..truth_rows.len())
        .map(|i| {
            let c = pred[i];
            let (correct, cost) = play.outcome(i, c);
            RoutePrediction {
                router: entry.name.clone(),
                param,
                fold,
                corpus: truth_rows[i].corpus.clone(),
                query_id: truth_rows[i].query_id.clone(),
                chosen: schema.classes[c].clone(),
                played: play.played(i, c).map(|p| schema.classes[p].clone()),
                correct,
                cost: cost + scored.costs[i],
                probe_cost: play.billed(i, c).0,
                arms_played: arms_paid(
                    schema,
                    play.bills.map(|b| &b[play.test[i]]),
                    play.played(i, c),
                ),
                scores: scored.scores[i].clone(),
            }
        })
        .collect();
    let rows = measure(
        &play,
        &scored,
        &pred,
        schema.n_classes(),
        (&entry.name, param, fold),
    );
    Ok(FoldResult { rows, predictions })
}

/// A fitted router's scores and own costs on the test rows, with its fit and per-query times.
struct Scored {
    scores: Vec<Vec<f64>>,
    costs: Vec<f64>,
    fit_ms: f64,
    latency_ms: f64,
}

/// Fits the fold's router on its training rows, scores the test rows and checks one score
/// vector of the schema's width per row.
fn fit_and_score(
    mut router: Box<dyn Router>,
    set: &RoutingSet,
    f: &Fold,
    test_rows: &[RoutingRow],
    ctx_err: &dyn Fn(String) -> BenchError,
) -> Result<Scored> {
    let schema = &set.schema;
    let k = schema.n_classes();
    let train = set.subset(&f.train);
    let t = Instant::now();
    router
        .fit(&train)
        .map_err(|e| ctx_err(format!("fit: {e}")))?;
    let fit_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let scores = router
        .scores_batch(schema, test_rows)
        .map_err(|e| ctx_err(format!("scores: {e}")))?;
    let costs: Vec<f64> = test_rows
        .iter()
        .map(|r| {
            let c = router.cost(r);
            (c.tokens_in + c.tokens_out) as f64
        })
        .collect();
    let score_ms = t.elapsed().as_secs_f64() * 1e3;
    if scores.len() != test_rows.len() {
        return Err(ctx_err(format!(
            "{} score vectors for {} rows",
            scores.len(),
            test_rows.len()
        )));
    }
    if let Some((i, s)) = scores.iter().enumerate().find(|(_, s)| s.len() != k) {
        return Err(ctx_err(format!(
            "row {i}: {} scores, the schema has {k} classes",
            s.len()
        )));
    }
    let latency_ms = if test_rows.is_empty() {
        0.0
    } else {
        score_ms / test_rows.len() as f64
    };
    Ok(Scored {
        scores,
        costs,
        fit_ms,
        latency_ms,
    })
}

/// What choosing a class on a test row plays, and what that earns and costs.
struct Play<'a> {
    truth_rows: &'a [&'a RoutingRow],
    /// The test rows' indices in the set (the bills are per set row).
    test: &'a [usize],
    fallback: &'a [Option<usize>],
    bills: Option<&'a [crate::probe_columns::ProbeBill]>,
    cannot_answer: usize,
}

impl Play<'_> {
    /// The paradigm class `c` plays on test row `i`: cannot-answer plays the fallback.
    fn played(&self, i: usize, c: usize) -> Option<usize> {
        if c == self.cannot_answer {
            self.fallback[i]
        } else {
            Some(c)
        }
    }

    /// (correct, cost) of playing class `c` on test row `i`, without the probe.
    fn plain(&self, i: usize, c: usize) -> (bool, f64) {
        self.played(i, c)
            .and_then(|p| self.truth_rows[i].outcomes[p])
            .map_or((false, 0.0), |o| (o.correct, o.tokens))
    }

    /// The probe's share and the total with it, for a router that read the probe.
    fn billed(&self, i: usize, c: usize) -> (f64, f64) {
        match self.bills {
            Some(b) => b[self.test[i]].charge(self.truth_rows[i], self.played(i, c)),
            None => (0.0, self.plain(i, c).1),
        }
    }

    /// (correct, cost with the probe) of playing class `c` on test row `i`.
    fn outcome(&self, i: usize, c: usize) -> (bool, f64) {
        (self.plain(i, c).0, self.billed(i, c).1)
    }
}

/// The rows of `(router, param, fold)`: per corpus and pooled (`*`), in name order, the
/// test-row count and the nine measures.
fn measure(
    play: &Play<'_>,
    scored: &Scored,
    pred: &[usize],
    k: usize,
    (router, param, fold): (&str, Option<f64>, u32),
) -> Vec<RouteEvalRow> {
    let truth: Vec<usize> = play.truth_rows.iter().map(|r| r.label).collect();
    let mut groups: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    groups.insert("*", (0..play.truth_rows.len()).collect());
    for (i, r) in play.truth_rows.iter().enumerate() {
        groups.entry(r.corpus.as_str()).or_default().push(i);
    }
    let mut out = Vec::with_capacity(groups.len());
    for (corpus, idx) in groups {
        let n = idx.len();
        let denom = n.max(1) as f64;
        let t: Vec<usize> = idx.iter().map(|&i| truth[i]).collect();
        let p: Vec<usize> = idx.iter().map(|&i| pred[i]).collect();
        let accuracy = t.iter().zip(&p).filter(|(a, b)| a == b).count() as f64 / denom;
        let mrr = idx
            .iter()
            .map(|&i| 1.0 / rank_of(&scored.scores[i], truth[i]) as f64)
            .sum::<f64>()
            / denom;
        let mean = |f: &dyn Fn(usize) -> (bool, f64)| -> (f64, f64) {
            let (mut c, mut tok) = (0.0, 0.0);
            for &i in &idx {
                let (ok, cost) = f(i);
                c += f64::from(u8::from(ok));
                tok += cost;
            }
            (c / denom, tok / denom)
        };
        let (cr, tokens) = mean(&|i| play.outcome(i, pred[i]));
        let (oracle_cr, oracle_tokens) = mean(&|i| play.plain(i, truth[i]));
        let own = idx.iter().map(|&i| scored.costs[i]).sum::<f64>() / denom;
        out.push(RouteEvalRow {
            router: router.to_owned(),
            param,
            corpus: corpus.to_string(),
            fold,
            n: n as u32,
            measures: Measures {
                accuracy,
                macro_f1: macro_f1(&t, &p, k),
                mrr,
                correct_rate: cr,
                mean_tokens: tokens + own,
                regret_correct: oracle_cr - cr,
                regret_tokens: tokens + own - oracle_tokens,
                latency_ms: scored.latency_ms,
                fit_ms: scored.fit_ms,
            },
        });
    }
    out
}

/// A row as a router that may not see outcomes gets it.
pub fn scrub(row: &RoutingRow) -> RoutingRow {
    RoutingRow {
        label: 0,
        outcomes: vec![None; row.outcomes.len()],
        ..row.clone()
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

/// Per fold, per test row: the paradigm class a `cannot-answer` prediction plays.
pub(super) fn fallbacks(
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

/// The paradigms paid for on one question, in the order they ran, each once: the probe's arms
/// (class order), then `played` when the probe had not run it. This is what `arms_played` stores
/// for every router.
fn arms_paid(
    schema: &RoutingSchema,
    bill: Option<&ProbeBill>,
    played: Option<usize>,
) -> Vec<String> {
    let mut ran: Vec<usize> = bill.map(|b| b.ran.clone()).unwrap_or_default();
    if let Some(p) = played.filter(|p| !ran.contains(p)) {
        ran.push(p);
    }
    paradigm_names(schema, &ran)
}

/// The paradigm names of `classes`, in their order (classes that are no paradigm left out).
pub(super) fn paradigm_names(schema: &RoutingSchema, classes: &[usize]) -> Vec<String> {
    classes
        .iter()
        .filter_map(|&c| schema.paradigm_of(c))
        .map(|p| p.as_str().to_string())
        .collect()
}
