//! Times every corpus metric on a seeded synthetic input of MuSiQue's size (run with --release).
//!
//! `cargo run --release -p metrics --example perf_metrics [-- SEED] [--python PYTHON]`
//!
//! Prints the machine (CPU, gemm kernel, load), the sgemm peak of the widest gemm kernel, each
//! stage's time (where the time goes), the kNN pass's screen (bfloat16 on AVX-512 BF16, else
//! float32 gemm) and its Gram products as a share of the peak, the whole pass (median of three
//! runs) and, where the bfloat16 screen ran, the same kNN pass through the float32 one, checked
//! equal bit for bit. With `--python PYTHON` (a Python with the packages `scripts/metrics_reference.py`
//! names, e.g. the venv `just perf` makes) the same input runs through that reference in the same
//! run: its stages, the ratio of the two whole passes and the values side by side; and, when that
//! Python has faiss, faiss's exact 10-NN graph of the same rows (`scripts/knn_faiss.py`, best of
//! 3, under each OpenBLAS kernel setting, the fastest kept) against our whole pass.

use std::fmt::Write as _;
use std::io::Cursor;
use std::time::Instant;

use metrics::corpus::embedding::{self, HUBNESS_K};
use metrics::corpus::graph::{self, Graph};
use metrics::corpus::knn;
use metrics::corpus::CorpusMetrics;

#[allow(dead_code)]
#[path = "../../corpora/src/index/kernel.rs"]
mod kernel;
#[path = "../../corpora/examples/common/peak.rs"]
mod peak;

const NODES: usize = 206_738;
const TRIPLES: usize = 276_898;
const RELATIONS: usize = 44_766;
const ROWS: usize = 21_153;
const DIM: usize = 384;

/// The shared SplitMix64 stream, drawn as this example always has (so its synthetic input stays
/// that of the recorded runs).
struct SplitMix(bench_core::rng::SplitMix64);

impl SplitMix {
    fn new(seed: u64) -> Self {
        SplitMix(bench_core::rng::SplitMix64::new(seed))
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        self.0.next_f64()
    }
    fn below(&mut self, n: usize) -> usize {
        (self.unit() * n as f64) as usize
    }
    fn normal(&mut self) -> f64 {
        self.0.normal()
    }
}

/// A KG-like TSV: every node appears, hub-heavy tails, some local closure (triangles),
/// Zipf-like relations, a few self-loops and repeated triples.
fn synthetic_tsv(rng: &mut SplitMix) -> String {
    let mut out = String::with_capacity(TRIPLES * 40);
    for t in 0..TRIPLES {
        let head = if t < NODES { t } else { rng.below(NODES) };
        let roll = rng.unit();
        let tail = if roll < 0.002 {
            head
        } else if roll < 0.35 {
            (head + 1 + rng.below(6)) % NODES
        } else {
            // u^3 concentrates tails on low ids: a few hubs with large degree.
            (NODES as f64 * rng.unit().powi(3)) as usize
        };
        let relation = if t < RELATIONS {
            t
        } else {
            (RELATIONS as f64 * rng.unit().powi(2)) as usize
        };
        writeln!(out, "entity_{head:06}\trel_{relation}\tentity_{tail:06}").unwrap();
    }
    out
}

/// Clustered unit-ish vectors (the metrics normalise them) with ~1% exact duplicate rows.
fn synthetic_embeddings(rng: &mut SplitMix) -> Vec<f32> {
    let centres: Vec<Vec<f64>> = (0..300)
        .map(|_| (0..DIM).map(|_| rng.normal()).collect())
        .collect();
    let mut data = Vec::with_capacity(ROWS * DIM);
    for r in 0..ROWS {
        if r > 0 && rng.unit() < 0.01 {
            let src = rng.below(r);
            let copy = data[src * DIM..(src + 1) * DIM].to_vec();
            data.extend(copy);
            continue;
        }
        let c = &centres[rng.below(centres.len())];
        let row: Vec<f64> = c.iter().map(|&x| 0.8 * x + rng.normal()).collect();
        let norm = row.iter().map(|x| x * x).sum::<f64>().sqrt();
        data.extend(row.iter().map(|&x| (x / norm) as f32));
    }
    data
}

/// CPU seconds used by this process so far (user + system), from /proc; 0 where unavailable.
/// Printed next to wall time because the machine may be shared with other work.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // Clock ticks are 100 per second on Linux.
    (ticks(11) + ticks(12)) / 100.0
}

fn timed<T>(label: &str, f: impl FnOnce() -> T) -> T {
    let (start, cpu) = (Instant::now(), cpu_seconds());
    let value = f();
    println!(
        "{label:<28} {:>9.3} s wall {:>8.2} s cpu",
        start.elapsed().as_secs_f64(),
        cpu_seconds() - cpu
    );
    value
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let python = args
        .iter()
        .position(|a| a == "--python")
        .and_then(|i| args.get(i + 1))
        .cloned();
    let seed: u64 = args
        .first()
        .filter(|a| !a.starts_with("--"))
        .map(|s| s.parse().expect("seed must be an integer"))
        .unwrap_or(20_240_611);
    println!("{}", kernel::machine_line());
    let peak = peak::sgemm_peak();
    println!(
        "sgemm peak, gemm kernel {}, 2048^3 f32, best of 5: {:.1} GFLOP/s",
        kernel::gemm_kernel(),
        peak / 1e9
    );
    println!(
        "threads: {}, seed {seed}; generating {NODES} nodes / {TRIPLES} triples / {RELATIONS} relations, {ROWS} x {DIM} embeddings",
        rayon::current_num_threads()
    );
    let mut rng = SplitMix::new(seed);
    let tsv = synthetic_tsv(&mut rng);
    let data = synthetic_embeddings(&mut rng);

    println!("-- per metric (sequential stages)");
    let (total, total_cpu) = (Instant::now(), cpu_seconds());
    let list = timed("parse TSV", || {
        graph::parse_edges_tsv(Cursor::new(tsv.as_bytes()), "synthetic.tsv").unwrap()
    });
    let g = timed("graph build (dedup, CSR)", || Graph::from_edge_list(&list));
    let (cc, lcc) = timed("connected components", || graph::components(&g));
    let clustering = timed("average clustering", || graph::average_clustering(&g));
    let gm = timed("counts/density/degree", || {
        graph::metrics_from_parts(&list, &g, cc, lcc, clustering)
    });
    let unit = timed("L2-normalise rows", || {
        embedding::unit_rows(&data, DIM).unwrap()
    });
    let t_knn = Instant::now();
    let (nn, screen) = timed("kNN pass (k=10, r1, r2)", || {
        knn::knn_pass_with(&unit, HUBNESS_K, knn::ScreenKernel::best())
    });
    // The symmetric half of the Gram matrix: rows^2 * dim multiply-adds, 2 FLOPs each, halved.
    let gram = (ROWS * ROWS * DIM) as f64 / t_knn.elapsed().as_secs_f64();
    println!(
        "  kNN pass: screen {}, {} of {ROWS} rows screened again; {:.1} GFLOP/s of Gram products \
         over the whole pass = {:.1} % of the {} f32 peak ({:.0}x its rate per multiply-add)",
        screen.kernel.name(),
        screen.rescreened,
        gram / 1e9,
        100.0 * gram / peak,
        kernel::gemm_kernel(),
        screen.kernel.rate_over_f32()
    );
    let two = timed("TwoNN (mle + linear fit)", || {
        embedding::twonn(&nn.r1, &nn.r2)
    });
    let hub = timed("hubness (N_10 skew)", || embedding::hubness(&nn));
    let disp = timed("dispersion (raw centroid)", || {
        embedding::dispersion(&data, DIM)
    });
    let disp_unit = timed("dispersion (unit centroid)", || {
        embedding::dispersion(&unit.f64, DIM)
    });
    let em = embedding::metrics_from_parts(unit.rows, DIM, &two, &hub, &disp, &disp_unit);
    println!(
        "{:<28} {:>9.3} s wall {:>8.2} s cpu",
        "TOTAL (stages)",
        total.elapsed().as_secs_f64(),
        cpu_seconds() - total_cpu
    );

    println!("-- whole pass through the public entry points");
    // Three runs, the median kept: one run on a shared 2-core machine moves by 10 %.
    let mut runs = Vec::new();
    let mut whole_metrics = None;
    for _ in 0..3 {
        let (whole, whole_cpu) = (Instant::now(), cpu_seconds());
        // As `ragrouter metrics --edges --embeddings` runs them: the graph beside the embeddings.
        let pair = rayon::join(
            || {
                let list = graph::parse_edges_tsv(Cursor::new(tsv.as_bytes()), "synthetic.tsv");
                graph::graph_metrics(&list.unwrap())
            },
            || embedding::embedding_metrics(&data, DIM).unwrap(),
        );
        runs.push((whole.elapsed().as_secs_f64(), cpu_seconds() - whole_cpu));
        whole_metrics = Some(pair);
    }
    let (gm2, em2) = whole_metrics.expect("three runs");
    let mut walls: Vec<f64> = runs.iter().map(|r| r.0).collect();
    walls.sort_by(f64::total_cmp);
    let whole_s = walls[1];
    for (run, (wall, cpu)) in runs.iter().enumerate() {
        println!(
            "{:<28} {:>9.3} s wall {:>8.2} s cpu",
            format!("TOTAL (whole, run {})", run + 1),
            wall,
            cpu
        );
    }
    println!(
        "{:<28} {:>9.3} s wall (median of 3)",
        "TOTAL (whole)", whole_s
    );
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("(load average while measuring: {})", load.trim());
    assert_eq!(gm, gm2, "stage-wise and whole graph metrics differ");
    assert_eq!(em, em2, "stage-wise and whole embedding metrics differ");

    if screen.kernel != knn::ScreenKernel::F32Gemm {
        println!("-- the kNN pass through the f32 gemm screen, same rows (outside the totals)");
        let t = Instant::now();
        let (f32nn, f32s) = knn::knn_pass_with(&unit, HUBNESS_K, knn::ScreenKernel::F32Gemm);
        let same = f32nn.neighbours == nn.neighbours
            && f32nn
                .r1
                .iter()
                .zip(&nn.r1)
                .all(|(a, b)| a.to_bits() == b.to_bits())
            && f32nn
                .r2
                .iter()
                .zip(&nn.r2)
                .all(|(a, b)| a.to_bits() == b.to_bits());
        println!(
            "  the same pass with the f32 gemm screen: {:.3} s wall, {} rows screened again, \
             results {}",
            t.elapsed().as_secs_f64(),
            f32s.rescreened,
            if same {
                "identical bit for bit"
            } else {
                "DIFFERENT"
            }
        );
        assert!(same, "the screens must give the same kNN result");
    }

    let report = CorpusMetrics {
        graph: Some(gm),
        embeddings: Some(em),
    };
    let ours = report.flat_map();
    for (k, v) in ours.iter() {
        println!("  {k:<48} {v}");
    }
    if let Some(python) = python {
        reference(&python, &tsv, &data, whole_s, &ours);
    }
    println!("{}", kernel::machine_line());
}

/// Runs `scripts/metrics_reference.py` on the same input and prints the ratio and the values.
fn reference(
    python: &str,
    tsv: &str,
    data: &[f32],
    whole_s: f64,
    ours: &serde_json::Map<String, serde_json::Value>,
) {
    let dir = std::env::temp_dir().join(format!("perf_metrics-{}", std::process::id()));
    // Created exclusively: the folder removed at the end is always this run's own.
    std::fs::create_dir(&dir).expect("a new temp dir");
    let (edges, emb) = (dir.join("edges.tsv"), dir.join("emb.f32"));
    std::fs::write(&edges, tsv).expect("write edges");
    let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(&emb, bytes).expect("write embeddings");
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scripts/metrics_reference.py"
    );
    let out = std::process::Command::new(python)
        .args([script, &edges.to_string_lossy(), &emb.to_string_lossy()])
        .arg(DIM.to_string())
        .output();
    faiss_reference(python, &emb, whole_s, ours);
    let _ = std::fs::remove_dir_all(&dir);
    let Some(out) = stdout_of(out, "python", python) else {
        return;
    };
    println!("-- python reference (networkx, scikit-learn, scikit-dimension), same input");
    let mut total = f64::NAN;
    for line in out.lines() {
        if let Some(rest) = line.strip_prefix("stage ") {
            println!("  {rest}");
        } else if let Some(rest) = line.strip_prefix("total_s ") {
            total = rest.trim().parse().unwrap_or(f64::NAN);
        } else if let Some(rest) = line.strip_prefix("value ") {
            let (key, value) = rest.split_once(' ').unwrap_or((rest, ""));
            let mine = ours.get(key).map_or("-".to_string(), |v| v.to_string());
            println!("  {key:<40} python {value:<24} ours {mine}");
        } else {
            println!("  {line}");
        }
    }
    println!(
        "whole pass: ours {whole_s:.3} s (median of 3), python {total:.3} s (once): {:.1}x (goal >= 20x) (load {})",
        total / whole_s,
        kernel::load_average()
    );
}

/// Runs `scripts/knn_faiss.py` on the same rows (when the Python has faiss) and prints its
/// exact 10-NN graph's time against our whole pass, and its hubness values beside ours.
fn faiss_reference(
    python: &str,
    emb: &std::path::Path,
    whole_s: f64,
    ours: &serde_json::Map<String, serde_json::Value>,
) {
    let has_faiss = std::process::Command::new(python)
        .args(["-c", "import faiss"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_faiss {
        println!("(faiss reference skipped: {python} has no faiss; scripts/perf-venv.sh installs faiss-cpu)");
        return;
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/knn_faiss.py");
    println!(
        "-- faiss reference: exact 10-NN graph (IndexFlatIP, add + search of every row), same rows"
    );
    // The wheel's OpenBLAS picks its kernel from OPENBLAS_CORETYPE, or, unset, from its own CPU
    // detection (0.3.15 names this CPU "Barcelona", its slowest path): each setting runs in its
    // own process and the fastest is the reference, so ours is held to faiss at its best here.
    let mut faiss_s = f64::NAN;
    for core in [None, Some("SkylakeX"), Some("Haswell")] {
        let mut cmd = std::process::Command::new(python);
        cmd.args([script, &emb.to_string_lossy()])
            .arg(DIM.to_string())
            .env_remove("OPENBLAS_L2_SIZE");
        match core {
            Some(c) => cmd.env("OPENBLAS_CORETYPE", c),
            None => cmd.env_remove("OPENBLAS_CORETYPE"),
        };
        let Some(out) = stdout_of(cmd.output(), "faiss", python) else {
            return;
        };
        for line in out.lines() {
            if let Some(rest) = line.strip_prefix("faiss_knn_s ") {
                let s: f64 = rest.trim().parse().unwrap_or(f64::NAN);
                println!(
                    "  OPENBLAS_CORETYPE={:<9} faiss {s:.3} s (best of 3)",
                    core.unwrap_or("unset")
                );
                faiss_s = faiss_s.min(s);
            } else if let Some(rest) = line.strip_prefix("value ") {
                // The neighbours are the same whatever the kernel: their values once.
                if core.is_none() {
                    let (key, value) = rest.split_once(' ').unwrap_or((rest, ""));
                    let mine = ours.get(key).map_or("-".to_string(), |v| v.to_string());
                    println!("  {key:<40} faiss {value:<24} ours {mine}");
                }
            } else if core.is_none() {
                println!("  {line}");
            }
        }
    }
    println!(
        "whole pass against faiss's 10-NN graph alone: ours {whole_s:.3} s (median of 3), faiss {faiss_s:.3} s (its best setting): \
         {:.2}x -> {} (goal: ours faster) (load {})",
        faiss_s / whole_s,
        if whole_s < faiss_s { "met" } else { "NOT met" },
        kernel::load_average()
    );
}

/// A reference script's standard output, or `None` after saying why it has none.
fn stdout_of(
    out: std::io::Result<std::process::Output>,
    what: &str,
    python: &str,
) -> Option<String> {
    match out {
        Ok(o) if o.status.success() => Some(String::from_utf8_lossy(&o.stdout).to_string()),
        Ok(o) => {
            println!(
                "{what} reference failed: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            None
        }
        Err(e) => {
            println!("{what} reference could not start ({python}): {e}");
            None
        }
    }
}
