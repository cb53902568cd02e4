//! Layers and their parameters: Linear, ReLU, batch norm, and seeded He / Xavier initialisation.

use super::*;

/// A learnable tensor, stored flat (row-major), with its gradient and Adam's two moments.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// The current values.
    pub value: Vec<f32>,
    /// Accumulated by `backward`; cleared by [`Param::zero_grad`] (the trainer does it per step).
    pub grad: Vec<f32>,
    /// Whether Adam's weight decay applies (weights yes; biases and batch-norm affine no).
    pub decay: bool,
    pub(super) m: Vec<f32>,
    pub(super) v: Vec<f32>,
}

impl Param {
    /// A parameter holding `value`, with zero gradient and moments.
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

    /// Number of scalars.
    pub fn len(&self) -> usize {
        self.value.len()
    }

    /// Whether it holds no scalar.
    pub fn is_empty(&self) -> bool {
        self.value.is_empty()
    }

    /// Sets the gradient to zero.
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
pub(super) fn normal(rng: &mut SplitMix64, std: f64) -> f32 {
    (rng.normal() * std) as f32
}

/// `y = x W + b` with `W` stored `n_in x n_out`.
#[derive(Debug, Clone)]
pub struct Linear {
    /// Input width.
    pub n_in: usize,
    /// Output width.
    pub n_out: usize,
    /// `W`, `n_in x n_out` row-major.
    pub weight: Param,
    /// `b` (`n_out` values), when the layer has one.
    pub bias: Option<Param>,
    pub(super) input: Option<Array2<f32>>,
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

    /// `W` as an `n_in x n_out` matrix.
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

    /// The weight, then the bias if any (what the optimiser updates).
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
    pub(super) output: Option<Array2<f32>>,
}

impl Relu {
    /// The output without caching anything (inference).
    pub fn apply(x: Array2<f32>) -> Array2<f32> {
        x.mapv_into(|v| v.max(0.0))
    }

    /// The output, keeping it for [`Relu::backward`].
    pub fn forward(&mut self, x: Array2<f32>) -> Array2<f32> {
        let y = Self::apply(x);
        self.output = Some(y.clone());
        y
    }

    /// dL/dx: `dy` where the output was positive, 0 elsewhere.
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
    /// Number of features normalised.
    pub n: usize,
    /// Per-feature scale (starts at 1).
    pub gamma: Param,
    /// Per-feature shift (starts at 0).
    pub beta: Param,
    /// Running mean used in eval mode.
    pub running_mean: Vec<f32>,
    /// Running (unbiased) variance used in eval mode.
    pub running_var: Vec<f32>,
    /// Weight of a batch's statistics in the running ones (0.1).
    pub momentum: f32,
    /// Added to the variance before the square root (1e-5).
    pub eps: f32,
    pub(super) cache: Option<(Array2<f32>, Vec<f32>)>,
}

impl BatchNorm1d {
    /// A layer over `n` features: identity affine, running statistics mean 0 and variance 1.
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

    /// Gamma and beta (what the optimiser updates).
    pub fn params_mut(&mut self) -> Vec<&mut Param> {
        vec![&mut self.gamma, &mut self.beta]
    }
}
