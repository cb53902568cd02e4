//! How the rows are split into folds: stratified k-fold, leave one corpus out, or the data's
//! own train/test tags. A leaf: it names no other file of the evaluation.

use std::collections::BTreeMap;

use bench_core::{BenchError, Result, RoutingSet, SplitTag};

use crate::rng::SplitMix64;

/// Row indices of one fold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fold {
    /// Rows the router is fitted on.
    pub train: Vec<usize>,
    /// Rows it is scored on.
    pub test: Vec<usize>,
}

/// How the rows are split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    /// Stratified k-fold by label.
    KFold(usize),
    /// Leave one corpus out: one fold per corpus.
    Loco,
    /// The data's own split: train on rows of runs tagged `train`, test on those tagged `test`.
    Given,
}

impl Split {
    /// The name `parse` reads back (`kfold`, `loco`, `given`).
    pub fn name(self) -> &'static str {
        match self {
            Split::KFold(_) => "kfold",
            Split::Loco => "loco",
            Split::Given => "given",
        }
    }

    /// Parses `kfold`, `loco` or `given`; `folds` is used by k-fold.
    pub fn parse(s: &str, folds: usize) -> Result<Split> {
        match s.trim() {
            "kfold" => Ok(Split::KFold(folds)),
            "loco" => Ok(Split::Loco),
            "given" => Ok(Split::Given),
            other => Err(BenchError::Invalid(format!(
                "unknown split {other:?}: expected kfold (stratified k-fold), loco (leave one corpus out) or given (train on runs tagged train, test on runs tagged test)"
            ))),
        }
    }

    /// The folds of `set`; `tags` (one per row, the split tag of the row's run) is read by
    /// `given` only.
    pub fn folds(
        self,
        set: &RoutingSet,
        seed: u64,
        tags: &[Option<SplitTag>],
    ) -> Result<Vec<Fold>> {
        match self {
            Split::KFold(k) => stratified_kfold(&set.labels(), k, seed),
            Split::Loco => leave_one_corpus_out(set),
            Split::Given => given_fold(set, tags).map(|f| vec![f]),
        }
    }
}

/// One fold: train on the rows tagged `train`, test on those tagged `test`.
pub(crate) fn given_fold(set: &RoutingSet, tags: &[Option<SplitTag>]) -> Result<Fold> {
    if tags.len() != set.rows.len() {
        return Err(BenchError::Invalid(format!(
            "--split given: {} split tags for {} rows",
            tags.len(),
            set.rows.len()
        )));
    }
    let pick =
        |t: SplitTag| -> Vec<usize> { (0..tags.len()).filter(|&i| tags[i] == Some(t)).collect() };
    let (train, test) = (pick(SplitTag::Train), pick(SplitTag::Test));
    if train.is_empty() || test.is_empty() {
        return Err(BenchError::Invalid(format!(
            "--split given needs rows tagged train and test; the data set has {} train and {} test rows",
            train.len(),
            test.len()
        )));
    }
    Ok(Fold { train, test })
}

/// Stratified k-fold: each class's rows are shuffled (seeded) and dealt to the folds in turn,
/// continuing where the previous class stopped, so every fold gets each class's share to within
/// one row and the folds' sizes differ by at most one. Folds are disjoint and cover every row;
/// indices are sorted within a fold.
pub fn stratified_kfold(labels: &[usize], k: usize, seed: u64) -> Result<Vec<Fold>> {
    if k < 2 {
        return Err(BenchError::Invalid(format!(
            "k-fold needs at least 2 folds, got {k}"
        )));
    }
    if labels.len() < k {
        return Err(BenchError::Invalid(format!(
            "{k} folds need at least {k} rows, the data set has {}",
            labels.len()
        )));
    }
    let mut by_class: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, &l) in labels.iter().enumerate() {
        by_class.entry(l).or_default().push(i);
    }
    let mut rng = SplitMix64::new(seed);
    let mut test: Vec<Vec<usize>> = vec![Vec::new(); k];
    let mut next = 0;
    for rows in by_class.values_mut() {
        rng.shuffle(rows);
        for &i in rows.iter() {
            test[next].push(i);
            next = (next + 1) % k;
        }
    }
    Ok(test
        .into_iter()
        .map(|mut t| {
            t.sort_unstable();
            let mut in_test = vec![false; labels.len()];
            t.iter().for_each(|&i| in_test[i] = true);
            Fold {
                train: (0..labels.len()).filter(|&i| !in_test[i]).collect(),
                test: t,
            }
        })
        .collect())
}

/// One fold per corpus (sorted by name): test on it, train on the others.
pub(crate) fn leave_one_corpus_out(set: &RoutingSet) -> Result<Vec<Fold>> {
    let mut corpora: Vec<&str> = set.rows.iter().map(|r| r.corpus.as_str()).collect();
    corpora.sort_unstable();
    corpora.dedup();
    if corpora.len() < 2 {
        return Err(BenchError::Invalid(format!(
            "leave-one-corpus-out needs at least 2 corpora, the data set has {}",
            corpora.len()
        )));
    }
    Ok(corpora
        .iter()
        .map(|c| {
            let (test, train) = (0..set.rows.len()).partition(|&i| set.rows[i].corpus == *c);
            Fold { train, test }
        })
        .collect())
}
