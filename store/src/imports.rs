//! Facet "imports": writing an imported outcome matrix: one corpus, one run and one tuple per
//! (question, paradigm), all in a single transaction. The run key hashes the corpus content, the
//! mode, the split and the import's settings (never a path: `key`), so importing the same data
//! again finds its run and adds nothing.

pub(crate) mod key;

use sqlx::Row;

use bench_core::outcomes::{content_hash, OutcomeImport, OutcomeRecord};

use crate::db::{json, Store};
use crate::error::Result;
use crate::signals::{insert_published, insert_signals};

/// What an import did for one corpus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportedCorpus {
    /// The corpus the run holds.
    pub corpus: String,
    /// The run written (or found, when the same data was imported before).
    pub run_id: i64,
    /// Questions imported.
    pub questions: usize,
    /// Tuples imported.
    pub tuples: usize,
    /// The same data was imported before (as `run_id`): nothing was written.
    pub already: bool,
    /// An earlier run of the same corpus, source and split that holds other outcomes (the same
    /// questions with other labels, say): `route eval` reads the latest run, this one.
    pub earlier: Option<i64>,
}

/// One corpus of an import with the keys its corpus, run and rows are written under.
struct Keyed<'a> {
    imp: &'a OutcomeImport,
    corpus: &'a str,
    records: &'a [&'a OutcomeRecord],
    hash: String,
    mode: &'a str,
    split: Option<&'a str>,
    run_key: String,
    config_json: &'a str,
    config_hash: &'a str,
}

/// The open write transaction of an import.
type Tx = sqlx::Transaction<'static, sqlx::Any>;

impl Store {
    /// Writes `imp` (validated first) as one run per corpus, atomically: on any error nothing is
    /// written. A corpus whose identical data was imported before is reported and skipped.
    pub async fn import_outcomes(&self, imp: &OutcomeImport) -> Result<Vec<ImportedCorpus>> {
        self.import_outcomes_all(std::slice::from_ref(imp)).await
    }

    /// Writes several imports (the splits of one source) in one transaction: all or nothing.
    pub async fn import_outcomes_all(&self, imps: &[OutcomeImport]) -> Result<Vec<ImportedCorpus>> {
        for imp in imps {
            imp.validate()?;
        }
        let mut tx = self.begin_write().await?;
        let mut out = Vec::new();
        for imp in imps {
            let mode = imp.mode().label();
            let (config_json, config_hash) = key::settings(&imp.config, &imp.cost_unit);
            let split = imp.split.map(|s| s.as_str().to_string());
            for (corpus, records) in imp.by_corpus() {
                let hash = content_hash(&imp.source, imp.split, &records);
                let run_key = key::run_key(corpus, &hash, &mode, split.as_deref(), &config_hash);
                let keyed = Keyed {
                    imp,
                    corpus,
                    records: &records,
                    hash,
                    mode: &mode,
                    split: split.as_deref(),
                    run_key,
                    config_json: &config_json,
                    config_hash: &config_hash,
                };
                out.push(self.import_corpus(&mut tx, &keyed).await?);
            }
        }
        tx.commit().await.map_err(|e| self.err(e))?;
        Ok(out)
    }

    /// One corpus of an import: skipped when its run key is stored, else its corpus, questions,
    /// run and tuples written (with the signals and published choices of each question).
    async fn import_corpus(&self, tx: &mut Tx, k: &Keyed<'_>) -> Result<ImportedCorpus> {
        let tuples: usize = k.records.iter().map(|r| r.outcomes.len()).sum();
        let existing: Option<i64> = sqlx::query("SELECT max(id) FROM runs WHERE run_key = $1")
            .bind(&k.run_key)
            .fetch_one(&mut **tx)
            .await
            .map_err(|e| self.err(e))?
            .get(0);
        if let Some(run_id) = existing {
            return Ok(ImportedCorpus {
                corpus: k.corpus.to_string(),
                run_id,
                questions: k.records.len(),
                tuples,
                already: true,
                earlier: None,
            });
        }
        let earlier: Option<i64> = sqlx::query(
            "SELECT max(id) FROM runs WHERE reader = 'imported' AND corpus = $1
             AND mode = $2 AND COALESCE(split, '') = $3",
        )
        .bind(k.corpus)
        .bind(k.mode)
        .bind(k.split.unwrap_or(""))
        .fetch_one(&mut **tx)
        .await
        .map_err(|e| self.err(e))?
        .get(0);
        self.insert_import_questions(tx, k).await?;
        let run_id = self.insert_import_run(tx, k).await?;
        for r in k.records {
            self.insert_import_outcomes(tx, k, run_id, r).await?;
            insert_signals(self, tx, run_id, &r.id, &r.signals).await?;
            insert_published(self, tx, run_id, &r.id, &r.published).await?;
        }
        Ok(ImportedCorpus {
            corpus: k.corpus.to_string(),
            run_id,
            questions: k.records.len(),
            tuples,
            already: false,
            earlier,
        })
    }

    /// The imported corpus (no documents or chunks, only questions) and its questions.
    async fn insert_import_questions(&self, tx: &mut Tx, k: &Keyed<'_>) -> Result<()> {
        sqlx::query(
            "INSERT INTO corpora (name, content_hash, source, documents, chunks, chunk_tokens, queries, queries_with_gold_chunks)
             VALUES ($1, $2, $3, 0, 0, 0, $4, 0) ON CONFLICT DO NOTHING",
        )
        .bind(k.corpus)
        .bind(&k.hash)
        .bind(k.mode)
        .bind(k.records.len() as i64)
        .execute(&mut **tx)
        .await
        .map_err(|e| self.err(e))?;
        for r in k.records {
            let answer = r.answers.first().cloned().unwrap_or_default();
            let aliases: Vec<&String> = r.answers.iter().skip(1).collect();
            sqlx::query(
                "INSERT INTO queries (corpus, corpus_hash, query_id, text, qtype, answer, aliases_json, evidence_json, gold_chunks_json)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, '[]', '[]') ON CONFLICT DO NOTHING",
            )
            .bind(k.corpus)
            .bind(&k.hash)
            .bind(&r.id)
            .bind(&r.question)
            .bind(r.qtype.as_str())
            .bind(answer)
            .bind(json(&aliases))
            .execute(&mut **tx)
            .await
            .map_err(|e| self.err(e))?;
        }
        Ok(())
    }

    /// The imported run, finished when written; returns its id.
    async fn insert_import_run(&self, tx: &mut Tx, k: &Keyed<'_>) -> Result<i64> {
        sqlx::query_scalar(&format!(
            "INSERT INTO runs (run_key, corpus, corpus_hash, config_json, config_hash, seed, crate_version, mode, reader, judge, embedder, extractor, split, cost_unit, finished_at)
             VALUES ($1, $2, $3, $4, $5, 0, $6, $7, 'imported', $8, '', '', $9, $10, {}) RETURNING id",
            self.backend().now_text()
        ))
        .bind(&k.run_key)
        .bind(k.corpus)
        .bind(&k.hash)
        .bind(k.config_json)
        .bind(k.config_hash)
        .bind(env!("CARGO_PKG_VERSION"))
        .bind(k.mode)
        .bind(&k.imp.metric)
        .bind(k.split)
        .bind(&k.imp.cost_unit)
        .fetch_one(&mut **tx)
        .await
        .map_err(|e| self.err(e))
    }

    /// One tuple per paradigm of question `r`.
    async fn insert_import_outcomes(
        &self,
        tx: &mut Tx,
        k: &Keyed<'_>,
        run_id: i64,
        r: &OutcomeRecord,
    ) -> Result<()> {
        for (p, o) in &r.outcomes {
            // The quality columns repeat the imported score (or 1/0 of `correct` when the
            // source gives none): docs/schema.md says so for imported rows. A scored
            // answer has the harness's EM (`correct`) and F1 (`score`).
            let binary = if o.correct { 1.0 } else { 0.0 };
            let q = o.score.unwrap_or(binary);
            let em = if o.answer.is_some() { binary } else { q };
            let label = if o.correct { "correct" } else { "incorrect" };
            let trace = serde_json::json!({ "imported": { "origin": r.origin } });
            sqlx::query(
                "INSERT INTO results (run_id, query_id, paradigm, answer, context_json, context_tokens,
                    tokens_construction_in, tokens_construction_out, tokens_retrieval_in, tokens_retrieval_out,
                    tokens_generation_in, tokens_generation_out, token_source,
                    latency_retrieval_ms, latency_generation_ms, latency_judge_ms,
                    judge_label, em, f1, answer_recall, evidence_recall, mode, config_hash, error, trace_json,
                    score, cost, source_correct)
                 VALUES ($1, $2, $3, $13, '[]', 0, 0, 0, 0, 0, 0, 0, 'imported', 0, 0, 0, $4, $5, $6, $7, NULL, $8, $9, NULL, $10, $11, $12, $14)",
            )
            .bind(run_id)
            .bind(&r.id)
            .bind(p.as_str())
            .bind(label)
            .bind(em)
            .bind(q)
            .bind(q)
            .bind(k.mode)
            .bind(k.config_hash)
            .bind(trace.to_string())
            .bind(o.score)
            .bind(o.cost)
            .bind(o.answer.as_deref().unwrap_or(""))
            .bind(o.source_correct.map(i64::from))
            .execute(&mut **tx)
            .await
            .map_err(|e| self.err(e))?;
        }
        Ok(())
    }
}
