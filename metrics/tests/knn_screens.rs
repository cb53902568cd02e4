//! Every kNN screen (bfloat16 on AVX-512 BF16, the same arithmetic in scalar code, float32 gemm)
//! gives the float64 brute force's result bit for bit, on rows built to defeat a screen: exact
//! duplicates, near-duplicates below bfloat16's resolution, many rows across block boundaries.

use metrics::corpus::embedding::unit_rows;
use metrics::corpus::knn::{knn_exact, knn_pass_with, ScreenKernel, ScreenStats};
use proptest::prelude::*;

const KERNELS: [ScreenKernel; 3] = [
    ScreenKernel::Bf16Avx512,
    ScreenKernel::Bf16Scalar,
    ScreenKernel::F32Gemm,
];

/// Runs every screen on `data` (`dim` columns) and checks each against `knn_exact`; returns
/// each screen's stats.
fn check(data: &[f32], dim: usize, k: usize) -> Vec<ScreenStats> {
    let unit = unit_rows(data, dim).unwrap();
    let exact = knn_exact(&unit, k);
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    KERNELS
        .iter()
        .map(|&kernel| {
            let (fast, stats) = knn_pass_with(&unit, k, kernel);
            assert_eq!(fast.k, exact.k, "{kernel:?}: k");
            assert_eq!(fast.neighbours, exact.neighbours, "{kernel:?}: neighbours");
            assert_eq!(bits(&fast.r1), bits(&exact.r1), "{kernel:?}: r1");
            assert_eq!(bits(&fast.r2), bits(&exact.r2), "{kernel:?}: r2");
            stats
        })
        .collect()
}

/// SplitMix64 draws in [-1, 1).
struct Draw(bench_core::rng::SplitMix64);

impl Draw {
    fn new(seed: u64) -> Self {
        Draw(bench_core::rng::SplitMix64::new(seed))
    }
    fn signed(&mut self) -> f64 {
        self.0.next_f64() * 2.0 - 1.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.0.next_f64() * n as f64) as usize
    }
}

/// `rows` random rows (shifted off the origin) followed by `near` rows that copy a random row
/// and move one coordinate by `eps` (0: exact duplicates).
fn hostile(seed: u64, rows: usize, dim: usize, near: usize, eps: f64) -> Vec<f32> {
    let mut d = Draw::new(seed);
    let mut data: Vec<f32> = (0..rows * dim)
        .map(|i| (d.signed() + if i % dim == 0 { 0.5 } else { 0.0 }) as f32)
        .collect();
    for _ in 0..near {
        let src = d.below(rows);
        let mut row = data[src * dim..(src + 1) * dim].to_vec();
        let at = d.below(dim);
        row[at] = (f64::from(row[at]) + eps * d.signed()) as f32;
        data.extend(row);
    }
    data
}

#[test]
fn a_tight_cluster_is_screened_again_and_still_exact() {
    // 40 rows within 1e-5 of one row, among 300 random ones: bfloat16 (8 bits) cannot order the
    // cluster, so its rows' first candidates cannot be certified.
    let dim = 24;
    let mut d = Draw::new(5);
    let mut data: Vec<f32> = (0..300 * dim).map(|_| d.signed() as f32).collect();
    let base: Vec<f64> = (0..dim).map(|_| d.signed()).collect();
    for _ in 0..40 {
        data.extend(base.iter().map(|&x| (x + 1e-5 * d.signed()) as f32));
    }
    let stats = check(&data, dim, 10);
    for s in &stats[..2] {
        assert!(
            s.rescreened > 0,
            "{s:?}: the bfloat16 screen cannot separate the cluster"
        );
    }
}

#[test]
fn rows_across_several_blocks_match() {
    // 1,100 rows: three 512-row blocks, the last partly padding, with duplicates and near ones.
    let data = hostile(11, 1_000, 16, 100, 1e-3);
    check(&data, 16, 10);
    let data = hostile(12, 1_050, 7, 50, 0.0);
    check(&data, 7, 3);
}

#[test]
fn tiny_inputs_match() {
    for rows in 1..5 {
        for k in [0, 1, 2, 10] {
            check(&hostile(rows as u64, rows, 3, 0, 0.0), 3, k);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_screen_equals_brute_force_float64(
        seed in any::<u64>(),
        rows in 2usize..120,
        dim in 1usize..40,
        near in 0usize..40,
        eps in prop::sample::select(vec![0.0, 1e-9, 1e-6, 1e-4, 1e-3, 1e-2]),
        k in 0usize..20,
    ) {
        check(&hostile(seed, rows, dim, near, eps), dim, k);
    }
}
