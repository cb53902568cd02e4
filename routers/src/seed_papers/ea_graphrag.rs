//! EA-GraphRAG's complexity router (seed 002): syntactic features of the question → a score
//! s(q) in (0, 1) → three lanes: s <= tau_L dense (naive), s >= tau_H graph, fusion in between.
//!
//! The seed's scorer is supervised: "a trained linear classifier with sigmoid activation",
//! s(q) = sigmoid(W · features(q) + b), trained on questions labelled simple or complex, with a
//! heuristic proxy for when no labels exist. Our labels are the outcomes: the scorer is a
//! logistic regression (linfa-logistic, L-BFGS, L2 alpha 1.0) on the standardised syntax
//! features, fitted on the training rows with target "the best graph-family paradigm (graph,
//! hybrid, iterative-graph, fusion) answers better than naive" (correct first, then semantic F1,
//! as [`super::quality_cmp`]). Rows missing naive or every graph-family outcome do not train.
//! When the usable rows hold only one target value the scorer falls back to the seed's
//! heuristic proxy (`metrics::query::complexity_score`), and [`EaGraphRag::scorer`] says so.
//!
//! Features are computed from the row's question text with `metrics::query` (the seed's feature
//! constructor, with lexical stand-ins for the parser), so the router ignores the feature
//! configuration, as the NER and RAP-RAG routers do. Boundaries follow the seed's `route_query`:
//! s = tau_L is dense, s = tau_H is graph. Lanes fall back when a class is missing: naive →
//! [`super::PASSAGE`], graph → [`super::GRAPH`], fusion → hybrid.

use bench_core::{
    BenchError, ParadigmId as P, QueryType, Result, Router, RoutingRow, RoutingSchema, RoutingSet,
};
use linfa::prelude::*;
use linfa_logistic::{FittedLogisticRegression, LogisticRegression};
use ndarray::{Array1, Array2};

use super::{outcome_of, quality_cmp, ranked, resolve, GRAPH, PASSAGE};
use crate::entry::{Family, RouterContext, RouterEntry};
use crate::models::prep::Standardizer;

/// The seed's lower threshold: s(q) at or below it is dense.
pub const TAU_L: f64 = 0.3;
/// The seed's upper threshold: s(q) at or above it is graph.
pub const TAU_H: f64 = 0.7;
/// L2 weight of the logistic regression (as the `lr` router).
pub const ALPHA: f64 = 1.0;
/// Most L-BFGS iterations of the scorer's fit.
pub const MAX_ITERATIONS: u64 = 100;

/// The fusion lane and its fallback.
const FUSION: &[P] = &[P::Fusion, P::Hybrid];

/// The registry entry.
pub fn entry() -> RouterEntry {
    RouterEntry {
        name: "ea-graphrag",
        about: "EA-GraphRAG: logistic complexity score on syntax features, s<=0.3 naive, s>=0.7 graph, else fusion",
        family: Family::Seed,
        needs_llm: false,
        sees_outcomes: false,
        lanes: &[("dense", super::PASSAGE), ("graph", super::GRAPH), ("fusion", FUSION)],
        sweep: &[],
        make: |_ctx: &RouterContext, _param| Ok(Box::new(EaGraphRag::default())),
    }
}

/// Which scorer a fitted router uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scorer {
    /// The logistic regression fitted on training rows.
    Learned,
    /// The seed's heuristic proxy (the training rows had one target value only).
    Heuristic,
}

/// The three lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    /// s(q) <= tau_L: dense passage RAG.
    Dense,
    /// In between: fusion.
    Fusion,
    /// s(q) >= tau_H: graph RAG.
    Graph,
}

/// The lane of a score (the seed's inclusive boundaries).
pub fn lane(s: f64) -> Lane {
    if s <= TAU_L {
        Lane::Dense
    } else if s >= TAU_H {
        Lane::Graph
    } else {
        Lane::Fusion
    }
}

/// The router.
#[derive(Default)]
pub struct EaGraphRag {
    fitted: Option<Fitted>,
}

struct Fitted {
    scorer: Scorer,
    model: Option<(Standardizer, FittedLogisticRegression<f64, bool>)>,
}

impl std::fmt::Debug for EaGraphRag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EaGraphRag")
            .field("scorer", &self.scorer())
            .finish()
    }
}

/// A row carrying only the syntax features of a question (what the standardiser reads).
fn syntax_row(text: &str) -> RoutingRow {
    RoutingRow {
        query_id: String::new(),
        corpus: String::new(),
        text: String::new(),
        qtype: QueryType::Other,
        features: metrics::query::query_features(text)
            .to_vec()
            .into_iter()
            .map(|(_, v)| v)
            .collect(),
        label: 0,
        outcomes: Vec::new(),
    }
}

/// The training target of a row: `Some(true)` when the best graph-family outcome beats naive's.
pub fn graph_beats_naive(schema: &RoutingSchema, row: &RoutingRow) -> Option<bool> {
    let naive = outcome_of(schema, row, P::Naive)?;
    let best_graph = P::ALL
        .iter()
        .filter(|p| p.uses_graph())
        .filter_map(|&p| outcome_of(schema, row, p))
        .max_by(quality_cmp)?;
    Some(quality_cmp(&best_graph, &naive).is_gt())
}

impl EaGraphRag {
    /// The scorer in use (`None` before `fit`).
    pub fn scorer(&self) -> Option<Scorer> {
        self.fitted.as_ref().map(|f| f.scorer)
    }

    /// s(q) of a question.
    pub fn score(&self, question: &str) -> Result<f64> {
        let f = self.fitted.as_ref().ok_or_else(|| {
            BenchError::Invalid("router ea-graphrag: scores asked before fit".into())
        })?;
        Ok(match &f.model {
            Some((st, model)) => {
                let x = st.matrix(&[syntax_row(question)]).mapv(f64::from);
                // linfa's probability is that of its "positive" label, the more frequent class.
                let p = model.predict_probabilities(&x)[0];
                if model.labels().pos.class {
                    p
                } else {
                    1.0 - p
                }
            }
            None => metrics::query::complexity_score(question),
        })
    }
}

impl Router for EaGraphRag {
    fn name(&self) -> &str {
        "ea-graphrag"
    }

    fn fit(&mut self, train: &RoutingSet) -> Result<()> {
        for (lanes, name) in [(PASSAGE, "dense"), (GRAPH, "graph"), (FUSION, "fusion")] {
            resolve(&train.schema, lanes, "ea-graphrag", name)?;
        }
        let (rows, y): (Vec<RoutingRow>, Vec<bool>) = train
            .rows
            .iter()
            .filter_map(|r| graph_beats_naive(&train.schema, r).map(|t| (syntax_row(&r.text), t)))
            .unzip();
        let both = y.iter().any(|&t| t) && y.iter().any(|&t| !t);
        if !both {
            self.fitted = Some(Fitted {
                scorer: Scorer::Heuristic,
                model: None,
            });
            return Ok(());
        }
        let n_cols = rows[0].features.len();
        let st = Standardizer::fit(&rows, (0..n_cols).collect());
        let x: Array2<f64> = st.matrix(&rows).mapv(f64::from);
        let model = LogisticRegression::default()
            .alpha(ALPHA)
            .max_iterations(MAX_ITERATIONS)
            .fit(&Dataset::new(x, Array1::from(y)))
            .map_err(|e| BenchError::Invalid(format!("router ea-graphrag: fit failed: {e}")))?;
        self.fitted = Some(Fitted {
            scorer: Scorer::Learned,
            model: Some((st, model)),
        });
        Ok(())
    }

    fn scores(&self, schema: &RoutingSchema, row: &RoutingRow) -> Result<Vec<f64>> {
        let dense = resolve(schema, PASSAGE, "ea-graphrag", "dense")?;
        let graph = resolve(schema, GRAPH, "ea-graphrag", "graph")?;
        let fusion = resolve(schema, FUSION, "ea-graphrag", "fusion")?;
        let s = self.score(&row.text)?;
        // The lane, then the lane the score is nearer to.
        let order = match lane(s) {
            Lane::Dense => [dense, fusion, graph],
            Lane::Graph => [graph, fusion, dense],
            Lane::Fusion if s - TAU_L <= TAU_H - s => [fusion, dense, graph],
            Lane::Fusion => [fusion, graph, dense],
        };
        Ok(ranked(schema.n_classes(), &order))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed_papers::testutil::{outcome, row, schema};
    use std::sync::Arc;

    #[test]
    fn lanes_at_the_thresholds() {
        assert_eq!(lane(0.0), Lane::Dense);
        assert_eq!(lane(TAU_L), Lane::Dense);
        assert_eq!(lane(TAU_L + 1e-9), Lane::Fusion);
        assert_eq!(lane(0.5), Lane::Fusion);
        assert_eq!(lane(TAU_H - 1e-9), Lane::Fusion);
        assert_eq!(lane(TAU_H), Lane::Graph);
        assert_eq!(lane(1.0), Lane::Graph);
    }

    fn set_with(rows: Vec<(&str, Option<bool>)>) -> RoutingSet {
        let s = schema(&[P::Naive, P::Graph, P::Fusion], 1);
        let rows = rows
            .into_iter()
            .enumerate()
            .map(|(i, (q, graph_wins))| {
                let mut r = row(&s, &format!("q{i}"), q, vec![0.0]);
                if let Some(g) = graph_wins {
                    r.outcomes[s.class_of(P::Naive).unwrap()] = outcome(!g, 0.5, 100.0);
                    r.outcomes[s.class_of(P::Graph).unwrap()] = outcome(g, 0.5, 300.0);
                }
                r
            })
            .collect();
        RoutingSet { schema: s, rows }
    }

    #[test]
    fn heuristic_scorer_without_contrast_routes_the_seed_examples() {
        // Every usable row says naive wins: no contrast, so the seed's heuristic proxy scores.
        let train = set_with(vec![("What is aspirin?", Some(false)), ("Who?", None)]);
        let mut r = EaGraphRag::default();
        r.fit(&train).unwrap();
        assert_eq!(r.scorer(), Some(Scorer::Heuristic));
        let s = &train.schema;
        let q = |t: &str| s.classes[r.predict(s, &row(s, "x", t, vec![0.0])).unwrap()].clone();
        // 0.25 → dense; the seed's complex example scores 1.0 → graph.
        assert_eq!(q("What is aspirin?"), "naive");
        assert_eq!(
            q("Which drugs that treat both migraines and arthritis have interactions with ACE inhibitors?"),
            "graph"
        );
        // depth 2 → 0.25, one entity → 0.2: 0.45 → fusion.
        assert!((r.score("Who is Ada Brook?").unwrap() - 0.45).abs() < 1e-12);
        assert_eq!(q("Who is Ada Brook?"), "fusion");
    }

    #[test]
    fn learned_scorer_separates_simple_from_complex_questions() {
        let simple = [
            "What is aspirin?",
            "Who is Ada?",
            "What is salt?",
            "Where is Rome?",
        ];
        let complex = [
            "Which drugs that treat both migraines and arthritis interact with ACE inhibitors?",
            "Who directed the film that won the award which Tom Vale's brother had won before?",
            "Where was the man who founded the company that built the bridge born?",
            "Which city that hosted both games and the fair was where Ada's mother lived?",
        ];
        let mut rows: Vec<(&str, Option<bool>)> = Vec::new();
        for _ in 0..3 {
            rows.extend(simple.iter().map(|q| (*q, Some(false))));
            rows.extend(complex.iter().map(|q| (*q, Some(true))));
        }
        let train = set_with(rows);
        assert_eq!(
            graph_beats_naive(&train.schema, &train.rows[0]),
            Some(false)
        );
        let mut r = EaGraphRag::default();
        r.fit(&train).unwrap();
        assert_eq!(r.scorer(), Some(Scorer::Learned));
        for q in simple {
            assert!(r.score(q).unwrap() < 0.5, "{q}: {}", r.score(q).unwrap());
        }
        for q in complex {
            assert!(r.score(q).unwrap() > 0.5, "{q}: {}", r.score(q).unwrap());
        }
        let s = &train.schema;
        let mut again = EaGraphRag::default();
        again.fit(&train).unwrap();
        let x = row(s, "x", complex[0], vec![0.0]);
        assert_eq!(r.scores(s, &x).unwrap(), again.scores(s, &x).unwrap());
    }

    #[test]
    fn fusion_falls_back_to_hybrid_and_runner_up_is_the_nearer_lane() {
        let s: Arc<RoutingSchema> = schema(&[P::Naive, P::Graph, P::Hybrid], 1);
        let mut r = EaGraphRag::default();
        r.fit(&RoutingSet {
            schema: Arc::clone(&s),
            rows: vec![],
        })
        .unwrap();
        let x = row(&s, "x", "Who met Ada Brook and Tom Vale?", vec![0.0]);
        let sc = r.scores(&s, &x).unwrap();
        let class = |p| s.class_of(p).unwrap();
        let (naive, graph, hybrid) = (class(P::Naive), class(P::Graph), class(P::Hybrid));
        // s = 0.25 + 0.2 (two entities, capped) + 0.1 (coordination) = 0.55: the fusion lane
        // (hybrid stands in), nearer tau_H than tau_L, so graph ranks second.
        assert!((r.score("Who met Ada Brook and Tom Vale?").unwrap() - 0.55).abs() < 1e-12);
        assert!(sc[hybrid] > sc[graph] && sc[graph] > sc[naive], "{sc:?}");
        assert!(r
            .fit(&RoutingSet {
                schema: schema(&[P::Naive, P::Graph], 1),
                rows: vec![]
            })
            .is_err());
    }
}
