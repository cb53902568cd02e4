//! The ML and neural routers (LR, SVM, RF, GBT, kNN, MLP, DNN, TwoTower) and their shared toolkit.
//!
//! Every router here is a [`Model`] wrapped in a [`ModelRouter`], which does what they all need
//! alike: it rejects an empty training set, remembers which classes the training rows have,
//! answers a single-class training set with that class (no model to fit), checks the width of
//! scored rows, and gives every class absent from training the score [`ABSENT`], below any score
//! a model gives a class it saw. Models see at least two classes.

use std::fmt;

use bench_core::{BenchError, Result, Router, RoutingRow, RoutingSchema, RoutingSet};

use crate::entry::{Family, MakeRouter, RouterEntry};
use ndarray::ArrayView2;

pub(crate) mod dnn;
pub(crate) mod gbt;
pub(crate) mod hist;
pub(crate) mod knn;
pub mod lr;
pub(crate) mod lr_fit;
pub(crate) mod mlp;
pub mod nn;
pub(crate) mod prep;
pub(crate) mod products;
pub(crate) mod rf;
pub(crate) mod svm;
pub(crate) mod two_tower;

/// The score of a class no training row had: lower than any score of a class the model saw
/// (every model here scores in [-1e6, 1e6]).
pub const ABSENT: f64 = -1e9;

/// The classes a training set has, by schema class index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PresentClasses {
    /// One flag per schema class.
    pub present: Vec<bool>,
}

impl PresentClasses {
    /// The classes that label at least one row of `train`.
    pub fn of(train: &RoutingSet) -> Self {
        let mut present = vec![false; train.schema.n_classes()];
        for r in &train.rows {
            present[r.label] = true;
        }
        PresentClasses { present }
    }

    /// The present class indices, ascending.
    pub fn indices(&self) -> Vec<usize> {
        (0..self.present.len())
            .filter(|&c| self.present[c])
            .collect()
    }
}

/// A learner behind [`ModelRouter`].
pub trait Model: Send + fmt::Debug {
    /// Learns from `train`, which has at least one row and at least two classes.
    fn fit(&mut self, train: &RoutingSet, classes: &PresentClasses) -> Result<()>;

    /// One score per schema class for each row (absent classes are overwritten afterwards).
    fn scores(&self, schema: &RoutingSchema, rows: &[RoutingRow]) -> Result<Vec<Vec<f64>>>;
}

#[derive(Debug)]
enum State {
    Unfitted,
    /// The training rows had one class.
    Single(usize),
    Fitted,
}

/// The registry entry of a model router: it reads the features, has no λ sweep, no lanes and
/// no LLM; `make` builds it (usually `|ctx, _| boxed(NAME, Model::new(seed_for(ctx.seed, NAME)))`).
pub(crate) const fn model_entry(
    name: &'static str,
    about: &'static str,
    family: Family,
    make: MakeRouter,
) -> RouterEntry {
    RouterEntry {
        name,
        about,
        family,
        needs_llm: false,
        sees_outcomes: false,
        lanes: &[],
        sweep: &[],
        make,
    }
}

/// A fresh model router, boxed for the registry.
pub(crate) fn boxed<M: Model + 'static>(name: &'static str, model: M) -> Result<Box<dyn Router>> {
    Ok(Box::new(ModelRouter::new(name, model)))
}

/// A model's fitted state: `ModelRouter` calls `fit` before any score, so it is there.
pub(crate) fn fitted<T>(state: &Option<T>) -> &T {
    state.as_ref().expect("ModelRouter fits first")
}

/// The [`Router`] of a [`Model`].
#[derive(Debug)]
pub struct ModelRouter<M: Model> {
    name: &'static str,
    model: M,
    state: State,
    classes: Option<PresentClasses>,
    n_features: usize,
}

impl<M: Model> ModelRouter<M> {
    /// An unfitted router named `name` around `model`.
    pub fn new(name: &'static str, model: M) -> Self {
        ModelRouter {
            name,
            model,
            state: State::Unfitted,
            classes: None,
            n_features: 0,
        }
    }

    /// The wrapped model (for inspection in tests).
    pub fn model(&self) -> &M {
        &self.model
    }
}

impl<M: Model> Router for ModelRouter<M> {
    fn name(&self) -> &str {
        self.name
    }

    fn fit(&mut self, train: &RoutingSet) -> Result<()> {
        if train.rows.is_empty() {
            return Err(BenchError::Invalid(format!(
                "router {}: no training rows",
                self.name
            )));
        }
        let classes = PresentClasses::of(train);
        let idx = classes.indices();
        self.n_features = train.schema.n_features();
        self.state = if idx.len() == 1 {
            State::Single(idx[0])
        } else {
            self.model.fit(train, &classes)?;
            State::Fitted
        };
        self.classes = Some(classes);
        Ok(())
    }

    fn scores(&self, schema: &RoutingSchema, row: &RoutingRow) -> Result<Vec<f64>> {
        bench_core::routing::scores_via_batch(self, schema, row)
    }

    fn scores_batch(&self, schema: &RoutingSchema, rows: &[RoutingRow]) -> Result<Vec<Vec<f64>>> {
        let classes = self.check(schema, rows)?;
        let mut out = match self.state {
            State::Single(c) => single(c, schema.n_classes(), rows.len()),
            _ => self.model.scores(schema, rows)?,
        };
        mask_absent(classes, &mut out);
        Ok(out)
    }
}

impl<M: Model> ModelRouter<M> {
    /// The classes seen in training, once the router is fitted and `rows` fit its schema.
    fn check(&self, schema: &RoutingSchema, rows: &[RoutingRow]) -> Result<&PresentClasses> {
        let k = schema.n_classes();
        let classes = match (&self.state, &self.classes) {
            (State::Unfitted, _) | (_, None) => {
                return Err(BenchError::Invalid(format!(
                    "router {}: scores asked before fit",
                    self.name
                )))
            }
            (_, Some(c)) => c,
        };
        if classes.present.len() != k {
            return Err(BenchError::Invalid(format!(
                "router {}: fitted on {} classes, asked to score {k}",
                self.name,
                classes.present.len()
            )));
        }
        for r in rows {
            if r.features.len() != self.n_features {
                return Err(BenchError::Invalid(format!(
                    "router {}: row {} has {} features, the training rows had {}",
                    self.name,
                    r.query_id,
                    r.features.len(),
                    self.n_features
                )));
            }
        }
        Ok(classes)
    }
}

/// The scores of a router whose training rows had one class `c`: all of it to `c`.
fn single(c: usize, k: usize, rows: usize) -> Vec<Vec<f64>> {
    (0..rows)
        .map(|_| (0..k).map(|j| if j == c { 1.0 } else { 0.0 }).collect())
        .collect()
}

/// Classes absent from training score [`ABSENT`].
fn mask_absent(classes: &PresentClasses, out: &mut [Vec<f64>]) {
    for s in out {
        for (j, v) in s.iter_mut().enumerate() {
            if !classes.present[j] {
                *v = ABSENT;
            }
        }
    }
}

/// Rows of an `n x K` score matrix as f64 vectors.
pub(crate) fn rows_f64(m: ArrayView2<'_, f32>) -> Vec<Vec<f64>> {
    m.rows()
        .into_iter()
        .map(|r| r.iter().map(|&v| f64::from(v)).collect())
        .collect()
}

/// A per-router seed derived from the context seed and the router's name, so two routers of
/// one run do not share a random stream.
pub(crate) fn seed_for(seed: u64, name: &str) -> u64 {
    crate::rng::hash_str(seed, name)
}

#[cfg(test)]
pub(crate) mod test_support {
    //! Helpers shared by the routers' unit tests.
    use bench_core::{Router, RoutingSet};

    use crate::entry::RouterContext;
    use crate::synthetic::synthetic_set;

    /// Held-out accuracy of a router fitted on the first `n_train` rows of a synthetic set.
    pub fn synthetic_accuracy(router: &mut dyn Router, n: usize, n_train: usize, seed: u64) -> f64 {
        let set = synthetic_set(n, seed);
        let train = set.subset(&(0..n_train).collect::<Vec<_>>());
        let test = set.subset(&(n_train..n).collect::<Vec<_>>());
        router.fit(&train).unwrap();
        accuracy(router, &test)
    }

    pub fn accuracy(router: &dyn Router, test: &RoutingSet) -> f64 {
        let scores = router.scores_batch(&test.schema, &test.rows).unwrap();
        let hits = scores
            .iter()
            .zip(&test.rows)
            .filter(|(s, r)| bench_core::routing::argmax(s) == r.label)
            .count();
        hits as f64 / test.rows.len() as f64
    }

    pub fn ctx(seed: u64) -> RouterContext {
        RouterContext::new(seed)
    }
}
