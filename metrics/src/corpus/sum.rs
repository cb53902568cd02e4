//! Compensated summation, shared by the embedding and graph metrics (a leaf).

/// Compensated (Neumaier) summation: the result barely depends on the order of the terms, so
/// relabelling nodes or permuting rows leaves means unchanged to the last bit or so.
pub(super) fn neumaier_sum<I: IntoIterator<Item = f64>>(values: I) -> f64 {
    let mut sum = 0.0f64;
    let mut comp = 0.0f64;
    for x in values {
        let t = sum + x;
        if sum.abs() >= x.abs() {
            comp += (sum - t) + x;
        } else {
            comp += (x - t) + sum;
        }
        sum = t;
    }
    sum + comp
}
