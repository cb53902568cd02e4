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

/// A learnable tensor, stored flat (row-major), with its gradient and Adam's two moments.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub value: Vec<f32>,
    /// Accumulated by `backward`; cleared by [`Param::zero_grad`] (the trainer does it per step).
    pub grad: Vec<f32>,
    /// Whether Adam's weight decay applies (weights yes; biases and batch-norm affine no).
    pub decay: bool,
    m: Vec<f32>,
    v: Vec<f32>,
}

impl Param {
    pub fn new(value: Vec<f32>, decay: bool) -> Self {
        let n = value.len();
        Param {
            value,
            grad: vec![0.0; n],
            decay,
            m: vec![0.0; n],
            v: vec![0.0; n],
        }
    }

    pub fn len(&self) -> usize {
        self.value.len()
    }

    pub fn is_empty(&self) -> bool {
        self.value.is_empty()
    }

    pub fn zero_grad(&mut self) {
        self.grad.iter_mut().for_each(|g| *g = 0.0);
    }
}

/// Weight initialisation of a [`Linear`] layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Init {
    /// He (Kaiming) normal, std sqrt(2 / fan_in): for layers followed by ReLU.
    He,
    /// Xavier (Glorot) normal, std sqrt(2 / (fan_in + fan_out)): for output layers.
    Xavier,
}

/// A normal sample as f32 (the generator works in f64).
fn normal(rng: &mut SplitMix64, std: f64) -> f32 {
    (rng.normal() * std) as f32
}

/// `y = x W + b` with `W` stored `n_in x n_out`.
#[derive(Debug, Clone)]
pub struct Linear {
    pub n_in: usize,
    pub n_out: usize,
    pub weight: Param,
    pub bias: Option<Param>,
    input: Option<Array2<f32>>,
}

impl Linear {
    /// A layer with seeded weights (`init`) and zero bias (none when `bias` is false).
    pub fn new(n_in: usize, n_out: usize, bias: bool, init: Init, rng: &mut SplitMix64) -> Self {
        let std = match init {
            Init::He => (2.0 / n_in.max(1) as f64).sqrt(),
            Init::Xavier => (2.0 / (n_in + n_out).max(1) as f64).sqrt(),
        };
        let w = (0..n_in * n_out).map(|_| normal(rng, std)).collect();
        Linear {
            n_in,
            n_out,
            weight: Param::new(w, true),
            bias: bias.then(|| Param::new(vec![0.0; n_out], false)),
            input: None,
        }
    }

    pub fn weight_view(&self) -> ArrayView2<'_, f32> {
        ArrayView2::from_shape((self.n_in, self.n_out), &self.weight.value).expect("shape")
    }

    /// The output without caching anything (inference).
    pub fn apply(&self, x: ArrayView2<'_, f32>) -> Array2<f32> {
        let mut y = x.dot(&self.weight_view());
        if let Some(b) = &self.bias {
            for mut row in y.rows_mut() {
                row.iter_mut().zip(&b.value).for_each(|(v, b)| *v += b);
            }
        }
        y
    }

    /// The output, keeping `x` for [`Linear::backward`].
    pub fn forward(&mut self, x: ArrayView2<'_, f32>) -> Array2<f32> {
        let y = self.apply(x);
        self.input = Some(x.to_owned());
        y
    }

    /// Adds dL/dW and dL/db to the gradients; returns dL/dx when `need_dx`.
    pub fn backward(&mut self, dy: ArrayView2<'_, f32>, need_dx: bool) -> Option<Array2<f32>> {
        let x = self
            .input
            .as_ref()
            .expect("Linear::backward called before forward");
        let mut gw = ArrayViewMut2::from_shape((self.n_in, self.n_out), &mut self.weight.grad)
            .expect("shape");
        general_mat_mul(1.0, &x.t(), &dy, 1.0, &mut gw);
        if let Some(b) = &mut self.bias {
            for row in dy.rows() {
                b.grad.iter_mut().zip(row).for_each(|(g, d)| *g += d);
            }
        }
        need_dx.then(|| dy.dot(&self.weight_view().t()))
    }

    pub fn params_mut(&mut self) -> Vec<&mut Param> {
        let mut v = vec![&mut self.weight];
        if let Some(b) = &mut self.bias {
            v.push(b);
        }
        v
    }
}

/// `max(0, x)` element-wise.
#[derive(Debug, Clone, Default)]
pub struct Relu {
    output: Option<Array2<f32>>,
}

impl Relu {
    pub fn apply(x: Array2<f32>) -> Array2<f32> {
        x.mapv_into(|v| v.max(0.0))
    }

    pub fn forward(&mut self, x: Array2<f32>) -> Array2<f32> {
        let y = Self::apply(x);
        self.output = Some(y.clone());
        y
    }

    pub fn backward(&self, dy: ArrayView2<'_, f32>) -> Array2<f32> {
        let y = self.output.as_ref().expect("Relu::backward before forward");
        let mut dx = dy.to_owned();
        dx.zip_mut_with(y, |d, &o| {
            if o <= 0.0 {
                *d = 0.0;
            }
        });
        dx
    }
}

/// Batch normalisation over the rows of a batch (PyTorch's `BatchNorm1d` semantics: biased
/// variance to normalise, unbiased variance in the running estimate, momentum 0.1, eps 1e-5).
#[derive(Debug, Clone)]
pub struct BatchNorm1d {
    pub n: usize,
    pub gamma: Param,
    pub beta: Param,
    pub running_mean: Vec<f32>,
    pub running_var: Vec<f32>,
    pub momentum: f32,
    pub eps: f32,
    cache: Option<(Array2<f32>, Vec<f32>)>,
}

impl BatchNorm1d {
    pub fn new(n: usize) -> Self {
        BatchNorm1d {
            n,
            gamma: Param::new(vec![1.0; n], false),
            beta: Param::new(vec![0.0; n], false),
            running_mean: vec![0.0; n],
            running_var: vec![1.0; n],
            momentum: 0.1,
            eps: 1e-5,
            cache: None,
        }
    }

    /// Eval mode: normalise with the running statistics.
    pub fn apply(&self, x: ArrayView2<'_, f32>) -> Array2<f32> {
        let scale: Vec<f32> = (0..self.n)
            .map(|j| self.gamma.value[j] / (self.running_var[j] + self.eps).sqrt())
            .collect();
        let mut y = x.to_owned();
        for mut row in y.rows_mut() {
            for (j, v) in row.iter_mut().enumerate() {
                *v = (*v - self.running_mean[j]) * scale[j] + self.beta.value[j];
            }
        }
        y
    }

    /// Train mode: normalise with the batch's statistics and update the running ones.
    pub fn forward(&mut self, x: ArrayView2<'_, f32>) -> Array2<f32> {
        let m = x.nrows();
        let nf = m as f32;
        let mut mean = vec![0.0f32; self.n];
        for row in x.rows() {
            mean.iter_mut().zip(row).for_each(|(a, v)| *a += v);
        }
        mean.iter_mut().for_each(|a| *a /= nf);
        let mut var = vec![0.0f32; self.n];
        for row in x.rows() {
            for ((a, v), mu) in var.iter_mut().zip(row).zip(&mean) {
                *a += (v - mu) * (v - mu);
            }
        }
        var.iter_mut().for_each(|a| *a /= nf);
        let inv_std: Vec<f32> = var.iter().map(|v| 1.0 / (v + self.eps).sqrt()).collect();
        let mut xhat = x.to_owned();
        for mut row in xhat.rows_mut() {
            for (j, v) in row.iter_mut().enumerate() {
                *v = (*v - mean[j]) * inv_std[j];
            }
        }
        let mut y = xhat.clone();
        for mut row in y.rows_mut() {
            for (j, v) in row.iter_mut().enumerate() {
                *v = *v * self.gamma.value[j] + self.beta.value[j];
            }
        }
        let unbias = if m > 1 { nf / (nf - 1.0) } else { 1.0 };
        for j in 0..self.n {
            self.running_mean[j] =
                (1.0 - self.momentum) * self.running_mean[j] + self.momentum * mean[j];
            self.running_var[j] =
                (1.0 - self.momentum) * self.running_var[j] + self.momentum * var[j] * unbias;
        }
        self.cache = Some((xhat, inv_std));
        y
    }

    /// Adds dL/dgamma and dL/dbeta; returns dL/dx (through the batch statistics).
    pub fn backward(&mut self, dy: ArrayView2<'_, f32>) -> Array2<f32> {
        let (xhat, inv_std) = self
            .cache
            .as_ref()
            .expect("BatchNorm1d::backward before forward");
        let m = dy.nrows() as f32;
        let mut sum_dxhat = vec![0.0f32; self.n];
        let mut sum_dxhat_xhat = vec![0.0f32; self.n];
        for (drow, xrow) in dy.rows().into_iter().zip(xhat.rows()) {
            for j in 0..self.n {
                let d = drow[j];
                self.gamma.grad[j] += d * xrow[j];
                self.beta.grad[j] += d;
                let dxh = d * self.gamma.value[j];
                sum_dxhat[j] += dxh;
                sum_dxhat_xhat[j] += dxh * xrow[j];
            }
        }
        let mut dx = Array2::zeros(dy.raw_dim());
        for ((mut out, drow), xrow) in dx.rows_mut().into_iter().zip(dy.rows()).zip(xhat.rows()) {
            for j in 0..self.n {
                let dxh = drow[j] * self.gamma.value[j];
                out[j] = inv_std[j] / m * (m * dxh - sum_dxhat[j] - xrow[j] * sum_dxhat_xhat[j]);
            }
        }
        dx
    }

    pub fn params_mut(&mut self) -> Vec<&mut Param> {
        vec![&mut self.gamma, &mut self.beta]
    }
}

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
    fn params_mut(&mut self) -> Vec<&mut Param>;
}

/// The activation [`Mlp::predict`] applies to the last layer's outputs. Training always works
/// on the raw outputs (logits): the [`Loss`] includes its activation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
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

/// Applies an output activation in place.
pub fn activate(output: Output, z: &mut Array2<f32>) {
    match output {
        Output::Identity => {}
        Output::Softmax => {
            for mut row in z.rows_mut() {
                let p = softmax(
                    row.as_slice()
                        .expect("rows of an owned matrix are contiguous"),
                );
                row.iter_mut().zip(p).for_each(|(v, p)| *v = p);
            }
        }
        Output::Sigmoid => z.mapv_inplace(sigmoid),
    }
}

/// Numerically stable softmax of one row (computed in f64).
pub fn softmax(z: &[f32]) -> Vec<f32> {
    let max = z.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let e: Vec<f64> = z.iter().map(|&v| f64::from(v - max).exp()).collect();
    let s: f64 = e.iter().sum();
    e.into_iter().map(|v| (v / s) as f32).collect()
}

pub fn sigmoid(z: f32) -> f32 {
    (1.0 / (1.0 + f64::from(-z).exp())) as f32
}

/// `ln(sigmoid(x))` without overflow.
fn log_sigmoid(x: f64) -> f64 {
    if x > 0.0 {
        -(-x).exp().ln_1p()
    } else {
        x - x.exp().ln_1p()
    }
}

/// What a network is trained to output.
#[derive(Debug, Clone, PartialEq)]
pub enum Targets {
    /// One class index per row (softmax cross-entropy).
    Classes(Vec<usize>),
    /// One 0/1 value per row and output column (sigmoid losses).
    Binary(Array2<f32>),
}

impl Targets {
    pub fn len(&self) -> usize {
        match self {
            Targets::Classes(c) => c.len(),
            Targets::Binary(b) => b.nrows(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The targets of rows `idx`, in that order.
    pub fn gather(&self, idx: &[usize]) -> Targets {
        match self {
            Targets::Classes(c) => Targets::Classes(idx.iter().map(|&i| c[i]).collect()),
            Targets::Binary(b) => Targets::Binary(b.select(Axis(0), idx)),
        }
    }
}

/// The binary focal loss of one sigmoid output (Lin et al. 2017):
/// `FL = -alpha_t (1 - p_t)^gamma ln p_t`, with `p_t = p` for a positive and `1 - p` for a
/// negative, and `alpha_t = alpha` for a positive, `1 - alpha` for a negative (1 without alpha).
/// `gamma = 0` without alpha is plain binary cross-entropy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Focal {
    pub alpha: Option<f32>,
    pub gamma: f32,
}

impl Focal {
    /// Plain binary cross-entropy.
    pub fn bce() -> Self {
        Focal {
            alpha: None,
            gamma: 0.0,
        }
    }

    /// Loss and d loss / d logit for one logit `z` and target `y` (0 or 1).
    pub fn value_and_grad(&self, z: f32, y: bool) -> (f64, f64) {
        let s = if y { 1.0 } else { -1.0 };
        let sz = s * f64::from(z);
        let log_pt = log_sigmoid(sz);
        let pt = log_pt.exp();
        // 1 - p_t = sigmoid(-s z), computed directly to keep precision near p_t = 1.
        let one_m_pt = log_sigmoid(-sz).exp();
        let a = match self.alpha {
            Some(a) if y => f64::from(a),
            Some(a) => 1.0 - f64::from(a),
            None => 1.0,
        };
        let g = f64::from(self.gamma);
        let mod_ = if g == 0.0 { 1.0 } else { one_m_pt.powf(g) };
        let loss = -a * mod_ * log_pt;
        // d/dz of the loss: s * a * (1 - p_t)^gamma * (gamma p_t ln p_t - (1 - p_t)).
        let grad = s * a * mod_ * (g * pt * log_pt - one_m_pt);
        (loss, grad)
    }
}

/// A training loss over a batch of raw outputs (logits); the value is a mean over rows.
#[derive(Debug, Clone, PartialEq)]
pub enum Loss {
    /// Softmax over each row, then cross-entropy with [`Targets::Classes`]; with class weights
    /// the mean is weighted (sum of w_y * CE / sum of w_y, as PyTorch).
    SoftmaxCrossEntropy { class_weights: Option<Vec<f32>> },
    /// A sigmoid per output column with its own focal loss (one entry per column, or a single
    /// entry for every column), summed over columns; needs [`Targets::Binary`].
    Sigmoid(Vec<Focal>),
}

impl Loss {
    /// Plain, unweighted softmax cross-entropy.
    pub fn softmax_ce() -> Self {
        Loss::SoftmaxCrossEntropy {
            class_weights: None,
        }
    }

    /// The batch loss and its gradient with respect to `logits`.
    pub fn value_and_grad(
        &self,
        logits: ArrayView2<'_, f32>,
        y: &Targets,
    ) -> Result<(f64, Array2<f32>)> {
        let (n, k) = logits.dim();
        if y.len() != n {
            return Err(BenchError::Invalid(format!(
                "loss: {} targets for {n} rows of outputs",
                y.len()
            )));
        }
        let mut grad = Array2::<f32>::zeros((n, k));
        match (self, y) {
            (Loss::SoftmaxCrossEntropy { class_weights }, Targets::Classes(c)) => {
                if let Some(w) = class_weights {
                    if w.len() != k {
                        return Err(BenchError::Invalid(format!(
                            "loss: {} class weights for {k} outputs",
                            w.len()
                        )));
                    }
                }
                let weight = |c: usize| class_weights.as_ref().map_or(1.0, |w| f64::from(w[c]));
                let mut total_w = 0.0;
                for &ci in c {
                    if ci >= k {
                        return Err(BenchError::Invalid(format!(
                            "loss: class {ci} outside 0..{k}"
                        )));
                    }
                    total_w += weight(ci);
                }
                if total_w <= 0.0 {
                    return Ok((0.0, grad));
                }
                let mut loss = 0.0;
                for (i, row) in logits.rows().into_iter().enumerate() {
                    let ci = c[i];
                    let w = weight(ci);
                    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                    let e: Vec<f64> = row.iter().map(|&v| f64::from(v - max).exp()).collect();
                    let s: f64 = e.iter().sum();
                    loss += w * (s.ln() - f64::from(row[ci] - max));
                    for j in 0..k {
                        let p = e[j] / s;
                        let t = if j == ci { 1.0 } else { 0.0 };
                        grad[[i, j]] = (w * (p - t) / total_w) as f32;
                    }
                }
                Ok((loss / total_w, grad))
            }
            (Loss::Sigmoid(focal), Targets::Binary(t)) => {
                if t.ncols() != k {
                    return Err(BenchError::Invalid(format!(
                        "loss: {} target columns for {k} outputs",
                        t.ncols()
                    )));
                }
                if focal.len() != 1 && focal.len() != k {
                    return Err(BenchError::Invalid(format!(
                        "loss: {} focal settings for {k} outputs (give 1 or {k})",
                        focal.len()
                    )));
                }
                let mut loss = 0.0;
                let nf = n.max(1) as f64;
                for i in 0..n {
                    for j in 0..k {
                        let tv = t[[i, j]];
                        if tv != 0.0 && tv != 1.0 {
                            return Err(BenchError::Invalid(format!(
                                "loss: binary target {tv} at row {i}, column {j} (expected 0 or 1)"
                            )));
                        }
                        let f = if focal.len() == 1 { focal[0] } else { focal[j] };
                        let (l, g) = f.value_and_grad(logits[[i, j]], tv == 1.0);
                        loss += l;
                        grad[[i, j]] = (g / nf) as f32;
                    }
                }
                Ok((loss / nf, grad))
            }
            _ => Err(BenchError::Invalid(
                "loss: softmax cross-entropy needs class targets, sigmoid losses binary ones"
                    .into(),
            )),
        }
    }
}

/// Adam (Kingma and Ba 2015) with decoupled weight decay on parameters marked `decay`.
#[derive(Debug, Clone, PartialEq)]
pub struct Adam {
    pub lr: f32,
    pub beta1: f32,
    pub beta2: f32,
    pub eps: f32,
    pub weight_decay: f32,
    t: i32,
}

impl Adam {
    pub fn new(lr: f32, weight_decay: f32) -> Self {
        Adam {
            lr,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            weight_decay,
            t: 0,
        }
    }

    /// One update of every parameter from its accumulated gradient.
    pub fn step(&mut self, params: Vec<&mut Param>) {
        self.t += 1;
        let c1 = 1.0 - self.beta1.powi(self.t);
        let c2 = 1.0 - self.beta2.powi(self.t);
        for p in params {
            let decay = if p.decay { self.weight_decay } else { 0.0 };
            for i in 0..p.value.len() {
                let g = p.grad[i];
                p.m[i] = self.beta1 * p.m[i] + (1.0 - self.beta1) * g;
                p.v[i] = self.beta2 * p.v[i] + (1.0 - self.beta2) * g * g;
                let mhat = p.m[i] / c1;
                let vhat = p.v[i] / c2;
                p.value[i] -= self.lr * (mhat / (vhat.sqrt() + self.eps) + decay * p.value[i]);
            }
        }
    }
}

/// Settings of [`train`].
#[derive(Debug, Clone, PartialEq)]
pub struct TrainConfig {
    pub epochs: usize,
    /// At least this many Adam steps: small training sets get more epochs than `epochs`
    /// (`max(epochs, ceil(min_steps / batches per epoch))`), large ones exactly `epochs`.
    pub min_steps: usize,
    pub batch_size: usize,
    /// Adam's learning rate.
    pub lr: f32,
    /// Decoupled weight decay (weights only).
    pub weight_decay: f32,
    /// Seeds the per-epoch shuffles.
    pub seed: u64,
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            epochs: 20,
            min_steps: 0,
            batch_size: 64,
            lr: 1e-3,
            weight_decay: 0.0,
            seed: 0,
        }
    }
}

/// One Adam step of `model` on one batch; returns the batch loss.
pub fn step<M: Module + ?Sized>(
    model: &mut M,
    x: ArrayView2<'_, f32>,
    y: &Targets,
    loss: &Loss,
    opt: &mut Adam,
) -> Result<f64> {
    for p in model.params_mut() {
        p.zero_grad();
    }
    let z = model.forward_train(x);
    let (l, g) = loss.value_and_grad(z.view(), y)?;
    model.backward(g.view());
    opt.step(model.params_mut());
    Ok(l)
}

/// Mini-batch training: each epoch shuffles the rows (seeded), then takes one Adam step per
/// batch (epochs: see [`TrainConfig::min_steps`]). A trailing batch of a single row is skipped (batch norm needs two). Returns the mean
/// training loss of each epoch.
pub fn train<M: Module + ?Sized>(
    model: &mut M,
    x: ArrayView2<'_, f32>,
    y: &Targets,
    loss: &Loss,
    cfg: &TrainConfig,
) -> Result<Vec<f64>> {
    let n = x.nrows();
    if y.len() != n {
        return Err(BenchError::Invalid(format!(
            "train: {} targets for {n} rows",
            y.len()
        )));
    }
    if cfg.batch_size == 0 {
        return Err(BenchError::Invalid("train: batch size 0".into()));
    }
    let mut rng = SplitMix64::new(cfg.seed);
    let mut opt = Adam::new(cfg.lr, cfg.weight_decay);
    let mut order: Vec<usize> = (0..n).collect();
    let per_epoch = n.div_ceil(cfg.batch_size).max(1);
    let epochs = cfg.epochs.max(cfg.min_steps.div_ceil(per_epoch));
    let mut history = Vec::with_capacity(epochs);
    for _ in 0..epochs {
        rng.shuffle(&mut order);
        let (mut sum, mut count) = (0.0, 0usize);
        for idx in order.chunks(cfg.batch_size) {
            if idx.len() < 2 && n >= 2 {
                continue;
            }
            let xb = x.select(Axis(0), idx);
            let yb = y.gather(idx);
            sum += step(model, xb.view(), &yb, loss, &mut opt)? * idx.len() as f64;
            count += idx.len();
        }
        history.push(if count > 0 { sum / count as f64 } else { 0.0 });
    }
    Ok(history)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A random matrix from a seed.
    pub(crate) fn rand_matrix(n: usize, m: usize, seed: u64) -> Array2<f32> {
        let mut r = SplitMix64::new(seed);
        Array2::from_shape_fn((n, m), |_| r.normal() as f32)
    }

    /// Central finite difference of `f` with respect to element `i` of a flat buffer.
    fn numeric(f: &mut dyn FnMut(f32) -> f64, at: f32, h: f32) -> f64 {
        (f(at + h) - f(at - h)) / (2.0 * f64::from(h))
    }

    fn close(a: f64, b: f64, what: &str) {
        let tol = 2e-2 * a.abs().max(b.abs()).max(1e-2);
        assert!((a - b).abs() <= tol, "{what}: analytic {a} vs numeric {b}");
    }

    /// Fixed random weights on the outputs, so that the scalar loss depends on every output
    /// unevenly (a plain sum would hide batch-norm's input gradient, which sums to zero).
    fn weighted_sum(y: &Array2<f32>, c: &Array2<f32>) -> f64 {
        y.iter()
            .zip(c)
            .map(|(a, b)| f64::from(*a) * f64::from(*b))
            .sum()
    }

    #[test]
    fn linear_gradients_match_finite_differences() {
        let mut rng = SplitMix64::new(1);
        let mut lin = Linear::new(5, 3, true, Init::Xavier, &mut rng);
        let x = rand_matrix(4, 5, 2);
        let c = rand_matrix(4, 3, 3);
        let y = lin.forward(x.view());
        assert_eq!(y.dim(), (4, 3));
        let dx = lin.backward(c.view(), true).unwrap();
        for i in [0, 7, 14] {
            let base = lin.clone();
            let mut f = |v: f32| {
                let mut l = base.clone();
                l.weight.value[i] = v;
                weighted_sum(&l.apply(x.view()), &c)
            };
            let num = numeric(&mut f, base.weight.value[i], 1e-2);
            close(f64::from(lin.weight.grad[i]), num, "dW");
        }
        let bgrad = lin.bias.as_ref().unwrap().grad.clone();
        for (j, &g) in bgrad.iter().enumerate() {
            let want: f32 = c.column(j).sum();
            close(f64::from(g), f64::from(want), "db");
        }
        for (r, col) in [(0, 0), (3, 4), (2, 2)] {
            let mut f = |v: f32| {
                let mut xx = x.clone();
                xx[[r, col]] = v;
                weighted_sum(&lin.apply(xx.view()), &c)
            };
            let num = numeric(&mut f, x[[r, col]], 1e-2);
            close(f64::from(dx[[r, col]]), num, "dx");
        }
    }

    #[test]
    fn batchnorm_gradients_match_finite_differences_and_modes_differ() {
        let mut bn = BatchNorm1d::new(3);
        bn.gamma.value = vec![1.5, 0.5, -1.0];
        bn.beta.value = vec![0.1, -0.2, 0.3];
        let x = rand_matrix(6, 3, 5);
        let c = rand_matrix(6, 3, 6);
        let y = bn.forward(x.view());
        // Train mode output has zero mean and (before gamma/beta) unit variance per column.
        for j in 0..3 {
            let col: Vec<f64> = y
                .column(j)
                .iter()
                .map(|&v| {
                    (f64::from(v) - f64::from(bn.beta.value[j])) / f64::from(bn.gamma.value[j])
                })
                .collect();
            let m = col.iter().sum::<f64>() / 6.0;
            let v = col.iter().map(|a| (a - m) * (a - m)).sum::<f64>() / 6.0;
            assert!(m.abs() < 1e-5 && (v - 1.0).abs() < 1e-3, "col {j}: {m} {v}");
        }
        let dx = bn.backward(c.view());
        let fresh = BatchNorm1d {
            gamma: bn.gamma.clone(),
            beta: bn.beta.clone(),
            ..BatchNorm1d::new(3)
        };
        for (r, col) in [(0, 0), (2, 1), (5, 2), (3, 0)] {
            let mut f = |v: f32| {
                let mut b = fresh.clone();
                let mut xx = x.clone();
                xx[[r, col]] = v;
                weighted_sum(&b.forward(xx.view()), &c)
            };
            let num = numeric(&mut f, x[[r, col]], 1e-2);
            close(f64::from(dx[[r, col]]), num, "BN dx");
        }
        for j in 0..3 {
            let mut f = |v: f32| {
                let mut b = fresh.clone();
                b.gamma.value[j] = v;
                weighted_sum(&b.forward(x.view()), &c)
            };
            let num = numeric(&mut f, fresh.gamma.value[j], 1e-2);
            close(f64::from(bn.gamma.grad[j]), num, "BN dgamma");
        }
        // Running statistics moved toward the batch's; eval mode uses them, not the batch's.
        assert!(bn.running_mean.iter().any(|&m| m != 0.0));
        let eval = bn.apply(x.view());
        assert!((&eval - &y).iter().any(|d| d.abs() > 1e-3));
    }

    #[test]
    fn softmax_ce_gradient_matches_finite_differences_with_and_without_weights() {
        let z = rand_matrix(5, 4, 8);
        let y = Targets::Classes(vec![0, 3, 1, 1, 2]);
        for loss in [
            Loss::softmax_ce(),
            Loss::SoftmaxCrossEntropy {
                class_weights: Some(vec![0.5, 2.0, 1.0, 3.0]),
            },
        ] {
            let (l, g) = loss.value_and_grad(z.view(), &y).unwrap();
            assert!(l > 0.0);
            for (r, c) in [(0, 0), (1, 3), (4, 1), (2, 2)] {
                let mut f = |v: f32| {
                    let mut zz = z.clone();
                    zz[[r, c]] = v;
                    loss.value_and_grad(zz.view(), &y).unwrap().0
                };
                let num = numeric(&mut f, z[[r, c]], 1e-2);
                close(f64::from(g[[r, c]]), num, "CE dz");
            }
        }
        // Golden value: uniform logits over 4 classes give ln 4.
        let (l, _) = Loss::softmax_ce()
            .value_and_grad(Array2::zeros((2, 4)).view(), &Targets::Classes(vec![1, 2]))
            .unwrap();
        assert!((l - 4f64.ln()).abs() < 1e-9);
        assert!(Loss::softmax_ce()
            .value_and_grad(z.view(), &Targets::Classes(vec![0, 4, 0, 0, 0]))
            .is_err());
    }

    #[test]
    fn focal_loss_gradient_and_golden_values() {
        let f = Focal {
            alpha: Some(0.25),
            gamma: 2.0,
        };
        // Golden: z = 0 gives p_t = 0.5, so FL = alpha_t * 0.25 * ln 2.
        let (l1, _) = f.value_and_grad(0.0, true);
        assert!((l1 - 0.25 * 0.25 * 2f64.ln()).abs() < 1e-12);
        let (l0, _) = f.value_and_grad(0.0, false);
        assert!((l0 - 0.75 * 0.25 * 2f64.ln()).abs() < 1e-12);
        // gamma 0 without alpha is BCE, whose gradient is p - y.
        let (l, g) = Focal::bce().value_and_grad(1.25, true);
        let p = 1.0 / (1.0 + (-1.25f64).exp());
        assert!((l + p.ln()).abs() < 1e-9 && (g - (p - 1.0)).abs() < 1e-9);
        let z = rand_matrix(4, 2, 9) * 2.0;
        let t = Targets::Binary(ndarray::array![
            [1.0, 0.0],
            [0.0, 0.0],
            [1.0, 1.0],
            [0.0, 1.0]
        ]);
        let loss = Loss::Sigmoid(vec![
            f,
            Focal {
                alpha: None,
                gamma: 1.0,
            },
        ]);
        let (_, g) = loss.value_and_grad(z.view(), &t).unwrap();
        for r in 0..4 {
            for c in 0..2 {
                let mut fd = |v: f32| {
                    let mut zz = z.clone();
                    zz[[r, c]] = v;
                    loss.value_and_grad(zz.view(), &t).unwrap().0
                };
                let num = numeric(&mut fd, z[[r, c]], 1e-2);
                close(f64::from(g[[r, c]]), num, "focal dz");
            }
        }
        let bad = Targets::Binary(ndarray::array![
            [0.5, 0.0],
            [0.0, 0.0],
            [1.0, 1.0],
            [0.0, 1.0]
        ]);
        assert!(loss.value_and_grad(z.view(), &bad).is_err());
    }

    #[test]
    fn mlp_backward_matches_finite_differences_through_batchnorm() {
        let spec = MlpSpec {
            sizes: vec![4, 6, 5, 3],
            batch_norm: true,
            output: Output::Softmax,
        };
        let mut net = Mlp::new(&spec, 11);
        net.input_grad = true;
        let x = rand_matrix(7, 4, 12);
        let y = Targets::Classes(vec![0, 1, 2, 0, 1, 2, 2]);
        let loss = Loss::softmax_ce();
        let base = net.clone();
        let z = net.forward_train(x.view());
        let (_, g) = loss.value_and_grad(z.view(), &y).unwrap();
        let dx = net.backward(g.view()).unwrap();
        let value = |m: &mut Mlp, xx: &Array2<f32>| {
            let z = m.forward_train(xx.view());
            loss.value_and_grad(z.view(), &y).unwrap().0
        };
        for (r, c) in [(0, 0), (3, 2), (6, 3)] {
            let mut f = |v: f32| {
                let mut xx = x.clone();
                xx[[r, c]] = v;
                value(&mut base.clone(), &xx)
            };
            let num = numeric(&mut f, x[[r, c]], 2e-3);
            close(f64::from(dx[[r, c]]), num, "MLP dx");
        }
        // A first-layer weight: its gradient flows through BN, ReLU and the second Linear.
        let grads: Vec<Vec<f32>> = net.params_mut().iter().map(|p| p.grad.clone()).collect();
        for i in [0, 5, 17] {
            let mut f = |v: f32| {
                let mut m = base.clone();
                m.params_mut()[0].value[i] = v;
                value(&mut m, &x)
            };
            let num = numeric(&mut f, base.clone().params_mut()[0].value[i], 2e-3);
            close(f64::from(grads[0][i]), num, "MLP dW1");
        }
        let p = net.predict(x.view());
        for row in p.rows() {
            assert!((row.sum() - 1.0).abs() < 1e-5);
        }
    }

    #[test]
    fn training_learns_xor_and_is_deterministic() {
        let x = ndarray::array![[0.0f32, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]];
        let y = Targets::Classes(vec![0, 1, 1, 0]);
        let spec = MlpSpec {
            sizes: vec![2, 16, 2],
            batch_norm: false,
            output: Output::Softmax,
        };
        let cfg = TrainConfig {
            epochs: 300,
            batch_size: 4,
            lr: 0.03,
            ..TrainConfig::default()
        };
        let mut a = Mlp::new(&spec, 3);
        let hist = a.fit(x.view(), &y, &Loss::softmax_ce(), &cfg).unwrap();
        assert!(
            hist[hist.len() - 1] < 0.05,
            "final loss {}",
            hist[hist.len() - 1]
        );
        let p = a.predict(x.view());
        for (i, &c) in [0usize, 1, 1, 0].iter().enumerate() {
            assert!(p[[i, c]] > 0.9, "row {i}: {:?}", p.row(i));
        }
        let mut b = Mlp::new(&spec, 3);
        b.fit(x.view(), &y, &Loss::softmax_ce(), &cfg).unwrap();
        assert_eq!(a.predict(x.view()), b.predict(x.view()));
        let mut c = Mlp::new(&spec, 4);
        c.fit(x.view(), &y, &Loss::softmax_ce(), &cfg).unwrap();
        assert_ne!(a.predict(x.view()), c.predict(x.view()));
    }
}
