//! Compensated summation, shared by the embedding and graph metrics (a leaf).

/// Compensated (Neumaier) summation: the result barely depends on the order of the terms, so
/// relabelling nodes or permuting rows leaves means unchanged to the last bit or so.
pub(super) fn neumaier_sum<I: IntoIterator<Item = f64>>(values: I) -> f64 {
    let mut acc = Neumaier::default();
    for x in values {
        acc.add(x);
    }
    acc.value()
}

/// One running Neumaier sum: adding the same terms in the same order as [`neumaier_sum`]
/// gives the same result bit for bit, so many sums can advance side by side (a matrix's column
/// sums read row by row, not column by column).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Neumaier {
    sum: f64,
    comp: f64,
}

impl Neumaier {
    #[inline]
    pub(super) fn add(&mut self, x: f64) {
        let t = self.sum + x;
        // Both branches' terms, then a select: the same value as a branch, and vectorisable.
        let big = (self.sum - t) + x;
        let small = (x - t) + self.sum;
        self.comp += if self.sum.abs() >= x.abs() {
            big
        } else {
            small
        };
        self.sum = t;
    }

    #[inline]
    pub(super) fn value(self) -> f64 {
        self.sum + self.comp
    }
}
