//! Facet "runs and tuples, summed": the end-of-run table and the counts `bench` prints, computed
//! from the stored rows.

use sqlx::Row;

use bench_core::{ParadigmId, QueryType};

use crate::db::{mean, Store};
use crate::error::Result;

/// One row of the end-of-run table.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRow {
    /// The paradigm.
    pub paradigm: ParadigmId,
    /// `None` for the paradigm's row over all query types.
    pub qtype: Option<QueryType>,
    /// Tuples stored.
    pub n: i64,
    /// Tuples that failed.
    pub errors: i64,
    /// Share judged correct.
    pub correct: f64,
    /// Share that answered nothing.
    pub no_answer: f64,
    /// Offline: share whose reader's sentence the sentence judge found correct; `None` when no
    /// row recorded it (LLM mode).
    pub reader_correct: Option<f64>,
    /// Mean over queries with gold chunks; `None` when none had.
    pub evidence_recall: Option<f64>,
    /// Mean over queries whose evidence names whole documents; `None` when none did.
    pub document_recall: Option<f64>,
    /// Mean context tokens.
    pub context_tokens: f64,
    /// Mean retrieval plus generation time, in milliseconds.
    pub latency_ms: f64,
    /// Mean LLM tokens of retrieval and generation (construction is a corpus cost).
    pub total_tokens: f64,
}

impl Store {
    /// Number of result rows of a run.
    pub async fn count_results(&self, run_id: i64) -> Result<i64> {
        sqlx::query_scalar("SELECT count(*) FROM results WHERE run_id = $1")
            .bind(run_id)
            .fetch_one(&self.pool)
            .await
            .map_err(|e| self.err(e))
    }

    /// Per paradigm, how many of a run's answered tuples ended their loop for `stop` (the
    /// `stop` field of an iterative paradigm's trace), and how many it answered.
    pub async fn count_stops(&self, run_id: i64, stop: &str) -> Result<Vec<(String, i64, i64)>> {
        self.count_traces(run_id, |t| {
            t.get("stop").and_then(|s| s.as_str()) == Some(stop)
        })
        .await
    }

    /// Per paradigm, how many of a run's answered tuples had a graph retrieval fall back to the
    /// question because the entity list was unreadable, and how many it answered.
    pub async fn count_unreadable_entities(&self, run_id: i64) -> Result<Vec<(String, i64, i64)>> {
        fn unreadable(v: &serde_json::Value) -> bool {
            match v {
                serde_json::Value::Object(m) => m
                    .iter()
                    .any(|(k, v)| (k == "entities_unreadable" && v.is_string()) || unreadable(v)),
                serde_json::Value::Array(a) => a.iter().any(unreadable),
                _ => false,
            }
        }
        self.count_traces(run_id, unreadable).await
    }

    /// Per paradigm with at least one match: (paradigm, tuples whose trace matches, answered
    /// tuples). Traces are read here rather than in SQL: the JSON functions differ by backend.
    async fn count_traces(
        &self,
        run_id: i64,
        matches: impl Fn(&serde_json::Value) -> bool,
    ) -> Result<Vec<(String, i64, i64)>> {
        let rows = sqlx::query(
            "SELECT paradigm, trace_json FROM results WHERE run_id = $1 AND error IS NULL",
        )
        .bind(run_id)
        .fetch_all(&self.pool)
        .await
        .map_err(|e| self.err(e))?;
        let mut counts: std::collections::BTreeMap<String, (i64, i64)> = Default::default();
        for r in &rows {
            let trace: serde_json::Value =
                serde_json::from_str(&r.get::<String, _>(1)).unwrap_or_default();
            let c = counts.entry(r.get(0)).or_default();
            c.0 += i64::from(matches(&trace));
            c.1 += 1;
        }
        Ok(counts
            .into_iter()
            .filter(|(_, (n, _))| *n > 0)
            .map(|(p, (n, of))| (p, n, of))
            .collect())
    }

    /// The end-of-run table: per paradigm and query type, and per paradigm over all types,
    /// computed from the stored rows.
    pub async fn summary(&self, run_id: i64) -> Result<Vec<SummaryRow>> {
        let mut out = Vec::new();
        for by_type in [true, false] {
            let (select, group) = if by_type {
                ("q.qtype", "r.paradigm, q.qtype")
            } else {
                ("NULL", "r.paradigm")
            };
            let sql = format!(
                "SELECT r.paradigm, {select} AS qtype, count(*) AS n,
                    CAST(sum(CASE WHEN r.error IS NOT NULL THEN 1 ELSE 0 END) AS BIGINT) AS errors,
                    {} AS correct,
                    {} AS no_answer,
                    {} AS reader_correct,
                    {} AS evidence_recall,
                    {} AS document_recall,
                    {} AS context_tokens,
                    {} AS latency_ms,
                    {} AS total_tokens
                 FROM results r
                 JOIN runs u ON u.id = r.run_id
                 JOIN queries q ON q.corpus = u.corpus AND q.corpus_hash = u.corpus_hash AND q.query_id = r.query_id
                 WHERE r.run_id = $1
                 GROUP BY {group}",
                mean("CASE WHEN r.judge_label = 'correct' THEN 1 ELSE 0 END"),
                mean("CASE WHEN r.judge_label = 'no-answer' THEN 1 ELSE 0 END"),
                mean("r.reader_correct"),
                mean("r.evidence_recall"),
                mean("r.document_recall"),
                mean("r.context_tokens"),
                mean("r.latency_retrieval_ms + r.latency_generation_ms"),
                mean("r.tokens_retrieval_in + r.tokens_retrieval_out + r.tokens_generation_in + r.tokens_generation_out"),
            );
            let rows = sqlx::query(&sql)
                .bind(run_id)
                .fetch_all(&self.pool)
                .await
                .map_err(|e| self.err(e))?;
            for r in rows {
                out.push(SummaryRow {
                    paradigm: r.get::<String, _>("paradigm").parse()?,
                    qtype: r
                        .get::<Option<String>, _>("qtype")
                        .map(|t| t.parse())
                        .transpose()?,
                    n: r.get("n"),
                    errors: r.get("errors"),
                    correct: r.get::<Option<f64>, _>("correct").unwrap_or(0.0),
                    no_answer: r.get::<Option<f64>, _>("no_answer").unwrap_or(0.0),
                    reader_correct: r.get("reader_correct"),
                    evidence_recall: r.get("evidence_recall"),
                    document_recall: r.get("document_recall"),
                    context_tokens: r.get::<Option<f64>, _>("context_tokens").unwrap_or(0.0),
                    latency_ms: r.get::<Option<f64>, _>("latency_ms").unwrap_or(0.0),
                    total_tokens: r.get::<Option<f64>, _>("total_tokens").unwrap_or(0.0),
                });
            }
        }
        // Per paradigm: its query types in order, then its overall row.
        out.sort_by_key(|r| (r.paradigm, r.qtype.is_none(), r.qtype));
        Ok(out)
    }
}
