//! Dense search timing: 1,000 queries, top-100, over 21,153 seeded random unit vectors of 384-d.
//!
//! `cargo run --release -p corpora --example perf_search [--features faiss]`
//! Prints gemm batch search, the naive one-query-at-a-time dot loops as the in-run baseline, and
//! FAISS IndexFlatIP when the `faiss` feature is on. Use release: debug numerics are ~100x slower.

use std::time::{Duration, Instant};

use bench_core::Embeddings;
use corpora::{gemm_kernel, machine_line, FlatIndex, Hit};
use rayon::prelude::*;

#[path = "common/peak.rs"]
mod peak;

const SEED: u64 = 0x5EED_2025_0384;
const N: usize = 21_153;
const DIM: usize = 384;
const QUERIES: usize = 1_000;
const K: usize = 100;
/// Timed repetitions of the fast searches (the minimum is reported; the first run warms up).
const REPEATS: usize = 3;

/// The shared SplitMix64 stream, drawn as this example always has.
struct SplitMix(bench_core::rng::SplitMix64);

impl SplitMix {
    fn new(seed: u64) -> Self {
        SplitMix(bench_core::rng::SplitMix64::new(seed))
    }
    /// Uniform in [-1, 1).
    fn unit(&mut self) -> f32 {
        ((self.0.next_u64() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }
}

fn unit_vectors(rng: &mut SplitMix, n: usize) -> Embeddings {
    let mut data = Vec::with_capacity(n * DIM);
    for _ in 0..n {
        let row: Vec<f32> = (0..DIM).map(|_| rng.unit()).collect();
        let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt();
        data.extend(row.iter().map(|x| x / norm));
    }
    Embeddings::new(DIM, data)
}

/// Runs `f` once to warm up, then `REPEATS` times; returns the fastest time and the last result.
fn best_of<T>(mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut out = f();
    let mut best = Duration::MAX;
    for _ in 0..REPEATS {
        let t = Instant::now();
        out = f();
        best = best.min(t.elapsed());
    }
    (best, out)
}

/// Queries whose top-K rows are identical, and the largest score difference at any position.
fn agreement(a: &[Vec<Hit>], b: &[Vec<Hit>]) -> (usize, f32) {
    let same = a
        .iter()
        .zip(b)
        .filter(|(x, y)| x.iter().map(|h| h.row).eq(y.iter().map(|h| h.row)))
        .count();
    let max_diff = a
        .iter()
        .zip(b)
        .flat_map(|(x, y)| x.iter().zip(y).map(|(p, q)| (p.score - q.score).abs()))
        .fold(0.0f32, f32::max);
    (same, max_diff)
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn main() {
    let mut rng = SplitMix::new(SEED);
    let data = unit_vectors(&mut rng, N);
    let queries = unit_vectors(&mut rng, QUERIES);
    let index = FlatIndex::new(data.clone()).expect("valid vectors");
    let threads = rayon::current_num_threads();
    println!("{}", machine_line());
    let peak = peak::sgemm_peak();
    println!(
        "sgemm peak, gemm kernel {}, 2048^3 f32, best of 5: {:.1} GFLOP/s",
        gemm_kernel(),
        peak / 1e9
    );
    println!(
        "dense search: {QUERIES} queries x {N} vectors x {DIM}-d, top-{K}, seed {SEED:#x}, \
         {threads} rayon threads, best of {REPEATS}"
    );

    let (gemm_t, gemm_hits) = best_of(|| index.search_batch(&queries, K));
    // The score products alone: 2 * queries * vectors * dim FLOPs (selection is extra work).
    let flops = 2.0 * (QUERIES * N * DIM) as f64 / secs(gemm_t);
    println!(
        "  gemm batch search        {:8.3} s  ({:.0} queries/s; {:.1} GFLOP/s of products = {:.1} % \
         of the {} peak, top-{K} selection included in the time)",
        secs(gemm_t),
        QUERIES as f64 / secs(gemm_t),
        flops / 1e9,
        100.0 * flops / peak,
        gemm_kernel()
    );

    // The baseline runs once: it is the slow one, and a single run is steady enough.
    let t = Instant::now();
    let naive_hits: Vec<Vec<Hit>> = queries.rows().map(|q| index.search(q, K)).collect();
    let naive_t = t.elapsed();
    println!(
        "  naive dot loops, 1 thread {:7.3} s  (gemm is {:.1}x faster)",
        secs(naive_t),
        secs(naive_t) / secs(gemm_t)
    );
    let t = Instant::now();
    let par_hits: Vec<Vec<Hit>> = queries
        .data
        .par_chunks(DIM)
        .map(|q| index.search(q, K))
        .collect();
    let par_t = t.elapsed();
    assert_eq!(par_hits, naive_hits);
    println!(
        "  naive dot loops, {threads} threads {:6.3} s  (gemm is {:.1}x faster)",
        secs(par_t),
        secs(par_t) / secs(gemm_t)
    );
    let (same, diff) = agreement(&gemm_hits, &naive_hits);
    println!(
        "  gemm vs naive: {same}/{QUERIES} queries with identical top-{K} rows, max score diff {diff:.1e}"
    );

    faiss_baseline(&data, &queries, gemm_t, &gemm_hits);
    println!("{}", machine_line());
}

#[cfg(feature = "faiss")]
fn faiss_baseline(
    data: &Embeddings,
    queries: &Embeddings,
    gemm_t: Duration,
    gemm_hits: &[Vec<Hit>],
) {
    let t = Instant::now();
    let faiss = corpora::FaissFlatIndex::new(data.clone()).expect("faiss index");
    let build_t = t.elapsed();
    let (faiss_t, faiss_hits) = best_of(|| faiss.search_batch(queries, K));
    println!(
        "  faiss IndexFlatIP        {:8.3} s  (gemm/faiss time {:.2}; faiss add {:.3} s)",
        secs(faiss_t),
        secs(gemm_t) / secs(faiss_t),
        secs(build_t)
    );
    let (same, diff) = agreement(gemm_hits, &faiss_hits);
    println!(
        "  gemm vs faiss: {same}/{QUERIES} queries with identical top-{K} rows, max score diff {diff:.1e}"
    );
}

#[cfg(not(feature = "faiss"))]
fn faiss_baseline(_: &Embeddings, _: &Embeddings, _: Duration, _: &[Vec<Hit>]) {
    println!("  faiss IndexFlatIP        (build with --features faiss for the FAISS baseline)");
}
