//! `cascade-voi`'s second estimate: after stage s, P̂(the selection after stage s + 1 is right)
//! from the signals known after s. Its target on a training row is whether the arm the next
//! stage's held-out estimates rank first among the arms played by then was right; `util-lr`
//! (cross-fitted, Platt-calibrated) fits it, so the training rows get held-out values too.

use std::collections::BTreeMap;
use std::sync::Arc;

use bench_core::{ClassOutcome, ParadigmId, Result, RoutingRow, RoutingSchema, RoutingSet};

use super::estimates::{fit_probs, masked, Known, Needs};
use super::input::CascadeInput;
use super::select::Plan;
use crate::eval::{scrub, Fold};
use crate::rng::mix64;

/// P̂(the next stage's selection is right) per stage but the last, for the fold's training
/// (held out) and test rows.
#[derive(Debug, Clone, Default)]
pub(super) struct NextRight {
    /// Per stage, per training row.
    pub train: Vec<Vec<f64>>,
    /// Per stage, per test row.
    pub test: Vec<Vec<f64>>,
}

/// Fits the next-stage estimates of `plan` on one fold, from the held-out per-arm estimates in
/// `known` (keyed by the arms run).
pub(super) fn next_right(
    input: &CascadeInput<'_>,
    needs: &Needs,
    fold: (usize, &Fold),
    plan: &Plan,
    known: &BTreeMap<Vec<usize>, Known>,
) -> Result<NextRight> {
    let (fi, f) = fold;
    let set = input.set;
    let schema = &set.schema;
    // One "paradigm" whose outcome is the target; the data set's columns as they are.
    let blocks = schema
        .blocks
        .iter()
        .map(|b| (b.kind, schema.feature_names[b.range()].to_vec()))
        .collect();
    let target_schema = Arc::new(RoutingSchema::new(&[ParadigmId::Naive], blocks));
    let as_target = |row: RoutingRow, y: Option<bool>| RoutingRow {
        label: 0,
        outcomes: vec![y.map(|correct| ClassOutcome {
            correct,
            semantic_f1: 0.0,
            tokens: 0.0,
        })],
        ..row
    };
    let mut out = NextRight::default();
    for s in 0..plan.len().saturating_sub(1) {
        let next = &known[&plan.ran[s + 1]].train;
        let rows = f
            .train
            .iter()
            .enumerate()
            .map(|(r, &i)| {
                let pick = plan.best(s + 1, &next[r]);
                let y = set.rows[i].outcomes[pick].is_some_and(|o| o.correct);
                as_target(masked(&set.rows[i], needs, &plan.ran[s]), Some(y))
            })
            .collect();
        let train = RoutingSet {
            schema: Arc::clone(&target_schema),
            rows,
        };
        let test: Vec<RoutingRow> = f
            .test
            .iter()
            .map(|&i| as_target(masked(&scrub(&set.rows[i]), needs, &plan.ran[s]), None))
            .collect();
        let seed = mix64(input.seed ^ ((fi as u64) << 8) ^ 0x0A1E_0000 ^ s as u64);
        let k = fit_probs(&train, &test, seed, crate::utility::LR)?;
        let first = |p: &Vec<Option<f64>>| p[0].unwrap_or(0.0);
        out.train.push(k.train.iter().map(first).collect());
        out.test.push(k.test.iter().map(first).collect());
    }
    Ok(out)
}

/// Per stage, the mean training cost of the arms it adds, in units of the costliest arm's mean
/// (so λ reads the same in any cost unit).
pub(super) fn step_costs(plan: &Plan, mean_cost: &[f64]) -> Vec<f64> {
    let top = mean_cost
        .iter()
        .copied()
        .filter(|c| c.is_finite())
        .fold(0.0, f64::max);
    let unit = if top > 0.0 { top } else { 1.0 };
    plan.stages
        .iter()
        .map(|s| s.iter().map(|&c| mean_cost[c]).sum::<f64>() / unit)
        .collect()
}
