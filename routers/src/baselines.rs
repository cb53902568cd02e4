//! The reference routers: Random, Best-fixed and Oracle (paper Section 4.2).

use bench_core::{BenchError, Result, Router, RoutingRow, RoutingSchema, RoutingSet};
use metrics::labels::{most_frequent_optimal, RoutingLabel};

use crate::entry::{Family, RouterContext, RouterEntry};
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

/// Uniform over the paradigm classes (never `cannot-answer`), or over every class with
/// [`RandomRouter::all_classes`] (the paper's Random). Each class's score is a hash of the seed,
/// the class and the row's (corpus, query id): a row's choice does not depend on batch order or
/// on the other rows, and the choice is uniform because the scores are i.i.d.
#[derive(Debug)]
pub struct RandomRouter {
    seed: u64,
    all: bool,
}

impl RandomRouter {
    /// Uniform over the paradigm classes, seeded by `seed`.
    pub fn new(seed: u64) -> Self {
        RandomRouter { seed, all: false }
    }

    /// Uniform over every class, `cannot-answer` included (the paper's Table 3 protocol).
    pub fn all_classes(seed: u64) -> Self {
        RandomRouter { seed, all: true }
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
                if c == ca && !self.all {
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

/// The training rows' correct rate of every paradigm class (rows without the paradigm's tuple
/// count as not correct), and the best one: highest rate, then lower mean cost, then class order.
fn rates(train: &RoutingSet, rows: &[&RoutingRow]) -> (Vec<f64>, Option<usize>) {
    let k = train.schema.n_classes() - 1;
    let n = rows.len().max(1) as f64;
    let mut rate = vec![0.0; k];
    let mut cost = vec![0.0; k];
    let mut have = vec![0usize; k];
    for r in rows {
        for (c, o) in r.outcomes.iter().enumerate() {
            if let Some(o) = o {
                have[c] += 1;
                cost[c] += o.tokens;
                if o.correct {
                    rate[c] += 1.0 / n;
                }
            }
        }
    }
    let mean_cost = |c: usize| cost[c] / have[c].max(1) as f64;
    let best = (0..k).filter(|&c| have[c] > 0).min_by(|&a, &b| {
        rate[b]
            .total_cmp(&rate[a])
            .then(mean_cost(a).total_cmp(&mean_cost(b)))
            .then(a.cmp(&b))
    });
    (rate, best)
}

/// Scores ranking `best` first, the other paradigm classes by `rate`, `cannot-answer` last.
fn rate_scores(rate: &[f64], best: Option<usize>) -> Vec<f64> {
    let mut s: Vec<f64> = rate.to_vec();
    if let Some(b) = best {
        s[b] += 2.0;
    }
    s.push(-1.0);
    s
}

/// The one paradigm with the highest correct rate on the training rows: the best single
/// paradigm, the constant a router must beat (the research claim is measured against it).
#[derive(Debug, Default)]
pub struct BestSingle {
    scores: Option<Vec<f64>>,
}

impl Router for BestSingle {
    fn name(&self) -> &str {
        "best-single"
    }

    fn fit(&mut self, train: &RoutingSet) -> Result<()> {
        let rows: Vec<&RoutingRow> = train.rows.iter().collect();
        let (rate, best) = rates(train, &rows);
        self.scores = Some(rate_scores(&rate, best));
        Ok(())
    }

    fn scores(&self, schema: &RoutingSchema, _row: &RoutingRow) -> Result<Vec<f64>> {
        let s = self
            .scores
            .as_ref()
            .ok_or_else(|| BenchError::Invalid("best-single: scores before fit".into()))?;
        check_width("best-single", s.len(), schema)?;
        Ok(s.clone())
    }
}

fn check_width(router: &str, fitted: usize, schema: &RoutingSchema) -> Result<()> {
    if fitted != schema.n_classes() {
        return Err(BenchError::Invalid(format!(
            "{router}: fitted on {fitted} classes, asked to score {}",
            schema.n_classes()
        )));
    }
    Ok(())
}

/// Per corpus, the paradigm with the highest training correct rate on that corpus (the
/// strongest router that knows only the corpus); a corpus without training rows gets
/// best-single's choice.
#[derive(Debug, Default)]
pub struct OraclePerCorpus {
    global: Option<Vec<f64>>,
    by_corpus: std::collections::BTreeMap<String, Vec<f64>>,
}

impl Router for OraclePerCorpus {
    fn name(&self) -> &str {
        "oracle-per-corpus"
    }

    fn fit(&mut self, train: &RoutingSet) -> Result<()> {
        let all: Vec<&RoutingRow> = train.rows.iter().collect();
        let (rate, best) = rates(train, &all);
        self.global = Some(rate_scores(&rate, best));
        let mut groups: std::collections::BTreeMap<&str, Vec<&RoutingRow>> = Default::default();
        for r in &train.rows {
            groups.entry(r.corpus.as_str()).or_default().push(r);
        }
        self.by_corpus = groups
            .into_iter()
            .map(|(c, rows)| {
                let (rate, best) = rates(train, &rows);
                (c.to_string(), rate_scores(&rate, best))
            })
            .collect();
        Ok(())
    }

    fn scores(&self, schema: &RoutingSchema, row: &RoutingRow) -> Result<Vec<f64>> {
        let g = self
            .global
            .as_ref()
            .ok_or_else(|| BenchError::Invalid("oracle-per-corpus: scores before fit".into()))?;
        let s = self.by_corpus.get(&row.corpus).unwrap_or(g);
        check_width("oracle-per-corpus", s.len(), schema)?;
        Ok(s.clone())
    }
}

/// Always one paradigm: the rows `route eval` prints for each paradigm of the data set.
#[derive(Debug)]
pub struct Fixed(pub bench_core::ParadigmId);

impl Router for Fixed {
    fn name(&self) -> &str {
        self.0.as_str()
    }

    fn fit(&mut self, train: &RoutingSet) -> Result<()> {
        train
            .schema
            .class_of(self.0)
            .map(|_| ())
            .ok_or_else(|| BenchError::Invalid(format!("the data set has no class {}", self.0)))
    }

    fn scores(&self, schema: &RoutingSchema, _row: &RoutingRow) -> Result<Vec<f64>> {
        let c = schema
            .class_of(self.0)
            .ok_or_else(|| BenchError::Invalid(format!("the data set has no class {}", self.0)))?;
        Ok((0..schema.n_classes())
            .map(|j| f64::from(u8::from(j == c)))
            .collect())
    }
}

/// The always-`p` candidate of each paradigm class of `schema`, named by the paradigm.
pub fn fixed_candidates(schema: &RoutingSchema) -> Vec<crate::entry::Candidate> {
    (0..schema.n_classes())
        .filter_map(|c| schema.paradigm_of(c))
        .map(|p| crate::entry::Candidate {
            name: p.as_str().to_string(),
            family: Family::Baseline,
            needs_llm: false,
            sees_outcomes: false,
            sweep: Vec::new(),
            lanes: Vec::new(),
            make: std::sync::Arc::new(move |_: &RouterContext, _| {
                Ok(Box::new(Fixed(p)) as Box<dyn Router>)
            }),
        })
        .collect()
}

/// The paper's Random (uniform over every class, `cannot-answer` included) as a candidate
/// replacing `random`.
pub fn random_all_classes_candidate() -> crate::entry::Candidate {
    let mut c = crate::entry::Candidate::from(random_entry());
    c.make = std::sync::Arc::new(|ctx: &RouterContext, _| {
        Ok(Box::new(RandomRouter::all_classes(ctx.seed)) as Box<dyn Router>)
    });
    c
}

/// The registry entry of `best-single`.
pub fn best_single_entry() -> RouterEntry {
    RouterEntry {
        name: "best-single",
        about: "the paradigm with the highest correct rate on the training folds, always",
        family: Family::Baseline,
        needs_llm: false,
        sees_outcomes: false,
        lanes: &[],
        sweep: &[],
        make: |_, _| Ok(Box::new(BestSingle::default())),
    }
}

/// The registry entry of `oracle-per-corpus`.
pub fn oracle_per_corpus_entry() -> RouterEntry {
    RouterEntry {
        name: "oracle-per-corpus",
        about: "per corpus, the paradigm with the highest training correct rate on it",
        family: Family::Baseline,
        needs_llm: false,
        sees_outcomes: false,
        lanes: &[],
        sweep: &[],
        make: |_, _| Ok(Box::new(OraclePerCorpus::default())),
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

/// The registry entry of `random`.
pub fn random_entry() -> RouterEntry {
    RouterEntry {
        name: "random",
        about: "uniform over the paradigms, seeded per query",
        family: Family::Baseline,
        needs_llm: false,
        sees_outcomes: false,
        lanes: &[],
        sweep: &[],
        make: make_random,
    }
}

/// The registry entry of `best-fixed`.
pub fn best_fixed_entry() -> RouterEntry {
    RouterEntry {
        name: "best-fixed",
        about: "the training folds' most frequent optimal paradigm, always",
        family: Family::Baseline,
        needs_llm: false,
        sees_outcomes: false,
        lanes: &[],
        sweep: &[],
        make: make_best_fixed,
    }
}

/// The registry entry of `oracle` (the only one that `sees_outcomes`).
pub fn oracle_entry() -> RouterEntry {
    RouterEntry {
        name: "oracle",
        about: "the optimal paradigm of each query (upper bound; reads the test labels)",
        family: Family::Baseline,
        needs_llm: false,
        sees_outcomes: true,
        lanes: &[],
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

    /// Rows over (naive, iterative) in two corpora: naive right on `n_a` of 10 and iterative on
    /// `i_a` of 10 in corpus a; naive on `n_b`, iterative on `i_b` of 10 in corpus b.
    fn two_corpora(n_a: usize, i_a: usize, n_b: usize, i_b: usize) -> RoutingSet {
        use crate::seed_papers::testutil::{outcome, row, schema};
        use bench_core::ParadigmId as P;
        let s = schema(&[P::Naive, P::Iterative], 1);
        let mut rows = Vec::new();
        for (corpus, n, i) in [("a", n_a, i_a), ("b", n_b, i_b)] {
            for q in 0..10 {
                let mut r = row(&s, &format!("{corpus}{q}"), "q", vec![0.0]);
                r.corpus = corpus.into();
                r.outcomes[0] = outcome(q < n, 0.0, 1.0);
                r.outcomes[1] = outcome(q < i, 0.0, 5.0);
                rows.push(r);
            }
        }
        RoutingSet { schema: s, rows }
    }

    #[test]
    fn best_single_and_oracle_per_corpus_pick_by_training_correct_rate() {
        // Pooled: naive 9/20, iterative 10/20 -> iterative; per corpus: a naive (6 vs 2),
        // b iterative (3 vs 8).
        let set = two_corpora(6, 2, 3, 8);
        let s = &set.schema;
        let mut b = BestSingle::default();
        b.fit(&set).unwrap();
        let mut o = OraclePerCorpus::default();
        o.fit(&set).unwrap();
        assert_eq!(b.predict(s, &set.rows[0]).unwrap(), 1);
        assert_eq!(o.predict(s, &set.rows[0]).unwrap(), 0);
        assert_eq!(o.predict(s, &set.rows[10]).unwrap(), 1);
        // An unseen corpus gets best-single's choice.
        let mut unseen = set.rows[0].clone();
        unseen.corpus = "z".into();
        assert_eq!(o.predict(s, &unseen).unwrap(), 1);
        // A tie in correct rate goes to the cheaper paradigm (naive costs 1, iterative 5).
        let tie = two_corpora(5, 5, 5, 5);
        let mut b = BestSingle::default();
        b.fit(&tie).unwrap();
        assert_eq!(b.predict(&tie.schema, &tie.rows[0]).unwrap(), 0);
        // Best-fixed (most frequent optimal label) can differ: labels are per question.
        assert_eq!(
            b.scores(&tie.schema, &tie.rows[0]).unwrap()[2],
            -1.0,
            "cannot-answer is never chosen"
        );
    }

    #[test]
    fn fixed_candidates_name_each_paradigm_and_always_choose_it() {
        let set = two_corpora(6, 2, 3, 8);
        let c = fixed_candidates(&set.schema);
        assert_eq!(
            c.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
            ["naive", "iterative"]
        );
        let ctx = RouterContext::new(0);
        let mut r = (c[1].make)(&ctx, None).unwrap();
        r.fit(&set).unwrap();
        assert!(set
            .rows
            .iter()
            .all(|row| r.predict(&set.schema, row).unwrap() == 1));
    }

    #[test]
    fn paper_random_also_says_cannot_answer() {
        let set = synthetic_set(400, 1);
        let r = RandomRouter::all_classes(5);
        let mut seen = [0usize; 8];
        for s in r.scores_batch(&set.schema, &set.rows).unwrap() {
            seen[bench_core::routing::argmax(&s)] += 1;
        }
        assert!(seen.iter().all(|&n| n > 20), "{seen:?}");
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
