//! Facet "leaderboard": the stored router evaluations `ragrouter leaderboard` wrote for one
//! matrix and protocol, found again by the key recorded in their configuration.

use sqlx::Row;

use bench_core::RoutePrediction;

use crate::db::Store;
use crate::error::{Result, StoreError};

impl Store {
    /// The stored evaluations whose configuration's `"leaderboard"` object names
    /// `protocol_key`, newest first: (id, the whole configuration). The key is a hex digest, so
    /// the text match cannot be fooled by a pattern character; the object is checked too.
    pub async fn leaderboard_evaluations(
        &self,
        protocol_key: &str,
    ) -> Result<Vec<(i64, serde_json::Value)>> {
        let sql = sqlx::query(
            "SELECT id, config_json FROM route_evals WHERE config_json LIKE $1 ORDER BY id DESC",
        )
        .bind(format!("%{protocol_key}%"));
        let found = self
            .rows(sql, |r| {
                let id: i64 = r.get(0);
                let text: String = r.get(1);
                let config: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
                    StoreError::Invalid(format!(
                        "results store {}: route_evals row {id}: config_json: {e}",
                        self.path()
                    ))
                })?;
                Ok((id, config))
            })
            .await?;
        Ok(found
            .into_iter()
            .filter(|(_, c)| c["leaderboard"]["protocol_key"] == protocol_key)
            .collect())
    }
}

impl Store {
    /// The predictions of an evaluation's own rows (`param` empty: each router at its fixed
    /// operating point, no sweep values), in (router, corpus, query) order: what the board reads
    /// back, a fraction of what [`Store::route_predictions`] reads where routers sweep.
    pub async fn leaderboard_predictions(&self, eval_id: i64) -> Result<Vec<RoutePrediction>> {
        // The scores are left out (an empty list): the board never reads them.
        let text = format!(
            "SELECT {} FROM route_predictions WHERE eval_id = $1 AND param = ''
             ORDER BY router, corpus, query_id",
            crate::route_evals::prediction_columns("'[]'")
        );
        let sql = sqlx::query(&text).bind(eval_id);
        self.rows(sql, |r| crate::route_evals::prediction_row(self, r))
            .await
    }
}
