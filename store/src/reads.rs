//! Facet "runs and tuples, read": typed reads of runs, corpora, questions and tuples that routers,
//! reports and the CLI need; their SQL lives here, not with them.

use bench_core::{JudgeLabel, Mode, ParadigmId, PhaseTokens, QueryType};
use sqlx::any::AnyRow;
use sqlx::Row;

use crate::error::{Result, StoreError};
use crate::selection::RunRef;
use crate::Store;

/// Tokens of one stored tuple: what the paradigm was billed by phase (the record's own
/// [`PhaseTokens`], read back), and what the judge spent on it (an evaluation cost, never the
/// paradigm's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct TupleTokens {
    /// Construction, retrieval and generation, in and out.
    #[serde(flatten)]
    pub phases: PhaseTokens,
    /// The judge, input.
    pub judge_in: u64,
    /// The judge, output.
    pub judge_out: u64,
}

impl TupleTokens {
    /// The LLM tokens the paradigm was billed: construction, retrieval and generation.
    pub fn paradigm(&self) -> u64 {
        self.phases.total()
    }
}

/// One stored tuple as a routing set reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct RoutingTupleRow {
    /// The question's id.
    pub query_id: String,
    /// The paradigm that answered.
    pub paradigm: ParadigmId,
    /// The judge's verdict; `None` when the tuple failed.
    pub judge_label: Option<JudgeLabel>,
    /// The imported score where one exists, else the semantic F1.
    pub score: Option<f64>,
    /// Every LLM token the paradigm was billed (construction, retrieval, generation).
    pub llm_tokens: u64,
    /// Why the tuple failed, when it did.
    pub error: Option<String>,
    /// The context the paradigm assembled, in cl100k tokens.
    pub context_tokens: u64,
    /// An imported tuple's cost.
    pub cost: Option<f64>,
}

/// A stored question: id, text and type, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredQuestion {
    /// The question's id.
    pub id: String,
    /// The question.
    pub text: String,
    /// Its type.
    pub qtype: QueryType,
}

/// Every column of a run that a report shows.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunRow {
    /// The run's id.
    pub id: i64,
    /// Its corpus.
    pub corpus: String,
    /// The corpus's content hash.
    pub corpus_hash: String,
    /// The stored configuration (JSON).
    pub config_json: String,
    /// Hash of the configuration.
    pub config_hash: String,
    /// The run's seed.
    pub seed: i64,
    /// The version of ragrouter that started it.
    pub crate_version: String,
    /// How its tuples came to be.
    pub mode: Mode,
    /// The reader's identity.
    pub reader: String,
    /// The judge's identity (an import: how its source decided `correct`).
    pub judge: String,
    /// The embedder's name.
    pub embedder: String,
    /// The graph extractor's identity; empty when no paradigm used the graph.
    pub extractor: String,
    /// When it started.
    pub started_at: String,
    /// When it first finished; `None` while unfinished.
    pub finished_at: Option<String>,
}

/// A stored corpus's sizes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CorpusRow {
    /// The corpus's name.
    pub name: String,
    /// Its content hash.
    pub content_hash: String,
    /// Where it was loaded from.
    pub source: String,
    /// Documents.
    pub documents: i64,
    /// Chunks.
    pub chunks: i64,
    /// Questions.
    pub queries: i64,
}

/// One tuple joined with its question, as a report shows it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ReportTupleRow {
    /// The question's id.
    pub query_id: String,
    /// Empty when the question is not stored.
    pub question: String,
    /// `other` when the question is not stored.
    pub qtype: QueryType,
    /// The paradigm that answered.
    pub paradigm: ParadigmId,
    /// The answer.
    pub answer: String,
    /// The judge's verdict; `None` when the tuple failed.
    pub judge_label: Option<JudgeLabel>,
    /// Exact match.
    pub em: f64,
    /// Token F1.
    pub f1: f64,
    /// Semantic F1, when measured.
    pub semantic_f1: Option<f64>,
    /// Evidence recall, when the question has gold evidence.
    pub evidence_recall: Option<f64>,
    /// Tokens by phase.
    pub tokens: TupleTokens,
    /// The context the paradigm assembled, in cl100k tokens.
    pub context_tokens: u64,
    /// Retrieval plus generation time.
    pub latency_ms: f64,
    /// How the tuple was produced.
    pub mode: Mode,
    /// Why the tuple failed, when it did.
    pub error: Option<String>,
    /// An imported tuple's cost in the import's unit.
    pub cost: Option<f64>,
}

/// A run's stored tuples: how many, how many without an error, and the first error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOutcome {
    /// Tuples stored.
    pub tuples: i64,
    /// Tuples without an error.
    pub ok: i64,
    /// The first error, in (query, paradigm) order.
    pub first_error: Option<String>,
}

impl Store {
    /// Every run with at least one tuple, oldest first.
    pub async fn runs_with_results(&self) -> Result<Vec<RunRef>> {
        let sql = sqlx::query(
            "SELECT r.id, r.corpus, r.corpus_hash, r.mode, r.split, r.cost_unit FROM runs r
             WHERE EXISTS (SELECT 1 FROM results x WHERE x.run_id = r.id) ORDER BY r.id",
        );
        self.rows(sql, |r| {
            let split: Option<String> = r.get(4);
            let id: i64 = r.get(0);
            Ok(RunRef {
                id,
                corpus: r.get(1),
                corpus_hash: r.get(2),
                mode: self.mode_of(id, &r.get::<String, _>(3))?,
                split: split.as_deref().map(str::parse).transpose()?,
                cost_unit: r.get(5),
            })
        })
        .await
    }

    /// The latest corpus metrics stored for a corpus's content, with their configuration.
    pub async fn corpus_metrics(
        &self,
        corpus: &str,
        corpus_hash: &str,
    ) -> Result<Option<(String, serde_json::Value)>> {
        let sql = sqlx::query(
            "SELECT configuration, metrics_json FROM corpus_metrics WHERE corpus = $1 AND corpus_hash = $2
             ORDER BY computed_at DESC LIMIT 1",
        )
        .bind(corpus)
        .bind(corpus_hash);
        self.row(sql, |r| {
            let json: String = r.get(1);
            serde_json::from_str(&json)
                .map(|v| (r.get::<String, _>(0), v))
                .map_err(|e| StoreError::Other(format!("stored corpus metrics: {e}")))
        })
        .await
    }

    /// LLM tokens of a run's stored tuples: every phase plus the judge.
    pub async fn run_tokens(&self, run_id: i64) -> Result<u64> {
        let n: i64 = sqlx::query_scalar(
            "SELECT CAST(coalesce(sum(tokens_construction_in + tokens_construction_out + tokens_retrieval_in
                + tokens_retrieval_out + tokens_generation_in + tokens_generation_out
                + tokens_judge_in + tokens_judge_out), 0) AS BIGINT)
             FROM results WHERE run_id = $1",
        )
        .bind(run_id)
        .fetch_one(&self.pool)
        .await
        .map_err(|e| self.err(e))?;
        Ok(n as u64)
    }

    /// Retrieval, generation and judge milliseconds summed over a run's tuples.
    pub async fn stage_totals(&self, run_id: i64) -> Result<(f64, f64, f64)> {
        let r = sqlx::query(
            "SELECT coalesce(sum(latency_retrieval_ms), 0.0), coalesce(sum(latency_generation_ms), 0.0),
                    coalesce(sum(latency_judge_ms), 0.0)
             FROM results WHERE run_id = $1",
        )
        .bind(run_id)
        .fetch_one(&self.pool)
        .await
        .map_err(|e| self.err(e))?;
        Ok((r.get(0), r.get(1), r.get(2)))
    }

    /// The tuples of a run, in (query, paradigm) order.
    pub async fn routing_tuples(&self, run_id: i64) -> Result<Vec<RoutingTupleRow>> {
        let sql = sqlx::query(
            "SELECT query_id, paradigm, judge_label, coalesce(score, semantic_f1),
                    tokens_construction_in + tokens_construction_out + tokens_retrieval_in
                    + tokens_retrieval_out + tokens_generation_in + tokens_generation_out,
                    error, context_tokens, cost
             FROM results WHERE run_id = $1 ORDER BY query_id, paradigm",
        )
        .bind(run_id);
        self.rows(sql, |r| {
            Ok(RoutingTupleRow {
                query_id: r.get(0),
                paradigm: self.paradigm_of(run_id, &r.get::<String, _>(1))?,
                judge_label: self.judge_of(run_id, r.get(2))?,
                score: r.get(3),
                llm_tokens: count(r, 4),
                error: r.get(5),
                context_tokens: count(r, 6),
                cost: r.get(7),
            })
        })
        .await
    }

    /// The stored questions of a corpus, in stored (file) order.
    pub async fn stored_questions(&self, corpus: &str, hash: &str) -> Result<Vec<StoredQuestion>> {
        let sql = sqlx::query(
            "SELECT query_id, text, qtype FROM queries WHERE corpus = $1 AND corpus_hash = $2 ORDER BY rowid",
        )
        .bind(corpus)
        .bind(hash);
        self.rows(sql, |r| {
            let id: String = r.get(0);
            let qtype = r.get::<String, _>(2).parse().map_err(|e| {
                StoreError::Invalid(format!(
                    "results store {}: corpus {corpus} query {id}: qtype: {e}",
                    self.path()
                ))
            })?;
            Ok(StoredQuestion {
                id,
                text: r.get(1),
                qtype,
            })
        })
        .await
    }

    /// A run's row, or `None` when there is no run `id`.
    pub async fn run_row(&self, id: i64) -> Result<Option<RunRow>> {
        let sql = sqlx::query(
            "SELECT id, corpus, corpus_hash, config_json, config_hash, seed, crate_version, mode, reader,
                    judge, embedder, extractor, started_at, finished_at
             FROM runs WHERE id = $1",
        )
        .bind(id);
        self.row(sql, |row| {
            Ok(RunRow {
                mode: self.mode_of(id, &row.get::<String, _>(7))?,
                id: row.get(0),
                corpus: row.get(1),
                corpus_hash: row.get(2),
                config_json: row.get(3),
                config_hash: row.get(4),
                seed: row.get(5),
                crate_version: row.get(6),
                reader: row.get(8),
                judge: row.get(9),
                embedder: row.get(10),
                extractor: row.get(11),
                started_at: row.get(12),
                finished_at: row.get(13),
            })
        })
        .await
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
        let sql = sqlx::query(
            "SELECT tokens_in, tokens_out FROM graph_builds
             WHERE corpus = $1 AND corpus_hash = $2
               AND extractor || ':' || model || ':' || prompt_hash = $3
             ORDER BY id DESC LIMIT 1",
        )
        .bind(corpus)
        .bind(hash)
        .bind(extractor);
        self.row(sql, |r| Ok((r.get(0), r.get(1)))).await
    }

    /// A stored corpus's row.
    pub async fn corpus_row(&self, name: &str, hash: &str) -> Result<Option<CorpusRow>> {
        let sql = sqlx::query(
            "SELECT name, content_hash, source, documents, chunks, queries FROM corpora
             WHERE name = $1 AND content_hash = $2",
        )
        .bind(name)
        .bind(hash);
        self.row(sql, |r| {
            Ok(CorpusRow {
                name: r.get(0),
                content_hash: r.get(1),
                source: r.get(2),
                documents: r.get(3),
                chunks: r.get(4),
                queries: r.get(5),
            })
        })
        .await
    }

    /// Every answered tuple (no error) of `paradigm` in a run: query id, answer and trace
    /// (`null` when unreadable), what the answer probe reads.
    pub async fn answered(
        &self,
        run_id: i64,
        paradigm: &str,
    ) -> Result<Vec<(String, String, serde_json::Value)>> {
        let sql = sqlx::query(
            "SELECT query_id, answer, trace_json FROM results
             WHERE run_id = $1 AND paradigm = $2 AND error IS NULL ORDER BY query_id",
        )
        .bind(run_id)
        .bind(paradigm);
        self.rows(sql, |r| {
            let trace: String = r.get(2);
            Ok((
                r.get(0),
                r.get(1),
                serde_json::from_str(&trace).unwrap_or_default(),
            ))
        })
        .await
    }

    /// A run's tuples joined with their questions, in question (file) order then paradigm.
    pub async fn report_tuples(
        &self,
        run_id: i64,
        corpus: &str,
        hash: &str,
    ) -> Result<Vec<ReportTupleRow>> {
        let sql = sqlx::query(
            "SELECT r.query_id, coalesce(q.text, ''), coalesce(q.qtype, 'other'), r.paradigm, r.answer,
                    r.judge_label, r.em, r.f1, r.semantic_f1, r.evidence_recall,
                    r.tokens_construction_in, r.tokens_construction_out, r.tokens_retrieval_in,
                    r.tokens_retrieval_out, r.tokens_generation_in, r.tokens_generation_out,
                    r.tokens_judge_in, r.tokens_judge_out, r.context_tokens,
                    r.latency_retrieval_ms + r.latency_generation_ms, r.mode, r.error, r.cost
             FROM results r
             LEFT JOIN queries q ON q.corpus = $1 AND q.corpus_hash = $2 AND q.query_id = r.query_id
             WHERE r.run_id = $3
             ORDER BY q.rowid, r.query_id, r.paradigm",
        )
        .bind(corpus)
        .bind(hash)
        .bind(run_id);
        self.rows(sql, |r| {
            Ok(ReportTupleRow {
                query_id: r.get(0),
                question: r.get(1),
                qtype: self.qtype_of(run_id, &r.get::<String, _>(2))?,
                paradigm: self.paradigm_of(run_id, &r.get::<String, _>(3))?,
                answer: r.get(4),
                judge_label: self.judge_of(run_id, r.get(5))?,
                em: r.get(6),
                f1: r.get(7),
                semantic_f1: r.get(8),
                evidence_recall: r.get(9),
                tokens: TupleTokens {
                    phases: PhaseTokens {
                        construction_in: count(r, 10),
                        construction_out: count(r, 11),
                        retrieval_in: count(r, 12),
                        retrieval_out: count(r, 13),
                        generation_in: count(r, 14),
                        generation_out: count(r, 15),
                    },
                    judge_in: count(r, 16),
                    judge_out: count(r, 17),
                },
                context_tokens: count(r, 18),
                latency_ms: r.get(19),
                mode: self.mode_of(run_id, &r.get::<String, _>(20))?,
                error: r.get::<Option<String>, _>(21).map(|e| crate::redact(&e)),
                cost: r.get(22),
            })
        })
        .await
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
}

/// A stored count (an INTEGER column the store only ever writes non-negative).
fn count(r: &AnyRow, column: usize) -> u64 {
    r.get::<i64, _>(column).max(0) as u64
}
