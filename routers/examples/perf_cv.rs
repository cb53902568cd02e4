//! Times 5-fold cross-validation of every built-in offline router on a synthetic set of 8,000
//! routing rows (= 56,000 (query, paradigm) tuples over 7 paradigms) against the 30 s goal, with
//! the real feature layout (the synthetic embedding padded to 384 dims: 403 features).
//!
//! `cargo run --release -p routers --example perf_cv [-- ROWS] [--budget SECONDS] [--only NAME]
//! [--features F] [--corpora N]`
//!
//! `--features` restricts the set to one configuration of `route eval` (`q`, `c`, `q+c`; default
//! every block); `--corpora` spreads the rows over N corpora (default 4). `--features c` with
//! three corpora is README's Figure-5 shape: three distinct feature vectors for every row.
//!
//! With `--budget`, every router runs in a child process of this example (`--only NAME`) that is
//! stopped when it passes the budget: at 100,000 rows some routers cannot finish, and the run
//! names them instead of never ending. Each child builds the same seeded set (not timed).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use routers::eval::{evaluate, summarize, Candidate, Split};
use routers::synthetic::synthetic_set_with;
use routers::{registry, FeatureSet, RouterContext, RouterEntry};

/// The value after `flag` on the command line.
fn flag(args: &[String], flag: &str) -> Option<String> {
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rows: usize = match args.first().filter(|a| !a.starts_with("--")) {
        Some(s) => s.parse().map_err(|e| format!("ROWS {s:?}: {e}"))?,
        None => 8000,
    };
    let only = flag(&args, "--only");
    if let Some(o) = &only {
        if chosen(Some(o)).is_empty() {
            let known: Vec<&str> = chosen(None).iter().map(|e| e.name).collect();
            return Err(format!(
                "--only {o:?}: no offline router of that name (known: {})",
                known.join(", ")
            )
            .into());
        }
    }
    let features: Option<FeatureSet> = flag(&args, "--features").map(|f| f.parse()).transpose()?;
    let n_corpora: usize = match flag(&args, "--corpora") {
        Some(s) => s.parse().map_err(|e| format!("--corpora {s:?}: {e}"))?,
        None => 4,
    };
    if let Some(budget) = flag(&args, "--budget") {
        let budget: f64 = budget
            .parse()
            .map_err(|e| format!("--budget {budget:?}: {e}"))?;
        return supervise(rows, budget, only.as_deref(), &args);
    }
    let t = Instant::now();
    let set =
        routers::synthetic::widen_embedding(&synthetic_set_with(rows, n_corpora, 2024), 384, 7);
    // Projected only when asked: at 100,000 rows the set is ~320 MB, not to be copied.
    let set = match features {
        Some(f) => f.apply(&set),
        None => set,
    };
    let folds = Split::KFold(5).folds(&set, 7, &[])?;
    let paradigms = set.schema.n_classes() - 1;
    println!(
        "synthetic set: {rows} routing rows over {n_corpora} corpora = {} (query, paradigm) tuples ({paradigms} paradigms), {} features ({}), built in {:.2} s",
        rows * paradigms,
        set.schema.n_features(),
        features.map_or("every block", |f| f.as_str()),
        t.elapsed().as_secs_f64()
    );
    println!("5-fold CV, rayon threads: {}", rayon::current_num_threads());
    println!(
        "{:<22} {:>9} {:>9} {:>9}",
        "router", "seconds", "accuracy", "fit ms"
    );
    let ctx = RouterContext::new(1);
    let total = Instant::now();
    for e in chosen(only.as_deref()) {
        let c = Candidate::from(e);
        let t = Instant::now();
        let ev = evaluate(&set, std::slice::from_ref(&c), &folds, &ctx)?;
        let secs = t.elapsed().as_secs_f64();
        let s = summarize(&ev.rows);
        for s in s.iter().filter(|s| s.corpus == "*") {
            println!(
                "{:<22} {:>9.2} {:>9.3} {:>9.1}",
                routers::table::router_label(&s.router, s.param),
                secs / c.sweep.len().max(1) as f64,
                s.mean.accuracy,
                s.mean.fit_ms
            );
        }
    }
    let total = total.elapsed().as_secs_f64();
    if only.is_none() {
        println!(
            "total: {total:.2} s for every built-in router (goal: under 30 s) -> {}",
            if total < 30.0 { "met" } else { "NOT met" }
        );
    }
    Ok(())
}

/// The offline routers, or the one `only` names (none when no offline router has that name).
fn chosen(only: Option<&str>) -> Vec<RouterEntry> {
    registry()
        .into_iter()
        .filter(|e| !e.needs_llm && only.is_none_or(|o| o == e.name))
        .collect()
}

/// The `--features` and `--corpora` pairs of the command line, for a child.
fn passed_on(args: &[String]) -> Vec<String> {
    ["--features", "--corpora"]
        .iter()
        .filter_map(|f| flag(args, f).map(|v| [f.to_string(), v]))
        .flatten()
        .collect()
}

/// Runs every offline router (or the one `--only` names) in its own child (`--only NAME`),
/// stopping any that passes `budget` seconds; prints each child's table row and the routers
/// that did not finish.
fn supervise(
    rows: usize,
    budget: f64,
    only: Option<&str>,
    args: &[String],
) -> Result<(), Box<dyn std::error::Error>> {
    let exe = std::env::current_exe()?;
    println!("{}", corpora::machine_line());
    println!("{rows} routing rows, 5-fold CV, each router in a child stopped after {budget} s");
    let (mut finished, mut stopped) = (0.0f64, Vec::new());
    for e in chosen(only) {
        let t = Instant::now();
        let mut child = Command::new(&exe)
            .args([rows.to_string(), "--only".into(), e.name.to_string()])
            .args(passed_on(args))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let status = loop {
            if let Some(status) = child.try_wait()? {
                break Some(status);
            }
            if t.elapsed().as_secs_f64() > budget {
                child.kill()?;
                child.wait()?;
                break None;
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        let out = {
            use std::io::Read as _;
            let mut s = String::new();
            if let Some(mut o) = child.stdout.take() {
                o.read_to_string(&mut s)?;
            }
            s
        };
        match status {
            Some(s) if s.success() => {
                // The child's own router rows (its timing excludes building the set).
                for line in out.lines().skip(3) {
                    println!("{line}");
                    if let Some(secs) = line.split_whitespace().nth_back(2) {
                        finished += secs.parse::<f64>().unwrap_or(0.0);
                    }
                }
            }
            Some(s) => println!("{:<22} failed ({s})", e.name),
            None => {
                println!("{:<22} stopped after {budget} s: did not finish", e.name);
                stopped.push(e.name);
            }
        }
    }
    println!(
        "finished routers: {finished:.1} s of CV in total (goal: every router, under 60 s); \
         stopped at the budget: {}",
        if stopped.is_empty() {
            "none".to_string()
        } else {
            stopped.join(", ")
        }
    );
    println!("{}", corpora::machine_line());
    Ok(())
}
