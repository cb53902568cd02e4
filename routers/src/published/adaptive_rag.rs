//! Adaptive-RAG's query-complexity classifier (Jeong et al., NAACL 2024): trained on the
//! cheapest correct strategy of each training question (its "silver" labels: no retrieval <
//! single-step < multi-step), it predicts that class for a new question. Questions no strategy
//! answered are left out of training, as upstream; the classifier never predicts
//! `cannot-answer`. Upstream fine-tunes T5-large on the question text; here a multinomial
//! logistic regression (the `lr` router's) reads the question features.

use bench_core::{BenchError, Result, Router, RoutingRow, RoutingSchema, RoutingSet};

use super::cheapest_correct;
use crate::entry::{Family, RouterContext, RouterEntry};
use crate::models::lr::Logistic;
use crate::models::ModelRouter;

/// The registry entry.
pub fn entry() -> RouterEntry {
    RouterEntry {
        name: "adaptive-rag",
        about: "Adaptive-RAG's complexity classifier: logistic regression on the cheapest correct paradigm",
        family: Family::Published,
        needs_llm: false,
        sees_outcomes: false,
        lanes: &[],
        sweep: &[],
        make: |_ctx: &RouterContext, _param| Ok(Box::new(AdaptiveRag::default())),
    }
}

/// The classifier and whether it has been fitted.
#[derive(Debug)]
pub struct AdaptiveRag {
    inner: ModelRouter<Logistic>,
}

impl Default for AdaptiveRag {
    fn default() -> Self {
        AdaptiveRag {
            inner: ModelRouter::new("adaptive-rag", Logistic::default()),
        }
    }
}

impl Router for AdaptiveRag {
    fn name(&self) -> &str {
        "adaptive-rag"
    }

    fn fit(&mut self, train: &RoutingSet) -> Result<()> {
        let rows: Vec<RoutingRow> = train
            .rows
            .iter()
            .filter_map(|r| {
                cheapest_correct(r).map(|c| RoutingRow {
                    label: c,
                    ..r.clone()
                })
            })
            .collect();
        if rows.is_empty() {
            return Err(BenchError::Invalid(
                "router adaptive-rag: no training question has a correct paradigm".into(),
            ));
        }
        self.inner.fit(&RoutingSet {
            schema: train.schema.clone(),
            rows,
        })
    }

    fn scores(&self, schema: &RoutingSchema, row: &RoutingRow) -> Result<Vec<f64>> {
        self.inner.scores(schema, row)
    }

    fn scores_batch(&self, schema: &RoutingSchema, rows: &[RoutingRow]) -> Result<Vec<Vec<f64>>> {
        self.inner.scores_batch(schema, rows)
    }
}
