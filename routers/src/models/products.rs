//! Products with a training matrix that stays put while the other factor changes: `X . W` and `X^T . D`, bit for bit ndarray's, without its per-call copy of `X`.
//!
//! Gradient-trained models (lr through linfa-logistic, router-dc) multiply the same training
//! matrix `X` by a few new columns at every step. ndarray hands each product to
//! matrixmultiply's dgemm, which first copies ("packs") all of `X`: in a profile of util-lr
//! that copy took 47 % of the time. [`Rows`] keeps `X` once, row-major and in panels of
//! eight rows (what matrixmultiply packs per call), in float32 where `X` came from float32
//! features (widening is exact, so the arithmetic is unchanged and half the bytes stream).
//!
//! Every output entry is one fused multiply-add chain from zero over each 256-long stretch
//! of the shared dimension, the stretches added in order: matrixmultiply's order of operations
//! with its AVX2-FMA kernel, so results equal ndarray's bit for bit. A self-check at first use
//! compares both products with ndarray's on matrices that cross every border (panel, stretch,
//! register tile); where AVX2 and FMA are missing (matrixmultiply then runs another kernel),
//! off x86-64, or on any mismatch, [`Rows::new`] gives `None` and callers use ndarray.

use ndarray::{Array2, ArrayView2};

/// A training matrix for repeated products: kept by [`Rows`] where it can be, else in float64
/// for ndarray. Either way the products are ndarray's, bit for bit.
pub(crate) enum TrainingMatrix {
    Rows(Rows),
    Plain(Array2<f64>),
}

impl TrainingMatrix {
    pub(crate) fn new(x: Array2<f32>) -> Self {
        match Rows::new(&x.view()) {
            Some(rows) => TrainingMatrix::Rows(rows),
            None => TrainingMatrix::Plain(x.mapv(f64::from)),
        }
    }

    /// `X W`.
    pub(crate) fn xw(&self, w: &ArrayView2<'_, f64>) -> Array2<f64> {
        match self {
            TrainingMatrix::Rows(rows) => rows.xw(w),
            TrainingMatrix::Plain(x) => x.dot(w),
        }
    }

    /// `X^T D`.
    pub(crate) fn xtd(&self, d: &ArrayView2<'_, f64>) -> Array2<f64> {
        match self {
            TrainingMatrix::Rows(rows) => rows.xtd(d),
            TrainingMatrix::Plain(x) => x.t().dot(d),
        }
    }
}

/// A training matrix kept for [`Rows::xw`] and [`Rows::xtd`].
#[cfg(target_arch = "x86_64")]
pub(crate) struct Rows {
    v3: pulp::x86::V3,
    x: Array2<f32>,
    panels: Vec<f32>,
}

/// A training matrix kept for fast products: none off x86-64.
#[cfg(not(target_arch = "x86_64"))]
pub(crate) enum Rows {}

#[cfg(not(target_arch = "x86_64"))]
impl Rows {
    pub(crate) fn new(_: &ArrayView2<'_, f32>) -> Option<Rows> {
        None
    }

    pub(crate) fn xw(&self, _: &ArrayView2<'_, f64>) -> Array2<f64> {
        match *self {}
    }

    pub(crate) fn xtd(&self, _: &ArrayView2<'_, f64>) -> Array2<f64> {
        match *self {}
    }
}

#[cfg(target_arch = "x86_64")]
impl Rows {
    /// `x` kept for the products, or `None` where they would not be ndarray's (see the module
    /// documentation) or `x` has no rows or no columns.
    pub(crate) fn new(x: &ArrayView2<'_, f32>) -> Option<Rows> {
        if x.nrows() == 0 || x.ncols() == 0 {
            return None;
        }
        let v3 = kernels::checked()?;
        Some(Rows {
            v3,
            panels: kernels::pack(x),
            x: x.as_standard_layout().into_owned(),
        })
    }

    /// `X W` (`W`: as many rows as `X` has columns).
    pub(crate) fn xw(&self, w: &ArrayView2<'_, f64>) -> Array2<f64> {
        assert_eq!(w.nrows(), self.x.ncols(), "W's rows against X's columns");
        kernels::xw(self.v3, &self.panels, self.x.nrows(), w)
    }

    /// `X^T D` (`D`: as many rows as `X`).
    pub(crate) fn xtd(&self, d: &ArrayView2<'_, f64>) -> Array2<f64> {
        assert_eq!(d.nrows(), self.x.nrows(), "D's rows against X's rows");
        kernels::xtd(self.v3, &self.x.view(), d)
    }
}

#[cfg(target_arch = "x86_64")]
mod kernels;

#[cfg(test)]
mod tests {
    use super::*;

    fn data(m: usize, nf: usize, nc: usize, seed: u64) -> (Array2<f32>, Array2<f64>, Array2<f64>) {
        let mut rng = crate::SplitMix64::new(seed);
        let x = Array2::from_shape_fn((m, nf), |_| (rng.next_f64() * 2.0 - 1.0) as f32);
        let w = Array2::from_shape_fn((nf, nc), |_| rng.next_f64() - 0.5);
        let d = Array2::from_shape_fn((m, nc), |_| rng.next_f64() - 0.5);
        (x, w, d)
    }

    /// Both products equal ndarray's bit for bit where the CPU has AVX2 and FMA; elsewhere
    /// there is no [`Rows`].
    #[test]
    fn products_are_ndarrays_bit_for_bit() {
        // Column counts on both sides of every register tile (lr's 2-7 classes, router-dc's
        // 32 dimensions), rows and columns on both sides of a panel and a stretch.
        for &(m, nf, nc) in &[
            (531, 300, 1),
            (700, 403, 2),
            (37, 9, 3),
            (300, 4, 5),
            (513, 257, 7),
            (600, 404, 32),
            (70, 30, 9),
            (8, 1, 13),
            (20, 11, 0),
            // Enough entries for several parallel tasks of each product.
            (10_007, 403, 2),
            (10_000, 404, 32),
        ] {
            let (x, w, d) = data(m, nf, nc, (m * 7 + nc) as u64);
            let Some(rows) = Rows::new(&x.view()) else {
                #[cfg(target_arch = "x86_64")]
                assert!(
                    pulp::x86::V3::try_new().is_none(),
                    "AVX2 and FMA but no fast products"
                );
                continue;
            };
            let x64 = x.mapv(f64::from);
            let bits = |a: &Array2<f64>| a.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(&rows.xw(&w.view())),
                bits(&x64.dot(&w)),
                "X W, {m}x{nf}x{nc}"
            );
            assert_eq!(
                bits(&rows.xtd(&d.view())),
                bits(&x64.t().dot(&d)),
                "X^T D, {m}x{nf}x{nc}"
            );
        }
    }

    /// router-dc's shapes as it asks for them: `X W^T` from a transposed view and `G^T X` as
    /// `(X^T G)^T`, against ndarray's own calls.
    #[test]
    fn router_dcs_products_are_ndarrays() {
        let (x, _, d) = data(1000, 404, 32, 3);
        let w = Array2::from_shape_fn((32, 404), |(i, j)| ((i * 404 + j) as f64).sin());
        let x64 = x.mapv(f64::from);
        let bits = |a: &Array2<f64>| a.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        let kept = TrainingMatrix::new(x);
        assert_eq!(bits(&kept.xw(&w.t())), bits(&x64.dot(&w.t())));
        assert_eq!(
            bits(&kept.xtd(&d.view()).reversed_axes()),
            bits(&d.t().dot(&x64))
        );
    }

    #[test]
    fn empty_matrices_have_no_rows() {
        assert!(Rows::new(&Array2::<f32>::zeros((0, 4)).view()).is_none());
        assert!(Rows::new(&Array2::<f32>::zeros((4, 0)).view()).is_none());
    }
}
