//! A seeded sample of a question set, stratified by query type (`bench --sample N`).

use bench_core::rng::SplitMix64;
use bench_core::{Query, QueryType};

/// `n` questions drawn with `seed`, each query type getting its share of `n` by the largest
/// remainder method (so the sample's mix matches the set's up to rounding), the questions of a
/// type drawn uniformly without replacement; returned in file order. All of them when `n` is at
/// least the set's size. Same set, `n` and seed: same sample.
pub fn sample_stratified(queries: &[Query], n: usize, seed: u64) -> Vec<Query> {
    if n >= queries.len() {
        return queries.to_vec();
    }
    let strata: Vec<Vec<usize>> = QueryType::ALL
        .iter()
        .map(|t| {
            (0..queries.len())
                .filter(|&i| queries[i].qtype == *t)
                .collect()
        })
        .collect();
    let quotas = largest_remainder(&strata.iter().map(Vec::len).collect::<Vec<_>>(), n);
    let mut rng = SplitMix64::new(seed);
    let mut picked: Vec<usize> = Vec::with_capacity(n);
    for (mut members, quota) in strata.into_iter().zip(quotas) {
        rng.shuffle(&mut members);
        picked.extend(&members[..quota]);
    }
    picked.sort_unstable();
    picked.into_iter().map(|i| queries[i].clone()).collect()
}

/// Seats of `n` shared in proportion to `sizes` (Hamilton's method): each gets the floor of
/// its exact share, the seats left go to the largest remainders (ties: the earlier size).
fn largest_remainder(sizes: &[usize], n: usize) -> Vec<usize> {
    let total: usize = sizes.iter().sum();
    if total == 0 {
        return vec![0; sizes.len()];
    }
    let mut seats: Vec<usize> = sizes.iter().map(|&s| s * n / total).collect();
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse((sizes[i] * n) % total));
    let left = n - seats.iter().sum::<usize>();
    for &i in order.iter().take(left) {
        seats[i] += 1;
    }
    seats
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(sizes: &[usize], n: usize, expected: &[usize]) {
        assert_eq!(largest_remainder(sizes, n), expected, "{sizes:?} n={n}");
    }

    #[test]
    fn seats_follow_the_largest_remainders() {
        // Exact shares 25, 12.5, 12.5: the tie goes to the earlier size.
        check(&[100, 50, 50], 50, &[25, 13, 12]);
        // 7 * 10/21 = 3.33, 7 * 8/21 = 2.67, 7 * 3/21 = 1: floors 3, 2, 1, the seat left to 2.67.
        check(&[10, 8, 3], 7, &[3, 3, 1]);
        check(&[0, 5, 0], 3, &[0, 3, 0]);
        check(&[], 0, &[]);
    }
}
