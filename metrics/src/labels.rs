//! Routing labels from per-paradigm outcomes (decisions.md "Labels for routing") and a router's correct rate.
//!
//! Correct means the judge said `Correct`. Under the paper's policy (`judge-then-semantic-f1`,
//! Section 4.1) a query's label is the correct paradigm with the highest semantic F1; under
//! `cheapest-correct` it is the correct paradigm with the fewest total tokens. With no correct
//! paradigm the label is `cannot-answer`. The policy is recorded with every evaluation.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use bench_core::{BenchError, JudgeLabel, ParadigmId};
use serde::{Deserialize, Serialize};

/// What one paradigm achieved on one query, as far as labelling needs it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcome {
    /// `None` when the paradigm failed or the judge could not decide: never correct.
    pub judge: Option<JudgeLabel>,
    /// Semantic F1 of the answer against the gold one (a tie-breaker).
    pub semantic_f1: f64,
    /// What the paradigm cost on the query: tokens (construction share, retrieval, generation;
    /// context tokens offline) or an imported cost in its own unit (retrieval steps, ...).
    pub cost: f64,
}

impl Outcome {
    /// Whether the judge labelled the answer correct.
    pub fn is_correct(&self) -> bool {
        self.judge == Some(JudgeLabel::Correct)
    }
}

/// The class a router predicts: a paradigm, or that none answers the query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RoutingLabel {
    /// Route to this paradigm.
    Paradigm(ParadigmId),
    /// No paradigm answers the query.
    CannotAnswer,
}

impl RoutingLabel {
    /// The stored name of [`RoutingLabel::CannotAnswer`].
    pub const CANNOT_ANSWER: &'static str = "cannot-answer";

    /// The label's stored name: the paradigm's, or `cannot-answer`.
    pub fn as_str(self) -> &'static str {
        match self {
            RoutingLabel::Paradigm(p) => p.as_str(),
            RoutingLabel::CannotAnswer => Self::CANNOT_ANSWER,
        }
    }
}

impl fmt::Display for RoutingLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for RoutingLabel {
    type Err = BenchError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.trim() == Self::CANNOT_ANSWER {
            Ok(RoutingLabel::CannotAnswer)
        } else {
            s.parse().map(RoutingLabel::Paradigm)
        }
    }
}

/// How a query's label is chosen among its correct paradigms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum LabelPolicy {
    /// The paper's: highest semantic F1; ties by fewer tokens, then `ParadigmId::ALL` order.
    #[default]
    #[serde(rename = "judge-then-semantic-f1")]
    JudgeThenSemanticF1,
    /// Fewest total tokens; ties by higher semantic F1, then `ParadigmId::ALL` order.
    #[serde(rename = "cheapest-correct")]
    CheapestCorrect,
}

impl LabelPolicy {
    /// Every policy, in the order help texts list them.
    pub const ALL: [LabelPolicy; 2] = [
        LabelPolicy::JudgeThenSemanticF1,
        LabelPolicy::CheapestCorrect,
    ];

    /// The policy's name, as `--policy` takes it and evaluations store it.
    pub fn as_str(self) -> &'static str {
        match self {
            LabelPolicy::JudgeThenSemanticF1 => "judge-then-semantic-f1",
            LabelPolicy::CheapestCorrect => "cheapest-correct",
        }
    }
}

impl fmt::Display for LabelPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for LabelPolicy {
    type Err = BenchError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        LabelPolicy::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| {
                BenchError::Invalid(format!(
                    "unknown label policy {s:?}: known policies are judge-then-semantic-f1, cheapest-correct"
                ))
            })
    }
}

/// Position in `ParadigmId::ALL`: the last tie-break, so labels never depend on input order.
fn rank(p: ParadigmId) -> usize {
    ParadigmId::ALL
        .iter()
        .position(|&q| q == p)
        .unwrap_or(usize::MAX)
}

/// Higher semantic F1 first; NaN counts as the lowest so it never wins.
fn by_f1_desc(a: f64, b: f64) -> Ordering {
    let key = |v: f64| if v.is_nan() { f64::NEG_INFINITY } else { v };
    key(b).partial_cmp(&key(a)).unwrap_or(Ordering::Equal)
}

/// The label of one query from its per-paradigm outcomes under `policy`.
pub fn routing_label(outcomes: &[(ParadigmId, Outcome)], policy: LabelPolicy) -> RoutingLabel {
    let better = |a: &&(ParadigmId, Outcome), b: &&(ParadigmId, Outcome)| -> Ordering {
        let (pa, oa) = a;
        let (pb, ob) = b;
        let f1 = by_f1_desc(oa.semantic_f1, ob.semantic_f1);
        let tokens = oa.cost.total_cmp(&ob.cost);
        let primary = match policy {
            LabelPolicy::JudgeThenSemanticF1 => f1.then(tokens),
            LabelPolicy::CheapestCorrect => tokens.then(f1),
        };
        primary.then(rank(*pa).cmp(&rank(*pb)))
    };
    outcomes
        .iter()
        .filter(|(_, o)| o.is_correct())
        .min_by(better)
        .map_or(RoutingLabel::CannotAnswer, |&(p, _)| {
            RoutingLabel::Paradigm(p)
        })
}

/// The globally most frequent optimal paradigm among `labels` (`cannot-answer` ignored; ties by
/// `ParadigmId::ALL` order): the Best-fixed baseline and the correct-rate fallback. `None` when
/// no label names a paradigm.
pub fn most_frequent_optimal(labels: &[RoutingLabel]) -> Option<ParadigmId> {
    let mut counts = [0usize; ParadigmId::ALL.len()];
    for l in labels {
        if let RoutingLabel::Paradigm(p) = l {
            counts[rank(*p)] += 1;
        }
    }
    // The first maximum in ALL order wins a tie.
    let (best, &n) =
        counts.iter().enumerate().fold(
            (0, &0),
            |acc, (i, n)| if *n > *acc.1 { (i, n) } else { acc },
        );
    (n > 0).then(|| ParadigmId::ALL[best])
}

/// A router's correct rate (paper Appendix D.3): the share of queries whose predicted paradigm
/// was judged `Correct`; a `cannot-answer` prediction is replaced by `fallback` (the globally most
/// frequent optimal paradigm, see [`most_frequent_optimal`]). A predicted paradigm without an
/// outcome for the query counts as not correct. No queries: 0.
///
/// Panics when `predictions` and `outcomes` (one entry per query) differ in length.
pub fn correct_rate_with_fallback<O: AsRef<[(ParadigmId, Outcome)]>>(
    predictions: &[RoutingLabel],
    outcomes: &[O],
    fallback: ParadigmId,
) -> f64 {
    assert_eq!(
        predictions.len(),
        outcomes.len(),
        "one prediction per query's outcomes"
    );
    if predictions.is_empty() {
        return 0.0;
    }
    let correct = predictions
        .iter()
        .zip(outcomes)
        .filter(|(pred, outs)| {
            let chosen = match pred {
                RoutingLabel::Paradigm(p) => *p,
                RoutingLabel::CannotAnswer => fallback,
            };
            outs.as_ref()
                .iter()
                .any(|(p, o)| *p == chosen && o.is_correct())
        })
        .count();
    correct as f64 / predictions.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use JudgeLabel::{Correct, Incomplete, Incorrect};
    use ParadigmId::{Graph, Hybrid, Iterative, LlmOnly, Naive};

    fn o(judge: Option<JudgeLabel>, f1: f64, tokens: u64) -> Outcome {
        Outcome {
            judge,
            semantic_f1: f1,
            cost: tokens as f64,
        }
    }

    use LabelPolicy::{CheapestCorrect, JudgeThenSemanticF1};

    #[test]
    fn highest_semantic_f1_among_correct() {
        let outs = [
            (Naive, o(Some(Correct), 0.7, 100)),
            // Higher F1 but not correct: never the label.
            (Graph, o(Some(Incomplete), 0.95, 50)),
            (Hybrid, o(Some(Correct), 0.8, 300)),
            (Iterative, o(None, 0.99, 10)),
        ];
        assert_eq!(
            routing_label(&outs, JudgeThenSemanticF1),
            RoutingLabel::Paradigm(Hybrid)
        );
        assert_eq!(
            routing_label(&outs, CheapestCorrect),
            RoutingLabel::Paradigm(Naive)
        );
    }

    #[test]
    fn ties_break_by_tokens_then_paradigm_order() {
        // Same F1: fewer tokens wins.
        let outs = [
            (Hybrid, o(Some(Correct), 0.8, 300)),
            (Graph, o(Some(Correct), 0.8, 200)),
        ];
        assert_eq!(
            routing_label(&outs, JudgeThenSemanticF1),
            RoutingLabel::Paradigm(Graph)
        );
        // Same F1 and tokens: ParadigmId::ALL order (naive before hybrid), whatever the input order.
        let outs = [
            (Hybrid, o(Some(Correct), 0.8, 200)),
            (Naive, o(Some(Correct), 0.8, 200)),
        ];
        for policy in LabelPolicy::ALL {
            assert_eq!(routing_label(&outs, policy), RoutingLabel::Paradigm(Naive));
        }
        // Cheapest: same tokens, higher F1 wins; NaN F1 never wins a tie.
        let outs = [
            (LlmOnly, o(Some(Correct), f64::NAN, 100)),
            (Naive, o(Some(Correct), 0.5, 100)),
            (Graph, o(Some(Correct), 0.6, 100)),
            (Hybrid, o(Some(Correct), 0.9, 101)),
        ];
        assert_eq!(
            routing_label(&outs, CheapestCorrect),
            RoutingLabel::Paradigm(Graph)
        );
        assert_eq!(
            routing_label(&outs, JudgeThenSemanticF1),
            RoutingLabel::Paradigm(Hybrid)
        );
    }

    #[test]
    fn no_correct_paradigm_cannot_answer() {
        let outs = [
            (Naive, o(Some(Incorrect), 0.9, 1)),
            (Graph, o(Some(JudgeLabel::NoAnswer), 0.0, 1)),
        ];
        for policy in LabelPolicy::ALL {
            assert_eq!(routing_label(&outs, policy), RoutingLabel::CannotAnswer);
            assert_eq!(routing_label(&[], policy), RoutingLabel::CannotAnswer);
        }
    }

    #[test]
    fn names_round_trip() {
        for p in LabelPolicy::ALL {
            assert_eq!(p.as_str().parse::<LabelPolicy>().unwrap(), p);
            assert_eq!(
                serde_json::to_string(&p).unwrap(),
                format!("\"{}\"", p.as_str())
            );
        }
        assert_eq!(LabelPolicy::default().as_str(), "judge-then-semantic-f1");
        assert!("cheapest".parse::<LabelPolicy>().is_err());
        assert_eq!(
            "cannot-answer".parse::<RoutingLabel>().unwrap(),
            RoutingLabel::CannotAnswer
        );
        assert_eq!(
            "iterative-graph"
                .parse::<RoutingLabel>()
                .unwrap()
                .to_string(),
            "iterative-graph"
        );
    }

    #[test]
    fn fallback_is_most_frequent_optimal() {
        let labels = [
            RoutingLabel::Paradigm(Hybrid),
            RoutingLabel::CannotAnswer,
            RoutingLabel::CannotAnswer,
            RoutingLabel::CannotAnswer,
            RoutingLabel::Paradigm(Graph),
            RoutingLabel::Paradigm(Hybrid),
            RoutingLabel::Paradigm(Graph),
        ];
        // Graph and Hybrid tie at 2: Graph comes first in ParadigmId::ALL.
        assert_eq!(most_frequent_optimal(&labels), Some(Graph));
        assert_eq!(most_frequent_optimal(&labels[..2]), Some(Hybrid));
        assert_eq!(most_frequent_optimal(&[RoutingLabel::CannotAnswer]), None);
    }

    #[test]
    fn correct_rate_uses_the_fallback_for_cannot_answer() {
        let outcomes = vec![
            vec![
                (Naive, o(Some(Correct), 0.7, 10)),
                (Graph, o(Some(Incorrect), 0.1, 10)),
            ],
            vec![
                (Naive, o(Some(Incorrect), 0.2, 10)),
                (Graph, o(Some(Correct), 0.9, 10)),
            ],
            vec![(Naive, o(Some(Correct), 0.5, 10))],
            vec![(Naive, o(Some(Incomplete), 0.5, 10))],
        ];
        let predictions = [
            RoutingLabel::Paradigm(Naive),  // correct
            RoutingLabel::CannotAnswer,     // falls back to naive: incorrect
            RoutingLabel::CannotAnswer,     // falls back to naive: correct
            RoutingLabel::Paradigm(Hybrid), // no outcome: not correct
        ];
        assert_eq!(
            correct_rate_with_fallback(&predictions, &outcomes, Naive),
            0.5
        );
        // With graph as the fallback only query 2 flips to correct and query 3 to not.
        assert_eq!(
            correct_rate_with_fallback(&predictions, &outcomes, Graph),
            0.5
        );
        let none: [Vec<(ParadigmId, Outcome)>; 0] = [];
        assert_eq!(correct_rate_with_fallback(&[], &none, Naive), 0.0);
    }
}
