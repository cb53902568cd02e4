//! The certified PPR engine on synthetic knowledge graphs from 200k to 2M nodes.
//!
//! `cargo run --release -p paradigms --example perf_ppr_scale [NODES...] [--threads 2] [--igraph PYTHON]`
//! (default sizes 200,000 500,000 1,000,000 2,000,000). For each size: the graph
//! ([`synthetic_kg`], seed fixed), the factor's build time (once per graph), and the wall time per
//! query of [`certified_ppr`] over 100 queries of 1-20 seeds (weights in (0.4, 1]), one thread;
//! with `--threads 2` the same queries again with the certificate's sweep on two threads
//! ([`CertifiedWorkspace::with_threads`]), and two single queries at a time, one per core (as
//! `bench`'s workers run them). Then all 100 queries at once through [`certified_ppr_many`]
//! ([`PPR_LANES`] queries per sweep of the core, on one thread or, with `--threads 2`, two): its
//! time per query is throughput, not one query's latency. Every top list must equal the
//! one-thread one-query run's bit for bit (the example stops otherwise).
//! With `--igraph PYTHON` (a Python with python-igraph and numpy, e.g. the venv `just perf`
//! makes), the largest graph also runs through igraph's PRPACK on the first 10 queries in the
//! same run (`scripts/ppr_igraph.py`), and both ratios and the top-100 agreement are printed.

use std::io::Write as _;
use std::time::Instant;

use corpora::components;
use corpora::Csr;
use paradigms::ppr::{
    certified_ppr, certified_ppr_many, synthetic_kg, CertifiedWorkspace, PprFactor, DEFAULT_TIE,
    PPR_LANES,
};

const SEED: u64 = 0x5EED_2026_0002;
const QUERIES: usize = 100;
const IGRAPH_QUERIES: usize = 10;
const TOP: usize = 100;
const MIN_SCORE: f64 = 1e-5;

fn load() -> String {
    corpora::load_average()
}

fn queries(nodes: usize, seed: u64) -> Vec<Vec<(u32, f64)>> {
    let mut rng = bench_core::rng::SplitMix64::new(seed);
    (0..QUERIES)
        .map(|_| {
            let k = 1 + rng.below(20);
            (0..k)
                .map(|_| (rng.below(nodes) as u32, 0.4 + 0.6 * rng.next_f64()))
                .collect()
        })
        .collect()
}

fn percentile(sorted: &[f64], f: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * f).round() as usize]
}

struct Measured {
    /// One query at a time: ms per query.
    ms: f64,
    tops: Vec<Vec<(u32, f64)>>,
    /// Every query through `certified_ppr_many`: ms per query.
    many_ms: f64,
}

fn measure(nodes: usize, threads: usize) -> (Csr, Vec<Vec<(u32, f64)>>, Measured) {
    let t = Instant::now();
    let csr = synthetic_kg(nodes, SEED);
    let gen_s = t.elapsed().as_secs_f64();
    let (comps, largest) = components(&csr);
    let max_degree = (0..nodes as u32).map(|v| csr.degree(v)).max().unwrap_or(0);
    let t = Instant::now();
    let factor = PprFactor::build(&csr, 0.85).expect("factor");
    let factor_s = t.elapsed().as_secs_f64();
    let (eliminated, core) = factor.sizes();
    let (elim_entries, core_entries) = factor.entries();
    let qs = queries(nodes, SEED ^ nodes as u64);
    let run = |threads: usize| {
        let mut ws = CertifiedWorkspace::with_threads(threads);
        certified_ppr(&factor, &csr, &qs[0], TOP, MIN_SCORE, DEFAULT_TIE, &mut ws)
            .expect("warm-up");
        let mut times = Vec::with_capacity(QUERIES);
        let mut tops = Vec::with_capacity(QUERIES);
        let mut certified = 0;
        let (mut iterations, mut checks) = (0, 0);
        let t = Instant::now();
        for q in &qs {
            let tq = Instant::now();
            let r =
                certified_ppr(&factor, &csr, q, TOP, MIN_SCORE, DEFAULT_TIE, &mut ws).expect("ppr");
            times.push(tq.elapsed().as_secs_f64() * 1e3);
            certified += usize::from(r.certified);
            (iterations, checks) = (iterations + r.iterations, checks + r.checks);
            tops.push(r.top);
        }
        let ms = t.elapsed().as_secs_f64() * 1e3 / QUERIES as f64;
        times.sort_by(f64::total_cmp);
        let line = format!(
            "certified PPR {ms:.2} ms/query (p50 {:.2}, p95 {:.2}, max {:.2}), certified \
             {certified}/{QUERIES}, {:.1} CG iterations and {:.2} checks per query (load {})",
            percentile(&times, 0.5),
            percentile(&times, 0.95),
            times[times.len() - 1],
            iterations as f64 / QUERIES as f64,
            checks as f64 / QUERIES as f64,
            load()
        );
        (ms, tops, line)
    };
    let (one_ms, one_tops, line) = run(1);
    println!(
        "{nodes:>9} nodes {:>9} edges (LCC {:.3}, {comps} components, max degree {max_degree}; \
         generated in {gen_s:.1} s): factor {factor_s:.1} s ({eliminated} eliminated with {elim_entries} entries, \
         core {core} with {core_entries} in its triangle); one thread: {line}",
        csr.edge_count(),
        largest as f64 / nodes as f64,
    );
    let same_tops = |tops: &[Vec<(u32, f64)>]| {
        one_tops.iter().zip(tops).all(|(a, b)| {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|(x, y)| x.0 == y.0 && x.1.to_bits() == y.1.to_bits())
        })
    };
    let mut single = one_ms;
    if threads > 1 {
        let (two_ms, two_tops, line) = run(threads);
        let same = same_tops(&two_tops);
        println!(
            "{:>9} two threads: {line}; {:.2}x one thread's time, top lists {} bit for bit",
            "",
            two_ms / one_ms,
            if same { "the same" } else { "NOT the same" }
        );
        assert!(same, "two threads changed a top list");
        single = two_ms;
        // Two single queries at a time, one per core, as `bench`'s workers run them.
        let t = Instant::now();
        let tops = std::thread::scope(|s| {
            let halves: Vec<_> = (0..2)
                .map(|h| {
                    let (factor, csr, qs) = (&factor, &csr, &qs);
                    s.spawn(move || {
                        let mut ws = CertifiedWorkspace::with_threads(1);
                        qs.iter()
                            .skip(h)
                            .step_by(2)
                            .map(|q| {
                                certified_ppr(factor, csr, q, TOP, MIN_SCORE, DEFAULT_TIE, &mut ws)
                                    .expect("ppr")
                                    .top
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            let halves: Vec<Vec<_>> = halves
                .into_iter()
                .map(|h| h.join().expect("thread"))
                .collect();
            (0..QUERIES)
                .map(|i| halves[i % 2][i / 2].clone())
                .collect::<Vec<_>>()
        });
        let ms = t.elapsed().as_secs_f64() * 1e3 / QUERIES as f64;
        assert!(same_tops(&tops), "two queries at a time changed a top list");
        println!(
            "{:>9} two single queries at a time, one per core: {ms:.2} ms/query of throughput \
             (load {})",
            "",
            load()
        );
    }
    // Every query at once: CG shares each sweep between PPR_LANES queries.
    let t = Instant::now();
    let many = certified_ppr_many(&factor, &csr, &qs, TOP, MIN_SCORE, DEFAULT_TIE, threads);
    let ms = t.elapsed().as_secs_f64() * 1e3 / QUERIES as f64;
    let tops: Vec<_> = many.into_iter().map(|r| r.expect("ppr").top).collect();
    let same = same_tops(&tops);
    println!(
        "{:>9} all {QUERIES} queries through certified_ppr_many ({PPR_LANES} per sweep, {threads} \
         thread{}): {ms:.2} ms/query of throughput, {:.2}x the one-query time above, top lists {} \
         bit for bit (load {})",
        "",
        if threads > 1 { "s" } else { "" },
        ms / single,
        if same { "the same" } else { "NOT the same" },
        load()
    );
    assert!(same, "certified_ppr_many changed a top list");
    (
        csr,
        qs,
        Measured {
            ms: single,
            tops: one_tops,
            many_ms: ms,
        },
    )
}

/// igraph's PRPACK on the same graph and the first queries: its ms/query and its top lists.
fn igraph(
    python: &str,
    csr: &Csr,
    qs: &[Vec<(u32, f64)>],
) -> std::io::Result<(f64, Vec<Vec<u32>>, String)> {
    let dir = std::env::temp_dir().join(format!("perf_ppr_scale-{}", std::process::id()));
    // Created exclusively: the folder removed at the end is always this run's own.
    std::fs::create_dir(&dir)?;
    let edges = dir.join("edges.u32");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&edges)?);
    for a in 0..csr.node_count() as u32 {
        for &b in csr.neighbors(a) {
            if a < b {
                f.write_all(&a.to_le_bytes())?;
                f.write_all(&b.to_le_bytes())?;
            }
        }
    }
    f.flush()?;
    drop(f);
    let queries = dir.join("queries.json");
    let json: Vec<Vec<(u32, f64)>> = qs.to_vec();
    std::fs::write(&queries, serde_json::to_string(&json).expect("json"))?;
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/ppr_igraph.py");
    let out = std::process::Command::new(python)
        .arg(script)
        .arg(&edges)
        .arg(&queries)
        .arg(csr.node_count().to_string())
        .output()?;
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    if !out.status.success() {
        return Err(std::io::Error::other(format!(
            "{python} {script} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    let mut tops = Vec::new();
    let (mut ms, mut info) = (f64::NAN, String::new());
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("top ") {
            tops.push(rest.split(' ').filter_map(|v| v.parse().ok()).collect());
        } else if line == "top" {
            tops.push(Vec::new());
        } else if let Some(rest) = line.strip_prefix("ms_per_query ") {
            ms = rest
                .split_whitespace()
                .next()
                .and_then(|v| v.parse().ok())
                .unwrap_or(f64::NAN);
            info.push_str(line);
        } else {
            info.push_str(line);
            info.push_str("; ");
        }
    }
    Ok((ms, tops, info))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let python = args
        .iter()
        .position(|a| a == "--igraph")
        .and_then(|i| args.get(i + 1))
        .cloned();
    let threads: usize = args
        .iter()
        .position(|a| a == "--threads")
        .and_then(|i| args.get(i + 1))
        .map_or(1, |t| match t.parse() {
            Ok(n @ (1 | 2)) => n,
            _ => panic!("--threads takes 1 or 2, not {t:?}"),
        });
    let label = if threads > 1 { "2 threads" } else { "1 thread" };
    let mut sizes: Vec<usize> = args
        .iter()
        .enumerate()
        .filter(|&(i, _)| i == 0 || !["--threads", "--igraph"].contains(&args[i - 1].as_str()))
        .filter_map(|(_, a)| a.parse().ok())
        .collect();
    if sizes.is_empty() {
        sizes = vec![200_000, 500_000, 1_000_000, 2_000_000];
    }
    println!("{}", corpora::machine_line());
    println!(
        "certified PPR (tie {DEFAULT_TIE:e}, top-{TOP}, floor {MIN_SCORE:e}, damping 0.85) on \
         synthetic MuSiQue-shaped KGs, seed {SEED:#x}, {QUERIES} queries of 1-20 seeds, one thread{}",
        if threads > 1 { " and two" } else { "" }
    );
    let mut last = None;
    let mut per_size = Vec::new();
    for &n in &sizes {
        let (csr, qs, m) = measure(n, threads);
        per_size.push((n, m.ms, m.many_ms));
        last = Some((csr, qs, m));
    }
    if let [(n0, ms0, many0), .., (n1, ms1, many1)] = per_size[..] {
        println!(
            "scaling ({label}): {:.1}x the nodes cost {:.1}x the time per query ({ms0:.2} -> \
             {ms1:.2} ms one query at a time; {many0:.2} -> {many1:.2} ms through \
             certified_ppr_many)",
            n1 as f64 / n0 as f64,
            ms1 / ms0,
        );
    }
    let (Some(python), Some((csr, qs, m))) = (python, last) else {
        println!("(python-igraph reference skipped: pass --igraph PYTHON)");
        return;
    };
    let sub = &qs[..IGRAPH_QUERIES.min(qs.len())];
    match igraph(&python, &csr, sub) {
        Err(e) => println!("python-igraph reference failed: {e}"),
        Ok((ms, tops, info)) => {
            // PRPACK converges to ~1e-10, so only node sets are compared, not tied orders.
            let same = tops
                .iter()
                .zip(&m.tops)
                .filter(|(a, b)| {
                    let x: std::collections::HashSet<u32> = a.iter().copied().collect();
                    let y: std::collections::HashSet<u32> = b.iter().map(|p| p.0).collect();
                    x.symmetric_difference(&y).count() <= 2
                })
                .count();
            println!(
                "python-igraph PRPACK at {} nodes: {ms:.1} ms/query over {} queries ({info}); \
                 certified PPR {:.2} ms/query one at a time ({label}): {:.1}x faster; \
                 {:.2} ms/query through certified_ppr_many ({label}): {:.1}x faster (goal \
                 >= 30x, < 20 ms at 2M); top-{TOP} sets equal up to a boundary tie on {same}/{} \
                 queries (load {})",
                csr.node_count(),
                sub.len(),
                m.ms,
                ms / m.ms,
                m.many_ms,
                ms / m.many_ms,
                sub.len(),
                load()
            );
        }
    }
}
