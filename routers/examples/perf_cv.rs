//! Times 5-fold cross-validation of every built-in offline router on a synthetic set of 8,000
//! routing rows (= 56,000 (query, paradigm) tuples over 7 paradigms) against the 30 s goal, with
//! the real feature layout (the synthetic embedding padded to 384 dims: 403 features).
//!
//! `cargo run --release -p routers --example perf_cv [-- ROWS]`

use std::time::Instant;

use routers::eval::{evaluate, summarize, Candidate, Split};
use routers::{registry, synthetic_set, RouterContext};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rows: usize = match std::env::args().nth(1) {
        Some(s) => s.parse().map_err(|e| format!("ROWS {s:?}: {e}"))?,
        None => 8000,
    };
    let t = Instant::now();
    let set = routers::synthetic::widen_embedding(&synthetic_set(rows, 2024), 384, 7);
    let folds = Split::KFold(5).folds(&set, 7, &[])?;
    let paradigms = set.schema.n_classes() - 1;
    println!(
        "synthetic set: {rows} routing rows = {} (query, paradigm) tuples ({paradigms} paradigms), {} features, built in {:.2} s",
        rows * paradigms,
        set.schema.n_features(),
        t.elapsed().as_secs_f64()
    );
    println!("5-fold CV, rayon threads: {}", rayon::current_num_threads());
    println!(
        "{:<22} {:>9} {:>9} {:>9}",
        "router", "seconds", "accuracy", "fit ms"
    );
    let ctx = RouterContext::new(1);
    let total = Instant::now();
    for e in registry().into_iter().filter(|e| !e.needs_llm) {
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
    println!(
        "total: {total:.2} s for every built-in router (goal: under 30 s) -> {}",
        if total < 30.0 { "met" } else { "NOT met" }
    );
    Ok(())
}
