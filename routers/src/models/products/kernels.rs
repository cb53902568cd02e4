//! The x86-64 kernels behind `Rows`: AVX2 and FMA through pulp, accumulators in registers by tiles of columns.

use std::sync::OnceLock;

use ndarray::{Array2, ArrayView2};
use pulp::x86::V3;
use pulp::{f32x4, f64x4};
use rayon::prelude::*;

/// Rows per packed panel of `X` (matrixmultiply's dgemm kernel height).
const PANEL: usize = 8;
/// Length of the shared dimension's stretches over which one chain runs (matrixmultiply's
/// `D_KC`, 256 unless its build sets `MATMUL_DGEMM_KC`; the self-check would then fail).
const KC: usize = 256;

/// `a`'s entries row by row: borrowed when it is laid out so (router-dc's 80,000 x 32 factor
/// would otherwise be copied every epoch).
fn row_major<'a>(a: &'a ArrayView2<'_, f64>) -> std::borrow::Cow<'a, [f64]> {
    match a.as_slice() {
        Some(s) => std::borrow::Cow::Borrowed(s),
        None => std::borrow::Cow::Owned(a.iter().copied().collect()),
    }
}

/// `X` in panels of [`PANEL`] rows, each panel feature by feature (zero rows pad the last).
pub(super) fn pack(x: &ArrayView2<'_, f32>) -> Vec<f32> {
    let (m, nf) = x.dim();
    let mut out = vec![0.0; m.div_ceil(PANEL) * PANEL * nf];
    for (i, row) in x.rows().into_iter().enumerate() {
        let base = (i / PANEL) * PANEL * nf + i % PANEL;
        for (k, &v) in row.iter().enumerate() {
            out[base + k * PANEL] = v;
        }
    }
    out
}

/// The output columns in tiles whose accumulators fit the sixteen registers with the operands:
/// one tile up to `max`, else as few tiles of at most `wide` as cover them, of sizes as even
/// as can be (a narrow last tile would leave too few chains to hide the FMA latency).
fn tiles(n: usize, max: usize, wide: usize) -> Vec<(usize, usize)> {
    if n <= max {
        return vec![(0, n)];
    }
    let count = n.div_ceil(wide);
    let mut c0 = 0;
    (0..count)
        .map(|t| {
            let size = n / count + usize::from(t < n % count);
            c0 += size;
            (c0 - size, size)
        })
        .collect()
}

/// `X W` from the panels of `m` rows: per entry a fused chain over each stretch of [`KC`]
/// features from zero, stretches added in order.
pub(super) fn xw(v3: V3, panels: &[f32], m: usize, w: &ArrayView2<'_, f64>) -> Array2<f64> {
    let (nf, nc) = w.dim();
    let w = row_major(w);
    let mut out = Array2::zeros((m, nc));
    if nc == 0 {
        return out;
    }
    let out_slice = out.as_slice_mut().expect("a standard layout");
    // Groups of panels on rayon's threads (rows are independent: the same bits on any count).
    let per = tasks(m.div_ceil(PANEL), m * nf);
    let size = PANEL * nf;
    out_slice
        .par_chunks_mut(per * PANEL * nc)
        .zip(panels.par_chunks(per * size))
        .for_each(|(out, panels)| {
            let m = out.len() / nc;
            pulp::Simd::vectorize(
                v3,
                Xw {
                    v3,
                    panels,
                    m,
                    nf,
                    nc,
                    w: &w,
                    out,
                },
            );
        });
    out
}

/// Entries of `X` from which a product is split over threads. Smaller products stay whole:
/// cross-validation already runs folds on every thread, and splitting a util-lr-sized product
/// (4,300 x 403) measured no gain; at router-dc's 80,000 x 404 the fold that runs last alone
/// gets both cores.
const PARALLEL_ENTRIES: usize = 4_000_000;

/// Items per task for `n` items of a product over `entries` entries of `X`: about four tasks
/// per thread, or one task below [`PARALLEL_ENTRIES`].
fn tasks(n: usize, entries: usize) -> usize {
    if entries < PARALLEL_ENTRIES {
        return n.max(1);
    }
    n.div_ceil(4 * rayon::current_num_threads()).max(1)
}

struct Xw<'a> {
    v3: V3,
    panels: &'a [f32],
    m: usize,
    nf: usize,
    nc: usize,
    /// `W` row-major.
    w: &'a [f64],
    out: &'a mut [f64],
}

impl pulp::WithSimd for Xw<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        let Xw {
            v3,
            panels,
            m,
            nf,
            nc,
            w,
            out,
        } = self;
        let size = PANEL * nf;
        let count = panels.len() / size;
        // Two panels at a time where their accumulators fit (up to three columns).
        let pair = nc <= 3;
        let tiles = tiles(nc, 7, 6);
        let mut p0 = 0;
        while p0 < count {
            let p = if pair && p0 + 2 <= count { 2 } else { 1 };
            let group = &panels[p0 * size..(p0 + p) * size];
            for &(c0, ct) in &tiles {
                let at = Tile { c0, nc, p0, m, nf };
                match (ct, p) {
                    (1, 2) => xw_panels::<1, 2>(v3, group, at, w, out),
                    (2, 2) => xw_panels::<2, 2>(v3, group, at, w, out),
                    (3, 2) => xw_panels::<3, 2>(v3, group, at, w, out),
                    (1, _) => xw_panels::<1, 1>(v3, group, at, w, out),
                    (2, _) => xw_panels::<2, 1>(v3, group, at, w, out),
                    (3, _) => xw_panels::<3, 1>(v3, group, at, w, out),
                    (4, _) => xw_panels::<4, 1>(v3, group, at, w, out),
                    (5, _) => xw_panels::<5, 1>(v3, group, at, w, out),
                    (6, _) => xw_panels::<6, 1>(v3, group, at, w, out),
                    _ => xw_panels::<7, 1>(v3, group, at, w, out),
                }
            }
            p0 += p;
        }
    }
}

/// Where a tile of output columns sits: its first column, the column count, the first panel
/// of the group (or first feature vector, for [`xtd_tile`]), the row and feature counts.
#[derive(Clone, Copy)]
struct Tile {
    c0: usize,
    nc: usize,
    p0: usize,
    m: usize,
    nf: usize,
}

/// Columns `c0..c0 + CT` of `X W` for panels `p0..p0 + P` (two vectors of four rows each).
#[inline(always)]
fn xw_panels<const CT: usize, const P: usize>(
    v3: V3,
    panels: &[f32],
    at: Tile,
    w: &[f64],
    out: &mut [f64],
) {
    let Tile { c0, nc, p0, m, nf } = at;
    let zero = v3.splat_f64x4(0.0);
    let size = PANEL * nf;
    for k0 in (0..nf).step_by(KC) {
        let mut acc = [[[zero; 2]; P]; CT];
        for k in k0..(k0 + KC).min(nf) {
            let a: [[f64x4; 2]; P] = std::array::from_fn(|q| {
                let x = &panels[q * size + k * PANEL..q * size + (k + 1) * PANEL];
                [
                    v3.convert_f32x4_to_f64x4(f32x4(x[0], x[1], x[2], x[3])),
                    v3.convert_f32x4_to_f64x4(f32x4(x[4], x[5], x[6], x[7])),
                ]
            });
            let wk = &w[k * nc + c0..k * nc + c0 + CT];
            for j in 0..CT {
                let b = v3.splat_f64x4(wk[j]);
                for q in 0..P {
                    acc[j][q][0] = v3.mul_add_f64x4(a[q][0], b, acc[j][q][0]);
                    acc[j][q][1] = v3.mul_add_f64x4(a[q][1], b, acc[j][q][1]);
                }
            }
        }
        for (j, per_column) in acc.iter().enumerate() {
            for (q, pair) in per_column.iter().enumerate() {
                let lanes: &[f64] = pulp::bytemuck::cast_slice(&pair[..]);
                for (l, &v) in lanes.iter().enumerate() {
                    let i = (p0 + q) * PANEL + l;
                    if i < m {
                        let o = &mut out[i * nc + c0 + j];
                        // The first stretch is stored as `ab + 0` (matrixmultiply's `alpha ab
                        // + 0` with alpha 1), later ones added.
                        *o = if k0 == 0 { v + 0.0 } else { *o + v };
                    }
                }
            }
        }
    }
}

/// Rows of `X^T D` read together by every tile (they stay in L1 meanwhile).
const SUB: usize = 32;

/// `X^T D` from the rows of `X`: per entry a fused chain over each stretch of [`KC`] rows from
/// zero, stretches added in order.
pub(super) fn xtd(v3: V3, x: &ArrayView2<'_, f32>, d: &ArrayView2<'_, f64>) -> Array2<f64> {
    let (m, nf) = x.dim();
    let nc = d.ncols();
    let mut out = Array2::zeros((nf, nc));
    if nc == 0 {
        return out;
    }
    let x = x.as_slice().expect("a standard layout");
    let d = row_major(d);
    let out_slice = out.as_slice_mut().expect("a standard layout");
    // Ranges of features on rayon's threads (each entry's chain stays whole: the same bits on
    // any count); the features past the last whole vector go with the last range.
    let vectors = nf / 4;
    let per = tasks(vectors, m * nf);
    let mut starts: Vec<usize> = (0..vectors).step_by(per).collect();
    if starts.is_empty() {
        starts.push(0);
    }
    let mut pieces: Vec<(usize, usize, &mut [f64])> = Vec::with_capacity(starts.len());
    let mut rest = out_slice;
    for (k, &va) in starts.iter().enumerate() {
        let vb = starts.get(k + 1).copied().unwrap_or(vectors);
        let end = if vb == vectors { nf } else { vb * 4 };
        let (piece, tail) = rest.split_at_mut((end - va * 4) * nc);
        pieces.push((va, vb, piece));
        rest = tail;
    }
    pieces.into_par_iter().for_each(|(va, vb, out)| {
        pulp::Simd::vectorize(
            v3,
            Xtd {
                v3,
                x,
                d: &d,
                m,
                nf,
                nc,
                va,
                vb,
                last: vb == vectors,
                out,
            },
        );
    });
    out
}

struct Xtd<'a> {
    v3: V3,
    x: &'a [f32],
    /// `D` row-major.
    d: &'a [f64],
    m: usize,
    nf: usize,
    nc: usize,
    /// Feature vectors `va..vb` (features `4 va..4 vb`), and with `last` the features past the
    /// last whole vector; `out` holds exactly those features' rows.
    va: usize,
    vb: usize,
    last: bool,
    out: &'a mut [f64],
}

impl pulp::WithSimd for Xtd<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        let Xtd {
            v3,
            x,
            d,
            m,
            nf,
            nc,
            va,
            vb,
            last,
            out,
        } = self;
        let span = vb - va;
        let tiles = tiles(nc, 7, 4);
        // Chains in `acc` between row groups: column `j`'s vector `va + v` at `j * span + v`.
        let mut acc = vec![v3.splat_f64x4(0.0); nc * span];
        for i0 in (0..m).step_by(KC) {
            let rows = i0..(i0 + KC).min(m);
            let first = i0 == 0;
            acc.fill(v3.splat_f64x4(0.0));
            for r0 in rows.clone().step_by(SUB) {
                let sub = r0..(r0 + SUB).min(rows.end);
                // Whole tiles of feature vectors (as many as the column tile leaves registers
                // for), then single vectors.
                for &(c0, ct) in &tiles {
                    let mut v0 = va;
                    while v0 < vb {
                        let at = Tile {
                            c0,
                            nc,
                            p0: v0,
                            m: va,
                            nf,
                        };
                        let acc = &mut acc[..];
                        let left = vb - v0;
                        let step = match ct {
                            1 if left >= 8 => xtd_tile::<1, 8>(v3, x, d, &sub, at, span, acc),
                            2 if left >= 6 => xtd_tile::<2, 6>(v3, x, d, &sub, at, span, acc),
                            3 if left >= 4 => xtd_tile::<3, 4>(v3, x, d, &sub, at, span, acc),
                            4 if left >= 3 => xtd_tile::<4, 3>(v3, x, d, &sub, at, span, acc),
                            5 if left >= 2 => xtd_tile::<5, 2>(v3, x, d, &sub, at, span, acc),
                            6 if left >= 2 => xtd_tile::<6, 2>(v3, x, d, &sub, at, span, acc),
                            7 if left >= 2 => xtd_tile::<7, 2>(v3, x, d, &sub, at, span, acc),
                            1 => xtd_tile::<1, 1>(v3, x, d, &sub, at, span, acc),
                            2 => xtd_tile::<2, 1>(v3, x, d, &sub, at, span, acc),
                            3 => xtd_tile::<3, 1>(v3, x, d, &sub, at, span, acc),
                            4 => xtd_tile::<4, 1>(v3, x, d, &sub, at, span, acc),
                            5 => xtd_tile::<5, 1>(v3, x, d, &sub, at, span, acc),
                            6 => xtd_tile::<6, 1>(v3, x, d, &sub, at, span, acc),
                            _ => xtd_tile::<7, 1>(v3, x, d, &sub, at, span, acc),
                        };
                        v0 += step;
                    }
                }
            }
            // `out`'s row `f` is feature `4 va + f`.
            let mut store = |f: usize, j: usize, v: f64| {
                let o = &mut out[(f - 4 * va) * nc + j];
                *o = if first { v + 0.0 } else { *o + v };
            };
            for j in 0..nc {
                let vals: &[f64] = pulp::bytemuck::cast_slice(&acc[j * span..(j + 1) * span]);
                for (f, &v) in vals.iter().enumerate() {
                    store(4 * va + f, j, v);
                }
            }
            // The features past the last whole vector.
            if last {
                for f in (nf / 4) * 4..nf {
                    for j in 0..nc {
                        let mut chain = 0.0f64;
                        for i in rows.clone() {
                            chain = f64::from(x[i * nf + f]).mul_add(d[i * nc + j], chain);
                        }
                        store(f, j, chain);
                    }
                }
            }
        }
    }
}

/// Columns `c0..c0 + CT`, feature vectors `v0..v0 + T` (`v0` in `at.p0`, the task's first
/// vector `va` in `at.m`) of `X^T D` over `rows`, continuing the chains kept in `acc` (`span`
/// vectors per column); returns `T`.
#[inline(always)]
fn xtd_tile<const CT: usize, const T: usize>(
    v3: V3,
    x: &[f32],
    d: &[f64],
    rows: &std::ops::Range<usize>,
    at: Tile,
    span: usize,
    acc: &mut [f64x4],
) -> usize {
    let Tile {
        c0,
        nc,
        p0: v0,
        m: va,
        nf,
    } = at;
    let slot = |j: usize, t: usize| (c0 + j) * span + v0 - va + t;
    let mut a: [[f64x4; T]; CT] = std::array::from_fn(|j| std::array::from_fn(|t| acc[slot(j, t)]));
    for i in rows.clone() {
        let r = &x[i * nf + v0 * 4..i * nf + (v0 + T) * 4];
        let row: [f64x4; T] = std::array::from_fn(|t| {
            v3.convert_f32x4_to_f64x4(f32x4(r[4 * t], r[4 * t + 1], r[4 * t + 2], r[4 * t + 3]))
        });
        let di = &d[i * nc + c0..i * nc + c0 + CT];
        for j in 0..CT {
            let b = v3.splat_f64x4(di[j]);
            for t in 0..T {
                a[j][t] = v3.mul_add_f64x4(row[t], b, a[j][t]);
            }
        }
    }
    for j in 0..CT {
        for t in 0..T {
            acc[slot(j, t)] = a[j][t];
        }
    }
    T
}

/// This CPU's AVX2 and FMA, where both products are ndarray's bit for bit (checked once, on
/// matrices crossing the panel, stretch and register-tile borders).
pub(super) fn checked() -> Option<V3> {
    static FAST: OnceLock<Option<V3>> = OnceLock::new();
    *FAST.get_or_init(|| {
        let v3 = V3::try_new()?;
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            ((state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        };
        let (m, nf) = (2 * KC + 13, KC + 45);
        let x = Array2::from_shape_fn((m, nf), |_| next() as f32);
        let x64 = x.mapv(f64::from);
        let panels = pack(&x.view());
        let same = [3, 11].iter().all(|&nc| {
            let w = Array2::from_shape_fn((nf, nc), |_| next());
            let d = Array2::from_shape_fn((m, nc), |_| next());
            xw(v3, &panels, m, &w.view()) == x64.dot(&w)
                && xtd(v3, &x.view(), &d.view()) == x64.t().dot(&d)
        });
        same.then_some(v3)
    })
}
