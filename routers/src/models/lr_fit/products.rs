//! The two products of [`super`]'s fit on x86-64 with AVX2 and FMA, in matrixmultiply's order of operations.
//!
//! `X . W` runs from panels of [`PANEL`] rows packed once per fit, `X^T . D` from the rows as
//! stored; both keep `X` in float32 (each value is the float64 it came from, widened exactly
//! in the kernel, so the arithmetic is unchanged and half the memory streams). Every output
//! entry is one fused multiply-add chain from zero over each [`KC`]-long stretch of the shared
//! dimension, the stretches added in order: matrixmultiply's dgemm on such a CPU.

use std::sync::OnceLock;

use ndarray::{Array2, ArrayView2};
use pulp::x86::V3;
use pulp::{f32x4, f64x4};

/// Rows per packed panel of `X` (matrixmultiply's dgemm kernel height).
const PANEL: usize = 8;
/// Length of the shared dimension's stretches over which one chain runs (matrixmultiply's
/// `D_KC`, 256 unless its build sets `MATMUL_DGEMM_KC`; the self-check would then fail and
/// ndarray's products run).
const KC: usize = 256;

/// `X` in panels of [`PANEL`] rows, each panel feature by feature.
pub(super) fn pack(x: &ArrayView2<'_, f32>) -> Vec<f32> {
    let (m, nf) = x.dim();
    let panels = m.div_ceil(PANEL);
    let mut out = vec![0.0; panels * PANEL * nf];
    for (i, row) in x.rows().into_iter().enumerate() {
        let base = (i / PANEL) * PANEL * nf + i % PANEL;
        for (k, &v) in row.iter().enumerate() {
            out[base + k * PANEL] = v;
        }
    }
    out
}

/// `X W` from the panels (`m` rows): per entry a fused chain over each stretch of [`KC`]
/// features from zero, stretches added in order.
pub(super) fn xw_packed(v3: V3, panels: &[f32], m: usize, w: &ArrayView2<'_, f64>) -> Array2<f64> {
    let (nf, nc) = w.dim();
    let w: Vec<f64> = w.iter().copied().collect();
    let mut out = Array2::zeros((m, nc));
    let k = |w, out| xw_kernel(v3, panels, m, nf, w, out);
    // Accumulators in registers: one function per class count, two panels at a time where
    // the registers allow (more than 7 classes: one class at a time, the same arithmetic).
    let o = out.as_slice_mut().expect("a standard layout");
    match nc {
        1 => pulp::Simd::vectorize(v3, Xw::<1, 2>(k(&w, o))),
        2 => pulp::Simd::vectorize(v3, Xw::<2, 2>(k(&w, o))),
        3 => pulp::Simd::vectorize(v3, Xw::<3, 2>(k(&w, o))),
        4 => pulp::Simd::vectorize(v3, Xw::<4, 1>(k(&w, o))),
        5 => pulp::Simd::vectorize(v3, Xw::<5, 1>(k(&w, o))),
        6 => pulp::Simd::vectorize(v3, Xw::<6, 1>(k(&w, o))),
        7 => pulp::Simd::vectorize(v3, Xw::<7, 1>(k(&w, o))),
        _ => {
            for j in 0..nc {
                let col: Vec<f64> = (0..nf).map(|f| w[f * nc + j]).collect();
                let mut one = vec![0.0; m];
                pulp::Simd::vectorize(v3, Xw::<1, 2>(xw_kernel(v3, panels, m, nf, &col, &mut one)));
                for (i, v) in one.into_iter().enumerate() {
                    out[(i, j)] = v;
                }
            }
        }
    }
    out
}

struct XwKernel<'a> {
    v3: V3,
    panels: &'a [f32],
    m: usize,
    nf: usize,
    /// `W` row-major, `NC` columns.
    w: &'a [f64],
    out: &'a mut [f64],
}

fn xw_kernel<'a>(
    v3: V3,
    panels: &'a [f32],
    m: usize,
    nf: usize,
    w: &'a [f64],
    out: &'a mut [f64],
) -> XwKernel<'a> {
    XwKernel {
        v3,
        panels,
        m,
        nf,
        w,
        out,
    }
}

/// [`XwKernel`] for `NC` classes, `P` panels at a time.
struct Xw<'a, const NC: usize, const P: usize>(XwKernel<'a>);

impl<const NC: usize, const P: usize> pulp::WithSimd for Xw<'_, NC, P> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        let XwKernel {
            v3,
            panels,
            m,
            nf,
            w,
            out,
        } = self.0;
        let size = PANEL * nf;
        let count = panels.len() / size;
        let mut p0 = 0;
        while p0 < count {
            if p0 + P <= count {
                xw_panels::<NC, P>(v3, &panels[p0 * size..(p0 + P) * size], p0, m, nf, w, out);
                p0 += P;
            } else {
                xw_panels::<NC, 1>(v3, &panels[p0 * size..(p0 + 1) * size], p0, m, nf, w, out);
                p0 += 1;
            }
        }
    }
}

/// Panels `p0..p0 + P` of `X W` (two vectors of four rows per panel).
#[inline(always)]
fn xw_panels<const NC: usize, const P: usize>(
    v3: V3,
    panels: &[f32],
    p0: usize,
    m: usize,
    nf: usize,
    w: &[f64],
    out: &mut [f64],
) {
    let zero = v3.splat_f64x4(0.0);
    let size = PANEL * nf;
    for k0 in (0..nf).step_by(KC) {
        let mut acc = [[[zero; 2]; P]; NC];
        for k in k0..(k0 + KC).min(nf) {
            let mut a = [[zero; 2]; P];
            for (q, aq) in a.iter_mut().enumerate() {
                let x = &panels[q * size + k * PANEL..q * size + (k + 1) * PANEL];
                aq[0] = v3.convert_f32x4_to_f64x4(f32x4(x[0], x[1], x[2], x[3]));
                aq[1] = v3.convert_f32x4_to_f64x4(f32x4(x[4], x[5], x[6], x[7]));
            }
            let wk = &w[k * NC..(k + 1) * NC];
            for j in 0..NC {
                let b = v3.splat_f64x4(wk[j]);
                for q in 0..P {
                    acc[j][q][0] = v3.mul_add_f64x4(a[q][0], b, acc[j][q][0]);
                    acc[j][q][1] = v3.mul_add_f64x4(a[q][1], b, acc[j][q][1]);
                }
            }
        }
        for (j, per_class) in acc.iter().enumerate() {
            for (q, pair) in per_class.iter().enumerate() {
                let lanes: &[f64] = pulp::bytemuck::cast_slice(&pair[..]);
                for (l, &v) in lanes.iter().enumerate() {
                    let i = (p0 + q) * PANEL + l;
                    if i < m {
                        let o = &mut out[i * NC + j];
                        // The first stretch is stored as `ab + 0` (matrixmultiply's `alpha ab
                        // + 0` with alpha 1), later ones added.
                        *o = if k0 == 0 { v + 0.0 } else { *o + v };
                    }
                }
            }
        }
    }
}

/// `X^T D` from the rows of `X`: per entry a fused chain over each stretch of [`KC`] rows from
/// zero, stretches added in order.
pub(super) fn xtd_rows(v3: V3, x: &ArrayView2<'_, f32>, d: &ArrayView2<'_, f64>) -> Array2<f64> {
    let (m, nf) = x.dim();
    let nc = d.ncols();
    let mut out = Array2::zeros((nf, nc));
    let x = x.as_slice().expect("a standard layout");
    let d: Vec<f64> = d.iter().copied().collect();
    let k = |d, out| xtd_kernel(v3, x, m, nf, d, out);
    // Tiles of `T` vectors of features per class: `NC x T` accumulators in registers.
    let o = out.as_slice_mut().expect("a standard layout");
    match nc {
        1 => pulp::Simd::vectorize(v3, Xtd::<1, 8>(k(&d, o))),
        2 => pulp::Simd::vectorize(v3, Xtd::<2, 6>(k(&d, o))),
        3 => pulp::Simd::vectorize(v3, Xtd::<3, 4>(k(&d, o))),
        4 => pulp::Simd::vectorize(v3, Xtd::<4, 3>(k(&d, o))),
        5 => pulp::Simd::vectorize(v3, Xtd::<5, 2>(k(&d, o))),
        6 => pulp::Simd::vectorize(v3, Xtd::<6, 2>(k(&d, o))),
        7 => pulp::Simd::vectorize(v3, Xtd::<7, 2>(k(&d, o))),
        _ => {
            for j in 0..nc {
                let col: Vec<f64> = (0..m).map(|i| d[i * nc + j]).collect();
                let mut one = vec![0.0; nf];
                pulp::Simd::vectorize(v3, Xtd::<1, 8>(xtd_kernel(v3, x, m, nf, &col, &mut one)));
                for (f, v) in one.into_iter().enumerate() {
                    out[(f, j)] = v;
                }
            }
        }
    }
    out
}

struct XtdKernel<'a> {
    v3: V3,
    x: &'a [f32],
    /// `D` row-major, `NC` columns.
    d: &'a [f64],
    m: usize,
    nf: usize,
    out: &'a mut [f64],
}

/// Rows of `X^T D` read together by every tile of features ([`Xtd`]).
const SUB: usize = 32;

/// Features `4 v0..4 (v0 + T)` of `X^T D` over `rows`, continuing the chains kept in `acc`
/// (class `j`'s vector `v` at `j * vectors + v`).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn xtd_tile<const NC: usize, const T: usize>(
    v3: V3,
    x: &[f32],
    d: &[f64],
    rows: std::ops::Range<usize>,
    nf: usize,
    v0: usize,
    vectors: usize,
    acc: &mut [f64x4],
) {
    let mut a: [[f64x4; T]; NC] =
        std::array::from_fn(|j| std::array::from_fn(|t| acc[j * vectors + v0 + t]));
    for i in rows {
        let r = &x[i * nf + v0 * 4..i * nf + (v0 + T) * 4];
        let row: [f64x4; T] = std::array::from_fn(|t| {
            v3.convert_f32x4_to_f64x4(f32x4(r[4 * t], r[4 * t + 1], r[4 * t + 2], r[4 * t + 3]))
        });
        let di = &d[i * NC..(i + 1) * NC];
        for j in 0..NC {
            let b = v3.splat_f64x4(di[j]);
            for t in 0..T {
                a[j][t] = v3.mul_add_f64x4(row[t], b, a[j][t]);
            }
        }
    }
    for j in 0..NC {
        for t in 0..T {
            acc[j * vectors + v0 + t] = a[j][t];
        }
    }
}

fn xtd_kernel<'a>(
    v3: V3,
    x: &'a [f32],
    m: usize,
    nf: usize,
    d: &'a [f64],
    out: &'a mut [f64],
) -> XtdKernel<'a> {
    XtdKernel {
        v3,
        x,
        d,
        m,
        nf,
        out,
    }
}

/// [`XtdKernel`] for `NC` classes in tiles of `T` vectors of four features.
struct Xtd<'a, const NC: usize, const T: usize>(XtdKernel<'a>);

impl<const NC: usize, const T: usize> pulp::WithSimd for Xtd<'_, NC, T> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        let XtdKernel {
            v3,
            x,
            d,
            m,
            nf,
            out,
        } = self.0;
        let vectors = nf / 4;
        let mut store = |f: usize, j: usize, v: f64, first: bool| {
            let o = &mut out[f * NC + j];
            *o = if first { v + 0.0 } else { *o + v };
        };
        let mut acc = vec![v3.splat_f64x4(0.0); NC * vectors];
        for i0 in (0..m).step_by(KC) {
            let rows = i0..(i0 + KC).min(m);
            let first = i0 == 0;
            acc.fill(v3.splat_f64x4(0.0));
            // A few rows at a time (they stay in L1 while every tile of features reads them;
            // the tiles' accumulators wait in `acc` in between): whole tiles, then single
            // vectors, then the features past the last vector.
            for r0 in rows.clone().step_by(SUB) {
                let sub = r0..(r0 + SUB).min(rows.end);
                let mut v0 = 0;
                while v0 + T <= vectors {
                    xtd_tile::<NC, T>(v3, x, d, sub.clone(), nf, v0, vectors, &mut acc);
                    v0 += T;
                }
                while v0 < vectors {
                    xtd_tile::<NC, 1>(v3, x, d, sub.clone(), nf, v0, vectors, &mut acc);
                    v0 += 1;
                }
            }
            for j in 0..NC {
                let vals: &[f64] = pulp::bytemuck::cast_slice(&acc[j * vectors..(j + 1) * vectors]);
                for (f, &v) in vals.iter().enumerate() {
                    store(f, j, v, first);
                }
            }
            for f in vectors * 4..nf {
                for j in 0..NC {
                    let mut acc = 0.0f64;
                    for i in rows.clone() {
                        acc = f64::from(x[i * nf + f]).mul_add(d[i * NC + j], acc);
                    }
                    store(f, j, acc, first);
                }
            }
        }
    }
}

/// This CPU's AVX2 and FMA, where the products above are ndarray's bit for bit (checked once,
/// on a matrix crossing the panel and stretch borders).
pub(super) fn fast_products() -> Option<V3> {
    static FAST: OnceLock<Option<V3>> = OnceLock::new();
    *FAST.get_or_init(|| {
        let v3 = V3::try_new()?;
        let (m, nf, nc) = (2 * KC + 13, KC + 45, 3);
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            ((state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        };
        let x = Array2::from_shape_fn((m, nf), |_| next() as f32);
        let w = Array2::from_shape_fn((nf, nc), |_| next());
        let d = Array2::from_shape_fn((m, nc), |_| next());
        let x64 = x.mapv(f64::from);
        let same = xw_packed(v3, &pack(&x.view()), m, &w.view()) == x64.dot(&w)
            && xtd_rows(v3, &x.view(), &d.view()) == x64.t().dot(&d);
        same.then_some(v3)
    })
}
