//! Encoder throughput: `cargo run --release -p corpora --example perf_encoder [N_SHORT] [N_LONG]`.
//!
//! Prints passages/s of the production `MiniLm` for ~40-wordpiece passages and for 512-word
//! passages (truncated at 256 wordpieces), next to the naive candle baseline (input order,
//! batches of 32 padded to their longest text) in the same run, and the largest difference
//! between the two sets of vectors. It also measures this machine's sgemm peak in the same run (a
//! 2048^3 f32 gemm on every rayon thread, best of five, with the widest gemm kernel this binary
//! has on this CPU: AVX-512 where present) and prints the encoder's share of it,
//! counting the forward's matrix-product FLOPs (QKV, attention output and feed-forward
//! projections, and the attention scores and mixing of each text with itself).

use std::time::Instant;

use bench_core::Embedder;
use corpora::{ensure_model, gemm_kernel, machine_line, CandleMiniLm, MiniLm};

#[path = "common/peak.rs"]
mod peak;

const WORDS: &[&str] = &[
    "the",
    "patient",
    "was",
    "treated",
    "with",
    "antibiotics",
    "after",
    "court",
    "ruled",
    "that",
    "contract",
    "retrieval",
    "augmented",
    "generation",
    "improves",
    "answers",
    "to",
    "questions",
    "about",
    "history",
    "of",
    "river",
    "valley",
    "civilisations",
    "and",
    "their",
    "trade",
    "routes",
    "in",
    "a",
    "graph",
    "entities",
    "are",
    "linked",
    "by",
    "relations",
    "extracted",
    "from",
    "text",
    "symptoms",
    "include",
    "fever",
    "cough",
    "fatigue",
    "statute",
    "defines",
    "liability",
    "for",
];

/// Deterministic pseudo-text: a linear congruential walk over `WORDS`.
fn passage(seed: usize, words: usize) -> String {
    let mut x = seed as u64 * 2_654_435_761 + 1;
    let mut out = Vec::with_capacity(words);
    for i in 0..words {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        out.push(WORDS[(x >> 33) as usize % WORDS.len()]);
        if i % 12 == 11 {
            out.push(".");
        }
    }
    out.join(" ")
}

/// CPU seconds (user + system, all threads) this process has used, from /proc (Linux only).
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are the 12th and 13th.
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0) // USER_HZ is 100 on Linux
}

fn rate(label: &str, enc: &dyn Embedder, texts: &[&str], tokens: usize) -> (f64, Vec<f32>) {
    enc.embed(&texts[..texts.len().min(4)]).unwrap(); // warm-up (allocations, thread pool)
    let (t, cpu0) = (Instant::now(), cpu_seconds());
    let e = enc.embed(texts).unwrap();
    let s = t.elapsed().as_secs_f64();
    let cpu = cpu_seconds()
        .zip(cpu0)
        .map(|(b, a)| b - a)
        .unwrap_or(f64::NAN);
    let per_s = texts.len() as f64 / s;
    println!(
        "  {label:<44} {:>5} passages in {s:6.2}s = {per_s:7.1} passages/s ({:.0} wordpieces/s); \
         {cpu:.2} CPU-s = {:.1} passages per CPU-second",
        texts.len(),
        tokens as f64 / s,
        texts.len() as f64 / cpu
    );
    (per_s, e.data)
}

/// Matrix-product FLOPs of the all-MiniLM-L6-v2 forward over texts of these wordpiece counts:
/// per layer and token 2 * (4 h^2 + 2 h * inter) for the projections, plus 2 * 2 * L * h for a
/// text of L tokens attending to itself (scores and mixing).
fn forward_flops(lengths: impl Iterator<Item = usize>) -> f64 {
    let (h, inter, layers) = (384.0, 1536.0, 6.0);
    lengths
        .map(|l| {
            let l = l as f64;
            layers * (2.0 * l * (4.0 * h * h + 2.0 * h * inter) + 4.0 * l * l * h)
        })
        .sum()
}

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    // `--no-baseline` skips the slow candle loop (for profiling the fast path alone).
    let baseline = !std::env::args().any(|a| a == "--no-baseline");
    let n_short = args.first().copied().unwrap_or(1024);
    let n_long = args.get(1).copied().unwrap_or(128);
    let files = ensure_model(None).expect("model");
    let fast = MiniLm::load(&files).expect("load MiniLm");
    let naive = CandleMiniLm::load(&files, 32).expect("load candle baseline");
    println!("{}", machine_line());
    println!(
        "threads: {} (rayon), model: {}",
        rayon::current_num_threads(),
        fast.name(),
    );
    let peak = peak::sgemm_peak();
    println!(
        "sgemm peak, gemm kernel {}, 2048^3 f32 on {} threads, best of 5: {:.1} GFLOP/s",
        gemm_kernel(),
        rayon::current_num_threads(),
        peak / 1e9
    );

    for (what, n, words) in [
        ("short (~40 wordpieces)", n_short, 0),
        ("long (512 words -> 256 wordpieces)", n_long, 512),
    ] {
        let owned: Vec<String> = (0..n)
            .map(|i| {
                if words == 0 {
                    passage(i, 28 + i % 12)
                } else {
                    passage(i, words)
                }
            })
            .collect();
        let texts: Vec<&str> = owned.iter().map(String::as_str).collect();
        let ids = fast.tokenize(&texts).unwrap();
        let tokens: usize = ids.iter().map(Vec::len).sum();
        println!(
            "{what}: {n} passages, mean {:.1} wordpieces (min {}, max {})",
            tokens as f64 / n as f64,
            ids.iter().map(Vec::len).min().unwrap_or(0),
            ids.iter().map(Vec::len).max().unwrap_or(0)
        );
        let (f, fv) = rate(
            "MiniLm (length-sorted, no padding, 2 cores)",
            &fast,
            &texts,
            tokens,
        );
        let flops = forward_flops(ids.iter().map(Vec::len)) / n as f64 * f;
        println!(
            "  MiniLm forward: {:.1} GFLOP/s = {:.1} % of the {} sgemm peak ({})",
            flops / 1e9,
            100.0 * flops / peak,
            gemm_kernel(),
            machine_line()
        );
        if !baseline {
            continue;
        }
        // The baseline is slow: time it on a subset so the run stays short.
        let sub = (n / 4).max(32).min(n);
        let sub_tokens: usize = ids[..sub].iter().map(Vec::len).sum();
        let (b, bv) = rate(
            "candle BertModel, batch 32 padded (baseline)",
            &naive,
            &texts[..sub],
            sub_tokens,
        );
        println!(
            "  speed-up {:.1}x; max |difference| of vectors {:.2e}",
            f / b,
            max_diff(&fv[..bv.len()], &bv)
        );
    }
}
