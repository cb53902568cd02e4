//! Times 5-fold CV of the ML and neural routers on 8,000 synthetic rows with a 384-dim embedding.
//!
//! `cargo run --release -p routers --example perf_models [-- ROUTER ...] [--smartcore]`: per
//! router, the total fit and scoring time over the five folds and the mean held-out accuracy.
//! `--smartcore` also times one binary smartcore SVC (RBF kernel, gamma 1/d) and a 10-tree smartcore
//! random forest on one fold's training rows, the measurements behind `svm` and `rf` being
//! written in this crate.

use std::time::Instant;

use bench_core::routing::argmax;
use bench_core::RoutingSet;
use routers::{registry, synthetic_set, RouterContext};

const N_ROWS: usize = 8000;
const EMBEDDING: usize = 384;

/// The synthetic set with its embedding padded to the encoder's 384 dims.
fn wide_set() -> RoutingSet {
    routers::synthetic::widen_embedding(&synthetic_set(N_ROWS, 42), EMBEDDING, 7)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let smartcore = args.iter().any(|a| a == "--smartcore");
    let wanted: Vec<&str> = args
        .iter()
        .filter(|a| !a.starts_with("--"))
        .map(String::as_str)
        .collect();
    let set = wide_set();
    println!(
        "{} rows x {} features, {} classes",
        set.rows.len(),
        set.schema.n_features(),
        set.schema.n_classes()
    );
    let folds: Vec<Vec<usize>> = (0..5)
        .map(|f| (0..N_ROWS).filter(|i| i % 5 == f).collect())
        .collect();
    let ctx = RouterContext::new(1);
    let mut total = 0.0;
    for e in registry() {
        let mine = ["lr", "svm", "rf", "gbt", "knn", "mlp", "dnn", "two-tower"];
        if !mine.contains(&e.name) || (!wanted.is_empty() && !wanted.contains(&e.name)) {
            continue;
        }
        let (mut fit_s, mut score_s, mut acc) = (0.0, 0.0, 0.0);
        for test_idx in &folds {
            let train_idx: Vec<usize> = (0..N_ROWS).filter(|i| i % 5 != test_idx[0] % 5).collect();
            let (train, test) = (set.subset(&train_idx), set.subset(test_idx));
            let mut r = (e.make)(&ctx, None).expect("router");
            let t = Instant::now();
            r.fit(&train).expect("fit");
            fit_s += t.elapsed().as_secs_f64();
            let t = Instant::now();
            let s = r.scores_batch(&test.schema, &test.rows).expect("scores");
            score_s += t.elapsed().as_secs_f64();
            acc += s
                .iter()
                .zip(&test.rows)
                .filter(|(s, r)| argmax(s) == r.label)
                .count() as f64
                / test.rows.len() as f64;
        }
        total += fit_s + score_s;
        println!(
            "{:10} fit {:6.2} s  score {:6.3} s  accuracy {:.3}",
            e.name,
            fit_s,
            score_s,
            acc / 5.0
        );
    }
    println!("total {total:.2} s");
    if args.iter().any(|a| a == "--lr-grid") {
        lr_grid(&set, &folds);
    }
    if smartcore {
        time_smartcore(&set);
    }
}

fn time_smartcore(set: &RoutingSet) {
    use smartcore::ensemble::random_forest_classifier::{
        RandomForestClassifier, RandomForestClassifierParameters,
    };
    use smartcore::linalg::basic::matrix::DenseMatrix;
    use smartcore::svm::svc::{SVCParameters, SVC};
    use smartcore::svm::Kernels;

    let n = 6400;
    let x: Vec<Vec<f64>> = set.rows[..n].iter().map(|r| r.features.clone()).collect();
    let x = DenseMatrix::from_2d_vec(&x).expect("matrix");
    let y_bin: Vec<i32> = set.rows[..n]
        .iter()
        .map(|r| if r.label == 0 { 1 } else { -1 })
        .collect();
    let t = Instant::now();
    let params = SVCParameters::default()
        .with_c(1.0)
        .with_kernel(Kernels::rbf().with_gamma(1.0 / set.schema.n_features() as f64));
    let svc = SVC::fit(&x, &y_bin, &params).expect("svc");
    println!(
        "smartcore SVC (RBF, 1 binary problem, 6,400 x {}): fit {:.2} s",
        set.schema.n_features(),
        t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    let _ = svc.decision_function(&x).expect("decision");
    println!(
        "smartcore SVC decision values on 6,400 rows: {:.2} s",
        t.elapsed().as_secs_f64()
    );
    let y: Vec<u32> = set.rows[..n].iter().map(|r| r.label as u32).collect();
    let t = Instant::now();
    let params = RandomForestClassifierParameters::default()
        .with_n_trees(10)
        .with_seed(1);
    let _ = RandomForestClassifier::fit(&x, &y, params).expect("rf");
    println!(
        "smartcore RandomForestClassifier (10 trees): fit {:.2} s",
        t.elapsed().as_secs_f64()
    );
}

/// Fit time and accuracy of `lr` on the first fold for a grid of alpha and iteration limits.
fn lr_grid(set: &RoutingSet, folds: &[Vec<usize>]) {
    use bench_core::Router;
    use routers::models::{lr::Logistic, ModelRouter};
    let test_idx = &folds[0];
    let train_idx: Vec<usize> = (0..N_ROWS).filter(|i| i % 5 != 0).collect();
    let (train, test) = (set.subset(&train_idx), set.subset(test_idx));
    for alpha in [1.0f32, 10.0, 100.0] {
        for iters in [10u64, 20, 30, 100] {
            let mut model = Logistic::default();
            model.alpha = alpha;
            model.max_iterations = iters;
            let mut r = ModelRouter::new("lr", model);
            let t = Instant::now();
            r.fit(&train).expect("fit");
            let secs = t.elapsed().as_secs_f64();
            let s = r.scores_batch(&test.schema, &test.rows).expect("scores");
            let acc = s
                .iter()
                .zip(&test.rows)
                .filter(|(s, r)| argmax(s) == r.label)
                .count() as f64
                / test.rows.len() as f64;
            println!("lr alpha {alpha:5} iters {iters:3}: fit {secs:.2} s accuracy {acc:.3}");
        }
    }
}
