//! A cascade's stages and its bill: which arms run together, what a question costs after some
//! stages, and the invariant that the arm delivered is one the cascade paid for.

use bench_core::{BenchError, ParadigmId, Result, RoutingSchema, RoutingSet};

use crate::eval::Decided;

/// Paradigm classes in cost order: mean training cost, ties by class index.
pub fn cost_order(train: &RoutingSet) -> Vec<usize> {
    let costs = mean_costs(train);
    let mut order: Vec<usize> = (0..costs.len()).filter(|&c| costs[c].is_finite()).collect();
    order.sort_by(|&a, &b| costs[a].total_cmp(&costs[b]).then(a.cmp(&b)));
    order
}

/// [`cost_order`] of a fold's training rows, an error when no paradigm has a training outcome
/// (no stage could be formed): the built-in cascades and a staged external program both start
/// from it.
pub(crate) fn training_order(train: &RoutingSet) -> Result<Vec<usize>> {
    let order = cost_order(train);
    if order.is_empty() {
        return Err(BenchError::Invalid(
            "cascade: no paradigm has training outcomes".into(),
        ));
    }
    Ok(order)
}

/// Per paradigm class, the mean cost over the training rows that have its outcome (infinite
/// when none has).
pub(crate) fn mean_costs(train: &RoutingSet) -> Vec<f64> {
    let k = train.schema.n_classes() - 1;
    (0..k)
        .map(|c| {
            let (s, n) = train
                .rows
                .iter()
                .filter_map(|r| r.outcomes[c])
                .fold((0.0, 0usize), |(s, n), o| (s + o.tokens, n + 1));
            if n == 0 {
                f64::INFINITY
            } else {
                s / n as f64
            }
        })
        .collect()
}

/// The stages of a cascade over `order` (classes in cost order): LLM-only and NaiveRAG together
/// first when both have outcomes (the pair the `answers` probe compares: one stage, both
/// answers read at once), then every other paradigm one per stage in cost order.
pub fn stages(schema: &RoutingSchema, order: &[usize]) -> Vec<Vec<usize>> {
    let pair: Vec<usize> = [ParadigmId::LlmOnly, ParadigmId::Naive]
        .iter()
        .filter_map(|&p| schema.class_of(p))
        .filter(|c| order.contains(c))
        .collect();
    let mut out = Vec::new();
    if pair.len() == 2 {
        let mut first = pair.clone();
        first.sort_by_key(|c| order.iter().position(|o| o == c));
        out.push(first);
    }
    for &c in order {
        if pair.len() != 2 || !pair.contains(&c) {
            out.push(vec![c]);
        }
    }
    out
}

/// Scores and bills delivering class `pick` on row `i` after running the arms `ran` (in run
/// order): the cost is every distinct arm run, once, plus the signals' own cost; the probe's
/// share is what was run but not delivered. Delivering an arm that was not run is an error:
/// its answer was never paid for.
pub(crate) fn decide(
    set: &RoutingSet,
    i: usize,
    ran: &[usize],
    pick: usize,
    own: f64,
) -> Result<Decided> {
    let row = &set.rows[i];
    if !ran.contains(&pick) {
        return Err(BenchError::Other(format!(
            "cascade: question {} delivers {} without having run it (ran {:?})",
            row.query_id, set.schema.classes[pick], ran
        )));
    }
    let mut arms: Vec<usize> = Vec::with_capacity(ran.len());
    for &c in ran {
        if !arms.contains(&c) {
            arms.push(c);
        }
    }
    let cost_of = |c: usize| row.outcomes[c].map_or(0.0, |o| o.tokens);
    let total: f64 = arms.iter().map(|&c| cost_of(c)).sum::<f64>() + own;
    Ok(Decided {
        row: i,
        class: pick,
        correct: row.outcomes[pick].is_some_and(|o| o.correct),
        cost: total,
        probe_cost: total - cost_of(pick),
        arms,
    })
}
