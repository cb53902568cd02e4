//! What a cascade knows after some arms ran: the probe columns whose signals need only those
//! arms, and per paradigm a calibrated P(correct) fitted on the training rows with those columns
//! (a utility router's estimate: `util-lr`'s or `util-gbt`'s learner), for the test rows and,
//! cross-fitted, for the training rows (where a stop rule's threshold is chosen without
//! refitting).

use std::collections::BTreeMap;

use bench_core::{BenchError, FeatureKind, Result, Router, RoutingRow, RoutingSet};

use super::input::CascadeInput;
use crate::eval::{scrub, Fold};
use crate::rng::mix64;
use crate::utility::{Learner, UtilityRouter};

/// Per probe column pair (value column index), the classes its signal needs; a signal whose
/// paradigm has no class is never known.
pub(crate) type Needs = Vec<(usize, Option<Vec<usize>>)>;

/// Per row, per paradigm class, P(correct) (`None`: the class has no training tuple).
pub(super) type Probs = Vec<Vec<Option<f64>>>;

/// The probe columns' needs of `input`'s set.
pub(crate) fn probe_needs(input: &CascadeInput<'_>) -> Needs {
    let schema = &input.set.schema;
    let Some(block) = schema.block(FeatureKind::ProbeSignals) else {
        return Vec::new();
    };
    block
        .range()
        .step_by(2)
        .map(|col| {
            let name = schema.feature_names[col].trim_start_matches("p:");
            let needs = input
                .signal_paradigms
                .get(name)
                .map(|ps| {
                    ps.iter()
                        .map(|&p| schema.class_of(p))
                        .collect::<Option<Vec<_>>>()
                })
                .unwrap_or(Some(Vec::new()));
            (col, needs)
        })
        .collect()
}

/// Whether a signal that needs the arms `need` is known after running `ran` (`None`: never).
pub(crate) fn known(need: &Option<Vec<usize>>, ran: &[usize]) -> bool {
    need.as_ref()
        .is_some_and(|n| n.iter().all(|c| ran.contains(c)))
}

/// `row` as known after running `ran`: the columns of signals not yet known read as missing.
pub(crate) fn masked(row: &RoutingRow, needs: &Needs, ran: &[usize]) -> RoutingRow {
    let mut r = row.clone();
    for (col, need) in needs {
        if !known(need, ran) {
            r.features[*col] = 0.0;
            r.features[*col + 1] = 0.0;
        }
    }
    r
}

/// The estimates after one set of arms ran: the test rows' from the fit on every training row,
/// the training rows' held out (cross-fitted), both indexed like the fold's lists.
#[derive(Debug, Clone)]
pub(super) struct Known {
    pub test: Probs,
    pub train: Probs,
}

/// Fits `util-lr` on `train` (rows already as known) and returns the test rows' estimates and
/// the training rows' held-out ones, row-major.
pub(super) fn fit_probs(
    train: &RoutingSet,
    test: &[RoutingRow],
    seed: u64,
    learner: Learner,
) -> Result<Known> {
    let mut u = UtilityRouter::new("util-lr", learner, seed, None)?;
    u.fit(train)?;
    let fitted = u
        .fitted()
        .ok_or_else(|| BenchError::Other("cascade: no fit".into()))?;
    let held = fitted.held_out();
    let train_p = (0..train.rows.len())
        .map(|r| held.iter().map(|c| c[r]).collect())
        .collect();
    Ok(Known {
        test: fitted.p_correct(test)?,
        train: train_p,
    })
}

/// Per set of arms run (sorted classes), the estimates of one fold.
pub(super) fn known_after(
    input: &CascadeInput<'_>,
    needs: &Needs,
    fold: (usize, &Fold),
    ran_sets: &[Vec<usize>],
    learner: Learner,
) -> Result<BTreeMap<Vec<usize>, Known>> {
    let (fi, f) = fold;
    let set = input.set;
    let mut out = BTreeMap::new();
    for ran in ran_sets {
        let mut key = ran.clone();
        key.sort_unstable();
        if out.contains_key(&key) {
            continue;
        }
        let train = RoutingSet {
            schema: set.schema.clone(),
            rows: f
                .train
                .iter()
                .map(|&i| masked(&set.rows[i], needs, &key))
                .collect(),
        };
        let test: Vec<RoutingRow> = f
            .test
            .iter()
            .map(|&i| masked(&scrub(&set.rows[i]), needs, &key))
            .collect();
        // Each set of arms has a seed of its own: no other router shares this fit.
        let bits = key.iter().fold(0u64, |m, &c| m | (1 << (c % 64)));
        let seed = mix64(input.seed ^ ((fi as u64) << 8) ^ (key.len() as u64) ^ (bits << 20));
        let known = fit_probs(&train, &test, seed, learner)?;
        out.insert(key, known);
    }
    Ok(out)
}
