//! The kNN pass's candidate screen: low-precision Gram products with a certified error bound per
//! row pair, so `knn` can prove each row's float64 neighbours were all among its candidates.

use rayon::prelude::*;

use super::bf16::{bf16_simd, Bf16Rows, MR};
use super::rows::{gram_block, UnitRows};

/// Rows per Gram block: a 512 x 512 float32 block (1 MiB) stays in L2 while it is scanned.
pub(super) const BLOCK: usize = 512;

/// Rows screened again per task when their first candidates could not be certified.
const RETRY_ROWS: usize = 64;

/// The Gram products that screen candidates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScreenKernel {
    /// Rows in bfloat16, products on AVX-512 BF16 (`vdpbf16ps`): twice float32's rate.
    Bf16Avx512,
    /// The same bfloat16 arithmetic in plain float32 code (tests; slow).
    Bf16Scalar,
    /// Rows in float32, products through gemm.
    F32Gemm,
}

impl ScreenKernel {
    /// The fastest kernel this CPU runs: bfloat16 where it has AVX-512 BF16, else float32 gemm.
    pub fn best() -> Self {
        if bf16_simd() {
            ScreenKernel::Bf16Avx512
        } else {
            ScreenKernel::F32Gemm
        }
    }

    /// Its name in perf lines.
    pub fn name(self) -> &'static str {
        match self {
            ScreenKernel::Bf16Avx512 => "bf16 (avx512_bf16)",
            ScreenKernel::Bf16Scalar => "bf16 (scalar)",
            ScreenKernel::F32Gemm => "f32 (gemm)",
        }
    }

    /// Multiply-adds per cycle relative to float32 FMA: what a screen's GFLOP/s is worth
    /// against the float32 peak.
    pub fn rate_over_f32(self) -> f64 {
        match self {
            ScreenKernel::Bf16Avx512 => 2.0,
            ScreenKernel::Bf16Scalar | ScreenKernel::F32Gemm => 1.0,
        }
    }
}

/// The rows in the screen's precision, and each row's share of the error bound.
pub(super) struct Screen<'a> {
    rows: &'a UnitRows,
    kernel: ScreenKernel,
    bf: Option<Bf16Rows>,
    /// The rows in float32 (the float32 screen's; empty for bfloat16).
    f32: Vec<f32>,
    /// Rows the Gram products run over (padded for the bfloat16 kernel).
    pub padded: usize,
    /// `|x_i . x_j - s_ij| <= delta[i] + delta[j]` for the screen's product `s_ij` and the
    /// float64 unit rows `x`.
    pub delta: Vec<f64>,
    /// The largest `delta`.
    pub delta_max: f64,
    /// Each float64 row's norm, as `|x_i|` is computed (a sum of squares in entry order).
    pub norms: Vec<f64>,
}

impl<'a> Screen<'a> {
    /// Rounds the rows for `kernel` and bounds the error.
    ///
    /// With `q_i` the rounded row and `e_i = |x_i - q_i|`:
    /// `x_i . x_j - q_i . q_j = (x_i - q_i) . x_j + q_i . (x_j - q_j)`, at most
    /// `e_i |x_j| + |q_i| e_j`; the float32 sums of the kernels (at most two roundings per entry,
    /// in any order) add at most `gamma |q_i| |q_j|` with `gamma = m u / (1 - m u)`,
    /// `m = 2 (dim + 2)`, `u = 2^-24`. Split as `delta_i = e_i max(X, Q) + gamma Q^2 / 2` with
    /// `X`, `Q` the largest norms, and rounded up.
    pub fn new(rows: &'a UnitRows, kernel: ScreenKernel) -> Self {
        let kernel = match kernel {
            ScreenKernel::Bf16Avx512 if !bf16_simd() => ScreenKernel::Bf16Scalar,
            other => other,
        };
        let (bf, f32, err, qnorm) = match kernel {
            ScreenKernel::F32Gemm => {
                let dim = rows.dim;
                let mut f32 = vec![0f32; rows.rows * dim];
                let (err, qnorm): (Vec<f64>, Vec<f64>) = f32
                    .par_chunks_mut(dim.max(1))
                    .enumerate()
                    .map(|(i, out)| {
                        let (mut e2, mut q2) = (0.0f64, 0.0f64);
                        for (&x, o) in rows.row64(i).iter().zip(out) {
                            *o = x as f32;
                            let q = f64::from(*o);
                            e2 += (x - q) * (x - q);
                            q2 += q * q;
                        }
                        (e2.sqrt(), q2.sqrt())
                    })
                    .unzip();
                (None, f32, err, qnorm)
            }
            _ => {
                let mut bf = Bf16Rows::new(rows);
                let (err, qnorm) = (std::mem::take(&mut bf.err), std::mem::take(&mut bf.norm));
                (Some(bf), Vec::new(), err, qnorm)
            }
        };
        let norms: Vec<f64> = (0..rows.rows)
            .into_par_iter()
            .map(|i| rows.row64(i).iter().map(|x| x * x).sum::<f64>().sqrt())
            .collect();
        let xmax = norms.iter().copied().fold(0.0, f64::max);
        let qmax = qnorm.iter().copied().fold(0.0, f64::max);
        let m = 2.0 * (rows.dim as f64 + 2.0);
        let u = 2f64.powi(-24);
        let gamma = m * u / (1.0 - m * u);
        // The bound's own float64 arithmetic is ~1e-16 relative: 1e-9 more and a tiny floor
        // for flushed subnormal products cover it.
        let scale = 1.0 + 1e-9;
        let wide = xmax.max(qmax) * scale;
        let shared = 0.5 * gamma * qmax * qmax * scale + 1e-30;
        let delta: Vec<f64> = err.iter().map(|e| e * wide + shared).collect();
        let delta_max = delta.iter().copied().fold(0.0, f64::max);
        let padded = bf.as_ref().map_or(rows.rows, |b| b.padded);
        Screen {
            rows,
            kernel,
            bf,
            f32,
            padded,
            norms,
            delta,
            delta_max,
        }
    }

    /// The kernel in use (`Bf16Avx512` asked on a CPU without it runs `Bf16Scalar`).
    pub fn kernel(&self) -> ScreenKernel {
        self.kernel
    }

    /// Block `b`'s rows: `(start, end)` within the padded rows.
    pub fn span(&self, b: usize) -> (usize, usize) {
        (b * BLOCK, ((b + 1) * BLOCK).min(self.padded))
    }

    /// Products of rows `i0..i1` with rows `j0..j1` (padded spans from [`Screen::span`]) into
    /// `out`, row stride `j1 - j0`.
    pub fn gram_span(&self, (i0, i1): (usize, usize), (j0, j1): (usize, usize), out: &mut [f32]) {
        match &self.bf {
            Some(bf) => bf.gram(
                &bf.words[i0 * bf.pairs..i1 * bf.pairs],
                j0..j1,
                out,
                j1 - j0,
                self.kernel == ScreenKernel::Bf16Avx512,
            ),
            None => {
                let (f, dim) = (&self.f32, self.rows.dim);
                gram_block(&f[i0 * dim..i1 * dim], &f[j0 * dim..j1 * dim], dim, out);
            }
        }
    }

    /// Every row `j != i` whose true product with row `i` may reach `threshold[r]`, for each
    /// `i = ids[r]`: those with `s_ij + delta_i + delta_j >= threshold`. A complete candidate set
    /// for whatever needs only rows at or above the threshold.
    pub fn above(&self, ids: &[u32], threshold: &[f64]) -> Vec<Vec<u32>> {
        let n = self.rows.rows;
        let dim = self.rows.dim;
        let blocks = self.padded.div_ceil(BLOCK);
        let chunks: Vec<Vec<Vec<u32>>> = ids
            .par_chunks(RETRY_ROWS)
            .zip(threshold.par_chunks(RETRY_ROWS))
            .map(|(ids, threshold)| {
                let mut found = vec![Vec::new(); ids.len()];
                let a_rows = ids.len().div_ceil(MR) * MR;
                let mut gram = vec![0f32; a_rows * BLOCK];
                let words;
                let floats;
                let lhs = match &self.bf {
                    Some(bf) => {
                        let mut w = vec![0u32; a_rows * bf.pairs];
                        for (r, &i) in ids.iter().enumerate() {
                            let i = i as usize;
                            w[r * bf.pairs..(r + 1) * bf.pairs]
                                .copy_from_slice(&bf.words[i * bf.pairs..(i + 1) * bf.pairs]);
                        }
                        words = w;
                        Lhs::Words(&words)
                    }
                    None => {
                        let mut f = Vec::with_capacity(ids.len() * dim);
                        for &i in ids {
                            let i = i as usize;
                            f.extend_from_slice(&self.f32[i * dim..(i + 1) * dim]);
                        }
                        floats = f;
                        Lhs::Floats(&floats)
                    }
                };
                for b in 0..blocks {
                    let (j0, j1) = self.span(b);
                    let w = j1 - j0;
                    match (lhs, &self.bf) {
                        (Lhs::Words(a), Some(bf)) => bf.gram(
                            a,
                            j0..j1,
                            &mut gram,
                            w,
                            self.kernel == ScreenKernel::Bf16Avx512,
                        ),
                        (Lhs::Floats(a), _) => {
                            gram_block(a, &self.f32[j0 * dim..j1 * dim], dim, &mut gram)
                        }
                        (Lhs::Words(_), None) => unreachable!("words come from bfloat16 rows"),
                    }
                    for (r, (&i, &t)) in ids.iter().zip(threshold).enumerate() {
                        let i = i as usize;
                        let t = t - self.delta[i];
                        let line = &gram[r * w..r * w + (j1.min(n) - j0)];
                        for (j, &s) in (j0..).zip(line) {
                            if j != i && f64::from(s) + self.delta[j] >= t {
                                found[r].push(j as u32);
                            }
                        }
                    }
                }
                found
            })
            .collect();
        chunks.into_iter().flatten().collect()
    }
}

/// The left-hand rows of a re-screen, in the screen's precision.
#[derive(Clone, Copy)]
enum Lhs<'a> {
    Words(&'a [u32]),
    Floats(&'a [f32]),
}
