//! The expected cost of a paradigm for a row, learned from training rows: the mean cost of the
//! paradigm's tuples on the row's corpus, else over all training rows, and the cost scale T (the
//! mean cost of every training tuple) that makes a cost penalty unit-free. Shared by the
//! cost-aware, utility and bandit routers.

use std::collections::BTreeMap;

use bench_core::{RoutingRow, RoutingSet};

/// Per-paradigm mean costs, overall and per corpus, and the scale T.
#[derive(Debug, Clone, PartialEq)]
pub struct CostModel {
    /// Per paradigm class: mean cost over all training tuples (`None` without tuples).
    mean: Vec<Option<f64>>,
    /// Per (corpus, paradigm class): mean cost of that corpus's training tuples.
    by_corpus: BTreeMap<(String, usize), f64>,
    /// The mean cost of every training tuple; 1 when there is none or it is 0.
    pub scale: f64,
}

impl CostModel {
    /// The model of `train`'s tuples.
    pub fn fit(train: &RoutingSet) -> CostModel {
        let k = train.schema.n_classes().saturating_sub(1);
        let mut sums = vec![(0.0, 0usize); k];
        let mut corpus: BTreeMap<(String, usize), (f64, usize)> = BTreeMap::new();
        for r in &train.rows {
            for (c, o) in r.outcomes.iter().enumerate().take(k) {
                if let Some(o) = o {
                    sums[c].0 += o.tokens;
                    sums[c].1 += 1;
                    let e = corpus.entry((r.corpus.clone(), c)).or_default();
                    e.0 += o.tokens;
                    e.1 += 1;
                }
            }
        }
        let (all, n) = sums
            .iter()
            .fold((0.0, 0usize), |(s, n), (cs, cn)| (s + cs, n + cn));
        let mean = if n > 0 { all / n as f64 } else { 0.0 };
        CostModel {
            mean: sums
                .iter()
                .map(|&(s, n)| (n > 0).then(|| s / n as f64))
                .collect(),
            by_corpus: corpus
                .into_iter()
                .map(|(key, (s, n))| (key, s / n as f64))
                .collect(),
            scale: if mean > 0.0 { mean } else { 1.0 },
        }
    }

    /// `E[cost]` per paradigm class for a row's corpus (`None`: no training tuple).
    pub fn expected(&self, row: &RoutingRow) -> Vec<Option<f64>> {
        (0..self.mean.len())
            .map(|c| {
                self.by_corpus
                    .get(&(row.corpus.clone(), c))
                    .copied()
                    .or(self.mean[c])
            })
            .collect()
    }
}
