//! Adam with decoupled weight decay, one training step, and the seeded mini-batch loop.

use super::*;

/// Adam (Kingma and Ba 2015) with decoupled weight decay on parameters marked `decay`.
#[derive(Debug, Clone, PartialEq)]
pub struct Adam {
    /// Learning rate.
    pub lr: f32,
    /// Decay of the first moment (0.9).
    pub beta1: f32,
    /// Decay of the second moment (0.999).
    pub beta2: f32,
    /// Added to the root of the second moment (1e-8).
    pub eps: f32,
    /// Decoupled weight decay, applied to parameters marked `decay`.
    pub weight_decay: f32,
    pub(super) t: i32,
}

impl Adam {
    /// Adam with PyTorch's default betas and eps.
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
    /// Passes over the training rows (at least; see `min_steps`).
    pub epochs: usize,
    /// At least this many Adam steps: small training sets get more epochs than `epochs`
    /// (`max(epochs, ceil(min_steps / batches per epoch))`), large ones exactly `epochs`.
    pub min_steps: usize,
    /// Rows per Adam step.
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
