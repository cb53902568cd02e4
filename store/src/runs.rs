//! Facet "runs and tuples, written": corpora, run starts and resumes, one tuple per (run,
//! question, paradigm), the end of a run and what a run records beside its tuples.
//!
//! Every result is one `INSERT` in its own implicit transaction, so a process killed at any
//! instant leaves whole rows only.

use std::collections::HashSet;

use sqlx::Row;

use bench_core::config::{hash_parts, BenchConfig};
use bench_core::{Corpus, Mode, ParadigmId, ResultRecord};

use crate::db::{json, upsert, Backend, Store, PG_RUN_LOCK};
use crate::error::{Result, StoreError};

/// What identifies a run: same spec, same run (resumed); `--fresh` starts another.
#[derive(Debug, Clone)]
pub struct RunSpec<'a> {
    /// The corpus the run answers.
    pub corpus: &'a Corpus,
    /// The run configuration (its canonical JSON is hashed into the run key).
    pub config: &'a BenchConfig,
    /// How the run answers (stored as its label).
    pub mode: Mode,
    /// The reader's identity.
    pub reader: String,
    /// The judge's identity.
    pub judge: String,
    /// The embedder's name.
    pub embedder: String,
    /// The graph extractor's identity; empty when no paradigm of the run uses the graph.
    pub extractor: String,
    /// The version of ragrouter that started the run.
    pub crate_version: String,
    /// LLM mode: every role's settings (names of key variables, never keys), recorded as the
    /// stored configuration's `llm` field (not part of the run's identity).
    pub llm: Option<serde_json::Value>,
}

impl RunSpec<'_> {
    /// Hash of the configuration's canonical JSON.
    pub fn config_hash(&self) -> String {
        hash_parts([self.config.canonical_json().as_bytes()])
    }

    /// Hash of everything that decides the run's tuples.
    pub fn run_key(&self) -> String {
        hash_parts([
            self.corpus.name.as_bytes(),
            self.corpus.content_hash.as_bytes(),
            self.config_hash().as_bytes(),
            self.mode.label().as_bytes(),
            self.reader.as_bytes(),
            self.judge.as_bytes(),
            self.embedder.as_bytes(),
            self.extractor.as_bytes(),
        ])
    }
}

/// A started or resumed run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunHandle {
    /// The run's id.
    pub id: i64,
    /// Whether an existing run of the same key was resumed.
    pub resumed: bool,
}

/// What an embedding endpoint was sent since the last record.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EmbeddingUsage {
    /// Requests sent.
    pub requests: u64,
    /// Texts embedded.
    pub texts: u64,
    /// Tokens billed: `usage_tokens + counted_tokens`.
    pub tokens: u64,
    /// Tokens of replies that reported `usage`.
    pub usage_tokens: u64,
    /// Tokens of replies without `usage`, counted with cl100k.
    pub counted_tokens: u64,
}

impl Store {
    /// Records the corpus and its questions (idempotent for the same content hash).
    pub async fn upsert_corpus(&self, corpus: &Corpus) -> Result<()> {
        let mut tx = self.pool.begin().await.map_err(|e| self.err(e))?;
        sqlx::query(
            "INSERT INTO corpora (name, content_hash, source, documents, chunks, chunk_tokens, queries, queries_with_gold_chunks)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING",
        )
        .bind(&corpus.name)
        .bind(&corpus.content_hash)
        .bind(&corpus.source)
        .bind(corpus.documents.len() as i64)
        .bind(corpus.chunks.len() as i64)
        .bind(corpus.chunk_tokens() as i64)
        .bind(corpus.queries.len() as i64)
        .bind(corpus.queries_with_gold_chunks() as i64)
        .execute(&mut *tx)
        .await
        .map_err(|e| self.err(e))?;
        for q in &corpus.queries {
            sqlx::query(
                "INSERT INTO queries (corpus, corpus_hash, query_id, text, qtype, answer, aliases_json, evidence_json, gold_chunks_json, statements_json)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING",
            )
            .bind(&corpus.name)
            .bind(&corpus.content_hash)
            .bind(&q.id)
            .bind(&q.text)
            .bind(q.qtype.as_str())
            .bind(&q.gold.answer)
            .bind(json(&q.gold.aliases))
            .bind(json(&q.evidence))
            .bind(json(&q.gold_chunks))
            .bind((!q.statements.is_empty()).then(|| json(&q.statements)))
            .execute(&mut *tx)
            .await
            .map_err(|e| self.err(e))?;
        }
        tx.commit().await.map_err(|e| self.err(e))
    }

    /// Resumes the latest run with the same spec, or starts a new one (always when `fresh`).
    ///
    /// Without `fresh` the check and the insert are one statement: on SQLite a write statement
    /// takes the write lock before it reads, and on PostgreSQL the statement runs under a
    /// transaction-scoped advisory lock, so processes started at once on one store agree on a
    /// single run instead of each starting its own.
    pub async fn start_run(&self, spec: &RunSpec<'_>, fresh: bool) -> Result<RunHandle> {
        let key = spec.run_key();
        let guard = if fresh {
            ""
        } else {
            " WHERE NOT EXISTS (SELECT 1 FROM runs WHERE run_key = $13)"
        };
        let sql = format!(
            "INSERT INTO runs (run_key, corpus, corpus_hash, config_json, config_hash, seed, crate_version, mode, reader, judge, embedder, extractor)
             SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12{guard} RETURNING id"
        );
        let config_json = with_llm(&spec.config.canonical_json(), spec.llm.as_ref());
        let mut tx = self.pool.begin().await.map_err(|e| self.err(e))?;
        self.lock_runs(&mut tx).await?;
        let mut insert = sqlx::query_scalar::<_, i64>(&sql)
            .bind(&key)
            .bind(&spec.corpus.name)
            .bind(&spec.corpus.content_hash)
            .bind(&config_json)
            .bind(spec.config_hash())
            .bind(spec.config.seed as i64)
            .bind(&spec.crate_version)
            .bind(spec.mode.label())
            .bind(&spec.reader)
            .bind(&spec.judge)
            .bind(&spec.embedder)
            .bind(&spec.extractor);
        if !fresh {
            insert = insert.bind(&key);
        }
        let started = insert
            .fetch_optional(&mut *tx)
            .await
            .map_err(|e| self.err(e))?;
        let handle = match started {
            Some(id) => RunHandle { id, resumed: false },
            None => {
                // A resume keeps `finished_at`: it is when the run first finished.
                let (id, stored): (i64, String) = sqlx::query_as(
                    "SELECT id, config_json FROM runs WHERE id = (SELECT max(id) FROM runs WHERE run_key = $1)",
                )
                .bind(&key)
                .fetch_one(&mut *tx)
                .await
                .map_err(|e| self.err(e))?;
                if spec.llm.is_some() {
                    // This invocation's settings (timeouts, concurrency) replace the last one's.
                    sqlx::query("UPDATE runs SET config_json = $1 WHERE id = $2")
                        .bind(with_llm(&stored, spec.llm.as_ref()))
                        .bind(id)
                        .execute(&mut *tx)
                        .await
                        .map_err(|e| self.err(e))?;
                }
                RunHandle { id, resumed: true }
            }
        };
        tx.commit().await.map_err(|e| self.err(e))?;
        Ok(handle)
    }

    /// On PostgreSQL, serialises run starts for the rest of the transaction (SQLite's first
    /// write statement does that by itself).
    async fn lock_runs(&self, tx: &mut sqlx::Transaction<'_, sqlx::Any>) -> Result<()> {
        if self.backend == Backend::Postgres {
            sqlx::query("SELECT count(*) FROM (SELECT pg_advisory_xact_lock($1)) AS l")
                .bind(PG_RUN_LOCK)
                .fetch_one(&mut **tx)
                .await
                .map_err(|e| self.err(e))?;
        }
        Ok(())
    }

    /// (query, paradigm) pairs of the run that finished without error: a resume skips them.
    pub async fn finished_pairs(&self, run_id: i64) -> Result<HashSet<(String, ParadigmId)>> {
        let sql = sqlx::query(
            "SELECT query_id, paradigm FROM results WHERE run_id = $1 AND error IS NULL",
        )
        .bind(run_id);
        let pairs = self
            .rows(sql, |r| {
                let p: String = r.get(1);
                Ok((r.get::<String, _>(0), p.parse::<ParadigmId>()?))
            })
            .await?;
        Ok(pairs.into_iter().collect())
    }

    /// Deletes the run's tuples of `paradigms` that were answered on a graph build other than
    /// `signature` (a partial graph an earlier attempt had), so a resumed run answers them again
    /// on this build; returns how many. Rows from before builds were recorded (NULL) are kept.
    pub async fn drop_other_graph_builds(
        &self,
        run_id: i64,
        paradigms: &[ParadigmId],
        signature: &str,
    ) -> Result<u64> {
        let mut n = 0;
        for p in paradigms {
            n += sqlx::query(
                "DELETE FROM results WHERE run_id = $1 AND paradigm = $2
                 AND graph_build IS NOT NULL AND graph_build <> $3",
            )
            .bind(run_id)
            .bind(p.as_str())
            .bind(signature)
            .execute(&self.pool)
            .await
            .map_err(|e| self.err(e))?
            .rows_affected();
        }
        Ok(n)
    }

    /// Writes one finished tuple atomically; an earlier failed attempt of the same tuple is
    /// replaced, a stored successful one is kept.
    pub async fn write_result(&self, run_id: i64, r: &ResultRecord) -> Result<()> {
        let t = &r.output.tokens;
        let l = &r.output.latency;
        static SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
            let placeholders: Vec<String> = (1..=RESULT_COLUMNS.split(", ").count())
                .map(|i| format!("${i}"))
                .collect();
            // Only a failed row is replaced: the first successful answer of a tuple is final,
            // even when two workers answered it (a lease that ran out mid-answer).
            format!(
                "INSERT INTO results ({RESULT_COLUMNS}) VALUES ({}) {} WHERE results.error IS NOT NULL",
                placeholders.join(", "),
                upsert("run_id, query_id, paradigm", RESULT_COLUMNS, "created_at")
            )
        });
        let statement = sqlx::query(SQL.as_str())
            .bind(run_id)
            .bind(&r.query_id)
            .bind(r.paradigm.as_str())
            .bind(&r.output.answer)
            .bind(json(&r.output.context))
            .bind(r.output.context_tokens as i64)
            .bind(t.construction_in as i64)
            .bind(t.construction_out as i64)
            .bind(t.retrieval_in as i64)
            .bind(t.retrieval_out as i64)
            .bind(t.generation_in as i64)
            .bind(t.generation_out as i64)
            .bind(r.output.token_source.as_str())
            .bind(l.retrieval_ms)
            .bind(l.generation_ms)
            .bind(l.judge_ms)
            .bind(r.judge.map(|j| j.as_str()))
            .bind(r.quality.em)
            .bind(r.quality.f1)
            .bind(r.quality.answer_recall)
            .bind(r.quality.evidence_recall)
            .bind(&r.mode)
            .bind(&r.config_hash)
            .bind(&r.error)
            .bind(r.output.trace.to_string())
            .bind(r.quality.semantic_f1)
            .bind(r.quality.coverage)
            .bind(r.judge_tokens_in as i64)
            .bind(r.judge_tokens_out as i64)
            .bind(r.quality.faithfulness_hard)
            .bind(r.quality.faithfulness_soft)
            .bind(r.quality.reader_correct.map(i64::from))
            .bind(&r.graph_build)
            .bind(r.quality.document_recall);
        self.exec(statement).await
    }

    /// Marks the run finished; the first finish is kept (a resume that retries failed tuples
    /// does not move it; the rows' `created_at` say when each tuple was written).
    pub async fn finish_run(&self, run_id: i64) -> Result<()> {
        let sql = format!(
            "UPDATE runs SET finished_at = coalesce(finished_at, {}) WHERE id = $1",
            self.backend.now_text()
        );
        self.exec(sqlx::query(&sql).bind(run_id)).await
    }

    /// Stores corpus metrics (a JSON object) for a corpus under a configuration, replacing
    /// earlier values of the same key.
    pub async fn put_corpus_metrics(
        &self,
        corpus: &str,
        corpus_hash: &str,
        configuration: &str,
        metrics: &serde_json::Value,
    ) -> Result<()> {
        let statement = sqlx::query(
            "INSERT INTO corpus_metrics (corpus, corpus_hash, configuration, metrics_json) VALUES ($1, $2, $3, $4)
             ON CONFLICT (corpus, corpus_hash, configuration)
             DO UPDATE SET metrics_json = excluded.metrics_json, computed_at = excluded.computed_at",
        )
        .bind(corpus)
        .bind(corpus_hash)
        .bind(configuration)
        .bind(metrics.to_string());
        self.exec(statement).await
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
            StoreError::Invalid(format!(
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

/// The columns `write_result` binds, in order.
const RESULT_COLUMNS: &str = "run_id, query_id, paradigm, answer, context_json, context_tokens, \
    tokens_construction_in, tokens_construction_out, tokens_retrieval_in, tokens_retrieval_out, \
    tokens_generation_in, tokens_generation_out, token_source, \
    latency_retrieval_ms, latency_generation_ms, latency_judge_ms, \
    judge_label, em, f1, answer_recall, evidence_recall, mode, config_hash, error, trace_json, \
    semantic_f1, coverage, tokens_judge_in, tokens_judge_out, faithfulness_hard, faithfulness_soft, \
    reader_correct, graph_build, document_recall";

/// A stored configuration with `llm` set to this invocation's LLM settings (none: unchanged).
fn with_llm(config_json: &str, llm: Option<&serde_json::Value>) -> String {
    match llm {
        None => config_json.to_owned(),
        Some(llm) => {
            let mut v: serde_json::Value =
                serde_json::from_str(config_json).expect("a stored configuration is JSON");
            v["llm"] = llm.clone();
            v.to_string()
        }
    }
}
