//! The vectors an index scores (validated, row-major) and the inner product that scores them:
//! a leaf that the exact index, the HNSW graph and FAISS share.

use bench_core::Embeddings;
use gemm::{gemm, Parallelism};

use crate::error::{CorpusError, Result};

/// Validated row-major vectors: what [`super::FlatIndex`] scores exactly and an HNSW graph is
/// built over (row `i` is hit `row == i`).
#[derive(Debug, Clone)]
pub struct Rows {
    pub(super) dim: usize,
    pub(super) data: Vec<f32>,
    pub(super) len: usize,
}

impl Rows {
    /// Takes ownership of the vectors; fails when `dim` is 0, the data is not a whole number of
    /// rows, there are more than `u32::MAX` rows, or a value is not finite.
    pub fn new(vectors: Embeddings) -> Result<Self> {
        let len = validate(&vectors)?;
        Ok(Rows {
            dim: vectors.dim,
            data: vectors.data,
            len,
        })
    }

    /// The vector dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of vectors.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no vectors.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Row `i` as given.
    pub fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.dim..(i + 1) * self.dim]
    }
}

/// Checks an embedding matrix for indexing and returns its row count.
pub(super) fn validate(vectors: &Embeddings) -> Result<usize> {
    if vectors.dim == 0 {
        return Err(CorpusError::Index("vector dimension is 0".into()));
    }
    if !vectors.data.len().is_multiple_of(vectors.dim) {
        return Err(CorpusError::Index(format!(
            "{} values are not a whole number of {}-dimensional rows",
            vectors.data.len(),
            vectors.dim
        )));
    }
    let len = vectors.data.len() / vectors.dim;
    if u32::try_from(len).is_err() {
        return Err(CorpusError::Index(format!(
            "{len} vectors exceed the u32 row limit"
        )));
    }
    if let Some(i) = vectors.data.iter().position(|v| !v.is_finite()) {
        return Err(CorpusError::Index(format!(
            "row {} has a non-finite value at position {}",
            i / vectors.dim,
            i % vectors.dim
        )));
    }
    Ok(len)
}

/// Inner product with eight independent accumulators, which lets the compiler vectorise it
/// (a single running sum would pin the addition order and stay scalar).
#[inline]
pub(super) fn dot(a: &[f32], b: &[f32]) -> f32 {
    const LANES: usize = 8;
    let mut acc = [0.0f32; LANES];
    let (ac, bc) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let tail: f32 = ac
        .remainder()
        .iter()
        .zip(bc.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ac.zip(bc) {
        for l in 0..LANES {
            acc[l] += x[l] * y[l];
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// `out[i * n + j] = <lhs row i, rhs row j>` for `m` rows of `lhs` and `n` rows of `rhs`, all
/// `d` wide and row-major: one gemm call on `threads` threads (1: the calling thread only).
#[allow(unsafe_code)]
pub(super) fn products(
    lhs: &[f32],
    m: usize,
    rhs: &[f32],
    n: usize,
    d: usize,
    out: &mut [f32],
    threads: usize,
) {
    assert!(lhs.len() == m * d && rhs.len() == n * d && out.len() == m * n);
    let parallelism = if threads > 1 {
        Parallelism::Rayon(threads)
    } else {
        Parallelism::None
    };
    // SAFETY: the strides below address exactly the three buffers, whose sizes are checked
    // above: dst is m x n row-major, lhs is m x d row-major, and rhs is n rows of d viewed as
    // their d x n transpose (element (p, j) at j * d + p). `read_dst` is false, so dst is only
    // written, and no buffer aliases another.
    unsafe {
        gemm(
            m,
            n,
            d,
            out.as_mut_ptr(),
            1,
            n as isize,
            false,
            lhs.as_ptr(),
            1,
            d as isize,
            rhs.as_ptr(),
            d as isize,
            1,
            0.0,
            1.0,
            false,
            false,
            false,
            parallelism,
        );
    }
}
