//! The rows the kNN pass works on and the float32 Gram product: below both the pass and its
//! screens, so neither depends on the other's file.

/// L2-normalised rows in float64 (the screens round their own copies).
#[derive(Debug, Clone)]
pub struct UnitRows {
    /// Number of rows.
    pub rows: usize,
    /// Row dimension.
    pub dim: usize,
    /// Row-major rows in float64.
    pub f64: Vec<f64>,
}

impl UnitRows {
    /// Row `i` in float64.
    pub fn row64(&self, i: usize) -> &[f64] {
        &self.f64[i * self.dim..(i + 1) * self.dim]
    }
}

/// `out[i * b_rows + j] = a_i . b_j` for row-major `a` (a_rows x dim) and `b` (b_rows x dim),
/// through gemm on the calling thread (its AVX-512 kernels where the build has `x86-v4` and the
/// CPU has them). Also the routers' kNN product, so one safe wrapper owns the `unsafe` call.
///
/// # Panics
/// When `a` or `b` is not a whole number of `dim`-wide rows, or `out` is shorter than
/// `a_rows * b_rows`.
#[allow(unsafe_code)]
pub fn gram_block(a: &[f32], b: &[f32], dim: usize, out: &mut [f32]) {
    let (a_rows, b_rows) = (a.len() / dim, b.len() / dim);
    assert!(a.len() == a_rows * dim && b.len() == b_rows * dim);
    assert!(out.len() >= a_rows * b_rows);
    // SAFETY: the asserts above keep every access in bounds: dst is a_rows x b_rows with row
    // stride b_rows inside `out`; lhs is `a` (row stride dim); rhs is b^T, element (p, j) at
    // b[j * dim + p]. The three slices cannot alias (`out` is a unique borrow).
    unsafe {
        gemm::gemm(
            a_rows,
            b_rows,
            dim,
            out.as_mut_ptr(),
            1,
            b_rows as isize,
            false,
            a.as_ptr(),
            1,
            dim as isize,
            b.as_ptr(),
            dim as isize,
            1,
            0.0,
            1.0,
            false,
            false,
            false,
            // Parallelism comes from rayon over block pairs.
            gemm::Parallelism::None,
        );
    }
}
