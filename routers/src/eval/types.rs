//! What an evaluation is told (its options, where it reports progress) and what it returns
//! (rows, predictions, the operating points chosen): a leaf the evaluation's files name.

use std::sync::Arc;

use bench_core::{BenchError, Result, RouteEvalRow, RoutePrediction};
use serde::{Deserialize, Serialize};

use crate::entry::{Candidate, Family};

/// Where an evaluation says what it is doing while it runs: a line as each router finishes,
/// and warnings about the data set (`ragrouter route eval` prints them on stderr).
pub type Notices = Arc<dyn Fn(&str) + Send + Sync>;

/// Which paradigm a `cannot-answer` prediction plays when the correct rate is measured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Fallback {
    /// The training fold's most frequent optimal paradigm (the paper's Appendix D.3).
    MostFrequent,
    /// Per question, the paradigm a calibrated utility estimate fitted on the training fold
    /// ranks first (`util-lr` at λ = 0): a classifier's `cannot-answer` then costs nothing.
    #[default]
    Utility,
}

impl Fallback {
    /// The name `parse` reads back (`most-frequent`, `utility`).
    pub fn name(self) -> &'static str {
        match self {
            Fallback::MostFrequent => "most-frequent",
            Fallback::Utility => "utility",
        }
    }

    /// Parses `most-frequent` or `utility`.
    pub fn parse(s: &str) -> Result<Fallback> {
        match s.trim() {
            "most-frequent" => Ok(Fallback::MostFrequent),
            "utility" => Ok(Fallback::Utility),
            other => Err(BenchError::Invalid(format!(
                "unknown fallback {other:?}: expected utility (per question, the paradigm the training folds' utility estimate ranks first) or most-frequent (the paper's: the most frequent optimal paradigm)"
            ))),
        }
    }
}

/// How `evaluate_with` measures.
#[derive(Clone, Default)]
pub(crate) struct EvalOptions {
    /// What a `cannot-answer` prediction plays.
    pub fallback: Fallback,
    /// Per row of the set, the probe's bill: every router that reads features (all but the
    /// baselines and Oracle) pays it (`crate::probe_columns`). Empty: no probe was read.
    pub bills: Arc<Vec<crate::probe_columns::ProbeBill>>,
    /// Told a line as each router finishes all its folds (`None`: nothing is said).
    pub progress: Option<Notices>,
}

impl EvalOptions {
    /// Whether `entry` pays the probe: it reads the features the probe fed.
    pub(crate) fn pays_probe(&self, entry: &Candidate) -> bool {
        !self.bills.is_empty() && entry.family != Family::Baseline && !entry.sees_outcomes
    }
}

/// What `evaluate` measured, and the routers it could not run.
#[derive(Debug, Clone, Default)]
pub struct Evaluation {
    /// Per (router, sweep value, fold), one row per corpus and one pooled (`*`).
    pub rows: Vec<RouteEvalRow>,
    /// Every test question of every fold, per router and sweep value.
    pub predictions: Vec<RoutePrediction>,
    /// (router, reason) for entries that were not run: an LLM router offline, a seed router
    /// whose lanes the data set lacks. A skip is not a failure.
    pub skipped: Vec<(String, String)>,
    /// (router, first error) for entries that failed on some fold (left out whole).
    pub failed: Vec<(String, String)>,
    /// Per swept router and outer fold, the value chosen on the training rows; its rows are
    /// repeated as the router's own (`param: None`).
    pub operating_points: Vec<OperatingPoint>,
}

/// The point chosen for one router on one outer fold, with what each sweep value scored on the
/// inner folds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OperatingPoint {
    /// The router's name.
    pub router: String,
    /// The outer fold.
    pub fold: u32,
    /// The chosen value.
    pub param: f64,
    /// Per sweep value, in sweep order: (value, inner correct rate, inner mean cost), pooled over
    /// the inner folds' test rows.
    pub inner: Vec<(f64, f64, f64)>,
}
