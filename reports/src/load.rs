//! Reads what a report shows from the results store, through its typed reads (no SQL here).

use std::collections::{BTreeMap, BTreeSet};

use bench_core::{BenchError, Result, RouteEvalSpec};
use store::Store;
use store::{select_runs, CorpusRow, RunRef, RunSelection, SplitUse};

use crate::model::{CorpusMetrics, ReportData, RouteEval, RunInfo, SignalRow, Tuple};

/// Which runs and evaluations a report covers.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Only these corpora (empty: every corpus with a run).
    pub corpora: Vec<String>,
    /// These runs (empty: the latest run with tuples of each corpus).
    pub runs: Vec<i64>,
    /// These router evaluations (empty: the latest one of each feature set and split, among
    /// the evaluations made on exactly the selected runs where any were).
    pub evals: Vec<i64>,
}

/// Loads the selected runs with their tuples, corpora, corpus metrics and router evaluations.
/// Unknown run or evaluation ids, or a selection with no run, are bad input. The runs are
/// chosen by the rule `route eval` uses ([`store::select_runs`]: the latest run with
/// tuples per corpus and split tag, train-tagged runs left out), and like `route eval` a report
/// draws one mode: runs of different modes (offline, an LLM, an import source) or cost units on one
/// axis and in one pooled panel would mislead, so they are refused and `--corpora`/`--runs` named.
pub async fn load(store: &Store, sel: &Selection) -> Result<ReportData> {
    let chosen = select_runs(
        store,
        &RunSelection {
            run_ids: sel.runs.clone(),
            corpora: sel.corpora.clone(),
            splits: SplitUse::Pooled,
        },
    )
    .await?;
    check_one_mode(store, sel, &chosen)?;
    let report_runs: BTreeSet<i64> = chosen.iter().map(|r| r.id).collect();
    let runs = run_infos(store, chosen).await?;
    let (tuples, signals) = tuples_and_signals(store, &runs).await?;
    let (corpora, metrics) = corpora_and_metrics(store, &runs).await?;
    let picked = pick_evals(store, sel, &report_runs).await?;
    let evals = load_evals(store, sel, picked).await?;
    Ok(ReportData {
        runs,
        corpora,
        tuples,
        evals,
        metrics,
        signals,
        source: store.path().to_owned(),
    })
}

/// Refuses runs of more than one mode or cost unit, naming each run and how to choose.
fn check_one_mode(store: &Store, sel: &Selection, chosen: &[RunRef]) -> Result<()> {
    let kinds: BTreeSet<(String, String)> = chosen
        .iter()
        .map(|r| (r.mode.label(), r.cost_unit()))
        .collect();
    if kinds.len() <= 1 {
        return Ok(());
    }
    let hint = if sel.runs.is_empty() {
        "choose corpora with --corpora or runs with --runs"
    } else {
        "give --runs runs of one mode and cost unit"
    };
    Err(BenchError::Invalid(format!(
        "results store {}: the selected runs mix modes or cost units ({}); a report draws one \
         mode on one cost axis: {hint}",
        store.path(),
        chosen
            .iter()
            .map(|r| format!(
                "run {} of {}: {} in {}",
                r.id,
                r.corpus,
                r.mode,
                r.cost_unit()
            ))
            .collect::<Vec<_>>()
            .join("; ")
    )))
}

/// Each chosen run's stored row, cost unit and graph construction tokens, by corpus then id.
async fn run_infos(store: &Store, chosen: Vec<RunRef>) -> Result<Vec<RunInfo>> {
    let mut runs = Vec::new();
    for r in chosen {
        let cost_unit = r.cost_unit();
        let row = store.run_row(r.id).await?.ok_or_else(|| {
            BenchError::Invalid(format!(
                "results store {}: no run with id {}",
                store.path(),
                r.id
            ))
        })?;
        let construction = if row.extractor.is_empty() {
            None
        } else {
            store
                .run_construction_tokens(&row.corpus, &row.corpus_hash, &row.extractor)
                .await?
                .map(|(i, o)| (i as f64, o as f64))
        };
        runs.push(RunInfo {
            row,
            cost_unit,
            construction,
        });
    }
    runs.sort_by(|a, b| a.corpus.cmp(&b.corpus).then(a.id.cmp(&b.id)));
    Ok(runs)
}

/// Every run's tuples and probe signals, run by run.
async fn tuples_and_signals(
    store: &Store,
    runs: &[RunInfo],
) -> Result<(Vec<Tuple>, Vec<SignalRow>)> {
    let (mut tuples, mut signals) = (Vec::new(), Vec::new());
    for run in runs {
        tuples.extend(run_tuples(store, run).await?);
        for (query_id, signal) in store.signals(run.id).await? {
            signals.push(SignalRow {
                run_id: run.id,
                corpus: run.corpus.clone(),
                query_id,
                signal,
            });
        }
    }
    Ok((tuples, signals))
}

/// Each corpus's stored row and corpus metrics, once per corpus, in run order.
async fn corpora_and_metrics(
    store: &Store,
    runs: &[RunInfo],
) -> Result<(Vec<CorpusRow>, Vec<CorpusMetrics>)> {
    let mut corpora = Vec::new();
    let mut metrics = Vec::new();
    for run in runs {
        if corpora.iter().any(|c: &CorpusRow| c.name == run.corpus) {
            continue;
        }
        if let Some(r) = store.corpus_row(&run.corpus, &run.corpus_hash).await? {
            corpora.push(r);
        }
        if let Some((configuration, v)) =
            store.corpus_metrics(&run.corpus, &run.corpus_hash).await?
        {
            let values: BTreeMap<String, f64> = v
                .as_object()
                .map(|o| {
                    o.iter()
                        .filter_map(|(k, v)| v.as_f64().map(|x| (k.clone(), x)))
                        .collect()
                })
                .unwrap_or_default();
            metrics.push(CorpusMetrics {
                corpus: run.corpus.clone(),
                configuration,
                values,
            });
        }
    }
    Ok((corpora, metrics))
}

/// The router evaluations to draw: the named ones (an unknown id is bad input), else the
/// newest of each feature set and split.
async fn pick_evals(
    store: &Store,
    sel: &Selection,
    report_runs: &BTreeSet<i64>,
) -> Result<Vec<(i64, RouteEvalSpec)>> {
    let all_evals = store.route_evals().await?; // newest first
    if sel.evals.is_empty() {
        return Ok(newest_evals(all_evals, report_runs));
    }
    let mut out = Vec::new();
    for id in &sel.evals {
        let found = all_evals
            .iter()
            .find(|(i, _)| i == id)
            .cloned()
            .ok_or_else(|| {
                BenchError::Invalid(format!(
                    "results store {}: no router evaluation with id {id}",
                    store.path()
                ))
            })?;
        out.push(found);
    }
    Ok(out)
}

/// The newest of each (feature set, split) among `all_evals` (newest first): a
/// leave-one-corpus-out run does not hide the k-fold evaluation of the same features. Where
/// some evaluations were made on exactly the report's runs, only those are drawn: a later
/// `route eval --corpora medical --features q` must not stand in for the pooled Q bar of
/// Figure 5 beside the pooled C and Q+C ones.
fn newest_evals(
    all_evals: Vec<(i64, RouteEvalSpec)>,
    report_runs: &BTreeSet<i64>,
) -> Vec<(i64, RouteEvalSpec)> {
    let on_report_runs = |spec: &RouteEvalSpec| {
        spec.runs
            .iter()
            .map(|(_, id)| *id)
            .collect::<BTreeSet<i64>>()
            == *report_runs
    };
    let matching = all_evals.iter().any(|(_, spec)| on_report_runs(spec));
    let mut seen: Vec<(String, String)> = Vec::new();
    let mut out = Vec::new();
    for (id, spec) in all_evals
        .into_iter()
        .filter(|(_, spec)| !matching || on_report_runs(spec))
    {
        let key = (spec.features.clone(), spec.split.clone());
        if !seen.contains(&key) {
            seen.push(key);
            out.push((id, spec));
        }
    }
    out
}

/// The picked evaluations' rows (only the selected corpora and the pooled `*`) and tests, by id.
async fn load_evals(
    store: &Store,
    sel: &Selection,
    picked: Vec<(i64, RouteEvalSpec)>,
) -> Result<Vec<RouteEval>> {
    let mut evals = Vec::new();
    for (id, spec) in picked {
        let mut rows = store.route_eval_rows(id).await?;
        if !sel.corpora.is_empty() {
            rows.retain(|r| r.corpus == "*" || sel.corpora.contains(&r.corpus));
        }
        let tests = store.route_eval_tests(id).await?;
        evals.push(RouteEval {
            id,
            spec,
            rows,
            tests,
        });
    }
    evals.sort_by_key(|e| e.id);
    Ok(evals)
}

/// The tuples of one run joined with their questions, in question (file) order then paradigm.
async fn run_tuples(store: &Store, run: &RunInfo) -> Result<Vec<Tuple>> {
    let rows = store
        .report_tuples(run.id, &run.corpus, &run.corpus_hash)
        .await?;
    let questions = {
        let mut ids: Vec<&str> = rows.iter().map(|r| r.query_id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        ids.len().max(1) as f64
    };
    let (con_in, con_out) = run.construction.unwrap_or((0.0, 0.0));
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let share = if row.paradigm.uses_graph() {
            1.0 / questions
        } else {
            0.0
        };
        out.push(Tuple {
            run_id: run.id,
            corpus: run.corpus.clone(),
            row,
            amortised_in: con_in * share,
            amortised_out: con_out * share,
        });
    }
    Ok(out)
}
