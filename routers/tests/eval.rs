//! Cross-validation on synthetic sets: folds, the baselines' known numbers, scrubbing and
//! determinism.

use std::sync::Arc;

use bench_core::{Result, RouteEvalRow, Router, RoutingRow, RoutingSchema, RoutingSet};
use routers::eval::{evaluate, stratified_kfold, summarize, Candidate, Split};
use routers::registry::lookup;
use routers::Family;
use routers::{synthetic_set, synthetic_set_with, RouterContext};

fn ctx() -> RouterContext {
    RouterContext {
        fits: Default::default(),
        seed: 42,
        llm: None,
    }
}

fn pooled<'a>(rows: &'a [RouteEvalRow], router: &str) -> Vec<&'a RouteEvalRow> {
    rows.iter()
        .filter(|r| r.router == router && r.corpus == "*")
        .collect()
}

#[test]
fn kfold_is_stratified_disjoint_and_covering() {
    let set = synthetic_set(403, 1);
    let labels = set.labels();
    let k = 5;
    let folds = stratified_kfold(&labels, k, 9).unwrap();
    assert_eq!(folds.len(), k);
    let mut seen = vec![0usize; labels.len()];
    for f in &folds {
        for &i in &f.test {
            seen[i] += 1;
        }
        assert_eq!(f.train.len() + f.test.len(), labels.len());
        assert!(f.train.iter().all(|i| !f.test.contains(i)));
        for c in 0..8 {
            let total = labels.iter().filter(|&&l| l == c).count() as f64;
            let here = f.test.iter().filter(|&&i| labels[i] == c).count() as f64;
            assert!(
                (here - total / k as f64).abs() <= 1.0,
                "class {c}: {here} of {total}"
            );
        }
    }
    assert!(
        seen.iter().all(|&n| n == 1),
        "every row in exactly one test fold"
    );
    assert_eq!(folds, stratified_kfold(&labels, k, 9).unwrap());
    assert_ne!(folds, stratified_kfold(&labels, k, 10).unwrap());
    assert!(stratified_kfold(&labels, 1, 0).is_err());
    assert!(stratified_kfold(&labels[..3], 5, 0).is_err());
}

#[test]
fn loco_holds_out_each_corpus() {
    let set = synthetic_set_with(60, 3, 2);
    let folds = Split::Loco.folds(&set, 0, &[]).unwrap();
    assert_eq!(folds.len(), 3);
    for (c, f) in folds.iter().enumerate() {
        let name = format!("synth-{c}");
        assert!(f.test.iter().all(|&i| set.rows[i].corpus == name));
        assert!(f.train.iter().all(|&i| set.rows[i].corpus != name));
        assert_eq!(f.test.len(), 20);
    }
    assert!(Split::Loco
        .folds(&synthetic_set_with(10, 1, 0), 0, &[])
        .is_err());
    assert!(Split::parse("loo", 5).is_err());
}

fn baselines() -> Vec<Candidate> {
    ["random", "best-fixed", "oracle"]
        .iter()
        .map(|n| Candidate::from(lookup(n).unwrap()))
        .collect()
}

#[test]
fn oracle_is_perfect_and_random_is_chance() {
    let set = synthetic_set(2000, 4);
    let folds = Split::KFold(5).folds(&set, 1, &[]).unwrap();
    let ev = evaluate(&set, &baselines(), &folds, &ctx()).unwrap();
    assert!(ev.skipped.is_empty());
    // Per fold: one pooled row and one per corpus.
    assert_eq!(ev.rows.len(), 3 * 5 * 5);
    for r in pooled(&ev.rows, "oracle") {
        assert_eq!(
            (r.measures.accuracy, r.measures.macro_f1, r.measures.mrr),
            (1.0, 1.0, 1.0)
        );
        assert_eq!(
            (r.measures.regret_correct, r.measures.regret_tokens),
            (0.0, 0.0)
        );
        // Synthetic: cannot-answer is 1/8 of the rows, the rest have a correct label.
        assert!(
            (r.measures.correct_rate - 0.875).abs() < 0.03,
            "{}",
            r.measures.correct_rate
        );
    }
    // Random picks one of 7 paradigms uniformly: it hits the label on (1 - p_ca) / 7 of rows.
    let n = set.rows.len() as f64;
    let p_ca = set.rows.iter().filter(|r| r.label == 7).count() as f64 / n;
    let p = (1.0 - p_ca) / 7.0;
    let acc: f64 = pooled(&ev.rows, "random")
        .iter()
        .map(|r| r.measures.accuracy * f64::from(r.n))
        .sum::<f64>()
        / n;
    let tol = 4.0 * (p * (1.0 - p) / n).sqrt();
    assert!(
        (acc - p).abs() < tol,
        "random accuracy {acc}, expected {p} ± {tol}"
    );
    for r in pooled(&ev.rows, "random") {
        assert!(r.measures.regret_correct > 0.0);
    }
    // Best-fixed: exactly the share of test rows whose chosen paradigm is correct.
    for r in pooled(&ev.rows, "best-fixed") {
        assert!(r.measures.accuracy > 0.05 && r.measures.accuracy < 0.3);
        assert!(r.measures.regret_correct > 0.2);
    }
}

#[test]
fn same_seed_same_numbers() {
    let set = synthetic_set(300, 5);
    let run = |seed: u64| {
        let folds = Split::KFold(4).folds(&set, seed, &[]).unwrap();
        let mut rows = evaluate(&set, &baselines(), &folds, &RouterContext::new(seed))
            .unwrap()
            .rows;
        for r in &mut rows {
            r.measures.latency_ms = 0.0;
            r.measures.fit_ms = 0.0;
        }
        rows
    };
    assert_eq!(run(3), run(3));
    assert_ne!(run(3), run(4));
}

/// A router that answers with the label of the row it scores: it must be scrubbed to 0.
#[derive(Debug)]
struct Peeker;

impl Router for Peeker {
    fn name(&self) -> &str {
        "peeker"
    }
    fn fit(&mut self, _: &RoutingSet) -> Result<()> {
        Ok(())
    }
    fn scores(&self, schema: &RoutingSchema, row: &RoutingRow) -> Result<Vec<f64>> {
        let seen = row.outcomes.iter().filter(|o| o.is_some()).count() as f64;
        Ok((0..schema.n_classes())
            .map(|c| if c == row.label { 1.0 + seen } else { 0.0 })
            .collect())
    }
}

#[test]
fn test_rows_are_scrubbed_for_routers_that_may_not_peek() {
    let set = synthetic_set(400, 6);
    let peeker = Candidate {
        name: "peeker".into(),
        family: Family::External,
        needs_llm: false,
        sees_outcomes: false,
        lanes: Vec::new(),
        sweep: vec![],
        make: Arc::new(|_, _| Ok(Box::new(Peeker) as Box<dyn Router>)),
    };
    let folds = Split::KFold(5).folds(&set, 0, &[]).unwrap();
    let ev = evaluate(&set, &[peeker], &folds, &ctx()).unwrap();
    let share0 = set.rows.iter().filter(|r| r.label == 0).count() as f64 / 400.0;
    let s = summarize(&ev.rows);
    let all = s.iter().find(|s| s.corpus == "*").unwrap();
    // Label scrubbed to 0: it always says class 0, right exactly on class-0 rows.
    assert!(
        (all.mean.accuracy - share0).abs() < 0.02,
        "{} vs {share0}",
        all.mean.accuracy
    );
}

#[test]
fn learning_routers_learn_the_synthetic_rule() {
    // The rule is linear in (query type, LCC ratio): LR, random forest and MLP must find it.
    let set = synthetic_set(800, 7);
    let folds = Split::KFold(5).folds(&set, 0, &[]).unwrap();
    for name in ["lr", "rf", "mlp"] {
        let Ok(entry) = lookup(name) else { continue };
        let ev = evaluate(&set, &[Candidate::from(entry)], &folds, &ctx()).unwrap();
        let s = summarize(&ev.rows);
        let all = s.iter().find(|s| s.corpus == "*").unwrap();
        assert!(
            all.mean.accuracy > 0.9,
            "{name}: accuracy {}",
            all.mean.accuracy
        );
    }
}

#[test]
fn needs_llm_routers_are_skipped_offline() {
    let set = synthetic_set(40, 1);
    let mut c = Candidate::from(lookup("random").unwrap());
    c.needs_llm = true;
    let folds = Split::KFold(2).folds(&set, 0, &[]).unwrap();
    let ev = evaluate(&set, &[c], &folds, &ctx()).unwrap();
    assert!(ev.rows.is_empty());
    assert_eq!(ev.skipped.len(), 1);
}

#[test]
fn a_router_failing_on_one_fold_is_left_out_whole_and_the_others_measured() {
    let set = synthetic_set(80, 3);
    let folds = Split::KFold(4).folds(&set, 0, &[]).unwrap();
    let mut broken = Candidate::from(lookup("best-fixed").unwrap());
    broken.name = "broken".into();
    // Fails to build on the third fold only (the builder is called once per fold).
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    broken.make = Arc::new(move |ctx: &RouterContext, p: Option<f64>| {
        if calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 2 {
            Err(bench_core::BenchError::Other(
                "no lane for this fold".into(),
            ))
        } else {
            (lookup("best-fixed").unwrap().make)(ctx, p)
        }
    });
    let ev = evaluate(
        &set,
        &[broken, Candidate::from(lookup("oracle").unwrap())],
        &folds,
        &ctx(),
    )
    .unwrap();
    assert!(ev.rows.iter().all(|r| r.router == "oracle"));
    assert_eq!(pooled(&ev.rows, "oracle").len(), 4);
    // A failure is reported apart from skips (which are not failures).
    assert!(ev.skipped.is_empty());
    assert_eq!(ev.failed.len(), 1);
    assert_eq!(ev.failed[0].0, "broken");
    assert!(
        ev.failed[0].1.contains("no lane for this fold"),
        "{:?}",
        ev.failed
    );
}
