//! The NER router of R2Adapter's router analysis (seed 000, after HybGRAG): a question naming
//! fewer than two entities goes to dense passage RAG, any other to graph RAG.
//!
//! The seed counts spaCy named entities; this crate has no NER model, so the count is the rule of
//! `metrics::query` (runs of capitalised words after the first word, numbers, dates), read from the
//! row's question text. The router learns nothing from training rows. Lanes: NaiveRAG and
//! GraphRAG; when the data set lacks one, the first present class of [`super::PASSAGE`] or
//! [`super::GRAPH`] stands in (`graph` missing: iterative-graph, then hybrid, then fusion).

use bench_core::{Result, Router, RoutingRow, RoutingSchema, RoutingSet};

use super::{ranked, resolve, GRAPH, PASSAGE};
use crate::entry::{Family, RouterContext, RouterEntry};

/// The seed's cut: fewer entities than this stay on the passage lane.
pub const MIN_GRAPH_ENTITIES: usize = 2;

/// The registry entry.
pub fn entry() -> RouterEntry {
    RouterEntry {
        name: "ner",
        about: "entity count < 2 → naive, else graph (R2Adapter's NER router, rule-based entities)",
        family: Family::Seed,
        needs_llm: false,
        sees_outcomes: false,
        lanes: &[("passage", super::PASSAGE), ("graph", super::GRAPH)],
        sweep: &[],
        make: |_ctx: &RouterContext, _param| Ok(Box::new(NerRouter)),
    }
}

/// The NER router (stateless).
#[derive(Debug, Clone, Copy, Default)]
pub struct NerRouter;

/// The entity count the router reads from a question.
pub fn entity_count(question: &str) -> usize {
    metrics::query::query_features(question).entity_count
}

impl Router for NerRouter {
    fn name(&self) -> &str {
        "ner"
    }

    fn fit(&mut self, train: &RoutingSet) -> Result<()> {
        // Nothing to learn; fail now rather than on the first test row if a lane has no class.
        resolve(&train.schema, PASSAGE, "ner", "passage")?;
        resolve(&train.schema, GRAPH, "ner", "graph")?;
        Ok(())
    }

    fn scores(&self, schema: &RoutingSchema, row: &RoutingRow) -> Result<Vec<f64>> {
        let passage = resolve(schema, PASSAGE, "ner", "passage")?;
        let graph = resolve(schema, GRAPH, "ner", "graph")?;
        let lane = if entity_count(&row.text) < MIN_GRAPH_ENTITIES {
            passage
        } else {
            graph
        };
        // One-hot: the rule has no notion of a runner-up.
        Ok(ranked(schema.n_classes(), &[lane]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed_papers::testutil::{row, schema};
    use bench_core::ParadigmId as P;
    use std::sync::Arc;

    #[test]
    fn fewer_than_two_entities_go_to_naive() {
        let s = schema(&[P::LlmOnly, P::Naive, P::Graph], 1);
        let mut r = NerRouter;
        r.fit(&RoutingSet {
            schema: Arc::clone(&s),
            rows: vec![],
        })
        .unwrap();
        let cases = [
            ("What is aspirin?", 0, 1),                      // no entity
            ("When did Lothair II's mother die?", 1, 1),     // one name
            ("Who was older, Ada Brook or Tom Vale?", 2, 2), // two names
            ("Who was born first, Ada Brook or Tom Vale, in 1832?", 3, 2),
            ("Which city hosted the 1908 and 1948 Olympics?", 3, 2), // two years and a name
        ];
        for (q, n, class) in cases {
            assert_eq!(entity_count(q), n, "{q}");
            let sc = r.scores(&s, &row(&s, "q", q, vec![0.0])).unwrap();
            assert_eq!(
                r.predict(&s, &row(&s, "q", q, vec![0.0])).unwrap(),
                class,
                "{q}"
            );
            // One-hot over the classes.
            assert_eq!(sc.iter().filter(|&&v| v > 0.0).count(), 1);
            assert_eq!(sc.len(), 4);
        }
    }

    #[test]
    fn missing_graph_class_falls_back_and_missing_both_is_an_error() {
        let s = schema(&[P::Naive, P::Hybrid], 1);
        let q = row(&s, "q", "Did Ada Brook meet Tom Vale?", vec![0.0]);
        assert_eq!(
            NerRouter.predict(&s, &q).unwrap(),
            s.class_of(P::Hybrid).unwrap()
        );
        let none = schema(&[P::LlmOnly], 1);
        let mut r = NerRouter;
        let err = r
            .fit(&RoutingSet {
                schema: none,
                rows: vec![],
            })
            .unwrap_err();
        assert!(err.to_string().contains("passage lane"), "{err}");
    }
}
