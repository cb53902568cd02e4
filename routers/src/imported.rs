//! Published routers of an import (`published_choices`: Adaptive-RAG's own classifier on the
//! AdaRAGUE outcomes) scored as rows of their own: on each fold's test questions, the choice the
//! source made, with the correctness and cost of the answer its own run produced (not the arm
//! matrix's), so the row sits in the same table and paired tests as the routers learned here.

use bench_core::{PublishedChoice, RoutingSet};

use crate::eval::{decided_rows, Decided, Evaluation, Fold};

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
        assert_eq!(all.measures.correct_rate, 0.5);
        assert_eq!(all.measures.mean_tokens, 2.0);
        assert_eq!(all.measures.accuracy, 1.0);
        assert_eq!(all.measures.regret_correct, 0.5);
        assert_eq!(ev.predictions.len(), 2);
        assert!(!ev.predictions[1].correct);
    }
}
