//! A small dense-network toolkit on `ndarray` (f32): layers, losses, Adam and a seeded trainer.
//!
//! Everything a router network needs and no more: [`Linear`], [`Relu`], [`BatchNorm1d`] (train
//! and eval modes, running statistics), softmax cross-entropy with optional class weights,
//! sigmoid outputs with a binary focal loss per output column ([`Focal`]), Adam with decoupled
//! weight decay, He / Xavier initialisation from a seeded [`SplitMix64`], and a mini-batch loop
//! ([`train`]) with a seeded shuffle per epoch. Matrices are row-major `n_rows x n_features`;
//! products go through `ndarray`'s `dot` (matrixmultiply), single-threaded, so the same seed
//! gives bit-identical weights.
//!
//! The usual entry point is [`Mlp`]: build it from an [`MlpSpec`] (layer sizes, batch norm,
//! output activation), [`Mlp::fit`] it on a matrix and [`Targets`] under a [`Loss`], then
//! [`Mlp::predict`]. Networks with a custom front end (the Appendix D.2 encoder of the neural
//! routers) implement [`Module`] and use [`train`] directly.
//!
//! ```
//! use ndarray::array;
//! use routers::models::nn::{Focal, Loss, Mlp, MlpSpec, Output, Targets, TrainConfig};
//! // Two sigmoid heads with focal BCE (alpha 0.25, gamma 2), as R2Adapter uses them.
//! let x = array![[0.0f32, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.0]];
//! let y = Targets::Binary(array![[0.0f32, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.0]]);
//! let spec = MlpSpec { sizes: vec![2, 8, 2], batch_norm: false, output: Output::Sigmoid };
//! let mut net = Mlp::new(&spec, 7);
//! let loss = Loss::Sigmoid(vec![Focal { alpha: Some(0.25), gamma: 2.0 }]);
//! let cfg = TrainConfig { epochs: 200, batch_size: 4, lr: 0.05, ..TrainConfig::default() };
//! let history = net.fit(x.view(), &y, &loss, &cfg).unwrap();
//! assert!(history.last().unwrap() < &history[0]);
//! let p = net.predict(x.view()); // 4 x 2 probabilities
//! assert_eq!(p.dim(), (4, 2));
//! ```

use bench_core::{BenchError, Result};
use ndarray::linalg::general_mat_mul;
use ndarray::{Array2, ArrayView2, ArrayViewMut2, Axis};

use crate::rng::SplitMix64;

mod layers;
mod loss;
#[cfg(test)]
pub(crate) mod tests;
mod train;

pub use layers::*;
pub use loss::*;
pub use train::*;

/// Something the trainer can fit: a forward pass in train mode that keeps what `backward`
/// needs, an inference pass that keeps nothing, and its parameters.
pub trait Module {
    /// Train-mode forward (batch statistics, caches for `backward`).
    fn forward_train(&mut self, x: ArrayView2<'_, f32>) -> Array2<f32>;
    /// Eval-mode forward (running statistics), raw outputs (logits).
    fn infer(&self, x: ArrayView2<'_, f32>) -> Array2<f32>;
    /// Accumulates parameter gradients from dL/d(output); returns dL/d(input) when the module
    /// was asked to propagate it.
    fn backward(&mut self, dy: ArrayView2<'_, f32>) -> Option<Array2<f32>>;
    /// Its learnable parameters, for the optimiser.
    fn params_mut(&mut self) -> Vec<&mut Param>;
}

/// The activation [`Mlp::predict`] applies to the last layer's outputs. Training always works
/// on the raw outputs (logits): the [`Loss`] includes its activation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// The raw outputs (logits).
    Identity,
    /// Softmax over each row (pair with [`Loss::SoftmaxCrossEntropy`]).
    Softmax,
    /// Sigmoid per output (pair with [`Loss::Sigmoid`]).
    Sigmoid,
}

/// The shape of an [`Mlp`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MlpSpec {
    /// Input width, hidden widths..., output width (at least two entries).
    pub sizes: Vec<usize>,
    /// Batch norm between every hidden Linear and its ReLU (Linear - BN - ReLU).
    pub batch_norm: bool,
    /// The activation of the last layer at prediction.
    pub output: Output,
}

#[derive(Debug, Clone)]
enum Layer {
    Linear(Linear),
    BatchNorm(BatchNorm1d),
    Relu(Relu),
}

/// A multi-layer perceptron: hidden layers `Linear (He) [- BatchNorm1d] - ReLU`, then a
/// `Linear (Xavier)` output layer.
#[derive(Debug, Clone)]
pub struct Mlp {
    layers: Vec<Layer>,
    /// The activation [`Mlp::predict`] applies.
    pub output: Output,
    /// Whether `backward` returns dL/dx (needed when a trainable module feeds this one; off by
    /// default because the first layer's input gradient costs as much as its weight gradient).
    pub input_grad: bool,
}

impl Mlp {
    /// A network of `spec`'s shape with weights drawn from `seed`.
    ///
    /// # Panics
    /// When `spec.sizes` has fewer than two entries.
    pub fn new(spec: &MlpSpec, seed: u64) -> Self {
        Self::with_rng(spec, &mut SplitMix64::new(seed))
    }

    /// As [`Mlp::new`], drawing from a caller's generator.
    pub fn with_rng(spec: &MlpSpec, rng: &mut SplitMix64) -> Self {
        assert!(
            spec.sizes.len() >= 2,
            "an MLP needs an input and an output size"
        );
        let mut layers = Vec::new();
        let last = spec.sizes.len() - 2;
        for (i, w) in spec.sizes.windows(2).enumerate() {
            if i < last {
                layers.push(Layer::Linear(Linear::new(w[0], w[1], true, Init::He, rng)));
                if spec.batch_norm {
                    layers.push(Layer::BatchNorm(BatchNorm1d::new(w[1])));
                }
                layers.push(Layer::Relu(Relu::default()));
            } else {
                layers.push(Layer::Linear(Linear::new(
                    w[0],
                    w[1],
                    true,
                    Init::Xavier,
                    rng,
                )));
            }
        }
        Mlp {
            layers,
            output: spec.output,
            input_grad: false,
        }
    }

    /// Outputs after the [`Output`] activation, in eval mode.
    pub fn predict(&self, x: ArrayView2<'_, f32>) -> Array2<f32> {
        let mut z = self.infer(x);
        activate(self.output, &mut z);
        z
    }

    /// Trains on `x` (rows) and `y` under `loss`; returns the mean training loss per epoch.
    pub fn fit(
        &mut self,
        x: ArrayView2<'_, f32>,
        y: &Targets,
        loss: &Loss,
        cfg: &TrainConfig,
    ) -> Result<Vec<f64>> {
        train(self, x, y, loss, cfg)
    }

    /// One optimisation step on one batch; returns the batch loss. `opt` keeps the step count.
    pub fn train_step(
        &mut self,
        x: ArrayView2<'_, f32>,
        y: &Targets,
        loss: &Loss,
        opt: &mut Adam,
    ) -> Result<f64> {
        step(self, x, y, loss, opt)
    }
}

impl Module for Mlp {
    fn forward_train(&mut self, x: ArrayView2<'_, f32>) -> Array2<f32> {
        let mut h = x.to_owned();
        for l in &mut self.layers {
            h = match l {
                Layer::Linear(l) => l.forward(h.view()),
                Layer::BatchNorm(b) => b.forward(h.view()),
                Layer::Relu(r) => r.forward(h),
            };
        }
        h
    }

    fn infer(&self, x: ArrayView2<'_, f32>) -> Array2<f32> {
        let mut h = x.to_owned();
        for l in &self.layers {
            h = match l {
                Layer::Linear(l) => l.apply(h.view()),
                Layer::BatchNorm(b) => b.apply(h.view()),
                Layer::Relu(_) => Relu::apply(h),
            };
        }
        h
    }

    fn backward(&mut self, dy: ArrayView2<'_, f32>) -> Option<Array2<f32>> {
        let mut d = dy.to_owned();
        for (i, l) in self.layers.iter_mut().enumerate().rev() {
            d = match l {
                // Only the first layer may skip its input gradient.
                Layer::Linear(l) => l.backward(d.view(), i > 0 || self.input_grad)?,
                Layer::BatchNorm(b) => b.backward(d.view()),
                Layer::Relu(r) => r.backward(d.view()),
            };
        }
        Some(d)
    }

    fn params_mut(&mut self) -> Vec<&mut Param> {
        self.layers
            .iter_mut()
            .flat_map(|l| match l {
                Layer::Linear(l) => l.params_mut(),
                Layer::BatchNorm(b) => b.params_mut(),
                Layer::Relu(_) => Vec::new(),
            })
            .collect()
    }
}
