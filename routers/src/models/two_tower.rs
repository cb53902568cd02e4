//! `two-tower`: a query tower over the D.2 encoding and a learned embedding per paradigm class.
//!
//! The query tower maps the Appendix D.2 encoding of a row (text projected to 64, corpus
//! indicators binned and embedded to 64, other blocks standardised) through `Linear 128 - ReLU -
//! Linear 64` to a 64-dim vector `q`; each schema class `c` has a learned 64-dim embedding
//! `e_c`; the score of class `c` is the dot product `q . e_c`. Trained end to end with softmax
//! cross-entropy over the classes: Adam (learning rate 2e-3, decoupled weight decay 1e-4),
//! batch 128, 6 epochs (at least 300 steps on small sets), seeded. Scores are the softmax probabilities of the dot products.

use bench_core::{Result, RoutingRow, RoutingSchema, RoutingSet};
use ndarray::{Array2, ArrayView2};

use super::dnn::{D2Net, Head};
use super::nn::{Init, Linear, Mlp, MlpSpec, Module, Output, Param, TrainConfig};
use super::prep::{D2Encoder, D2Prep, D2_DIM};
use super::{boxed, fitted, model_entry, seed_for, Model, PresentClasses};
use crate::entry::{Family, RouterEntry};
use crate::rng::SplitMix64;

/// Hidden width of the query tower.
pub const TOWER_HIDDEN: usize = 128;

/// The registry entry of `two-tower`.
pub fn entry() -> RouterEntry {
    model_entry(
        "two-tower",
        "query tower (D.2 encoding -> 128 -> 64) . learned 64-dim paradigm embeddings, 6 epochs",
        Family::Neural,
        |ctx, _| boxed("two-tower", TwoTower::new(seed_for(ctx.seed, "two-tower"))),
    )
}

/// The query tower and the class embeddings (a bias-free `64 x K` layer: column c is `e_c`).
#[derive(Debug, Clone)]
pub struct Towers {
    /// The query tower: D.2 encoding to a 64-dim embedding.
    pub query: Mlp,
    /// The class embeddings, one column per class.
    pub classes: Linear,
}

impl Module for Towers {
    fn forward_train(&mut self, x: ArrayView2<'_, f32>) -> Array2<f32> {
        let q = self.query.forward_train(x);
        self.classes.forward(q.view())
    }

    fn infer(&self, x: ArrayView2<'_, f32>) -> Array2<f32> {
        self.classes.apply(self.query.infer(x).view())
    }

    fn backward(&mut self, dy: ArrayView2<'_, f32>) -> Option<Array2<f32>> {
        let dq = self.classes.backward(dy, true)?;
        self.query.backward(dq.view())
    }

    fn params_mut(&mut self) -> Vec<&mut Param> {
        let mut v = self.query.params_mut();
        v.extend(self.classes.params_mut());
        v
    }
}

impl Head for Towers {
    fn propagate_input_grad(&mut self) {
        self.query.input_grad = true;
    }
}

/// The two-tower router's model.
#[derive(Debug, Clone)]
pub struct TwoTower {
    seed: u64,
    /// Training settings (6 epochs, at least 300 steps).
    pub train: TrainConfig,
    fitted: Option<(D2Prep, D2Net<Towers>)>,
}

impl TwoTower {
    /// An unfitted model seeded by `seed`.
    pub fn new(seed: u64) -> Self {
        TwoTower {
            seed,
            train: TrainConfig {
                epochs: 6,
                min_steps: 300,
                batch_size: 128,
                lr: 2e-3,
                weight_decay: 1e-4,
                seed: 0,
            },
            fitted: None,
        }
    }
}

impl Model for TwoTower {
    fn fit(&mut self, train: &RoutingSet, _: &PresentClasses) -> Result<()> {
        let prep = D2Prep::fit(&train.rows, &train.schema);
        let x = prep.matrix(&train.rows);
        let mut rng = SplitMix64::new(self.seed);
        let encoder = D2Encoder::new(prep.layout(), &mut rng);
        let query = Mlp::with_rng(
            &MlpSpec {
                sizes: vec![prep.layout().n_encoded(), TOWER_HIDDEN, D2_DIM],
                batch_norm: false,
                output: Output::Identity,
            },
            &mut rng,
        );
        let classes = Linear::new(
            D2_DIM,
            train.schema.n_classes(),
            false,
            Init::Xavier,
            &mut rng,
        );
        let mut net = D2Net::new(encoder, Towers { query, classes });
        net.fit_softmax(x.view(), train, &self.train, &mut rng)?;
        self.fitted = Some((prep, net));
        Ok(())
    }

    fn scores(&self, _: &RoutingSchema, rows: &[RoutingRow]) -> Result<Vec<Vec<f64>>> {
        let (prep, net) = fitted(&self.fitted);
        Ok(net.softmax_scores(prep, rows))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::test_support::{ctx, synthetic_accuracy};

    #[test]
    fn learns_the_synthetic_rule() {
        let mut r = (entry().make)(&ctx(5), None).unwrap();
        let acc = synthetic_accuracy(r.as_mut(), 1200, 900, 10);
        assert!(acc > 0.9, "two-tower held-out accuracy {acc}");
    }
}
