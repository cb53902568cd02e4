//! Per-question probe signals and published routers' choices: the `signals` and
//! `published_choices` tables (schema version 13, docs/schema.md).
//!
//! A signal is what a cheap first look at a question measured (a retrieval score, the agreement of
//! two cheap paradigms' answers, an uncertainty): a value and a present flag, so a signal missing
//! for a question is an explicit row (present = false, value 0) in the store, the exports, the
//! routers' features and the external protocol alike. Each row says what it cost (its own share,
//! in the run's cost unit, and milliseconds) and which paradigms' answers the probe used: a router
//! that reads the signal pays those paradigms once, and nothing again when it then plays one.
//! `bench`'s probe step and `import` both write through [`Store::put_signals`].

use serde::{Deserialize, Serialize};
use sqlx::Row;

use crate::error::{BenchError, Result};
use crate::store::Store;
use crate::types::ParadigmId;

/// One signal of one question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Signal {
    /// Stable name (`agree.em`, `seakr.perplexity`, `dense.top1`, ...): one feature column.
    pub name: String,
    /// `None`: the probe could not measure it for this question (stored as present = 0).
    pub value: Option<f64>,
    /// The probe that produced it (`answers`, `seakr`, `dense`, ...).
    pub probe: String,
    /// Paradigms whose answers the probe used (billed once to a router that reads it).
    pub paradigms: Vec<ParadigmId>,
    /// The signal's own cost beyond those paradigms, in the run's cost unit.
    pub cost: f64,
    /// Wall time the signal took, in milliseconds.
    pub cost_ms: f64,
}

impl Signal {
    /// A signal that cost nothing of its own.
    pub fn free(name: &str, value: Option<f64>, probe: &str, paradigms: &[ParadigmId]) -> Signal {
        Signal {
            name: name.to_string(),
            value,
            probe: probe.to_string(),
            paradigms: paradigms.to_vec(),
            cost: 0.0,
            cost_ms: 0.0,
        }
    }

    /// Checks the name, a finite value and finite, non-negative costs.
    pub fn validate(&self) -> std::result::Result<(), String> {
        if self.name.trim().is_empty() {
            return Err("a signal needs a non-empty name".into());
        }
        if self.value.is_some_and(|v| !v.is_finite()) {
            return Err(format!(
                "signal {:?}: value {:?} is not finite (give null for a missing signal)",
                self.name, self.value
            ));
        }
        for (what, v) in [("cost", self.cost), ("cost_ms", self.cost_ms)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!(
                    "signal {:?}: {what} {v} is not a finite number >= 0",
                    self.name
                ));
            }
        }
        Ok(())
    }
}

/// A published router's choice on one imported question, scored as a router of its own: its
/// answer comes from its own run, not from the arm matrix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PublishedChoice {
    /// The row's name in tables (`adaptive-rag (published)`).
    pub router: String,
    pub choice: ParadigmId,
    /// Its answer, when the source gives one (then `correct` is the harness's EM verdict).
    pub answer: Option<String>,
    pub correct: bool,
    /// The source's own verdict, kept beside the harness's.
    pub source_correct: Option<bool>,
    /// What it cost, in the import's cost unit.
    pub cost: f64,
}

fn paradigm_list(ps: &[ParadigmId]) -> String {
    ps.iter().map(|p| p.as_str()).collect::<Vec<_>>().join(",")
}

/// Inserts one question's signals (a row already stored is kept: a resumed probe adds nothing).
pub(crate) async fn insert_signals(
    store: &Store,
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    run_id: i64,
    query_id: &str,
    signals: &[Signal],
) -> Result<()> {
    for s in signals {
        sqlx::query(
            "INSERT INTO signals (run_id, query_id, name, value, present, probe, paradigms, cost, cost_ms)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING",
        )
        .bind(run_id)
        .bind(query_id)
        .bind(&s.name)
        .bind(s.value.unwrap_or(0.0))
        .bind(i64::from(s.value.is_some()))
        .bind(&s.probe)
        .bind(paradigm_list(&s.paradigms))
        .bind(s.cost)
        .bind(s.cost_ms)
        .execute(&mut **tx)
        .await
        .map_err(|e| store.err(e))?;
    }
    Ok(())
}

/// Inserts one question's published choices.
pub(crate) async fn insert_published(
    store: &Store,
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    run_id: i64,
    query_id: &str,
    choices: &[PublishedChoice],
) -> Result<()> {
    for c in choices {
        sqlx::query(
            "INSERT INTO published_choices (run_id, query_id, router, choice, answer, correct, source_correct, cost)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(run_id)
        .bind(query_id)
        .bind(&c.router)
        .bind(c.choice.as_str())
        .bind(c.answer.as_deref())
        .bind(i64::from(c.correct))
        .bind(c.source_correct.map(i64::from))
        .bind(c.cost)
        .execute(&mut **tx)
        .await
        .map_err(|e| store.err(e))?;
    }
    Ok(())
}

fn parse_paradigms(store: &Store, run_id: i64, s: &str) -> Result<Vec<ParadigmId>> {
    s.split(',')
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.parse().map_err(|e| {
                BenchError::Invalid(format!(
                    "results store {}: run {run_id}: signals.paradigms {s:?}: {e}",
                    store.path()
                ))
            })
        })
        .collect()
}

impl Store {
    /// Writes signals of a run, `(query id, signal)` pairs, in one transaction; rows already
    /// stored for (run, query, name) are kept, so a resumed probe step adds only what is new.
    pub async fn put_signals(&self, run_id: i64, rows: &[(String, Signal)]) -> Result<()> {
        for (q, s) in rows {
            s.validate()
                .map_err(|m| BenchError::Invalid(format!("run {run_id} query {q}: {m}")))?;
        }
        let mut tx = self.pool().begin().await.map_err(|e| self.err(e))?;
        for (q, s) in rows {
            insert_signals(self, &mut tx, run_id, q, std::slice::from_ref(s)).await?;
        }
        tx.commit().await.map_err(|e| self.err(e))
    }

    /// Every signal of a run as `(query id, signal)`, in (query id, name) order.
    pub async fn signals(&self, run_id: i64) -> Result<Vec<(String, Signal)>> {
        let rows = sqlx::query(
            "SELECT query_id, name, value, present, probe, paradigms, cost, cost_ms
             FROM signals WHERE run_id = $1 ORDER BY query_id, name",
        )
        .bind(run_id)
        .fetch_all(self.pool())
        .await
        .map_err(|e| self.err(e))?;
        rows.into_iter()
            .map(|r| {
                let present: i64 = r.get(3);
                let paradigms: String = r.get(5);
                Ok((
                    r.get(0),
                    Signal {
                        name: r.get(1),
                        value: (present != 0).then(|| r.get(2)),
                        probe: r.get(4),
                        paradigms: parse_paradigms(self, run_id, &paradigms)?,
                        cost: r.get(6),
                        cost_ms: r.get(7),
                    },
                ))
            })
            .collect()
    }

    /// Every published choice of a run as `(query id, choice)`, in (query id, router) order.
    pub async fn published_choices(&self, run_id: i64) -> Result<Vec<(String, PublishedChoice)>> {
        let rows = sqlx::query(
            "SELECT query_id, router, choice, answer, correct, source_correct, cost
             FROM published_choices WHERE run_id = $1 ORDER BY query_id, router",
        )
        .bind(run_id)
        .fetch_all(self.pool())
        .await
        .map_err(|e| self.err(e))?;
        rows.into_iter()
            .map(|r| {
                let choice: String = r.get(2);
                Ok((
                    r.get(0),
                    PublishedChoice {
                        router: r.get(1),
                        choice: choice.parse().map_err(|e| {
                            BenchError::Invalid(format!(
                                "results store {}: run {run_id}: published_choices.choice: {e}",
                                self.path()
                            ))
                        })?,
                        answer: r.get(3),
                        correct: r.get::<i64, _>(4) != 0,
                        source_correct: r.get::<Option<i64>, _>(5).map(|v| v != 0),
                        cost: r.get(6),
                    },
                ))
            })
            .collect()
    }
}
