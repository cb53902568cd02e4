//! What the cascades need besides their parameters: the rows, the folds, which arms each signal
//! needs, the signals' own cost and the seed.

use std::collections::BTreeMap;

use bench_core::{ParadigmId, RoutingSet};

use crate::eval::Fold;

/// What the cascades need besides the rows.
#[derive(Debug, Clone, Copy)]
pub struct CascadeInput<'a> {
    /// The rows, with probe features.
    pub set: &'a RoutingSet,
    /// The evaluation's folds.
    pub folds: &'a [Fold],
    /// Signal name → the paradigms whose answers it needs.
    pub signal_paradigms: &'a BTreeMap<String, Vec<ParadigmId>>,
    /// Per row, the signals' own cost (beyond the paradigms they need).
    pub own_cost: &'a [f64],
    /// Seeds the learned cascade's fits.
    pub seed: u64,
}
