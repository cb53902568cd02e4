//! Approximate (IVF or HNSW) against exact batched dense search on a clustered synthetic corpus.
//!
//! `cargo run --release -p corpora --example perf_ann [N] [QUERIES] [--index ivf|hnsw|both]
//! [--store DIR] [--vectors FILE.vecs] [--lists L] [--iters I] [--train T] [--m M] [--efc EF]`
//! (defaults: 1,000,000 vectors, 1,000 queries, `ivf`, the settings of `IvfParams::default()`
//! and `HnswParams::default()`). Prints the generator's fixed settings, the nearest-neighbour
//! similarity profile it produces beside MiniLM's on 2Wiki, the exact batched search time (the
//! baseline, same run), each index's build time and memory, and a curve of recall@100 against
//! throughput over its search knob (`nprobe`, `ef`). `--vectors` takes real vectors from a
//! vector-cache file instead of the generator (its last QUERIES rows are the queries, held out
//! of the index). With `--store DIR` an index is taken from DIR when an earlier run stored it
//! there (else built and stored), and read back once more, timed (the bench's resume path).

use std::collections::HashSet;
use std::time::Instant;

use bench_core::rng::SplitMix64;
use bench_core::Embeddings;
use corpora::{
    machine_line, FlatIndex, Hit, HnswIndex, HnswParams, IvfIndex, IvfParams, Origin, VectorCache,
};
use rayon::prelude::*;

const SEED: u64 = 0xA11_2026_0384;
const DIM: usize = 384;
const K: usize = 100;
/// Generator settings (fixed): every vector is the unit-normalised sum of a direction shared
/// by all (weight ALPHA), its cluster's centre (BETA), a point of its cluster's RANK-dimensional
/// subspace (GAMMA) and isotropic noise (DELTA). The squared weights sum to 1, so on average a
/// pair from different clusters has cosine ALPHA^2 = 0.08, as random 2Wiki sentence pairs do;
/// BETA, GAMMA and RANK put the top-1/10/100 neighbour similarities near 2Wiki's (below).
const CLUSTERS: usize = 1_000;
const RANK: usize = 16;
const ALPHA: f32 = 0.283;
const BETA: f32 = 0.36;
const GAMMA: f32 = 0.735;
const DELTA: f32 = 0.5;
/// MiniLM on 2Wiki (21,878 calibration sentences, 500 sampled as queries): mean cosine of the
/// 1st, 10th and 100th nearest neighbour, measured with the vector cache's vectors (2026-12-03).
const WIKI_PROFILE: [f64; 3] = [0.632, 0.490, 0.383];
const EFS: [usize; 8] = [100, 128, 160, 200, 256, 320, 400, 512];
const NPROBES: [usize; 13] = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96];

struct Model {
    shared: Vec<f32>,
    centres: Vec<Vec<f32>>,
    /// Per cluster RANK basis vectors of DIM values, each with unit expected norm.
    bases: Vec<Vec<f32>>,
}

fn gaussian_vec(rng: &mut SplitMix64, n: usize, scale: f32) -> Vec<f32> {
    (0..n).map(|_| rng.normal() as f32 * scale).collect()
}

fn unit(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

impl Model {
    fn new(seed: u64) -> Self {
        let mut rng = SplitMix64::new(seed);
        let shared = unit(gaussian_vec(&mut rng, DIM, 1.0));
        let centres = (0..CLUSTERS)
            .map(|_| unit(gaussian_vec(&mut rng, DIM, 1.0)))
            .collect();
        let bases = (0..CLUSTERS)
            .map(|_| gaussian_vec(&mut rng, RANK * DIM, 1.0 / (DIM as f32).sqrt()))
            .collect();
        Model {
            shared,
            centres,
            bases,
        }
    }

    /// Vector `i` of the stream `stream` (its own seeded generator, so rows can be drawn in
    /// parallel and every run draws the same ones).
    fn row(&self, stream: u64, i: usize, out: &mut [f32]) {
        let mut rng = SplitMix64::new(bench_core::rng::mix64(SEED ^ stream ^ ((i as u64) << 8)));
        let c = rng.below(CLUSTERS);
        let z = gaussian_vec(&mut rng, RANK, 1.0 / (RANK as f32).sqrt());
        let (centre, basis) = (&self.centres[c], &self.bases[c]);
        let noise = 1.0 / (DIM as f32).sqrt();
        for d in 0..DIM {
            let mut low = 0.0f32;
            for (r, zr) in z.iter().enumerate() {
                low += zr * basis[r * DIM + d];
            }
            out[d] = ALPHA * self.shared[d]
                + BETA * centre[d]
                + GAMMA * low
                + DELTA * noise * rng.normal() as f32;
        }
        let norm = out.iter().map(|x| x * x).sum::<f32>().sqrt();
        out.iter_mut().for_each(|x| *x /= norm);
    }

    fn draw(&self, stream: u64, n: usize) -> Embeddings {
        let mut data = vec![0.0f32; n * DIM];
        data.par_chunks_mut(DIM)
            .enumerate()
            .for_each(|(i, row)| self.row(stream, i, row));
        Embeddings::new(DIM, data)
    }
}

fn recall(exact: &[Vec<Hit>], approx: &[Vec<Hit>]) -> f64 {
    let (mut found, mut total) = (0usize, 0usize);
    for (e, a) in exact.iter().zip(approx) {
        let rows: HashSet<u32> = a.iter().map(|h| h.row).collect();
        found += e.iter().filter(|h| rows.contains(&h.row)).count();
        total += e.len();
    }
    found as f64 / total.max(1) as f64
}

/// Resident and peak resident memory of this process in MiB (Linux /proc), or NaN.
fn memory_mib() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<f64>().ok())
            .map_or(f64::NAN, |kb| kb / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `--name value` pairs first; the numbers left are the positional N and QUERIES.
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let mut positional = Vec::new();
    let mut i = 0;
    while i < args.len() {
        if args[i].starts_with("--") {
            i += 2;
            continue;
        }
        match args[i].parse::<usize>() {
            Ok(v) => positional.push(v),
            Err(_) => panic!("perf_ann: expected a number or a --flag, got {:?}", args[i]),
        }
        i += 1;
    }
    let n = positional.first().copied().unwrap_or(1_000_000);
    let m = positional.get(1).copied().unwrap_or(1_000);
    let store = flag("--store").map(std::path::PathBuf::from);
    let number = |name: &str, default: usize| {
        flag(name).map_or(default, |v| {
            v.parse()
                .unwrap_or_else(|_| panic!("perf_ann: {name} expects a whole number, got {v:?}"))
        })
    };
    let which = flag("--index").unwrap_or_else(|| "ivf".into());
    assert!(
        matches!(which.as_str(), "ivf" | "hnsw" | "both"),
        "perf_ann: --index expects ivf, hnsw or both, got {which:?}"
    );
    let ivf = IvfParams {
        lists: number("--lists", IvfParams::default().lists),
        iterations: number("--iters", IvfParams::default().iterations),
        train_per_list: number("--train", IvfParams::default().train_per_list),
        ..IvfParams::default()
    };
    let defaults = HnswParams::default();
    let params = HnswParams {
        m: number("--m", defaults.m),
        ef_construction: number("--efc", defaults.ef_construction),
        ..defaults
    };
    println!("{}", machine_line());
    println!(
        "approximate search: {} vectors x {DIM}-d, {m} queries, top-{K}, seed {SEED:#x}, {} rayon \
         threads",
        if flag("--vectors").is_some() {
            "real".to_string()
        } else {
            n.to_string()
        },
        rayon::current_num_threads()
    );
    println!(
        "generator: {CLUSTERS} clusters, subspace rank {RANK}, weights shared {ALPHA} / centre \
         {BETA} / subspace {GAMMA} / noise {DELTA} (squares sum to 1)"
    );
    let t = Instant::now();
    let (data, queries) = match flag("--vectors") {
        // Real vectors: the file's last `m` rows are the queries, held out of the index.
        Some(file) => {
            let all = VectorCache::read_file(std::path::Path::new(&file)).expect("vector file");
            assert!(
                all.dim == DIM && all.len() > m,
                "{file}: need {DIM}-d and over {m} rows"
            );
            let cut = (all.len() - m) * DIM;
            println!(
                "  real vectors: {file}, {} rows indexed, its last {m} rows as queries",
                all.len() - m
            );
            (
                Embeddings::new(DIM, all.data[..cut].to_vec()),
                Embeddings::new(DIM, all.data[cut..].to_vec()),
            )
        }
        None => {
            let model = Model::new(SEED);
            (model.draw(1, n), model.draw(2, m))
        }
    };
    println!("  vectors ready in {:.1} s", t.elapsed().as_secs_f64());
    let flat = FlatIndex::new(data).expect("valid vectors");

    // Baseline: the project's exact batched search (gemm), best of two after a warm-up.
    let mut exact = flat.exact_search_batch(&queries, K);
    let mut exact_s = f64::INFINITY;
    for _ in 0..2 {
        let t = Instant::now();
        exact = flat.exact_search_batch(&queries, K);
        exact_s = exact_s.min(t.elapsed().as_secs_f64());
    }
    let profile: Vec<f64> = [0usize, 9, 99]
        .iter()
        .map(|&r| {
            exact
                .iter()
                .filter_map(|h| h.get(r))
                .map(|h| f64::from(h.score))
                .sum::<f64>()
                / m as f64
        })
        .collect();
    println!(
        "  neighbour similarity, mean of 1st / 10th / 100th: {:.3} / {:.3} / {:.3} (MiniLM on \
         2Wiki: {:.3} / {:.3} / {:.3})",
        profile[0], profile[1], profile[2], WIKI_PROFILE[0], WIKI_PROFILE[1], WIKI_PROFILE[2]
    );
    println!(
        "  exact batched search (gemm, {m} queries at once): {exact_s:.3} s = {:.0} queries/s",
        m as f64 / exact_s
    );

    let run = Run {
        flat: &flat,
        queries: &queries,
        exact: &exact,
        exact_s,
        store: store.as_deref(),
    };
    if matches!(which.as_str(), "ivf" | "both") {
        run.ivf(ivf);
    }
    if matches!(which.as_str(), "hnsw" | "both") {
        run.hnsw(params);
    }
    println!("  goals: recall@100 >= 0.95 at >= 10x, >= 0.99 at >= 3x the exact batched search");
    println!("{}", machine_line());
}

/// One run's data and baseline, shared by the indexes it measures.
struct Run<'a> {
    flat: &'a FlatIndex,
    queries: &'a Embeddings,
    exact: &'a [Vec<Hit>],
    exact_s: f64,
    store: Option<&'a std::path::Path>,
}

impl Run<'_> {
    /// Times `search` over the batch after a small warm-up; prints one curve row.
    fn point(&self, knob: usize, search: impl Fn(&[f32]) -> Vec<Vec<Hit>>) {
        let m = self.queries.len();
        let _ = search(&self.queries.data[..DIM * m.min(20)]);
        let t = Instant::now();
        let approx = search(&self.queries.data);
        let s = t.elapsed().as_secs_f64();
        println!(
            "  {knob:>6} {:>10.4} {:>12.0} {:>9.1}x",
            recall(self.exact, &approx),
            m as f64 / s,
            self.exact_s / s
        );
    }

    /// Built (and timed) or read from the store, with memory before and after.
    fn obtain<T>(
        &self,
        what: &str,
        load: impl Fn(&std::path::Path) -> (T, Origin),
        build: impl Fn() -> T,
    ) -> T {
        let n = self.flat.len();
        let (rss0, _) = memory_mib();
        let t = Instant::now();
        let (index, origin) = match self.store {
            Some(dir) => load(dir),
            None => (build(), Origin::Built),
        };
        let s = t.elapsed().as_secs_f64();
        let (rss1, peak) = memory_mib();
        match origin {
            Origin::Built => println!(
                "  {what} build: {s:.1} s ({:.0} vectors/s{}); memory +{:.0} MiB resident for \
                 the index and its copy of the vectors (exact index: {:.0} MiB of vectors); \
                 process peak {peak:.0} MiB",
                n as f64 / s,
                if self.store.is_some() { ", stored" } else { "" },
                rss1 - rss0,
                (n * DIM * 4) as f64 / (1 << 20) as f64,
            ),
            Origin::Cached => println!(
                "  {what}: read back from the cache in {s:.1} s (built and timed by an earlier \
                 run); memory +{:.0} MiB resident; process peak {peak:.0} MiB",
                rss1 - rss0,
            ),
        }
        if let Some(dir) = self.store {
            let t = Instant::now();
            let (_, again) = load(dir);
            println!(
                "  cache under {}: second call {:.1} s ({})",
                dir.display(),
                t.elapsed().as_secs_f64(),
                name(again)
            );
        }
        index
    }

    fn ivf(&self, params: IvfParams) {
        let lists = params.lists_for(self.flat.len());
        let index = self.obtain(
            &format!("ivf(lists={lists})"),
            |dir| IvfIndex::load_or_build(dir, "perf-ann", self.flat.rows(), params).expect("ivf"),
            || IvfIndex::build(self.flat.rows(), params).expect("ivf build"),
        );
        let mut sizes = index.list_sizes();
        sizes.sort_unstable();
        println!(
            "  list sizes: smallest {}, median {}, largest {} (k-means on {} sampled rows, {} \
             iterations, seed {:#x})",
            sizes[0],
            sizes[sizes.len() / 2],
            sizes[sizes.len() - 1],
            (lists * params.train_per_list).min(self.flat.len()),
            params.iterations,
            params.seed
        );
        println!(
            "  {:>6} {:>10} {:>12} {:>10}",
            "nprobe", "recall@100", "queries/s", "vs exact"
        );
        for nprobe in NPROBES.into_iter().filter(|&p| p <= lists) {
            self.point(nprobe, |q| index.search_batch_with(q, K, nprobe));
        }
    }

    fn hnsw(&self, params: HnswParams) {
        let p = params;
        let graph = self.obtain(
            &format!("hnsw(m={},efc={})", p.m, p.ef_construction),
            |dir| {
                HnswIndex::load_or_build(dir, "perf-ann", self.flat.rows(), params).expect("store")
            },
            || HnswIndex::build(self.flat.rows(), params).expect("hnsw build"),
        );
        println!(
            "  {:>6} {:>10} {:>12} {:>10}",
            "ef", "recall@100", "queries/s", "vs exact"
        );
        for ef in EFS {
            self.point(ef, |q| graph.search_batch_with(self.flat.rows(), q, K, ef));
        }
    }
}

fn name(o: Origin) -> &'static str {
    match o {
        Origin::Built => "built and stored",
        Origin::Cached => "read back",
    }
}
