//! Facet "evaluations": router evaluations in the store: the evaluation, its per-fold rows, every
//! per-question prediction and the paired tests against the baseline, written in one transaction.

use sqlx::Row;

use bench_core::{Measures, RouteEvalRow, RouteEvalSpec, RouteEvalTest, RoutePrediction};

use crate::db::{json, store_err, Store};
use crate::error::{Result, StoreError};

fn param_key(p: Option<f64>) -> String {
    p.map(|p| format!("{p}")).unwrap_or_default()
}

impl Store {
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
                measures: Measures {
                    accuracy: r.get(5),
                    macro_f1: r.get(6),
                    mrr: r.get(7),
                    correct_rate: r.get(8),
                    mean_tokens: r.get(9),
                    regret_correct: r.get(10),
                    regret_tokens: r.get(11),
                    latency_ms: r.get(12),
                    fit_ms: r.get(13),
                },
            })
        })
        .await
    }

    /// Stores an evaluation with its rows, predictions and tests, all or nothing; returns its id.
    pub async fn put_route_eval_full(
        &self,
        spec: &RouteEvalSpec,
        rows: &[RouteEvalRow],
        predictions: &[RoutePrediction],
        tests: &[RouteEvalTest],
    ) -> Result<i64> {
        let mut tx = self.pool().begin().await.map_err(|e| self.err(e))?;
        let id = self.insert_route_eval(&mut tx, spec).await?;
        for r in rows {
            self.insert_route_eval_row(&mut tx, id, r).await?;
        }
        for p in predictions {
            self.insert_route_prediction(&mut tx, id, p).await?;
        }
        for t in tests {
            self.insert_route_eval_test(&mut tx, id, t).await?;
        }
        tx.commit().await.map_err(|e| self.err(e))?;
        Ok(id)
    }

    /// Inserts the evaluation's own row (its protocol and configuration); returns its id.
    async fn insert_route_eval(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        spec: &RouteEvalSpec,
    ) -> Result<i64> {
        sqlx::query_scalar(
            "INSERT INTO route_evals (split, folds, seed, features, policy, mode, runs_json, config_json, crate_version)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id",
        )
        .bind(&spec.split)
        .bind(spec.folds as i64)
        .bind(spec.seed as i64)
        .bind(&spec.features)
        .bind(&spec.policy)
        .bind(&spec.mode)
        .bind(json(&spec.runs))
        .bind(spec.config.to_string())
        .bind(env!("CARGO_PKG_VERSION"))
        .fetch_one(&mut **tx)
        .await
        .map_err(|e| self.err(e))
    }

    /// Inserts one per-fold row of evaluation `id`.
    async fn insert_route_eval_row(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        id: i64,
        r: &RouteEvalRow,
    ) -> Result<()> {
        sqlx::query(
            "INSERT INTO route_eval_results (eval_id, router, param, corpus, fold, n, accuracy, macro_f1,
                mrr, correct_rate, mean_tokens, regret_correct, regret_tokens, latency_ms, fit_ms)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
        )
        .bind(id)
        .bind(&r.router)
        .bind(param_key(r.param))
        .bind(&r.corpus)
        .bind(r.fold as i64)
        .bind(r.n as i64)
        .bind(r.measures.accuracy)
        .bind(r.measures.macro_f1)
        .bind(r.measures.mrr)
        .bind(r.measures.correct_rate)
        .bind(r.measures.mean_tokens)
        .bind(r.measures.regret_correct)
        .bind(r.measures.regret_tokens)
        .bind(r.measures.latency_ms)
        .bind(r.measures.fit_ms)
        .execute(&mut **tx)
        .await
        .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Inserts one per-question prediction of evaluation `id`.
    async fn insert_route_prediction(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        id: i64,
        p: &RoutePrediction,
    ) -> Result<()> {
        sqlx::query(
            "INSERT INTO route_predictions (eval_id, router, param, fold, corpus, query_id, chosen, played, correct, cost, scores_json, probe_cost, arms_played)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
        )
        .bind(id)
        .bind(&p.router)
        .bind(param_key(p.param))
        .bind(p.fold as i64)
        .bind(&p.corpus)
        .bind(&p.query_id)
        .bind(&p.chosen)
        .bind(p.played.as_deref().unwrap_or(""))
        .bind(i64::from(p.correct))
        .bind(p.cost)
        .bind(json(&p.scores))
        .bind(p.probe_cost)
        .bind(p.arms_played.join(","))
        .execute(&mut **tx)
        .await
        .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Inserts one paired test of evaluation `id`.
    async fn insert_route_eval_test(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        id: i64,
        t: &RouteEvalTest,
    ) -> Result<()> {
        sqlx::query(
            "INSERT INTO route_eval_tests (eval_id, router, param, baseline, n, diff, ci_low, ci_high, wins, losses, p_mcnemar, resamples)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
        )
        .bind(id)
        .bind(&t.router)
        .bind(param_key(t.param))
        .bind(&t.baseline)
        .bind(t.n as i64)
        .bind(t.diff)
        .bind(t.ci_low)
        .bind(t.ci_high)
        .bind(t.wins as i64)
        .bind(t.losses as i64)
        .bind(t.p_mcnemar)
        .bind(t.resamples as i64)
        .execute(&mut **tx)
        .await
        .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// The paired tests of an evaluation, in (router, param) order.
    pub async fn route_eval_tests(&self, eval_id: i64) -> Result<Vec<RouteEvalTest>> {
        let sql = sqlx::query(
            "SELECT router, param, baseline, n, diff, ci_low, ci_high, wins, losses, p_mcnemar, resamples
             FROM route_eval_tests WHERE eval_id = $1 ORDER BY router, param",
        )
        .bind(eval_id);
        self.rows(sql, |r| {
            Ok(RouteEvalTest {
                router: r.get(0),
                param: r.get::<String, _>(1).parse().ok(),
                baseline: r.get(2),
                n: r.get::<i64, _>(3) as u32,
                diff: r.get(4),
                ci_low: r.get(5),
                ci_high: r.get(6),
                wins: r.get::<i64, _>(7) as u32,
                losses: r.get::<i64, _>(8) as u32,
                p_mcnemar: r.get(9),
                resamples: r.get::<i64, _>(10) as u32,
            })
        })
        .await
    }

    /// The per-question predictions of an evaluation, in (router, param, corpus, query) order.
    pub async fn route_predictions(&self, eval_id: i64) -> Result<Vec<RoutePrediction>> {
        let text = format!(
            "SELECT {} FROM route_predictions WHERE eval_id = $1 ORDER BY router, param, corpus, query_id",
            prediction_columns("scores_json")
        );
        let sql = sqlx::query(&text).bind(eval_id);
        self.rows(sql, |r| prediction_row(self, r)).await
    }
}

/// The columns [`prediction_row`] reads, in its order, with `scores` as the scores column (an
/// expression where a reader does not need them).
pub(crate) fn prediction_columns(scores: &str) -> String {
    format!(
        "router, param, fold, corpus, query_id, chosen, played, correct, cost, {scores}, probe_cost, arms_played"
    )
}

/// One `route_predictions` row, selected by [`prediction_columns`].
pub(crate) fn prediction_row(store: &Store, r: &sqlx::any::AnyRow) -> Result<RoutePrediction> {
    let played: String = r.get(6);
    let scores: String = r.get(9);
    Ok(RoutePrediction {
        router: r.get(0),
        param: r.get::<String, _>(1).parse().ok(),
        fold: r.get::<i64, _>(2) as u32,
        corpus: r.get(3),
        query_id: r.get(4),
        chosen: r.get(5),
        played: (!played.is_empty()).then_some(played),
        correct: r.get::<i64, _>(7) != 0,
        cost: r.get(8),
        probe_cost: r.get::<Option<f64>, _>(10).unwrap_or(0.0),
        arms_played: r
            .get::<Option<String>, _>(11)
            .map(|a| {
                a.split(',')
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default(),
        scores: serde_json::from_str(&scores).map_err(|e| {
            StoreError::Invalid(format!(
                "results store {}: route_predictions scores_json: {e}",
                store.path()
            ))
        })?,
    })
}
