//! `dnn`: the paper's DNN router, 256-128-K with batch norm over the Appendix D.2 input encoding.
//!
//! Input: [`D2Encoder`] (text projected to 64, corpus indicators binned and embedded to 64, the
//! other blocks standardised). Network: `Linear 256 - BatchNorm - ReLU - Linear 128 - BatchNorm -
//! ReLU - Linear K`, softmax cross-entropy over all schema classes, trained end to end with the
//! encoder: Adam (learning rate 2e-3, decoupled weight decay 1e-4), batch 128, 6 epochs
//! (at least 300 steps on small sets), seeded. Scores are the softmax probabilities (eval-mode batch norm).

use bench_core::{Result, RoutingRow, RoutingSchema, RoutingSet};
use ndarray::{Array2, ArrayView2};

use super::nn::{activate, Loss, Mlp, MlpSpec, Module, Output, Param, Targets, TrainConfig};
use super::prep::{D2Encoder, D2Prep};
use super::{boxed, fitted, model_entry, rows_f64, seed_for, Model, PresentClasses};
use crate::entry::{Family, RouterEntry};
use crate::rng::SplitMix64;

/// Hidden widths of the head after the D.2 encoder.
pub const HIDDEN: [usize; 2] = [256, 128];

/// The registry entry of `dnn`.
pub fn entry() -> RouterEntry {
    model_entry(
        "dnn",
        "DNN 256-128-K with batch norm on the D.2 encoding (text->64, binned indicators->64), 6 epochs",
        Family::Neural,
        |ctx, _| {
            boxed("dnn", Dnn::new(seed_for(ctx.seed, "dnn")))
        },
    )
}

/// A network reading the D.2 encoding: the encoder, then `head`, trained together.
#[derive(Debug, Clone)]
pub struct D2Net<H> {
    /// The trainable D.2 front end.
    pub encoder: D2Encoder,
    /// The network on the encoder's output.
    pub head: H,
}

/// A head whose input gradient can be switched on (the encoder below it needs it).
pub trait Head: Module {
    /// Makes `backward` return dL/d(input).
    fn propagate_input_grad(&mut self);
}

impl Head for Mlp {
    fn propagate_input_grad(&mut self) {
        self.input_grad = true;
    }
}

impl<H: Head> D2Net<H> {
    /// Joins `encoder` and `head`, switching on the head's input gradient.
    pub fn new(encoder: D2Encoder, mut head: H) -> Self {
        head.propagate_input_grad();
        D2Net { encoder, head }
    }
}

impl<H: Head> D2Net<H> {
    /// Trains encoder and head end to end with softmax cross-entropy on the rows' labels, the
    /// shuffle seeded from `rng` (the recipe `dnn` and `two-tower` share).
    pub fn fit_softmax(
        &mut self,
        x: ArrayView2<'_, f32>,
        train: &RoutingSet,
        cfg: &TrainConfig,
        rng: &mut SplitMix64,
    ) -> Result<()> {
        let cfg = TrainConfig {
            seed: rng.next_u64(),
            ..cfg.clone()
        };
        super::nn::train(
            self,
            x,
            &Targets::Classes(train.labels()),
            &Loss::softmax_ce(),
            &cfg,
        )?;
        Ok(())
    }

    /// Softmax scores of `rows`, encoded by `prep` (eval mode).
    pub fn softmax_scores(&self, prep: &D2Prep, rows: &[RoutingRow]) -> Vec<Vec<f64>> {
        let mut z = self.infer(prep.matrix(rows).view());
        activate(Output::Softmax, &mut z);
        rows_f64(z.view())
    }
}

impl<H: Head> Module for D2Net<H> {
    fn forward_train(&mut self, x: ArrayView2<'_, f32>) -> Array2<f32> {
        let z = self.encoder.forward_train(x);
        self.head.forward_train(z.view())
    }

    fn infer(&self, x: ArrayView2<'_, f32>) -> Array2<f32> {
        self.head.infer(self.encoder.infer(x).view())
    }

    fn backward(&mut self, dy: ArrayView2<'_, f32>) -> Option<Array2<f32>> {
        let dz = self.head.backward(dy)?;
        self.encoder.backward(dz.view())
    }

    fn params_mut(&mut self) -> Vec<&mut Param> {
        let mut v = self.encoder.params_mut();
        v.extend(self.head.params_mut());
        v
    }
}

/// The DNN router's model.
#[derive(Debug, Clone)]
pub struct Dnn {
    seed: u64,
    /// Training settings (6 epochs, at least 300 steps, batches of 128).
    pub train: TrainConfig,
    fitted: Option<(D2Prep, D2Net<Mlp>)>,
}

impl Dnn {
    /// An unfitted model seeded by `seed`.
    pub fn new(seed: u64) -> Self {
        Dnn {
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

impl Model for Dnn {
    fn fit(&mut self, train: &RoutingSet, _: &PresentClasses) -> Result<()> {
        let prep = D2Prep::fit(&train.rows, &train.schema);
        let x = prep.matrix(&train.rows);
        let mut rng = SplitMix64::new(self.seed);
        let encoder = D2Encoder::new(prep.layout(), &mut rng);
        let spec = MlpSpec {
            sizes: vec![
                prep.layout().n_encoded(),
                HIDDEN[0],
                HIDDEN[1],
                train.schema.n_classes(),
            ],
            batch_norm: true,
            output: Output::Softmax,
        };
        let mut net = D2Net::new(encoder, Mlp::with_rng(&spec, &mut rng));
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
        let mut r = (entry().make)(&ctx(4), None).unwrap();
        let acc = synthetic_accuracy(r.as_mut(), 1200, 900, 9);
        assert!(acc > 0.9, "dnn held-out accuracy {acc}");
    }
}
