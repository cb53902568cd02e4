//! Routers from the seed papers (NER, EA-GraphRAG, RAP-RAG, R2Adapter, the LLM router) and the
//! cost-aware router, with the class look-ups and score layouts they share.
//!
//! The seed papers route between "vanilla" (dense passage) RAG and graph RAG. A data set may lack
//! either class (a run over a subset of paradigms), so every seed router resolves its lanes
//! through a preference list ([`PASSAGE`], [`GRAPH`], ...) and fails with a clear error only when
//! no class of a list is present.

pub(crate) mod cost_aware;
pub(crate) mod ea_graphrag;
pub(crate) mod llm_router;
pub(crate) mod ner;
pub(crate) mod r2adapter;
pub(crate) mod rap_rag;

use std::cmp::Ordering;

use bench_core::{
    BenchError, ChatRequest, ClassOutcome, ParadigmId, Result, RoutingCost, RoutingRow,
    RoutingSchema,
};

use crate::entry::LlmAccess;

/// The dense-passage lane ("vanilla RAG" in the seeds): NaiveRAG, else the closest dense paradigm.
pub const PASSAGE: &[ParadigmId] = &[
    ParadigmId::Naive,
    ParadigmId::Iterative,
    ParadigmId::Hybrid,
    ParadigmId::Fusion,
];

/// The graph lane ("graph-based RAG" in the seeds): GraphRAG, else the closest graph paradigm.
pub const GRAPH: &[ParadigmId] = &[
    ParadigmId::Graph,
    ParadigmId::IterativeGraph,
    ParadigmId::Hybrid,
    ParadigmId::Fusion,
];

/// The class of the first paradigm of `prefs` that `schema` has, or an error naming the router,
/// the lane and the classes there are.
pub fn resolve(
    schema: &RoutingSchema,
    prefs: &[ParadigmId],
    router: &str,
    lane: &str,
) -> Result<usize> {
    prefs
        .iter()
        .find_map(|&p| schema.class_of(p))
        .ok_or_else(|| {
            BenchError::Invalid(format!(
                "router {router}: the data set has no class for its {lane} lane (tried {}); its \
                 classes are {}",
                prefs
                    .iter()
                    .map(|p| p.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                schema.classes.join(", ")
            ))
        })
}

/// Scores ranking the classes of `order` first to last (a class repeated keeps its first place)
/// above every other class, which all score 0.
pub fn ranked(n_classes: usize, order: &[usize]) -> Vec<f64> {
    let mut scores = vec![0.0; n_classes];
    let mut next = order.len() as f64;
    for &c in order {
        if c < n_classes && scores[c] == 0.0 {
            scores[c] = next;
            next -= 1.0;
        }
    }
    scores
}

/// Orders two outcomes by answer quality: correct first, then semantic F1.
pub fn quality_cmp(a: &ClassOutcome, b: &ClassOutcome) -> Ordering {
    a.correct
        .cmp(&b.correct)
        .then(a.semantic_f1.total_cmp(&b.semantic_f1))
}

/// The outcome of class `class` on `row` (`None` for `cannot-answer` or a missing tuple).
pub fn outcome_of_class(row: &RoutingRow, class: usize) -> Option<ClassOutcome> {
    row.outcomes.get(class).copied().flatten()
}

/// The outcome of paradigm `p` on `row`, when the data set has the class and the tuple exists.
pub fn outcome_of(schema: &RoutingSchema, row: &RoutingRow, p: ParadigmId) -> Option<ClassOutcome> {
    schema.class_of(p).and_then(|c| outcome_of_class(row, c))
}

/// One chat call from a router's blocking thread: the reply text and its token bill (the
/// endpoint's usage when reported, else cl100k counts).
pub fn chat_blocking(access: &LlmAccess, request: &ChatRequest) -> Result<(String, RoutingCost)> {
    let response = access.handle.block_on(access.llm.chat(request))?;
    let (tokens_in, tokens_out, _) = response.token_bill(request);
    Ok((
        response.content,
        RoutingCost {
            tokens_in,
            tokens_out,
        },
    ))
}

/// The tokens a router was charged for `row`, from its memo of LLM calls keyed by [`row_key`]
/// (zero when it made no call for the row).
pub fn charged<T>(
    memo: &std::sync::Mutex<std::collections::BTreeMap<String, (T, RoutingCost)>>,
    row: &RoutingRow,
) -> RoutingCost {
    memo.lock()
        .unwrap()
        .get(&row_key(row))
        .map(|(_, c)| *c)
        .unwrap_or_default()
}

/// A key naming one row across folds and calls (corpus and query id).
pub fn row_key(row: &RoutingRow) -> String {
    format!("{}\u{1f}{}", row.corpus, row.query_id)
}

#[cfg(test)]
pub(crate) mod testutil {
    //! Hand-made schemas and rows for the seed routers' tests.

    use std::sync::Arc;

    use bench_core::{ClassOutcome, FeatureKind, ParadigmId, QueryType, RoutingRow, RoutingSchema};

    /// A schema over `paradigms` with `n_features` plain syntax-block columns.
    pub fn schema(paradigms: &[ParadigmId], n_features: usize) -> Arc<RoutingSchema> {
        Arc::new(RoutingSchema::new(
            paradigms,
            vec![(
                FeatureKind::QuerySyntax,
                (0..n_features).map(|i| format!("f{i}")).collect(),
            )],
        ))
    }

    /// A row with `text`, `features`, no outcomes and label 0.
    pub fn row(schema: &RoutingSchema, id: &str, text: &str, features: Vec<f64>) -> RoutingRow {
        RoutingRow {
            query_id: id.into(),
            corpus: "c".into(),
            text: text.into(),
            qtype: QueryType::Factual,
            features,
            label: 0,
            outcomes: vec![None; schema.n_classes() - 1],
        }
    }

    pub fn outcome(correct: bool, f1: f64, tokens: f64) -> Option<ClassOutcome> {
        Some(ClassOutcome {
            correct,
            semantic_f1: f1,
            tokens,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::ParadigmId as P;

    #[test]
    fn lanes_fall_back_in_preference_order() {
        let s = testutil::schema(&[P::Hybrid, P::Naive, P::LlmOnly], 1);
        assert_eq!(resolve(&s, PASSAGE, "t", "passage").unwrap(), 1);
        // No graph or iterative-graph: hybrid stands in for the graph lane.
        assert_eq!(resolve(&s, GRAPH, "t", "graph").unwrap(), 2);
        let only = testutil::schema(&[P::LlmOnly], 1);
        let err = resolve(&only, GRAPH, "ner", "graph")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("ner") && err.contains("llm-only, cannot-answer"),
            "{err}"
        );
    }

    #[test]
    fn ranked_scores_keep_order_and_first_place() {
        assert_eq!(ranked(4, &[2, 0, 2]), vec![2.0, 0.0, 3.0, 0.0]);
        assert_eq!(bench_core::routing::argmax(&ranked(3, &[1])), 1);
    }

    #[test]
    fn quality_prefers_correct_then_f1() {
        let a = testutil::outcome(true, 0.1, 1.0).unwrap();
        let b = testutil::outcome(false, 0.9, 1.0).unwrap();
        let c = testutil::outcome(true, 0.5, 1.0).unwrap();
        assert_eq!(quality_cmp(&a, &b), Ordering::Greater);
        assert_eq!(quality_cmp(&a, &c), Ordering::Less);
    }
}
