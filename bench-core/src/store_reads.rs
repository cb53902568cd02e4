//! Typed reads (and the run-record updates) that routers, reports and the CLI need: their SQL lives here, not with them.

use sqlx::Row;

use crate::error::BenchError;
use crate::{Result, Store};

/// One stored tuple as a routing set reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct RoutingTupleRow {
    pub query_id: String,
    pub paradigm: String,
    pub judge_label: Option<String>,
    /// The imported score where one exists, else the semantic F1.
    pub score: Option<f64>,
    /// Every LLM token the paradigm was billed (construction, retrieval, generation).
    pub llm_tokens: i64,
    pub error: Option<String>,
    pub context_tokens: i64,
    /// An imported tuple's cost.
    pub cost: Option<f64>,
}

/// A stored question: id, text and type, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredQuestion {
    pub id: String,
    pub text: String,
    pub qtype: String,
}

/// Every column of a run that a report shows.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    pub id: i64,
    pub corpus: String,
    pub corpus_hash: String,
    pub config_json: String,
    pub config_hash: String,
    pub seed: i64,
    pub crate_version: String,
    pub mode: String,
    pub reader: String,
    pub judge: String,
    pub embedder: String,
    pub extractor: String,
    pub started_at: String,
    pub finished_at: Option<String>,
}

/// A stored corpus's sizes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorpusRow {
    pub name: String,
    pub content_hash: String,
    pub source: String,
    pub documents: i64,
    pub chunks: i64,
    pub queries: i64,
}

/// One tuple joined with its question, as a report shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportTupleRow {
    pub query_id: String,
    /// Empty when the question is not stored.
    pub question: String,
    /// `other` when the question is not stored.
    pub qtype: String,
    pub paradigm: String,
    pub answer: String,
    pub judge_label: Option<String>,
    pub em: f64,
    pub f1: f64,
    pub semantic_f1: Option<f64>,
    pub evidence_recall: Option<f64>,
    /// construction in/out, retrieval in/out, generation in/out, judge in/out.
    pub tokens: [i64; 8],
    pub context_tokens: i64,
    pub latency_ms: f64,
    pub mode: String,
    pub error: Option<String>,
}

/// A run's stored tuples: how many, how many without an error, and the first error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOutcome {
    pub tuples: i64,
    pub ok: i64,
    pub first_error: Option<String>,
}

/// What an embedding endpoint was sent since the last record.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EmbeddingUsage {
    pub requests: u64,
    pub texts: u64,
    pub tokens: u64,
    pub usage_tokens: u64,
    pub counted_tokens: u64,
}

impl Store {
    /// The tuples of a run, in (query, paradigm) order.
    pub async fn routing_tuples(&self, run_id: i64) -> Result<Vec<RoutingTupleRow>> {
        let rows = sqlx::query(
            "SELECT query_id, paradigm, judge_label, coalesce(score, semantic_f1),
                    tokens_construction_in + tokens_construction_out + tokens_retrieval_in
                    + tokens_retrieval_out + tokens_generation_in + tokens_generation_out,
                    error, context_tokens, cost
             FROM results WHERE run_id = $1 ORDER BY query_id, paradigm",
        )
        .bind(run_id)
        .fetch_all(self.pool())
        .await
        .map_err(|e| self.err(e))?;
        Ok(rows
            .iter()
            .map(|r| RoutingTupleRow {
                query_id: r.get(0),
                paradigm: r.get(1),
                judge_label: r.get(2),
                score: r.get(3),
                llm_tokens: r.get(4),
                error: r.get(5),
                context_tokens: r.get(6),
                cost: r.get(7),
            })
            .collect())
    }

    /// The stored questions of a corpus, in stored (file) order.
    pub async fn stored_questions(&self, corpus: &str, hash: &str) -> Result<Vec<StoredQuestion>> {
        let rows = sqlx::query(
            "SELECT query_id, text, qtype FROM queries WHERE corpus = $1 AND corpus_hash = $2 ORDER BY rowid",
        )
        .bind(corpus)
        .bind(hash)
        .fetch_all(self.pool())
        .await
        .map_err(|e| self.err(e))?;
        Ok(rows
            .iter()
            .map(|r| StoredQuestion {
                id: r.get(0),
                text: r.get(1),
                qtype: r.get(2),
            })
            .collect())
    }

    /// A run's row, or `None` when there is no run `id`.
    pub async fn run_row(&self, id: i64) -> Result<Option<RunRow>> {
        let row = sqlx::query(
            "SELECT id, corpus, corpus_hash, config_json, config_hash, seed, crate_version, mode, reader,
                    judge, embedder, extractor, started_at, finished_at
             FROM runs WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(self.pool())
        .await
        .map_err(|e| self.err(e))?;
        Ok(row.map(|row| RunRow {
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
        }))
    }

    /// The construction tokens (in, out) of the latest graph build of a corpus by the extractor
    /// a run recorded (`runs.extractor`, `extractor:model:prompt_hash`; compared whole, since a
    /// model name may hold a colon).
    pub async fn run_construction_tokens(
        &self,
        corpus: &str,
        hash: &str,
        extractor: &str,
    ) -> Result<Option<(i64, i64)>> {
        let row = sqlx::query(
            "SELECT tokens_in, tokens_out FROM graph_builds
             WHERE corpus = $1 AND corpus_hash = $2
               AND extractor || ':' || model || ':' || prompt_hash = $3
             ORDER BY id DESC LIMIT 1",
        )
        .bind(corpus)
        .bind(hash)
        .bind(extractor)
        .fetch_optional(self.pool())
        .await
        .map_err(|e| self.err(e))?;
        Ok(row.map(|r| (r.get(0), r.get(1))))
    }

    /// A stored corpus's row.
    pub async fn corpus_row(&self, name: &str, hash: &str) -> Result<Option<CorpusRow>> {
        let row = sqlx::query(
            "SELECT name, content_hash, source, documents, chunks, queries FROM corpora
             WHERE name = $1 AND content_hash = $2",
        )
        .bind(name)
        .bind(hash)
        .fetch_optional(self.pool())
        .await
        .map_err(|e| self.err(e))?;
        Ok(row.map(|r| CorpusRow {
            name: r.get(0),
            content_hash: r.get(1),
            source: r.get(2),
            documents: r.get(3),
            chunks: r.get(4),
            queries: r.get(5),
        }))
    }

    /// Every answered tuple (no error) of `paradigm` in a run: query id, answer and trace
    /// (`null` when unreadable), what the answer probe reads.
    pub async fn answered(
        &self,
        run_id: i64,
        paradigm: &str,
    ) -> Result<Vec<(String, String, serde_json::Value)>> {
        let rows = sqlx::query(
            "SELECT query_id, answer, trace_json FROM results
             WHERE run_id = $1 AND paradigm = $2 AND error IS NULL ORDER BY query_id",
        )
        .bind(run_id)
        .bind(paradigm)
        .fetch_all(self.pool())
        .await
        .map_err(|e| self.err(e))?;
        Ok(rows
            .iter()
            .map(|r| {
                let trace: String = r.get(2);
                (
                    r.get(0),
                    r.get(1),
                    serde_json::from_str(&trace).unwrap_or_default(),
                )
            })
            .collect())
    }

    /// A run's tuples joined with their questions, in question (file) order then paradigm.
    pub async fn report_tuples(
        &self,
        run_id: i64,
        corpus: &str,
        hash: &str,
    ) -> Result<Vec<ReportTupleRow>> {
        let rows = sqlx::query(
            "SELECT r.query_id, coalesce(q.text, ''), coalesce(q.qtype, 'other'), r.paradigm, r.answer,
                    r.judge_label, r.em, r.f1, r.semantic_f1, r.evidence_recall,
                    r.tokens_construction_in, r.tokens_construction_out, r.tokens_retrieval_in,
                    r.tokens_retrieval_out, r.tokens_generation_in, r.tokens_generation_out,
                    r.tokens_judge_in, r.tokens_judge_out, r.context_tokens,
                    r.latency_retrieval_ms + r.latency_generation_ms, r.mode, r.error
             FROM results r
             LEFT JOIN queries q ON q.corpus = $1 AND q.corpus_hash = $2 AND q.query_id = r.query_id
             WHERE r.run_id = $3
             ORDER BY q.rowid, r.query_id, r.paradigm",
        )
        .bind(corpus)
        .bind(hash)
        .bind(run_id)
        .fetch_all(self.pool())
        .await
        .map_err(|e| self.err(e))?;
        Ok(rows
            .iter()
            .map(|r| ReportTupleRow {
                query_id: r.get(0),
                question: r.get(1),
                qtype: r.get(2),
                paradigm: r.get(3),
                answer: r.get(4),
                judge_label: r.get(5),
                em: r.get(6),
                f1: r.get(7),
                semantic_f1: r.get(8),
                evidence_recall: r.get(9),
                tokens: std::array::from_fn(|k| r.get(10 + k)),
                context_tokens: r.get(18),
                latency_ms: r.get(19),
                mode: r.get(20),
                error: r.get(21),
            })
            .collect())
    }

    /// How many tuples a run has, how many without an error, and the first error.
    pub async fn run_outcome(&self, run_id: i64) -> Result<RunOutcome> {
        let (tuples, ok): (i64, i64) = sqlx::query_as(
            "SELECT count(*), CAST(coalesce(sum(CASE WHEN error IS NULL THEN 1 ELSE 0 END), 0) AS BIGINT)
             FROM results WHERE run_id = $1",
        )
        .bind(run_id)
        .fetch_one(self.pool())
        .await
        .map_err(|e| self.err(e))?;
        let first_error: Option<String> = sqlx::query_scalar(
            "SELECT error FROM results WHERE run_id = $1 AND error IS NOT NULL
             ORDER BY query_id, paradigm LIMIT 1",
        )
        .bind(run_id)
        .fetch_optional(self.pool())
        .await
        .map_err(|e| self.err(e))?;
        Ok(RunOutcome {
            tuples,
            ok,
            first_error,
        })
    }

    /// Adds `usage` of the embedding endpoint `encoder` to the run's `embedding_usage` in its
    /// stored configuration, accumulated over the run's invocations.
    pub async fn add_embedding_usage(
        &self,
        run_id: i64,
        encoder: &str,
        u: EmbeddingUsage,
    ) -> Result<()> {
        // Read, add and write back under the row's write lock (the first statement of the
        // transaction writes the row), so workers adding at once lose no count.
        let mut tx = self.pool().begin().await.map_err(|e| self.err(e))?;
        sqlx::query("UPDATE runs SET config_json = config_json WHERE id = $1")
            .bind(run_id)
            .execute(&mut *tx)
            .await
            .map_err(|e| self.err(e))?;
        let stored: String = sqlx::query_scalar("SELECT config_json FROM runs WHERE id = $1")
            .bind(run_id)
            .fetch_one(&mut *tx)
            .await
            .map_err(|e| self.err(e))?;
        let mut config: serde_json::Value = serde_json::from_str(&stored).map_err(|e| {
            BenchError::Invalid(format!(
                "results store {}: run {run_id}: config_json: {e}",
                self.path()
            ))
        })?;
        let before = &config["embedding_usage"];
        let add = |name: &str, n: u64| before[name].as_u64().unwrap_or(0) + n;
        config["embedding_usage"] = serde_json::json!({
            "encoder": encoder,
            "requests": add("requests", u.requests),
            "texts": add("texts", u.texts),
            "tokens": add("tokens", u.tokens),
            "usage_tokens": add("usage_tokens", u.usage_tokens),
            "counted_tokens": add("counted_tokens", u.counted_tokens),
        });
        sqlx::query("UPDATE runs SET config_json = $1 WHERE id = $2")
            .bind(config.to_string())
            .bind(run_id)
            .execute(&mut *tx)
            .await
            .map_err(|e| self.err(e))?;
        tx.commit().await.map_err(|e| self.err(e))?;
        Ok(())
    }
}
