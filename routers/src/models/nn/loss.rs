//! Output activations and losses: softmax cross-entropy with class weights, sigmoid with a focal loss per column.

use super::*;

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

/// The logistic function `1 / (1 + e^-z)` (computed in f64).
pub fn sigmoid(z: f32) -> f32 {
    (1.0 / (1.0 + f64::from(-z).exp())) as f32
}

/// `ln(sigmoid(x))` without overflow.
pub(super) fn log_sigmoid(x: f64) -> f64 {
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
    /// Number of rows.
    pub fn len(&self) -> usize {
        match self {
            Targets::Classes(c) => c.len(),
            Targets::Binary(b) => b.nrows(),
        }
    }

    /// Whether there are no rows.
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
    /// Weight of a positive (`1 - alpha` for a negative); `None`: both weigh 1.
    pub alpha: Option<f32>,
    /// Focusing exponent on `(1 - p_t)`; 0 turns the focus off.
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
    SoftmaxCrossEntropy {
        /// One weight per class; `None`: every class weighs 1.
        class_weights: Option<Vec<f32>>,
    },
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
        let grad = Array2::<f32>::zeros((n, k));
        match (self, y) {
            (Loss::SoftmaxCrossEntropy { class_weights }, Targets::Classes(c)) => {
                softmax_ce_value_and_grad(logits, class_weights.as_deref(), c, grad)
            }
            (Loss::Sigmoid(focal), Targets::Binary(t)) => {
                sigmoid_value_and_grad(logits, focal, t, grad)
            }
            _ => Err(BenchError::Invalid(
                "loss: softmax cross-entropy needs class targets, sigmoid losses binary ones"
                    .into(),
            )),
        }
    }
}

/// Softmax cross-entropy of class targets `c`, weighted by `class_weights`: the weighted mean
/// loss, and its gradient written into `grad` (zeros in, shaped as `logits`).
fn softmax_ce_value_and_grad(
    logits: ArrayView2<'_, f32>,
    class_weights: Option<&[f32]>,
    c: &[usize],
    mut grad: Array2<f32>,
) -> Result<(f64, Array2<f32>)> {
    let k = logits.ncols();
    if let Some(w) = class_weights {
        if w.len() != k {
            return Err(BenchError::Invalid(format!(
                "loss: {} class weights for {k} outputs",
                w.len()
            )));
        }
    }
    let weight = |c: usize| class_weights.map_or(1.0, |w| f64::from(w[c]));
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

/// Sigmoid losses of 0/1 targets `t`, one focal setting per column (or one for all): the loss
/// summed over columns and averaged over rows, and its gradient written into `grad`.
fn sigmoid_value_and_grad(
    logits: ArrayView2<'_, f32>,
    focal: &[Focal],
    t: &Array2<f32>,
    mut grad: Array2<f32>,
) -> Result<(f64, Array2<f32>)> {
    let (n, k) = logits.dim();
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
