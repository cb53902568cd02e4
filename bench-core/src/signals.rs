//! Per-question probe signals and published routers' choices: what a cheap first look at a
//! question measured, and what a published router chose (stored by the `store` crate's `signals`
//! and `published_choices` tables, schema version 13, docs/schema.md).
//!
//! A signal is a value and a present flag, so a signal missing for a question is an explicit
//! row (present = false, value 0) in the store, the exports, the routers' features and the
//! external protocol alike. Each signal says what it cost (its own share, in the run's cost unit,
//! and milliseconds) and which paradigms' answers the probe used: a router that reads the signal
//! pays those paradigms once, and nothing again when it then plays one.

use serde::{Deserialize, Serialize};

use crate::types::ParadigmId;

/// The largest magnitude an imported number may have (a cost, a step count, a signal's value or
/// cost): sums over a million questions and squares of features stay far inside float64's
/// range (about 1e308), and a cost prints in at most 13 digits. Larger values are refused at
/// import (docs/outcomes-format.md); `outcomes` re-exports it.
pub const MAX_MAGNITUDE: f64 = 1e12;

/// One signal of one question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Signal {
    /// Stable name (`agree.em`, `seakr.perplexity`, `dense.top1`, ...): one feature column.
    pub name: String,
    /// `None`: the probe could not measure it for this question (stored as present = 0).
    pub value: Option<f64>,
    /// The probe that produced it (`answers`, `seakr`, `dense`, ...).
    pub probe: String,
    /// Paradigms whose answers the probe used (billed once to a router that reads it).
    pub paradigms: Vec<ParadigmId>,
    /// The signal's own cost beyond those paradigms, in the run's cost unit.
    pub cost: f64,
    /// Wall time the signal took, in milliseconds.
    pub cost_ms: f64,
}

impl Signal {
    /// A signal that cost nothing of its own.
    pub fn free(name: &str, value: Option<f64>, probe: &str, paradigms: &[ParadigmId]) -> Signal {
        Signal {
            name: name.to_string(),
            value,
            probe: probe.to_string(),
            paradigms: paradigms.to_vec(),
            cost: 0.0,
            cost_ms: 0.0,
        }
    }

    /// Checks the name, a value within ±`MAX_MAGNITUDE` and costs in [0, `MAX_MAGNITUDE`]
    /// (what routers' features and cost sums can hold).
    pub fn validate(&self) -> std::result::Result<(), String> {
        if self.name.trim().is_empty() {
            return Err("a signal needs a non-empty name".into());
        }
        if self.value.is_some_and(|v| !v.is_finite()) {
            return Err(format!(
                "signal {:?}: value {:?} is not finite (give null for a missing signal)",
                self.name, self.value
            ));
        }
        if self.value.is_some_and(|v| v.abs() > MAX_MAGNITUDE) {
            return Err(format!(
                "signal {:?}: value {:?} is not within ±{MAX_MAGNITUDE:e}",
                self.name, self.value
            ));
        }
        for (what, v) in [("cost", self.cost), ("cost_ms", self.cost_ms)] {
            if !(v.is_finite() && (0.0..=MAX_MAGNITUDE).contains(&v)) {
                return Err(format!(
                    "signal {:?}: {what} {v} is not a number in [0, {MAX_MAGNITUDE:e}]",
                    self.name
                ));
            }
        }
        Ok(())
    }
}

/// A published router's choice on one imported question, scored as a router of its own: its
/// answer comes from its own run, not from the arm matrix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PublishedChoice {
    /// The row's name in tables (`adaptive-rag (published)`).
    pub router: String,
    /// The paradigm it chose.
    pub choice: ParadigmId,
    /// Its answer, when the source gives one (then `correct` is the harness's EM verdict).
    pub answer: Option<String>,
    /// Whether its answer was correct.
    pub correct: bool,
    /// The source's own verdict, kept beside the harness's.
    pub source_correct: Option<bool>,
    /// What it cost, in the import's cost unit.
    pub cost: f64,
}
