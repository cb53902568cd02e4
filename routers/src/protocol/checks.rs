//! Checks of the selected runs before any feature is built: how many signals they carry, and
//! which questions would be both trained and tested on.

use std::collections::{BTreeMap, BTreeSet};

use bench_core::{BenchError, Mode, SplitTag};

use super::options::{Protocol, MAX_SIGNALS};
use crate::dataset::{RawCorpus, RunRef};
use crate::eval::Split;

/// Refuses more distinct probe signals than [`MAX_SIGNALS`], before any feature is built.
pub(super) fn check_signal_count(raw: &[RawCorpus]) -> Result<(), BenchError> {
    let n = crate::probe_columns::names(raw.iter().flat_map(|c| c.signals.iter().map(|(_, s)| s)))
        .len();
    if n > MAX_SIGNALS {
        return Err(BenchError::Invalid(format!(
            "the selected runs have {n} signals: route eval reads at most {MAX_SIGNALS} signals \
             as features (each one a column every router fits); use features without p, or \
             import fewer signals"
        )));
    }
    Ok(())
}

/// Warnings about questions that would be both trained and tested on: `--split given` whose
/// train runs hold questions of its test runs, and `--pool-sources` pooling the same questions
/// from more than one source (the folds then put one copy in training, another in test).
/// Questions are compared by corpus-independent text.
pub(super) fn leakage_warnings(raw: &[RawCorpus], protocol: &Protocol) -> Vec<String> {
    let texts = |keep: &dyn Fn(&RunRef) -> bool| -> BTreeSet<&str> {
        raw.iter()
            .filter(|c| keep(&c.run))
            .flat_map(|c| c.queries.iter().map(|q| q.1.trim()))
            .collect()
    };
    let mut out = Vec::new();
    if protocol.split == Split::Given {
        let train = texts(&|r| r.split == Some(SplitTag::Train));
        let test = texts(&|r| r.split == Some(SplitTag::Test));
        let both = test.iter().filter(|q| train.contains(*q)).count();
        if both > 0 {
            out.push(format!(
                "{both} of the {} test questions also appear among the training questions \
                 (same text): --split given trains on what it tests, so its measures are \
                 optimistic",
                test.len()
            ));
        }
    }
    let modes: BTreeSet<&Mode> = raw.iter().map(|c| &c.run.mode).collect();
    if protocol.pool_sources && modes.len() > 1 {
        let mut sources: BTreeMap<&str, BTreeSet<&Mode>> = BTreeMap::new();
        for c in raw {
            for q in &c.queries {
                sources.entry(q.1.trim()).or_default().insert(&c.run.mode);
            }
        }
        let repeated = sources.values().filter(|m| m.len() > 1).count();
        if repeated > 0 {
            out.push(format!(
                "--pool-sources pools {repeated} questions that appear in more than one source \
                 (same text): the folds may train on one copy and test on another, so the \
                 measures are optimistic"
            ));
        }
    }
    out
}
