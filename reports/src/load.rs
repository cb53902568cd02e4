//! Reads what a report shows from the results store (SQL through `Store::pool`).

use std::collections::BTreeMap;

use bench_core::{BenchError, Result, Store};
use sqlx::Row;

use crate::model::{CorpusInfo, CorpusMetrics, ReportData, RouteEval, RunInfo, Tokens, Tuple};

/// Which runs and evaluations a report covers.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Only these corpora (empty: every corpus with a run).
    pub corpora: Vec<String>,
    /// These runs (empty: the latest run with tuples of each corpus).
    pub runs: Vec<i64>,
    /// These router evaluations (empty: the latest one of each feature set and split).
    pub evals: Vec<i64>,
}

fn store_err(store: &Store, e: sqlx::Error) -> BenchError {
    BenchError::Store {
        path: store.path().to_owned(),
        source: e,
    }
}

/// Loads the selected runs with their tuples, corpora, corpus metrics and router evaluations.
/// Unknown run or evaluation ids, or a selection with no run, are bad input.
pub async fn load(store: &Store, sel: &Selection) -> Result<ReportData> {
    let pool = store.pool();
    let e = |err| store_err(store, err);
    let run_ids: Vec<i64> = if sel.runs.is_empty() {
        // Latest run with at least one tuple, per corpus.
        sqlx::query_scalar(
            "SELECT max(u.id) FROM runs u WHERE EXISTS (SELECT 1 FROM results r WHERE r.run_id = u.id)
             GROUP BY u.corpus ORDER BY u.corpus",
        )
        .fetch_all(pool)
        .await
        .map_err(e)?
    } else {
        sel.runs.clone()
    };
    let mut runs = Vec::new();
    for id in run_ids {
        let row = sqlx::query(
            "SELECT id, corpus, corpus_hash, config_json, config_hash, seed, crate_version, mode, reader,
                    judge, embedder, extractor, started_at, finished_at
             FROM runs WHERE id = ?",
        )
        .bind(id)
        .fetch_optional(pool)
        .await
        .map_err(e)?
        .ok_or_else(|| {
            BenchError::Invalid(format!(
                "results store {}: no run with id {id}",
                store.path()
            ))
        })?;
        let mut run = RunInfo {
            id: row.get(0),
            corpus: row.get(1),
            corpus_hash: row.get(2),
            config_json: row.get(3),
            config_hash: row.get(4),
            seed: row.get(5),
            crate_version: row.get(6),
            mode: row.get(7),
            reader: row.get(8),
            judge: row.get(9),
            embedder: row.get(10),
            extractor: row.get(11),
            started_at: row.get(12),
            finished_at: row.get(13),
            construction: None,
        };
        if !sel.corpora.is_empty() && !sel.corpora.contains(&run.corpus) {
            continue;
        }
        if !run.extractor.is_empty() {
            let c = sqlx::query(
                "SELECT tokens_in, tokens_out FROM graph_builds
                 WHERE corpus = ? AND corpus_hash = ?
                   AND extractor || ':' || model || ':' || prompt_hash = ?
                 ORDER BY id DESC LIMIT 1",
            )
            .bind(&run.corpus)
            .bind(&run.corpus_hash)
            .bind(&run.extractor)
            .fetch_optional(pool)
            .await
            .map_err(e)?;
            run.construction = c.map(|r| (r.get::<i64, _>(0) as f64, r.get::<i64, _>(1) as f64));
        }
        runs.push(run);
    }
    if !sel.corpora.is_empty() {
        for c in &sel.corpora {
            if !runs.iter().any(|r| &r.corpus == c) {
                return Err(BenchError::Invalid(format!(
                    "results store {}: no selected run of corpus {c:?}",
                    store.path()
                )));
            }
        }
    }
    if runs.is_empty() {
        return Err(BenchError::Invalid(format!(
            "results store {}: no run with results to report (run `ragrouter bench` first)",
            store.path()
        )));
    }
    runs.sort_by(|a, b| a.corpus.cmp(&b.corpus).then(a.id.cmp(&b.id)));

    let mut tuples = Vec::new();
    for run in &runs {
        tuples.extend(run_tuples(store, run).await?);
    }

    let mut corpora = Vec::new();
    let mut metrics = Vec::new();
    for run in &runs {
        if corpora.iter().any(|c: &CorpusInfo| c.name == run.corpus) {
            continue;
        }
        if let Some(r) = sqlx::query(
            "SELECT name, content_hash, source, documents, chunks, queries FROM corpora
             WHERE name = ? AND content_hash = ?",
        )
        .bind(&run.corpus)
        .bind(&run.corpus_hash)
        .fetch_optional(pool)
        .await
        .map_err(e)?
        {
            corpora.push(CorpusInfo {
                name: r.get(0),
                content_hash: r.get(1),
                source: r.get(2),
                documents: r.get(3),
                chunks: r.get(4),
                queries: r.get(5),
            });
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

    let all_evals = store.route_evals().await?; // newest first
    let chosen: Vec<(i64, bench_core::RouteEvalSpec)> = if sel.evals.is_empty() {
        // The newest of each (feature set, split): a leave-one-corpus-out run does not hide
        // the k-fold evaluation of the same features.
        let mut seen: Vec<(String, String)> = Vec::new();
        let mut out = Vec::new();
        for (id, spec) in all_evals {
            let key = (spec.features.clone(), spec.split.clone());
            if !seen.contains(&key) {
                seen.push(key);
                out.push((id, spec));
            }
        }
        out
    } else {
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
        out
    };
    let mut evals = Vec::new();
    for (id, spec) in chosen {
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

    Ok(ReportData {
        runs,
        corpora,
        tuples,
        evals,
        metrics,
        source: store.path().to_owned(),
    })
}

/// The tuples of one run joined with their questions, in question (file) order then paradigm.
async fn run_tuples(store: &Store, run: &RunInfo) -> Result<Vec<Tuple>> {
    let rows = sqlx::query(
        "SELECT r.query_id, coalesce(q.text, ''), coalesce(q.qtype, 'other'), r.paradigm, r.answer,
                r.judge_label, r.em, r.f1, r.semantic_f1, r.evidence_recall,
                r.tokens_construction_in, r.tokens_construction_out, r.tokens_retrieval_in,
                r.tokens_retrieval_out, r.tokens_generation_in, r.tokens_generation_out,
                r.tokens_judge_in, r.tokens_judge_out, r.context_tokens,
                r.latency_retrieval_ms + r.latency_generation_ms, r.mode, r.error
         FROM results r
         LEFT JOIN queries q ON q.corpus = ? AND q.corpus_hash = ? AND q.query_id = r.query_id
         WHERE r.run_id = ?
         ORDER BY q.rowid, r.query_id, r.paradigm",
    )
    .bind(&run.corpus)
    .bind(&run.corpus_hash)
    .bind(run.id)
    .fetch_all(store.pool())
    .await
    .map_err(|e| store_err(store, e))?;
    let questions = {
        let mut ids: Vec<&str> = rows.iter().map(|r| r.get::<&str, _>(0)).collect();
        ids.sort_unstable();
        ids.dedup();
        ids.len().max(1) as f64
    };
    let (con_in, con_out) = run.construction.unwrap_or((0.0, 0.0));
    let mut out = Vec::with_capacity(rows.len());
    for (i, r) in rows.iter().enumerate() {
        let bad = |field: &str, e: BenchError| {
            BenchError::Invalid(format!(
                "results store {}: run {} row {i} field {field}: {e}",
                store.path(),
                run.id
            ))
        };
        let paradigm: bench_core::ParadigmId = r
            .get::<String, _>(3)
            .parse()
            .map_err(|e| bad("paradigm", e))?;
        let qtype = r.get::<String, _>(2).parse().map_err(|e| bad("qtype", e))?;
        let n = |k: usize| r.get::<i64, _>(k) as f64;
        let share = if paradigm.uses_graph() {
            1.0 / questions
        } else {
            0.0
        };
        out.push(Tuple {
            run_id: run.id,
            corpus: run.corpus.clone(),
            query_id: r.get(0),
            query: r.get(1),
            qtype,
            paradigm,
            answer: r.get(4),
            judge: r.get(5),
            em: r.get(6),
            f1: r.get(7),
            semantic_f1: r.get(8),
            evidence_recall: r.get(9),
            tokens: Tokens {
                construction_in: n(10),
                construction_out: n(11),
                amortised_in: con_in * share,
                amortised_out: con_out * share,
                retrieval_in: n(12),
                retrieval_out: n(13),
                generation_in: n(14),
                generation_out: n(15),
                judge_in: n(16),
                judge_out: n(17),
            },
            context_tokens: n(18),
            latency_ms: r.get(19),
            mode: r.get(20),
            error: r.get(21),
        });
    }
    Ok(out)
}
