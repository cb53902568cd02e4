//! Feature preparation fitted on training rows: standardisation, and the neural input encoding of Appendix D.2.
//!
//! [`Standardizer`] centres and scales columns with the training rows' mean and (population)
//! standard deviation; a constant column (std 0) keeps scale 1, so it maps to 0.
//!
//! The neural routers (DNN, TwoTower) read rows through [`D2Prep`] and [`D2Encoder`], following
//! the paper's Appendix D.2: the query's text embedding is projected to 64 dimensions by a
//! learned linear layer; each corpus indicator is discretised into 10 bins, each (indicator,
//! bin) has a learned 64-dim embedding, and the concatenated indicator embeddings are projected
//! to 64 dimensions; the remaining blocks (query-type one-hot, syntax features) are
//! standardised and appended. The encoded row is `[text 64 | corpus 64 | other]` (a part is
//! absent when the feature configuration has no such block).
//!
//! Choices the paper leaves open: bin edges are **equal-width between the training minimum and
//! maximum** of each indicator (values outside clamp to the first or last bin), not quantiles,
//! because an indicator takes one value per corpus and a training fold holds only a handful of
//! corpora, so quantile edges would collapse; the text embedding columns are standardised
//! before their projection (a linear map of standardised inputs is still a linear map of the
//! embedding, and it keeps the projection's scale comparable to the other inputs).

use bench_core::{FeatureKind, RoutingRow, RoutingSchema};
use ndarray::{s, Array2, ArrayView2, Axis};

use super::nn::{Init, Linear, Module, Param};
use crate::rng::SplitMix64;

/// Bins per corpus indicator (Appendix D.2).
pub const N_BINS: usize = 10;
/// Width of the text projection, of each indicator-bin embedding and of the corpus projection.
pub const D2_DIM: usize = 64;

/// Per-column standardisation fitted on training rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Standardizer {
    /// The feature columns it reads, in output order.
    pub cols: Vec<usize>,
    /// The training mean of each column.
    pub mean: Vec<f64>,
    /// The standard deviation, or 1 for a constant column.
    pub scale: Vec<f64>,
}

impl Standardizer {
    /// Fits the columns `cols` on `rows` (mean and population std; std 0 becomes 1).
    pub fn fit(rows: &[RoutingRow], cols: Vec<usize>) -> Self {
        let n = rows.len().max(1) as f64;
        let mean: Vec<f64> = cols
            .iter()
            .map(|&c| rows.iter().map(|r| r.features[c]).sum::<f64>() / n)
            .collect();
        let scale = cols
            .iter()
            .zip(&mean)
            .map(|(&c, m)| {
                let var = rows
                    .iter()
                    .map(|r| (r.features[c] - m).powi(2))
                    .sum::<f64>()
                    / n;
                let sd = var.sqrt();
                if sd > 1e-12 {
                    sd
                } else {
                    1.0
                }
            })
            .collect();
        Standardizer { cols, mean, scale }
    }

    /// Fits every column of the schema.
    pub fn fit_all(rows: &[RoutingRow], schema: &RoutingSchema) -> Self {
        Self::fit(rows, (0..schema.n_features()).collect())
    }

    /// Number of output columns.
    pub fn n_out(&self) -> usize {
        self.cols.len()
    }

    /// Writes the standardised columns of one row into `out` (length `n_out`).
    pub fn write(&self, features: &[f64], out: &mut [f32]) {
        for (k, &c) in self.cols.iter().enumerate() {
            out[k] = ((features[c] - self.mean[k]) / self.scale[k]) as f32;
        }
    }

    /// The standardised rows as an `n x n_out` matrix.
    pub fn matrix(&self, rows: &[RoutingRow]) -> Array2<f32> {
        let mut m = Array2::zeros((rows.len(), self.n_out()));
        for (r, mut out) in rows.iter().zip(m.rows_mut()) {
            self.write(&r.features, out.as_slice_mut().expect("contiguous row"));
        }
        m
    }
}

/// Equal-width bins between the training minimum and maximum of each indicator column.
#[derive(Debug, Clone, PartialEq)]
pub struct IndicatorBins {
    /// The indicator columns, in output order.
    pub cols: Vec<usize>,
    /// Training minimum per column.
    pub min: Vec<f64>,
    /// Training maximum per column.
    pub max: Vec<f64>,
}

impl IndicatorBins {
    /// Fits the bounds of columns `cols` on `rows`.
    pub fn fit(rows: &[RoutingRow], cols: Vec<usize>) -> Self {
        let min = cols
            .iter()
            .map(|&c| {
                rows.iter()
                    .map(|r| r.features[c])
                    .fold(f64::INFINITY, f64::min)
            })
            .collect();
        let max = cols
            .iter()
            .map(|&c| {
                rows.iter()
                    .map(|r| r.features[c])
                    .fold(f64::NEG_INFINITY, f64::max)
            })
            .collect();
        IndicatorBins { cols, min, max }
    }

    /// The bin (0..N_BINS) of value `v` of indicator `k`; a constant indicator is all bin 0.
    pub fn bin(&self, k: usize, v: f64) -> usize {
        let (lo, hi) = (self.min[k], self.max[k]);
        // Also catches NaN bounds (no training rows).
        if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
            return 0;
        }
        let b = ((v - lo) / (hi - lo) * N_BINS as f64).floor();
        if b.is_nan() || b < 0.0 {
            0
        } else {
            (b as usize).min(N_BINS - 1)
        }
    }
}

/// Column counts of a D.2 input matrix: `[text | indicator bin ids | other]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct D2Layout {
    /// Standardised text (query embedding) columns.
    pub n_text: usize,
    /// Corpus-indicator columns, as bin ids.
    pub n_ind: usize,
    /// Other standardised columns.
    pub n_other: usize,
}

impl D2Layout {
    /// Width of the input matrix.
    pub fn n_input(&self) -> usize {
        self.n_text + self.n_ind + self.n_other
    }

    /// Width of the encoded row: 64 for the text part, 64 for the corpus part, plus the others.
    pub fn n_encoded(&self) -> usize {
        usize::from(self.n_text > 0) * D2_DIM + usize::from(self.n_ind > 0) * D2_DIM + self.n_other
    }
}

/// The fitted, parameter-free half of the D.2 encoding: turns rows into the input matrix
/// `[standardised text | bin ids | standardised other blocks]` that [`D2Encoder`] reads.
#[derive(Debug, Clone, PartialEq)]
pub struct D2Prep {
    text: Standardizer,
    bins: IndicatorBins,
    other: Standardizer,
}

impl D2Prep {
    /// Finds the blocks by kind in `schema` and fits scalers and bin edges on `rows`.
    pub fn fit(rows: &[RoutingRow], schema: &RoutingSchema) -> Self {
        let cols_of = |keep: &dyn Fn(FeatureKind) -> bool| -> Vec<usize> {
            schema
                .blocks
                .iter()
                .filter(|b| keep(b.kind))
                .flat_map(|b| b.range())
                .collect()
        };
        let text = cols_of(&|k| k == FeatureKind::QueryEmbedding);
        let ind = cols_of(&|k| k == FeatureKind::CorpusIndicators);
        let other = cols_of(&|k| {
            !matches!(
                k,
                FeatureKind::QueryEmbedding | FeatureKind::CorpusIndicators
            )
        });
        D2Prep {
            text: Standardizer::fit(rows, text),
            bins: IndicatorBins::fit(rows, ind),
            other: Standardizer::fit(rows, other),
        }
    }

    /// The column counts of its input matrix.
    pub fn layout(&self) -> D2Layout {
        D2Layout {
            n_text: self.text.n_out(),
            n_ind: self.bins.cols.len(),
            n_other: self.other.n_out(),
        }
    }

    /// The input matrix of `rows` (bin ids stored as small exact f32 integers).
    pub fn matrix(&self, rows: &[RoutingRow]) -> Array2<f32> {
        let l = self.layout();
        let mut m = Array2::zeros((rows.len(), l.n_input()));
        for (r, mut out) in rows.iter().zip(m.rows_mut()) {
            let out = out.as_slice_mut().expect("contiguous row");
            self.text.write(&r.features, &mut out[..l.n_text]);
            for (k, &c) in self.bins.cols.iter().enumerate() {
                out[l.n_text + k] = self.bins.bin(k, r.features[c]) as f32;
            }
            self.other
                .write(&r.features, &mut out[l.n_text + l.n_ind..]);
        }
        m
    }
}

/// The learned half of the D.2 encoding, a [`Module`] over [`D2Prep::matrix`] rows.
///
/// The corpus projection of the concatenated embeddings, `b + sum_k e_k[bin_k] W_k` (`W_k` the
/// k-th 64-row slice of the projection), is computed through the 10 x 64 products `e_k[b] W_k`
/// per indicator rather than per row: the same function, a fraction of the work.
#[derive(Debug, Clone)]
pub struct D2Encoder {
    layout: D2Layout,
    text: Option<Linear>,
    /// `n_ind x N_BINS x D2_DIM` embeddings.
    emb: Param,
    /// `(n_ind * D2_DIM) x D2_DIM` projection and its bias.
    proj_w: Param,
    proj_b: Param,
    bins_cache: Vec<usize>,
}

impl D2Encoder {
    /// Seeded parameters: Xavier projections, N(0, 1) embeddings (as `torch.nn.Embedding`).
    pub fn new(layout: D2Layout, rng: &mut SplitMix64) -> Self {
        let text = (layout.n_text > 0)
            .then(|| Linear::new(layout.n_text, D2_DIM, true, Init::Xavier, rng));
        let emb = (0..layout.n_ind * N_BINS * D2_DIM)
            .map(|_| rng.normal() as f32)
            .collect();
        let fan_in = layout.n_ind * D2_DIM;
        let std = (2.0 / (fan_in + D2_DIM) as f64).sqrt();
        let proj = (0..fan_in * D2_DIM)
            .map(|_| (rng.normal() * std) as f32)
            .collect();
        D2Encoder {
            layout,
            text,
            emb: Param::new(emb, true),
            proj_w: Param::new(proj, true),
            proj_b: Param::new(vec![0.0; if layout.n_ind > 0 { D2_DIM } else { 0 }], false),
            bins_cache: Vec::new(),
        }
    }

    fn bins_of(&self, x: ArrayView2<'_, f32>) -> Vec<usize> {
        let l = self.layout;
        let mut out = Vec::with_capacity(x.nrows() * l.n_ind);
        for row in x.rows() {
            for k in 0..l.n_ind {
                out.push((row[l.n_text + k].max(0.0) as usize).min(N_BINS - 1));
            }
        }
        out
    }

    /// `e_k[b] W_k` for every indicator k and bin b: `n_ind x N_BINS x D2_DIM`, flat.
    fn bin_products(&self) -> Vec<f32> {
        let mut p = vec![0.0f32; self.layout.n_ind * N_BINS * D2_DIM];
        for k in 0..self.layout.n_ind {
            let w = &self.proj_w.value[k * D2_DIM * D2_DIM..(k + 1) * D2_DIM * D2_DIM];
            for b in 0..N_BINS {
                let e = &self.emb.value[(k * N_BINS + b) * D2_DIM..][..D2_DIM];
                let out = &mut p[(k * N_BINS + b) * D2_DIM..][..D2_DIM];
                for (i, &ei) in e.iter().enumerate() {
                    let wrow = &w[i * D2_DIM..][..D2_DIM];
                    out.iter_mut().zip(wrow).for_each(|(o, w)| *o += ei * w);
                }
            }
        }
        p
    }

    fn encode(
        &self,
        x: ArrayView2<'_, f32>,
        text: Option<Array2<f32>>,
        bins: &[usize],
    ) -> Array2<f32> {
        let l = self.layout;
        let n = x.nrows();
        let mut out = Array2::zeros((n, l.n_encoded()));
        let mut col = 0;
        if let Some(t) = text {
            out.slice_mut(s![.., ..D2_DIM]).assign(&t);
            col = D2_DIM;
        }
        if l.n_ind > 0 {
            let p = self.bin_products();
            for (r, mut row) in out.rows_mut().into_iter().enumerate() {
                let dst = &mut row.as_slice_mut().expect("contiguous row")[col..col + D2_DIM];
                dst.copy_from_slice(&self.proj_b.value);
                for k in 0..l.n_ind {
                    let b = bins[r * l.n_ind + k];
                    let src = &p[(k * N_BINS + b) * D2_DIM..][..D2_DIM];
                    dst.iter_mut().zip(src).for_each(|(d, s)| *d += s);
                }
            }
            col += D2_DIM;
        }
        if l.n_other > 0 {
            out.slice_mut(s![.., col..])
                .assign(&x.slice(s![.., l.n_text + l.n_ind..]));
        }
        out
    }
}

impl Module for D2Encoder {
    fn forward_train(&mut self, x: ArrayView2<'_, f32>) -> Array2<f32> {
        let l = self.layout;
        let text = self
            .text
            .as_mut()
            .map(|t| t.forward(x.slice(s![.., ..l.n_text])));
        let bins = self.bins_of(x);
        let out = self.encode(x, text, &bins);
        self.bins_cache = bins;
        out
    }

    fn infer(&self, x: ArrayView2<'_, f32>) -> Array2<f32> {
        let l = self.layout;
        let text = self
            .text
            .as_ref()
            .map(|t| t.apply(x.slice(s![.., ..l.n_text])));
        self.encode(x, text, &self.bins_of(x))
    }

    /// The encoder reads raw data: it returns no input gradient.
    fn backward(&mut self, dy: ArrayView2<'_, f32>) -> Option<Array2<f32>> {
        let l = self.layout;
        let mut col = 0;
        if let Some(t) = &mut self.text {
            t.backward(dy.slice(s![.., ..D2_DIM]), false);
            col = D2_DIM;
        }
        if l.n_ind > 0 {
            let g = dy.slice(s![.., col..col + D2_DIM]);
            // Upstream gradient summed per (indicator, bin).
            let mut gsum = vec![0.0f32; l.n_ind * N_BINS * D2_DIM];
            for (r, row) in g.axis_iter(Axis(0)).enumerate() {
                for (o, &v) in row.iter().enumerate() {
                    self.proj_b.grad[o] += v;
                }
                for k in 0..l.n_ind {
                    let b = self.bins_cache[r * l.n_ind + k];
                    let dst = &mut gsum[(k * N_BINS + b) * D2_DIM..][..D2_DIM];
                    dst.iter_mut().zip(row.iter()).for_each(|(d, v)| *d += v);
                }
            }
            for k in 0..l.n_ind {
                let wk = k * D2_DIM * D2_DIM;
                for b in 0..N_BINS {
                    let gk = &gsum[(k * N_BINS + b) * D2_DIM..][..D2_DIM];
                    if gk.iter().all(|&v| v == 0.0) {
                        continue;
                    }
                    let e0 = (k * N_BINS + b) * D2_DIM;
                    for i in 0..D2_DIM {
                        let ei = self.emb.value[e0 + i];
                        let wrow = &self.proj_w.value[wk + i * D2_DIM..][..D2_DIM];
                        // d e_k[b][i] = W_k[i, :] . G ; d W_k[i, :] += e_k[b][i] * G.
                        self.emb.grad[e0 + i] +=
                            wrow.iter().zip(gk).map(|(w, g)| w * g).sum::<f32>();
                        let grow = &mut self.proj_w.grad[wk + i * D2_DIM..][..D2_DIM];
                        grow.iter_mut().zip(gk).for_each(|(d, g)| *d += ei * g);
                    }
                }
            }
        }
        None
    }

    fn params_mut(&mut self) -> Vec<&mut Param> {
        let mut v = Vec::new();
        if let Some(t) = &mut self.text {
            v.extend(t.params_mut());
        }
        if self.layout.n_ind > 0 {
            v.push(&mut self.emb);
            v.push(&mut self.proj_w);
            v.push(&mut self.proj_b);
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use bench_core::{ParadigmId, QueryType, RoutingSet};

    fn set() -> RoutingSet {
        let schema = RoutingSchema::new(
            &[ParadigmId::Naive, ParadigmId::Graph],
            vec![
                (FeatureKind::QueryType, vec!["t0".into(), "t1".into()]),
                (
                    FeatureKind::QueryEmbedding,
                    vec!["e0".into(), "e1".into(), "e2".into()],
                ),
                (
                    FeatureKind::CorpusIndicators,
                    vec!["lcc".into(), "hub".into()],
                ),
            ],
        );
        let rows = (0..8)
            .map(|i| {
                let f = i as f64;
                RoutingRow {
                    query_id: format!("q{i}"),
                    corpus: "c".into(),
                    text: String::new(),
                    qtype: QueryType::Factual,
                    features: vec![f % 2.0, 1.0 - f % 2.0, f, -f, 0.5, 0.1 * f, 3.0],
                    label: i % 2,
                    outcomes: vec![None, None],
                }
            })
            .collect();
        RoutingSet {
            schema: Arc::new(schema),
            rows,
        }
    }

    #[test]
    fn standardizer_centres_scales_and_keeps_constants_finite() {
        let s = set();
        let st = Standardizer::fit_all(&s.rows, &s.schema);
        let m = st.matrix(&s.rows);
        for j in 0..m.ncols() {
            let col = m.column(j);
            let mean = col.sum() / 8.0;
            let var = col.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / 8.0;
            assert!(mean.abs() < 1e-6, "col {j} mean {mean}");
            if j == 4 || j == 6 {
                // Constant columns: scale 1, values 0.
                assert_eq!(st.scale[j], 1.0);
                assert!(col.iter().all(|&v| v == 0.0));
            } else {
                assert!((var - 1.0).abs() < 1e-5, "col {j} var {var}");
            }
        }
        // Golden: column 2 holds 0..7, mean 3.5, population std sqrt(5.25).
        assert!((st.mean[2] - 3.5).abs() < 1e-12 && (st.scale[2] - 5.25f64.sqrt()).abs() < 1e-12);
    }

    #[test]
    fn bins_are_equal_width_between_training_min_and_max() {
        let b = IndicatorBins {
            cols: vec![0, 1],
            min: vec![0.0, 2.0],
            max: vec![1.0, 2.0],
        };
        assert_eq!(b.bin(0, 0.0), 0);
        assert_eq!(b.bin(0, 0.09), 0);
        assert_eq!(b.bin(0, 0.1), 1);
        assert_eq!(b.bin(0, 0.55), 5);
        assert_eq!(b.bin(0, 1.0), 9);
        assert_eq!(b.bin(0, 7.0), 9);
        assert_eq!(b.bin(0, -3.0), 0);
        assert_eq!(b.bin(1, 2.0), 0, "a constant indicator has one bin");
        let s = set();
        let prep = D2Prep::fit(&s.rows, &s.schema);
        let l = prep.layout();
        assert_eq!((l.n_text, l.n_ind, l.n_other), (3, 2, 2));
        assert_eq!(l.n_encoded(), 64 + 64 + 2);
        let m = prep.matrix(&s.rows);
        // The first indicator runs 0 .. 0.7 over the rows: row i lands in bin floor(i * 10 / 7).
        for i in 0..8 {
            assert_eq!(m[[i, 3]] as usize, (i * 10 / 7).min(9), "row {i}");
            assert_eq!(m[[i, 4]], 0.0, "a constant indicator is all bin 0");
        }
    }

    #[test]
    fn encoder_gradients_match_finite_differences() {
        let s = set();
        let prep = D2Prep::fit(&s.rows, &s.schema);
        let x = prep.matrix(&s.rows);
        let mut rng = SplitMix64::new(4);
        let mut enc = D2Encoder::new(prep.layout(), &mut rng);
        let base = enc.clone();
        let out = enc.forward_train(x.view());
        assert_eq!(out.dim(), (8, 130));
        assert_eq!(out, base.infer(x.view()));
        // The "other" block passes through.
        assert_eq!(out.slice(s![.., 128..]), x.slice(s![.., 5..]));
        let c = super::super::nn::tests::rand_matrix(8, 130, 5);
        enc.backward(c.view());
        let value = |e: &D2Encoder| -> f64 {
            e.infer(x.view())
                .iter()
                .zip(&c)
                .map(|(a, b)| f64::from(*a) * f64::from(*b))
                .sum()
        };
        let grads: Vec<Vec<f32>> = enc.params_mut().iter().map(|p| p.grad.clone()).collect();
        // Parameters: text weight, text bias, embeddings, projection, projection bias.
        assert_eq!(grads.len(), 5);
        // An embedding of a bin in use (indicator 1, bin 0), one of an unused bin, projection.
        for (pi, i) in [
            (2usize, N_BINS * D2_DIM + 3),
            (2, 5 * D2_DIM + 1),
            (3, 70),
            (3, 64 * 64 + 9),
            (0, 4),
            (4, 2),
        ] {
            let f = |v: f32| {
                let mut e = base.clone();
                e.params_mut()[pi].value[i] = v;
                value(&e)
            };
            let at = base.clone().params_mut()[pi].value[i];
            let num = (f(at + 1e-2) - f(at - 1e-2)) / 2e-2;
            let a = f64::from(grads[pi][i]);
            assert!(
                (a - num).abs() <= 2e-2 * a.abs().max(num.abs()).max(1e-2),
                "param {pi}[{i}]: analytic {a} vs numeric {num}"
            );
        }
    }
}
