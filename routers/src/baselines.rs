//! The reference routers: Random, Best-fixed and Oracle (paper Section 4.2).

use bench_core::{BenchError, Result, Router, RoutingRow, RoutingSchema, RoutingSet};
use metrics::labels::{most_frequent_optimal, RoutingLabel};

use crate::registry::{Family, RouterContext, RouterEntry};
use crate::rng::{hash_str, mix64};

/// The label of class `c` as `metrics::labels` sees it.
pub(crate) fn class_label(schema: &RoutingSchema, c: usize) -> RoutingLabel {
    schema
        .paradigm_of(c)
        .map_or(RoutingLabel::CannotAnswer, RoutingLabel::Paradigm)
}

/// The most frequent optimal paradigm class of `rows` (`cannot-answer` ignored, ties by class
/// order); `None` when no row's label names a paradigm.
pub fn most_frequent_optimal_class(schema: &RoutingSchema, rows: &[RoutingRow]) -> Option<usize> {
    let labels: Vec<RoutingLabel> = rows.iter().map(|r| class_label(schema, r.label)).collect();
    most_frequent_optimal(&labels).and_then(|p| schema.class_of(p))
}

/// Uniform over the paradigm classes (never `cannot-answer`). Each class's score is a hash of
/// the seed, the class and the row's (corpus, query id): a row's choice does not depend on batch
/// order or on the other rows, and the choice is uniform because the scores are i.i.d.
#[derive(Debug)]
pub struct RandomRouter {
    seed: u64,
}

impl RandomRouter {
    pub fn new(seed: u64) -> Self {
        RandomRouter { seed }
    }
}

impl Router for RandomRouter {
    fn name(&self) -> &str {
        "random"
    }

    fn fit(&mut self, _train: &RoutingSet) -> Result<()> {
        Ok(())
    }

    fn scores(&self, schema: &RoutingSchema, row: &RoutingRow) -> Result<Vec<f64>> {
        let ca = schema.cannot_answer();
        Ok((0..schema.n_classes())
            .map(|c| {
                if c == ca {
                    -1.0
                } else {
                    let key = format!("{}\u{1f}{}", row.corpus, row.query_id);
                    let h = hash_str(mix64(self.seed ^ (c as u64 + 1)), &key);
                    (h >> 11) as f64 / (1u64 << 53) as f64
                }
            })
            .collect())
    }
}

/// Always the most frequent optimal paradigm of the training rows; the other classes rank by
/// their training frequency (for MRR). With no paradigm label in training: `cannot-answer`.
#[derive(Debug, Default)]
pub struct BestFixed {
    scores: Option<Vec<f64>>,
}

impl Router for BestFixed {
    fn name(&self) -> &str {
        "best-fixed"
    }

    fn fit(&mut self, train: &RoutingSet) -> Result<()> {
        let k = train.schema.n_classes();
        let ca = train.schema.cannot_answer();
        let n = train.rows.len().max(1) as f64;
        let mut s = vec![0.0; k];
        for r in &train.rows {
            s[r.label] += 1.0 / n;
        }
        // cannot-answer is never the fixed choice while a paradigm is someone's optimum.
        s[ca] = -1.0;
        match most_frequent_optimal_class(&train.schema, &train.rows) {
            Some(best) => s[best] += 2.0,
            None => s[ca] = 2.0,
        }
        self.scores = Some(s);
        Ok(())
    }

    fn scores(&self, schema: &RoutingSchema, _row: &RoutingRow) -> Result<Vec<f64>> {
        let s = self
            .scores
            .as_ref()
            .ok_or_else(|| BenchError::Invalid("best-fixed: scores before fit".into()))?;
        if s.len() != schema.n_classes() {
            return Err(BenchError::Invalid(format!(
                "best-fixed: fitted on {} classes, asked to score {}",
                s.len(),
                schema.n_classes()
            )));
        }
        Ok(s.clone())
    }
}

/// The row's own label: the upper bound. It reads labels of the rows it scores, so the
/// evaluation passes it unscrubbed rows (`sees_outcomes`).
#[derive(Debug, Default)]
pub struct Oracle;

impl Router for Oracle {
    fn name(&self) -> &str {
        "oracle"
    }

    fn fit(&mut self, _train: &RoutingSet) -> Result<()> {
        Ok(())
    }

    fn scores(&self, schema: &RoutingSchema, row: &RoutingRow) -> Result<Vec<f64>> {
        Ok((0..schema.n_classes())
            .map(|c| f64::from(u8::from(c == row.label)))
            .collect())
    }
}

fn make_random(ctx: &RouterContext, _: Option<f64>) -> Result<Box<dyn Router>> {
    Ok(Box::new(RandomRouter::new(ctx.seed)))
}

fn make_best_fixed(_: &RouterContext, _: Option<f64>) -> Result<Box<dyn Router>> {
    Ok(Box::new(BestFixed::default()))
}

fn make_oracle(_: &RouterContext, _: Option<f64>) -> Result<Box<dyn Router>> {
    Ok(Box::new(Oracle))
}

pub fn random_entry() -> RouterEntry {
    RouterEntry {
        name: "random",
        about: "uniform over the paradigms, seeded per query",
        family: Family::Baseline,
        needs_llm: false,
        sees_outcomes: false,
        sweep: &[],
        make: make_random,
    }
}

pub fn best_fixed_entry() -> RouterEntry {
    RouterEntry {
        name: "best-fixed",
        about: "the training folds' most frequent optimal paradigm, always",
        family: Family::Baseline,
        needs_llm: false,
        sees_outcomes: false,
        sweep: &[],
        make: make_best_fixed,
    }
}

pub fn oracle_entry() -> RouterEntry {
    RouterEntry {
        name: "oracle",
        about: "the optimal paradigm of each query (upper bound; reads the test labels)",
        family: Family::Baseline,
        needs_llm: false,
        sees_outcomes: true,
        sweep: &[],
        make: make_oracle,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::synthetic_set;

    #[test]
    fn best_fixed_picks_the_most_frequent_optimal() {
        let set = synthetic_set(64, 3);
        let mut counts = [0usize; 7];
        for r in &set.rows {
            if r.label < 7 {
                counts[r.label] += 1;
            }
        }
        let max = *counts.iter().max().unwrap();
        let want = counts.iter().position(|&c| c == max).unwrap();
        let mut b = BestFixed::default();
        b.fit(&set).unwrap();
        for r in &set.rows {
            assert_eq!(b.predict(&set.schema, r).unwrap(), want);
        }
        // A training set of cannot-answer rows only: the fixed choice is cannot-answer.
        let mut only_ca = set.clone();
        only_ca.rows.iter_mut().for_each(|r| r.label = 7);
        let mut b = BestFixed::default();
        b.fit(&only_ca).unwrap();
        assert_eq!(b.predict(&set.schema, &set.rows[0]).unwrap(), 7);
    }

    #[test]
    fn random_never_says_cannot_answer_and_ignores_order() {
        let set = synthetic_set(200, 1);
        let r = RandomRouter::new(5);
        let fwd = r.scores_batch(&set.schema, &set.rows).unwrap();
        let mut rev_rows = set.rows.clone();
        rev_rows.reverse();
        let mut rev = r.scores_batch(&set.schema, &rev_rows).unwrap();
        rev.reverse();
        assert_eq!(fwd, rev);
        let mut seen = [0usize; 8];
        for s in &fwd {
            seen[bench_core::routing::argmax(s)] += 1;
        }
        assert_eq!(seen[7], 0);
        assert!(seen[..7].iter().all(|&n| n > 10), "{seen:?}");
        assert_ne!(
            fwd,
            RandomRouter::new(6)
                .scores_batch(&set.schema, &set.rows)
                .unwrap()
        );
    }
}
