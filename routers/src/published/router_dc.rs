//! RouterDC (Chen et al., NeurIPS 2024): a query encoder and one learned embedding per candidate
//! are trained with a sample-to-candidate contrastive loss, and a query goes to the candidate
//! whose embedding is most similar to its own.
//!
//! Here the encoder is a learned linear map of the standardised features to [`DIM`]
//! dimensions (RouterDC fine-tunes mDeBERTa), similarity is the cosine over a temperature
//! [`TAU`], and the loss of a training question with at least one correct paradigm is
//! `-log(sum_{correct} e^{s_a} / sum_{all} e^{s_a})`: the correct paradigms are the positives,
//! the others the negatives (RouterDC takes its top-scored candidates as positives; with a
//! correct/incorrect outcome the correct ones are the top). Questions no paradigm answered carry
//! no signal and are left out. Full-batch Adam, [`EPOCHS`] epochs, seeded initialisation.
//! RouterDC's second, sample-to-sample contrastive loss (over query clusters) is not used.

use bench_core::{BenchError, Result, Router, RoutingRow, RoutingSchema, RoutingSet};
use ndarray::{Array1, Array2, Axis};

use crate::entry::{Family, RouterContext, RouterEntry};
use crate::models::prep::Standardizer;
use crate::models::products::TrainingMatrix;
use crate::models::{seed_for, ABSENT};
use crate::rng::SplitMix64;
use crate::seed_papers::outcome_of_class;

/// Width of the query and paradigm embeddings.
pub const DIM: usize = 32;
/// Temperature of the cosine similarities.
pub const TAU: f64 = 0.2;
/// Full-batch training epochs.
pub const EPOCHS: usize = 150;
/// Adam's learning rate.
pub const LR: f64 = 0.01;
/// L2 weight decay of the encoder.
pub const DECAY: f64 = 1e-3;

/// The registry entry.
pub fn entry() -> RouterEntry {
    RouterEntry {
        name: "router-dc",
        about: "RouterDC-style: query projection vs learned paradigm embeddings, contrastive loss, cosine/τ",
        family: Family::Published,
        needs_llm: false,
        sees_outcomes: false,
        lanes: &[],
        sweep: &[],
        make: |ctx: &RouterContext, _param| Ok(Box::new(RouterDc::new(seed_for(ctx.seed, "router-dc")))),
    }
}

/// The encoder, the paradigm embeddings and which paradigms had training tuples.
#[derive(Debug)]
pub struct RouterDc {
    seed: u64,
    fitted: Option<Fitted>,
}

#[derive(Debug)]
struct Fitted {
    st: Standardizer,
    /// DIM x (features + 1).
    w: Array2<f64>,
    /// Classes x DIM.
    k: Array2<f64>,
    present: Vec<bool>,
}

impl RouterDc {
    /// An unfitted router seeded by `seed`.
    pub fn new(seed: u64) -> Self {
        RouterDc { seed, fitted: None }
    }
}

/// The standardised features and a bias column of ones (float32: each value exact).
fn with_bias32(st: &Standardizer, rows: &[RoutingRow]) -> Array2<f32> {
    let x = st.matrix(rows);
    let ones = Array2::ones((rows.len(), 1));
    ndarray::concatenate(Axis(1), &[x.view(), ones.view()]).expect("same rows")
}

fn with_bias(st: &Standardizer, rows: &[RoutingRow]) -> Array2<f64> {
    with_bias32(st, rows).mapv(f64::from)
}

/// Row-normalised copy and the norms.
fn normalise(m: &Array2<f64>) -> (Array2<f64>, Array1<f64>) {
    let norms = m.map_axis(Axis(1), |r| r.dot(&r).sqrt().max(1e-12));
    let mut out = m.clone();
    for (mut r, &n) in out.rows_mut().into_iter().zip(&norms) {
        r /= n;
    }
    (out, norms)
}

/// Gradient through row normalisation: for u = v / |v|, dL/dv = (g - (g . u) u) / |v|.
fn through_norm(g: &Array2<f64>, u: &Array2<f64>, norms: &Array1<f64>) -> Array2<f64> {
    let mut out = g.clone();
    for ((mut o, ur), &n) in out.rows_mut().into_iter().zip(u.rows()).zip(norms) {
        let gu = o.dot(&ur);
        o.scaled_add(-gu, &ur);
        o /= n;
    }
    out
}

struct Adam {
    m: Array2<f64>,
    v: Array2<f64>,
}

impl Adam {
    fn new(shape: (usize, usize)) -> Self {
        Adam {
            m: Array2::zeros(shape),
            v: Array2::zeros(shape),
        }
    }

    fn step(&mut self, p: &mut Array2<f64>, g: &Array2<f64>, t: i32) {
        let (b1, b2) = (0.9, 0.999);
        self.m
            .zip_mut_with(g, |m, &g| *m = b1 * *m + (1.0 - b1) * g);
        self.v
            .zip_mut_with(g, |v, &g| *v = b2 * *v + (1.0 - b2) * g * g);
        let (c1, c2) = (1.0 - b1.powi(t), 1.0 - b2.powi(t));
        ndarray::Zip::from(p)
            .and(&self.m)
            .and(&self.v)
            .for_each(|p, &m, &v| *p -= LR * (m / c1) / ((v / c2).sqrt() + 1e-8));
    }
}

impl Router for RouterDc {
    fn name(&self) -> &str {
        "router-dc"
    }

    fn fit(&mut self, train: &RoutingSet) -> Result<()> {
        let k = train.schema.n_classes() - 1;
        let present: Vec<bool> = (0..k)
            .map(|c| train.rows.iter().any(|r| outcome_of_class(r, c).is_some()))
            .collect();
        let rows: Vec<RoutingRow> = train
            .rows
            .iter()
            .filter(|r| (0..k).any(|c| outcome_of_class(r, c).is_some_and(|o| o.correct)))
            .cloned()
            .collect();
        if rows.is_empty() {
            return Err(BenchError::Invalid(
                "router router-dc: no training question has a correct paradigm".into(),
            ));
        }
        let st = Standardizer::fit_all(&train.rows, &train.schema);
        // Kept once for the two products of every epoch (float32, as the standardised features
        // and the bias are: the products are ndarray's bit for bit, without its copy of `x`
        // per call; see `models::products`).
        let x32 = with_bias32(&st, &rows);
        let d = x32.ncols();
        let x = TrainingMatrix::new(x32);
        let pos: Array2<f64> = Array2::from_shape_fn((rows.len(), k), |(i, c)| {
            f64::from(u8::from(
                outcome_of_class(&rows[i], c).is_some_and(|o| o.correct),
            ))
        });
        let mut rng = SplitMix64::new(self.seed);
        let mut w = Array2::from_shape_fn((DIM, d), |_| rng.normal() / (d as f64).sqrt());
        let mut kk = Array2::from_shape_fn((k, DIM), |_| rng.normal());
        let (mut aw, mut ak) = (Adam::new(w.dim()), Adam::new(kk.dim()));
        let n = rows.len() as f64;
        for epoch in 1..=EPOCHS {
            let q = x.xw(&w.t());
            let (qn, qnorm) = normalise(&q);
            let (kn, knorm) = normalise(&kk);
            let mut s = qn.dot(&kn.t()) / TAU;
            for (c, &p) in present.iter().enumerate() {
                if !p {
                    s.column_mut(c).fill(-1e9);
                }
            }
            // dL/ds = softmax over all - softmax over the positives, per row, / n.
            let mut ds = Array2::zeros(s.raw_dim());
            for ((srow, prow), mut drow) in s.rows().into_iter().zip(pos.rows()).zip(ds.rows_mut())
            {
                let max = srow.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let e: Vec<f64> = srow.iter().map(|v| (v - max).exp()).collect();
                let z: f64 = e.iter().sum();
                let zp: f64 = e.iter().zip(prow).map(|(e, p)| e * p).sum();
                for c in 0..k {
                    drow[c] = (e[c] / z - prow[c] * e[c] / zp) / n;
                }
            }
            let g_qn = ds.dot(&kn) / TAU;
            let g_kn = ds.t().dot(&qn) / TAU;
            let g_q = through_norm(&g_qn, &qn, &qnorm);
            let g_k = through_norm(&g_kn, &kn, &knorm);
            // `g_q^T x`, as `(x^T g_q)^T`.
            let mut g_w = x.xtd(&g_q.view()).reversed_axes();
            g_w.scaled_add(DECAY, &w);
            aw.step(&mut w, &g_w, epoch as i32);
            ak.step(&mut kk, &g_k, epoch as i32);
        }
        self.fitted = Some(Fitted {
            st,
            w,
            k: kk,
            present,
        });
        Ok(())
    }

    fn scores(&self, schema: &RoutingSchema, row: &RoutingRow) -> Result<Vec<f64>> {
        bench_core::routing::scores_via_batch(self, schema, row)
    }

    fn scores_batch(&self, schema: &RoutingSchema, rows: &[RoutingRow]) -> Result<Vec<Vec<f64>>> {
        let f = self.fitted.as_ref().ok_or_else(|| {
            BenchError::Invalid("router router-dc: scores asked before fit".into())
        })?;
        if f.present.len() + 1 != schema.n_classes() {
            return Err(BenchError::Invalid(format!(
                "router router-dc: fitted on {} classes, asked to score {}",
                f.present.len() + 1,
                schema.n_classes()
            )));
        }
        if let Some(r) = rows.iter().find(|r| r.features.len() != f.st.mean.len()) {
            return Err(BenchError::Invalid(format!(
                "router router-dc: row {} has {} features, the training rows had {}",
                r.query_id,
                r.features.len(),
                f.st.mean.len()
            )));
        }
        let q = with_bias(&f.st, rows).dot(&f.w.t());
        let (qn, _) = normalise(&q);
        let (kn, _) = normalise(&f.k);
        let s = qn.dot(&kn.t());
        Ok(s.rows()
            .into_iter()
            .map(|r| {
                let mut v: Vec<f64> = r
                    .iter()
                    .zip(&f.present)
                    .map(|(&v, &p)| if p { v } else { ABSENT })
                    .collect();
                v.push(ABSENT - 1.0);
                v
            })
            .collect())
    }
}
