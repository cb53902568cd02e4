//! Published routers of an import (`published_choices`: Adaptive-RAG's own classifier on the
//! AdaRAGUE outcomes) scored as rows of their own: on each fold's test questions, the choice the
//! source made, with the correctness and cost of the answer its own run produced (not the arm
//! matrix's), so the row sits in the same table and paired tests as the routers learned here.

use std::collections::BTreeMap;

use bench_core::{PublishedChoice, RouteEvalRow, RoutePrediction, RoutingSet};

use crate::eval::{macro_f1, rank_of, Evaluation, Fold};

/// One decided test question: its row in the set, the class played, whether that was correct,
/// the total cost and the probe's share of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Decided {
    /// Index of the row in the set.
    pub row: usize,
    /// The class played.
    pub class: usize,
    /// Whether the played paradigm was judged correct.
    pub correct: bool,
    /// Total cost, the probe's share included.
    pub cost: f64,
    /// The probe's share of `cost`.
    pub probe_cost: f64,
    /// Every class paid for, in the order run, each once (`class` among them).
    pub arms: Vec<usize>,
}

/// The measurement rows (per corpus and pooled `*`) and predictions of a router whose decisions
/// and their outcomes were worked out elsewhere (a published router's own runs, a cascade).
pub fn decided_rows(
    set: &RoutingSet,
    fold: u32,
    router: &str,
    param: Option<f64>,
    items: &[Decided],
) -> Evaluation {
    let schema = &set.schema;
    let k = schema.n_classes();
    let mut ev = Evaluation::default();
    if items.is_empty() {
        return ev;
    }
    let one_hot = |c: usize| {
        let mut s = vec![0.0; k];
        s[c] = 1.0;
        s
    };
    for d in items {
        let row = &set.rows[d.row];
        ev.predictions.push(RoutePrediction {
            router: router.to_string(),
            param,
            fold,
            corpus: row.corpus.clone(),
            query_id: row.query_id.clone(),
            chosen: schema.classes[d.class].clone(),
            played: schema.paradigm_of(d.class).map(|p| p.as_str().to_string()),
            correct: d.correct,
            cost: d.cost,
            probe_cost: d.probe_cost,
            arms_played: d
                .arms
                .iter()
                .filter_map(|&c| schema.paradigm_of(c))
                .map(|p| p.as_str().to_string())
                .collect(),
            scores: one_hot(d.class),
        });
    }
    let mut groups: BTreeMap<&str, Vec<&Decided>> = BTreeMap::new();
    groups.insert("*", items.iter().collect());
    for d in items {
        groups
            .entry(set.rows[d.row].corpus.as_str())
            .or_default()
            .push(d);
    }
    for (corpus, g) in groups {
        let n = g.len() as f64;
        let truth: Vec<usize> = g.iter().map(|d| set.rows[d.row].label).collect();
        let pred: Vec<usize> = g.iter().map(|d| d.class).collect();
        let hits = truth.iter().zip(&pred).filter(|(a, b)| a == b).count() as f64;
        let cr = g.iter().filter(|d| d.correct).count() as f64 / n;
        let cost = g.iter().map(|d| d.cost).sum::<f64>() / n;
        // Oracle on the same rows: the label's outcome.
        let (mut oc, mut ot) = (0.0, 0.0);
        for d in &g {
            let r = &set.rows[d.row];
            if let Some(o) = r.outcomes.get(r.label).copied().flatten() {
                oc += f64::from(u8::from(o.correct));
                ot += o.tokens;
            }
        }
        ev.rows.push(RouteEvalRow {
            router: router.to_string(),
            param,
            corpus: corpus.to_string(),
            fold,
            n: g.len() as u32,
            accuracy: hits / n,
            macro_f1: macro_f1(&truth, &pred, k),
            mrr: g
                .iter()
                .map(|d| 1.0 / rank_of(&one_hot(d.class), set.rows[d.row].label) as f64)
                .sum::<f64>()
                / n,
            correct_rate: cr,
            mean_tokens: cost,
            regret_correct: oc / n - cr,
            regret_tokens: cost - ot / n,
            latency_ms: 0.0,
            fit_ms: 0.0,
        });
    }
    ev
}

/// Rows and predictions of one published router over `folds`; test rows without a choice are
/// left out of its measurements (`n` says how many it has).
pub fn evaluate_published(
    set: &RoutingSet,
    folds: &[Fold],
    router: &str,
    choices: &[Option<PublishedChoice>],
) -> Evaluation {
    let k = set.schema.n_classes();
    let mut ev = Evaluation::default();
    for (fi, f) in folds.iter().enumerate() {
        let items: Vec<Decided> = f
            .test
            .iter()
            .filter_map(|&i| {
                let c = choices.get(i)?.as_ref()?;
                let class = set.schema.class_of(c.choice).unwrap_or(k - 1);
                Some(Decided {
                    row: i,
                    class,
                    correct: c.correct,
                    cost: c.cost,
                    probe_cost: 0.0,
                    arms: vec![class],
                })
            })
            .collect();
        let part = decided_rows(set, fi as u32, router, None, &items);
        ev.rows.extend(part.rows);
        ev.predictions.extend(part.predictions);
    }
    ev
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::{ClassOutcome, ParadigmId, QueryType, RoutingRow, RoutingSchema};
    use std::sync::Arc;

    #[test]
    fn scores_the_published_answers_not_the_arm_matrix() {
        let schema = Arc::new(RoutingSchema::new(
            &[ParadigmId::LlmOnly, ParadigmId::Naive],
            vec![],
        ));
        let o = |correct| {
            Some(ClassOutcome {
                correct,
                semantic_f1: 0.0,
                tokens: 1.0,
            })
        };
        let row = |id: &str, label| RoutingRow {
            query_id: id.into(),
            corpus: "c".into(),
            text: String::new(),
            qtype: QueryType::Other,
            features: vec![],
            label,
            outcomes: vec![o(false), o(true)],
        };
        let set = RoutingSet {
            schema,
            rows: vec![row("a", 1), row("b", 1), row("c", 1)],
        };
        let pick = |choice, correct, cost| {
            Some(PublishedChoice {
                router: "pub".into(),
                choice,
                answer: None,
                correct,
                source_correct: None,
                cost,
            })
        };
        // Naive is correct in the matrix, but the published run's own answer on b was wrong;
        // c has no choice.
        let choices = vec![
            pick(ParadigmId::Naive, true, 1.0),
            pick(ParadigmId::Naive, false, 3.0),
            None,
        ];
        let folds = vec![Fold {
            train: vec![],
            test: vec![0, 1, 2],
        }];
        let ev = evaluate_published(&set, &folds, "pub", &choices);
        let all = ev.rows.iter().find(|r| r.corpus == "*").unwrap();
        assert_eq!(all.n, 2);
        assert_eq!(all.correct_rate, 0.5);
        assert_eq!(all.mean_tokens, 2.0);
        assert_eq!(all.accuracy, 1.0);
        assert_eq!(all.regret_correct, 0.5);
        assert_eq!(ev.predictions.len(), 2);
        assert!(!ev.predictions[1].correct);
    }
}
