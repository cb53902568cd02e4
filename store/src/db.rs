//! The SQLite results store: runs, corpora, queries and one row per (run, query, paradigm).
//!
//! Every result is one `INSERT` in its own implicit transaction, so a process killed at any
//! instant leaves whole rows only. WAL mode lets readers (pandas, `sqlite3`) look at a live run.

use std::collections::HashSet;
use std::path::Path;
use std::str::FromStr;

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyPool, Row};

use bench_core::config::{hash_parts, BenchConfig};
use bench_core::{Corpus, Mode, ParadigmId, QueryType, ResultRecord, RouteEvalRow, RouteEvalSpec};

use crate::error::{Result, StoreError};

mod backend;
mod checkpoint;
mod handle;
mod info;
mod open;

pub use backend::{redact, DbTarget};
use handle::store_err;
pub use handle::{Backend, Store};
pub use info::{DbInfo, Ownership};
pub use open::{printable, APPLICATION_ID};

mod schema;
pub use schema::SCHEMA_VERSION;

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
    /// Opens (creating if needed) the database at `path` and brings its schema up to date. A
    /// file that is not a ragrouter store, of a newer schema, or with a corrupt page (`PRAGMA
    /// quick_check`) is refused untouched (`store_open`).
    pub async fn open(path: &Path) -> Result<Store> {
        let shown = path.display().to_string();
        open::inspect(path, true).await?;
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| {
                StoreError::io(format!("creating the directory of database {shown}"), e)
            })?;
        }
        Self::connect_writable(path).await
    }

    /// A private in-memory database (tests).
    pub async fn open_in_memory() -> Result<Store> {
        let store = Self::connect_sqlite("sqlite::memory:", ":memory:".into(), false).await?;
        store.migrate_locked().await?;
        Ok(store)
    }

    /// One connection: SQLite serialises writers anyway, and an in-memory database lives as
    /// long as its connection, so the pool never closes it. Every connection gets the
    /// store's pragmas (the `Any` driver takes a URL, which cannot carry them); the schema is
    /// the caller's (`store_open` marks and migrates a file before WAL is switched on).
    pub(crate) async fn connect_sqlite(url: &str, path: String, wal: bool) -> Result<Store> {
        sqlx::any::install_default_drivers();
        let opts =
            checkpoint::quiet(AnyConnectOptions::from_str(url).map_err(|e| store_err(&path, e))?);
        let pool = checkpoint::quiet_pool(AnyPoolOptions::new())
            .max_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            .after_connect(move |conn, _| {
                let pragmas: &'static str = if wal {
                    "PRAGMA busy_timeout = 30000; PRAGMA foreign_keys = ON; \
                     PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
                } else {
                    "PRAGMA busy_timeout = 30000; PRAGMA foreign_keys = ON;"
                };
                set_pragmas(conn, pragmas)
            })
            .connect_with(opts)
            .await
            .map_err(open::open_err(&path))?;
        Ok(Store {
            closer: None,
            pool,
            path,
            backend: Backend::Sqlite,
        })
    }

    /// A transaction that will write after reading: on SQLite it takes the write lock first
    /// (`BEGIN IMMEDIATE`, waiting for another writer under the busy timeout), since a read
    /// transaction that later writes fails at once with "database is locked" when another
    /// process wrote in between.
    pub(crate) async fn begin_write(&self) -> Result<sqlx::Transaction<'static, sqlx::Any>> {
        match self.backend {
            Backend::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await,
            Backend::Postgres => self.pool.begin().await,
        }
        .map_err(|e| self.err(e))
    }

    /// The connection pool, for the store's own modules only: nothing outside speaks SQL.
    pub(crate) fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// Closes the connections (a merge input or output must be released before it is moved).
    /// A writable SQLite store first folds its write-ahead log into the file (`PRAGMA
    /// wal_checkpoint(TRUNCATE)`), so the file alone is the data; when another process holds the
    /// store and the checkpoint cannot finish, one line on stderr says the writes are in the
    /// `-wal`. Every command that writes calls this on success; a store dropped without it (an
    /// error path) is checkpointed all the same when its last clone goes.
    pub async fn close(&self) {
        if self.closer.as_ref().is_some_and(|c| c.take()) && self.checkpoint().await == Some(false)
        {
            checkpoint::note_held(&self.path);
        }
        self.pool.close().await;
    }

    /// The final checkpoint on the store's own connection, waiting briefly for other processes;
    /// `Some(true)` when it finished, `None` when the connection is gone.
    async fn checkpoint(&self) -> Option<bool> {
        let mut conn = self.pool.acquire().await.ok()?;
        let wait = format!(
            "PRAGMA busy_timeout = {}",
            checkpoint::CHECKPOINT_WAIT.as_millis()
        );
        sqlx::raw_sql(&wait).execute(&mut *conn).await.ok()?;
        let busy: i64 = sqlx::query_scalar(checkpoint::CHECKPOINT)
            .fetch_one(&mut *conn)
            .await
            .ok()?;
        Some(busy == 0)
    }

    /// The file path, or the PostgreSQL URL without its password: what messages show.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// A database error of this store; on PostgreSQL a server that went away is said so.
    pub(crate) fn err(&self, e: sqlx::Error) -> StoreError {
        if self.backend == Backend::Postgres {
            if let Some(gone) = backend::pg_gone(&self.path, &e) {
                return gone;
            }
        }
        store_err(&self.path, e)
    }

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
                .bind(backend::PG_RUN_LOCK)
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

    /// Stores one router evaluation and all its rows in a single transaction (all or nothing);
    /// returns the evaluation's id.
    pub async fn put_route_eval(&self, spec: &RouteEvalSpec, rows: &[RouteEvalRow]) -> Result<i64> {
        self.put_route_eval_full(spec, rows, &[], &[]).await
    }

    /// The stored evaluations, newest first: (id, spec).
    pub async fn route_evals(&self) -> Result<Vec<(i64, RouteEvalSpec)>> {
        let sql = sqlx::query(
            "SELECT id, split, folds, seed, features, policy, mode, runs_json, config_json
             FROM route_evals ORDER BY id DESC",
        );
        // Every column is NOT NULL: one typed decode of the whole row.
        type Columns = (
            i64,
            String,
            i64,
            i64,
            String,
            String,
            String,
            String,
            String,
        );
        self.rows(sql, |r| {
            let (id, split, folds, seed, features, policy, mode, runs, config): Columns =
                sqlx::FromRow::from_row(r).map_err(|e| store_err(&self.path, e))?;
            let bad = |what: &str, e: serde_json::Error| {
                StoreError::Invalid(format!(
                    "results store {}: route_evals row {id}: {what}: {e}",
                    self.path
                ))
            };
            let spec = RouteEvalSpec {
                split,
                folds: folds as u32,
                seed: seed as u64,
                features,
                policy,
                mode,
                runs: serde_json::from_str(&runs).map_err(|e| bad("runs_json", e))?,
                config: serde_json::from_str(&config).map_err(|e| bad("config_json", e))?,
            };
            Ok((id, spec))
        })
        .await
    }

    /// The rows of one evaluation, in (router, param, corpus, fold) order.
    pub async fn route_eval_rows(&self, eval_id: i64) -> Result<Vec<RouteEvalRow>> {
        let sql = sqlx::query(
            "SELECT router, param, corpus, fold, n, accuracy, macro_f1, mrr, correct_rate, mean_tokens,
                    regret_correct, regret_tokens, latency_ms, fit_ms
             FROM route_eval_results WHERE eval_id = $1 ORDER BY router, param, corpus, fold",
        )
        .bind(eval_id);
        self.rows(sql, |r| {
            Ok(RouteEvalRow {
                router: r.get(0),
                param: r.get::<String, _>(1).parse().ok(),
                corpus: r.get(2),
                fold: r.get::<i64, _>(3) as u32,
                n: r.get::<i64, _>(4) as u32,
                accuracy: r.get(5),
                macro_f1: r.get(6),
                mrr: r.get(7),
                correct_rate: r.get(8),
                mean_tokens: r.get(9),
                regret_correct: r.get(10),
                regret_tokens: r.get(11),
                latency_ms: r.get(12),
                fit_ms: r.get(13),
            })
        })
        .await
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

/// Runs `pragmas` on a new connection (a named function: the closure form trips the
/// compiler's higher-ranked lifetime inference for `Executor`).
fn set_pragmas<'c>(
    conn: &'c mut sqlx::AnyConnection,
    pragmas: &'static str,
) -> std::pin::Pin<
    Box<dyn std::future::Future<Output = std::result::Result<(), sqlx::Error>> + Send + 'c>,
> {
    Box::pin(async move {
        sqlx::Executor::execute(conn, pragmas).await?;
        Ok(())
    })
}

/// The mean of `expr` as a double on both backends (PostgreSQL's `avg` of integers is NUMERIC).
pub(crate) fn mean(expr: &str) -> String {
    format!("CAST(avg({expr}) AS DOUBLE PRECISION)")
}

/// The columns `write_result` binds, in order.
const RESULT_COLUMNS: &str = "run_id, query_id, paradigm, answer, context_json, context_tokens, \
    tokens_construction_in, tokens_construction_out, tokens_retrieval_in, tokens_retrieval_out, \
    tokens_generation_in, tokens_generation_out, token_source, \
    latency_retrieval_ms, latency_generation_ms, latency_judge_ms, \
    judge_label, em, f1, answer_recall, evidence_recall, mode, config_hash, error, trace_json, \
    semantic_f1, coverage, tokens_judge_in, tokens_judge_out, faithfulness_hard, faithfulness_soft, \
    reader_correct, graph_build, document_recall";

/// `ON CONFLICT (key) DO UPDATE SET` every column of `columns` outside the key, plus
/// `refreshed` (a defaulted timestamp): SQLite's `INSERT OR REPLACE`, in SQL both backends take.
pub(crate) fn upsert(key: &str, columns: &str, refreshed: &str) -> String {
    let keys: Vec<&str> = key.split(", ").collect();
    let set: Vec<String> = columns
        .split(", ")
        .chain(std::iter::once(refreshed))
        .filter(|c| !keys.contains(c))
        .map(|c| format!("{c} = excluded.{c}"))
        .collect();
    format!("ON CONFLICT ({key}) DO UPDATE SET {}", set.join(", "))
}

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

pub(crate) fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).expect("serialisable")
}
