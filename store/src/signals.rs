//! Facet "signals": the `signals` and `published_choices` tables (schema version 13,
//! docs/schema.md): per-question probe signals (`bench_core::Signal`) and published routers'
//! choices. `bench`'s probe step and `import` both write through [`Store::put_signals`].

use bench_core::{ParadigmId, PublishedChoice, Signal};
use sqlx::Row;

use crate::error::{Result, StoreError};
use crate::Store;

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
                StoreError::Invalid(format!(
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
                .map_err(|m| StoreError::Invalid(format!("run {run_id} query {q}: {m}")))?;
        }
        // One lock order for every writer: two workers probing the same run insert the same
        // keys, and in PostgreSQL two transactions taking them in different orders deadlock.
        let mut ordered: Vec<&(String, Signal)> = rows.iter().collect();
        ordered.sort_by(|a, b| (&a.0, &a.1.name).cmp(&(&b.0, &b.1.name)));
        let mut tx = self.pool().begin().await.map_err(|e| self.err(e))?;
        for (q, s) in ordered {
            insert_signals(self, &mut tx, run_id, q, std::slice::from_ref(s)).await?;
        }
        tx.commit().await.map_err(|e| self.err(e))
    }

    /// Every signal of a run as `(query id, signal)`, in (query id, name) order.
    pub async fn signals(&self, run_id: i64) -> Result<Vec<(String, Signal)>> {
        let sql = sqlx::query(
            "SELECT query_id, name, value, present, probe, paradigms, cost, cost_ms
             FROM signals WHERE run_id = $1 ORDER BY query_id, name",
        )
        .bind(run_id);
        self.rows(sql, |r| {
            let signal = Signal {
                name: r.get(1),
                value: (r.get::<i64, _>(3) != 0).then(|| r.get(2)),
                probe: r.get(4),
                paradigms: parse_paradigms(self, run_id, &r.get::<String, _>(5))?,
                cost: r.get(6),
                cost_ms: r.get(7),
            };
            Ok((r.get(0), signal))
        })
        .await
    }

    /// Every published choice of a run as `(query id, choice)`, in (query id, router) order.
    pub async fn published_choices(&self, run_id: i64) -> Result<Vec<(String, PublishedChoice)>> {
        let sql = sqlx::query(
            "SELECT query_id, router, choice, answer, correct, source_correct, cost
             FROM published_choices WHERE run_id = $1 ORDER BY query_id, router",
        )
        .bind(run_id);
        self.rows(sql, |r| {
            let choice: ParadigmId = r.get::<String, _>(2).parse().map_err(|e| {
                StoreError::Invalid(format!(
                    "results store {}: run {run_id}: published_choices.choice: {e}",
                    self.path()
                ))
            })?;
            Ok((
                r.get(0),
                PublishedChoice {
                    router: r.get(1),
                    choice,
                    answer: r.get(3),
                    correct: r.get::<i64, _>(4) != 0,
                    source_correct: r.get::<Option<i64>, _>(5).map(|v| v != 0),
                    cost: r.get(6),
                },
            ))
        })
        .await
    }
}
