//! The kNN pass's bfloat16 screen: rows rounded to bfloat16, a Gram kernel on AVX-512 BF16
//! (twice float32's multiply rate where the CPU has it) and each row's rounding error, so the
//! screen's error has a certified bound.
//!
//! The screen only proposes candidates; `knn` re-ranks them in float64 and proves, row by row,
//! that no other row could have ranked (see `screen::Screen` and `knn::knn_pass_with`).

#![allow(unsafe_code)]

use rayon::prelude::*;

use super::rows::UnitRows;

/// Rows per micro-tile of the kernel.
pub(super) const MR: usize = 8;
/// Columns per micro-tile: two 16-lane panels.
pub(super) const NR: usize = 2 * PANEL;
/// Columns per packed panel (one 512-bit register of float32 lanes).
const PANEL: usize = 16;
/// The row count is padded (with zero rows) to a multiple of this: both tiles divide it.
pub(super) const ROW_PAD: usize = 32;

/// Unit rows in bfloat16: row-major (two consecutive entries per 32-bit word, the layout the
/// `vdpbf16ps` instruction pairs) and packed in panels of 16 rows (pair `p` of the 16 rows side by
/// side), with each row's rounding error.
#[derive(Debug, Clone)]
pub(super) struct Bf16Rows {
    /// Rows, with zero rows appended up to a multiple of [`ROW_PAD`].
    pub padded: usize,
    /// Words per row: `dim` entries in pairs (an odd `dim` ends with a zero).
    pub pairs: usize,
    /// `padded x pairs` words, row-major.
    pub words: Vec<u32>,
    /// `padded / 16` panels of `pairs x 16` words.
    panels: Vec<u32>,
    /// `|x_i - q_i|` in float64 for each real row (`x` the float64 unit row, `q` its bfloat16).
    pub err: Vec<f64>,
    /// `|q_i|` in float64 for each real row.
    pub norm: Vec<f64>,
}

/// `x` rounded to the nearest bfloat16 (through float32, ties to even); values below float32's
/// smallest normal become 0, since the instruction reads such inputs as 0.
fn to_bf16(x: f64) -> u16 {
    let f = x as f32;
    if f.abs() < f32::MIN_POSITIVE {
        return 0;
    }
    let b = f.to_bits();
    // Unit rows never reach the float32 range's end, so the rounding cannot overflow.
    ((b + 0x7fff + ((b >> 16) & 1)) >> 16) as u16
}

/// The bfloat16 `h` as a float32 (exact).
fn bf16_f32(h: u16) -> f32 {
    f32::from_bits(u32::from(h) << 16)
}

impl Bf16Rows {
    pub fn new(rows: &UnitRows) -> Self {
        let (n, dim) = (rows.rows, rows.dim);
        let pairs = dim.div_ceil(2);
        let padded = n.div_ceil(ROW_PAD) * ROW_PAD;
        let mut words = vec![0u32; padded * pairs];
        let mut err = vec![0.0; n];
        let mut norm = vec![0.0; n];
        if pairs > 0 {
            words[..n * pairs]
                .par_chunks_mut(pairs)
                .zip(err.par_iter_mut().zip(norm.par_iter_mut()))
                .enumerate()
                .for_each(|(i, (out, (e, q)))| {
                    let x = rows.row64(i);
                    let (mut e2, mut q2) = (0.0f64, 0.0f64);
                    for (p, w) in out.iter_mut().enumerate() {
                        let mut word = 0u32;
                        for half in 0..2 {
                            let Some(&v) = x.get(2 * p + half) else {
                                continue;
                            };
                            let h = to_bf16(v);
                            let back = f64::from(bf16_f32(h));
                            e2 += (v - back) * (v - back);
                            q2 += back * back;
                            word |= u32::from(h) << (16 * half);
                        }
                        *w = word;
                    }
                    (*e, *q) = (e2.sqrt(), q2.sqrt());
                });
        }
        let mut panels = vec![0u32; padded * pairs];
        panels
            .par_chunks_mut((pairs * PANEL).max(1))
            .enumerate()
            .for_each(|(panel, out)| {
                for (p, lanes) in out.chunks_exact_mut(PANEL).enumerate() {
                    for (c, w) in lanes.iter_mut().enumerate() {
                        *w = words[(panel * PANEL + c) * pairs + p];
                    }
                }
            });
        Bf16Rows {
            padded,
            pairs,
            words,
            panels,
            err,
            norm,
        }
    }

    /// `out[r * stride + (c - cols.start)] = q_r . q_c` (float32 sums of exact bfloat16 products)
    /// for the rows `a` holds (row-major words, a multiple of [`MR`] rows) and the columns
    /// `cols` (multiples of [`NR`], within the padded rows). `simd` picks the AVX-512 BF16
    /// kernel, which the caller has checked the CPU has ([`bf16_simd`]).
    ///
    /// # Panics
    /// On any shape outside that contract.
    pub fn gram(
        &self,
        a: &[u32],
        cols: std::ops::Range<usize>,
        out: &mut [f32],
        stride: usize,
        simd: bool,
    ) {
        let pairs = self.pairs;
        let a_rows = a.len() / pairs.max(1);
        assert!(a.len() == a_rows * pairs && a_rows.is_multiple_of(MR));
        assert!(cols.start.is_multiple_of(NR) && cols.end.is_multiple_of(NR));
        assert!(cols.start <= cols.end && cols.end <= self.padded && stride >= cols.len());
        if a_rows == 0 || cols.is_empty() {
            return;
        }
        assert!(out.len() >= (a_rows - 1) * stride + cols.len());
        let b = &self.panels[cols.start * pairs..cols.end * pairs];
        #[cfg(target_arch = "x86_64")]
        if simd && bf16_simd() {
            // SAFETY: the CPU has AVX-512F and AVX-512 BF16 (checked just above); the asserts
            // keep every read inside `a` (a_rows x pairs) and `b` (cols / 16 panels of
            // pairs x 16) and every write inside `out` (a_rows rows of stride `stride`, the
            // last `cols.len()` long).
            unsafe {
                gram_avx512(
                    a.as_ptr(),
                    a_rows,
                    pairs,
                    b.as_ptr(),
                    cols.len(),
                    out.as_mut_ptr(),
                    stride,
                )
            };
            return;
        }
        let _ = simd;
        gram_scalar(a, a_rows, pairs, b, cols.len(), out, stride);
    }
}

/// Whether this CPU runs the AVX-512 BF16 kernel.
pub(super) fn bf16_simd() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bf16")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// The kernel's arithmetic in plain float32 (each pair's two products, exact in float32, added
/// in turn): a reference for tests and CPUs without the instruction.
fn gram_scalar(
    a: &[u32],
    a_rows: usize,
    pairs: usize,
    b: &[u32],
    cols: usize,
    out: &mut [f32],
    stride: usize,
) {
    let split = |w: u32| (bf16_f32(w as u16), bf16_f32((w >> 16) as u16));
    for r in 0..a_rows {
        let ar = &a[r * pairs..(r + 1) * pairs];
        for c in 0..cols {
            let panel = &b[(c / PANEL) * pairs * PANEL..];
            let mut acc = 0.0f32;
            for (p, &w) in ar.iter().enumerate() {
                let ((x0, x1), (y0, y1)) = (split(w), split(panel[p * PANEL + c % PANEL]));
                acc += x1 * y1;
                acc += x0 * y0;
            }
            out[r * stride + c] = acc;
        }
    }
}

/// The AVX-512 BF16 micro-kernel: an `MR x NR` tile of float32 sums in 16 registers, one pair
/// of entries per `vdpbf16ps`; the two panels of a column stripe (2 x pairs x 64 bytes) stay in
/// L1 while every row of `a` passes.
///
/// # Safety
/// The CPU must have AVX-512F and AVX-512 BF16; `a` must hold `a_rows x pairs` words, `b`
/// `cols / 16` panels of `pairs x 16` words, `out` `a_rows` rows of `stride` floats (the last
/// `cols` long); `a_rows` a multiple of `MR`, `cols` of `NR`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bf16")]
unsafe fn gram_avx512(
    a: *const u32,
    a_rows: usize,
    pairs: usize,
    b: *const u32,
    cols: usize,
    out: *mut f32,
    stride: usize,
) {
    use std::arch::x86_64::*;
    let mut jc = 0;
    while jc < cols {
        let b0 = b.add((jc / PANEL) * pairs * PANEL);
        let b1 = b0.add(pairs * PANEL);
        let mut r0 = 0;
        while r0 < a_rows {
            let mut acc = [_mm512_setzero_ps(); 2 * MR];
            let ar = a.add(r0 * pairs);
            for p in 0..pairs {
                let v0: __m512bh =
                    std::mem::transmute(_mm512_loadu_si512(b0.add(p * PANEL).cast()));
                let v1: __m512bh =
                    std::mem::transmute(_mm512_loadu_si512(b1.add(p * PANEL).cast()));
                for r in 0..MR {
                    let x: __m512bh =
                        std::mem::transmute(_mm512_set1_epi32(*ar.add(r * pairs + p) as i32));
                    acc[2 * r] = _mm512_dpbf16_ps(acc[2 * r], x, v0);
                    acc[2 * r + 1] = _mm512_dpbf16_ps(acc[2 * r + 1], x, v1);
                }
            }
            for r in 0..MR {
                let o = out.add((r0 + r) * stride + jc);
                _mm512_storeu_ps(o, acc[2 * r]);
                _mm512_storeu_ps(o.add(PANEL), acc[2 * r + 1]);
            }
            r0 += MR;
        }
        jc += NR;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(rows: usize, dim: usize, seed: u64) -> UnitRows {
        let mut rng = bench_core::rng::SplitMix64::new(seed);
        let mut f64s = Vec::with_capacity(rows * dim);
        for _ in 0..rows {
            let row: Vec<f64> = (0..dim).map(|_| rng.normal()).collect();
            let norm = row.iter().map(|x| x * x).sum::<f64>().sqrt();
            f64s.extend(row.iter().map(|x| x / norm));
        }
        UnitRows {
            rows,
            dim,
            f64: f64s,
        }
    }

    #[test]
    fn rounding_is_to_nearest_even_and_flushes_subnormals() {
        assert_eq!(to_bf16(1.0), 0x3f80);
        // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to the even 1.
        assert_eq!(to_bf16(1.0 + 2f64.powi(-8)), 0x3f80);
        assert_eq!(to_bf16(1.0 + 3.0 * 2f64.powi(-8)), 0x3f82);
        assert_eq!(to_bf16(-0.5), 0xbf00);
        assert_eq!(to_bf16(1e-40), 0);
    }

    #[test]
    fn the_kernels_agree_with_float64_products_of_the_rounded_rows() {
        // 70 rows (padded to 96) of odd dimension 37: the padding and the odd pair both run.
        let rows = unit(70, 37, 7);
        let bf = Bf16Rows::new(&rows);
        assert_eq!((bf.padded, bf.pairs), (96, 19));
        let q = |i: usize, k: usize| -> f64 {
            let w = bf.words[i * bf.pairs + k / 2];
            f64::from(bf16_f32((w >> (16 * (k % 2))) as u16))
        };
        for i in 0..70 {
            let e: f64 = (0..37).map(|k| (rows.row64(i)[k] - q(i, k)).powi(2)).sum();
            assert!((e.sqrt() - bf.err[i]).abs() < 1e-15);
            assert!(bf.err[i] > 0.0 && bf.err[i] < 2f64.powi(-8));
        }
        let (a, cols) = (&bf.words[8 * bf.pairs..24 * bf.pairs], 32..96);
        let stride = 70;
        for simd in [false, true] {
            let mut out = vec![f32::NAN; 16 * stride];
            bf.gram(a, cols.clone(), &mut out, stride, simd);
            for r in 0..16 {
                for c in cols.clone() {
                    let exact: f64 = (0..37).map(|k| q(8 + r, k) * q(c, k)).sum();
                    let got = f64::from(out[r * stride + c - 32]);
                    assert!((got - exact).abs() < 1e-6, "simd {simd} ({r}, {c})");
                }
            }
        }
    }
}
