//! Which stored runs a routing set or a report reads: the one selection rule.

use std::collections::{BTreeMap, BTreeSet};

use bench_core::{Mode, SplitTag};

use crate::error::{Result, StoreError};
use crate::Store;

/// Which split tags the chosen runs may carry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SplitUse {
    /// Per corpus the latest run not tagged `train` (k-fold and leave-one-corpus-out).
    #[default]
    Pooled,
    /// Per corpus the latest `train` run and the latest `test` run (`--split given`).
    Given,
}

/// Which runs feed the data set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunSelection {
    /// Explicit run ids (one per corpus and split tag); when empty, the latest runs per corpus.
    pub run_ids: Vec<i64>,
    /// Restrict to these corpora (empty: every corpus with results).
    pub corpora: Vec<String>,
    /// Which split tags the runs may carry.
    pub splits: SplitUse,
}

/// One selected run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRef {
    /// The run's id.
    pub id: i64,
    /// Its corpus.
    pub corpus: String,
    /// The corpus's content hash.
    pub corpus_hash: String,
    /// How its tuples came to be.
    pub mode: Mode,
    /// The split tag of an imported run (`None` for benched runs).
    pub split: Option<SplitTag>,
    /// The unit of an imported run's costs.
    pub cost_unit: Option<String>,
}

impl RunRef {
    /// What a tuple's cost counts in this run: the imported unit, offline the context tokens
    /// a paradigm assembled, in LLM mode the tokens it was billed.
    pub fn cost_unit(&self) -> String {
        match &self.mode {
            Mode::Offline => "context tokens".into(),
            Mode::Llm { .. } => "LLM tokens".into(),
            Mode::Imported { .. } => self.cost_unit.clone().unwrap_or_else(|| "cost".into()),
        }
    }

    pub(crate) fn key(&self) -> (String, Option<SplitTag>) {
        (self.corpus.clone(), self.split)
    }
}

/// The runs to use: explicit ids, or per corpus the latest run with results (and split tags as
/// `sel.splits` asks); a corpus may appear once (with `--split given`, once per split tag). The one selection rule of
/// `route eval` and `report`.
pub async fn select_runs(store: &Store, sel: &RunSelection) -> Result<Vec<RunRef>> {
    let all = store.runs_with_results().await?;
    let mut chosen: BTreeMap<(String, Option<SplitTag>), RunRef> = BTreeMap::new();
    // Pooled, a corpus appears once whatever its runs' tags: an untagged and a test-tagged run
    // of one corpus hold the same questions, and both would count each question twice.
    let key = |r: &RunRef| match sel.splits {
        SplitUse::Pooled => (r.corpus.clone(), None),
        SplitUse::Given => r.key(),
    };
    if sel.run_ids.is_empty() {
        // Ids grow with time: the last one seen per (corpus, split) is the latest.
        for r in all {
            let keep = match sel.splits {
                SplitUse::Pooled => r.split != Some(SplitTag::Train),
                SplitUse::Given => r.split.is_some(),
            };
            if keep {
                chosen.insert(key(&r), r);
            }
        }
        if chosen.is_empty() {
            return Err(StoreError::Invalid(match sel.splits {
                SplitUse::Pooled => format!(
                    "results store {} has no run with results outside a train split: run `ragrouter bench <corpus>` or `ragrouter import` first",
                    store.path()
                ),
                SplitUse::Given => format!(
                    "results store {} has no run tagged train or test: import with --split train and --split test for `--split given`",
                    store.path()
                ),
            }));
        }
    } else {
        for id in &sel.run_ids {
            let r = all.iter().find(|r| r.id == *id).ok_or_else(|| {
                StoreError::Invalid(format!(
                    "run {id} does not exist or has no results in {}",
                    store.path()
                ))
            })?;
            if let Some(prev) = chosen.insert(key(r), r.clone()) {
                return Err(StoreError::Invalid(format!(
                    "runs {} and {id} are both of corpus {}{}: give one run per corpus",
                    prev.id,
                    r.corpus,
                    r.split.map(|s| format!(" (split {s})")).unwrap_or_default()
                )));
            }
        }
    }
    if !sel.corpora.is_empty() {
        let names: BTreeSet<String> = chosen.keys().map(|k| k.0.clone()).collect();
        for c in &sel.corpora {
            if !names.contains(c) {
                return Err(StoreError::Invalid(format!(
                    "corpus {c:?} has no {} with results in {} (corpora with results: {})",
                    if sel.run_ids.is_empty() {
                        "run"
                    } else {
                        "selected run"
                    },
                    store.path(),
                    names.iter().cloned().collect::<Vec<_>>().join(", ")
                )));
            }
        }
        chosen.retain(|k, _| sel.corpora.contains(&k.0));
    }
    if sel.splits == SplitUse::Given {
        for tag in [SplitTag::Train, SplitTag::Test] {
            if !chosen.keys().any(|k| k.1 == Some(tag)) {
                return Err(StoreError::Invalid(format!(
                    "--split given needs runs tagged train and test; the selection has no {tag} run \
                     (import one with `ragrouter import ... --split {tag}`)"
                )));
            }
        }
    }
    Ok(chosen.into_values().collect())
}
