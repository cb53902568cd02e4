//! The shared conformance test: every registered router (and the external example) obeys the
//! `Router` contract on a synthetic set.

use std::path::PathBuf;

use bench_core::routing::argmax;
use bench_core::{Router, RoutingSet};
use routers::eval::{scrub, Candidate};
use routers::external::ExternalSpec;
use routers::{registry, synthetic_set_with, Family, RouterContext};

fn ctx(seed: u64) -> RouterContext {
    RouterContext::new(seed)
}

/// Every registry entry that runs offline, plus the Python example over the protocol.
fn candidates() -> Vec<Candidate> {
    let mut out: Vec<Candidate> = registry()
        .into_iter()
        .filter(|e| !e.needs_llm)
        .map(Candidate::from)
        .collect();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/external_router.py");
    let spec = ExternalSpec::parse(&format!("external-example=python3 {}", script.display()))
        .expect("spec parses");
    out.push(spec.candidate());
    out
}

fn scores(c: &Candidate, seed: u64, train: &RoutingSet, test: &RoutingSet) -> Vec<Vec<f64>> {
    let mut r: Box<dyn Router> = (c.make)(&ctx(seed), c.sweep.first().copied())
        .unwrap_or_else(|e| panic!("{}: make: {e}", c.name));
    r.fit(train)
        .unwrap_or_else(|e| panic!("{}: fit: {e}", c.name));
    r.scores_batch(&test.schema, &test.rows)
        .unwrap_or_else(|e| panic!("{}: scores: {e}", c.name))
}

#[test]
fn every_router_keeps_the_contract() {
    let set = synthetic_set_with(96, 2, 11);
    let k = set.schema.n_classes();
    let (train_idx, test_idx): (Vec<usize>, Vec<usize>) =
        (0..set.rows.len()).partition(|i| i % 4 != 0);
    let train = set.subset(&train_idx);
    let test = set.subset(&test_idx);
    let scrubbed = RoutingSet {
        schema: test.schema.clone(),
        rows: test.rows.iter().map(scrub).collect(),
    };
    let all = candidates();
    assert!(all.iter().any(|c| c.name == "oracle") && all.iter().any(|c| c.name == "random"));
    for c in &all {
        let a = scores(c, 5, &train, &test);
        assert_eq!(
            a.len(),
            test.rows.len(),
            "{}: one score list per row",
            c.name
        );
        for s in &a {
            assert_eq!(s.len(), k, "{}: one score per class", c.name);
            assert!(
                s.iter().all(|v| v.is_finite()),
                "{}: non-finite score {s:?}",
                c.name
            );
            assert!(argmax(s) < k);
        }
        // Same seed, same scores.
        assert_eq!(
            a,
            scores(c, 5, &train, &test),
            "{}: not deterministic",
            c.name
        );
        // predict agrees with the scores.
        let mut r = (c.make)(&ctx(5), c.sweep.first().copied()).unwrap();
        r.fit(&train).unwrap();
        assert_eq!(
            r.predict(&test.schema, &test.rows[0]).unwrap(),
            argmax(&a[0]),
            "{}",
            c.name
        );
        // Scrubbed rows (what the evaluation passes) score the same: no peeking.
        if !c.sees_outcomes {
            assert_eq!(
                a,
                scores(c, 5, &train, &scrubbed),
                "{}: reads labels or outcomes",
                c.name
            );
        }
    }
}

#[test]
fn every_router_fits_a_single_class_training_set() {
    let set = synthetic_set_with(120, 2, 12);
    // All rows of one class (graph: reasoning questions on a high-LCC corpus).
    let idx: Vec<usize> = (0..set.rows.len())
        .filter(|&i| set.rows[i].label == 2)
        .collect();
    assert!(idx.len() >= 5);
    let one = set.subset(&idx);
    for c in &candidates() {
        let s = scores(c, 1, &one, &set);
        assert!(
            s.iter().flatten().all(|v| v.is_finite()),
            "{}: non-finite scores after a one-class fit",
            c.name
        );
        let learns_labels = matches!(c.family, Family::Ml | Family::Neural | Family::External)
            || c.name == "best-fixed";
        if learns_labels {
            // With one class seen, a router that learns labels predicts it (rule-based seed
            // routers and Random may ignore the training labels).
            let hits = s.iter().filter(|v| argmax(v) == 2).count();
            assert!(
                hits * 2 > s.len(),
                "{}: predicts the only class on {hits}/{} rows",
                c.name,
                s.len()
            );
        }
    }
}

#[test]
fn external_router_errors_are_clear() {
    let set = synthetic_set_with(20, 2, 3);
    // A program that is not there.
    let spec = ExternalSpec::parse("missing=/nonexistent/router-program").unwrap();
    let mut r = (spec.candidate().make)(&ctx(0), None).unwrap();
    let e = r.fit(&set).unwrap_err().to_string();
    assert!(e.contains("missing") && e.contains("cannot start"), "{e}");
    // A program that answers with an error and writes to stderr.
    // A program that answers with an error and writes to stderr (argv built by hand: the
    // script has spaces).
    let spec = ExternalSpec {
        name: "failing".into(),
        argv: vec![
            "python3".into(),
            "-c".into(),
            "import sys; sys.stdin.readline(); print('boom', file=sys.stderr, flush=True); print('{\"error\": \"no model\"}', flush=True)".into(),
        ],
        timeout: std::time::Duration::from_secs(20),
    };
    let mut r = (spec.candidate().make)(&ctx(0), None).unwrap();
    let e = r.fit(&set).unwrap_err().to_string();
    assert!(e.contains("no model") && e.contains("boom"), "{e}");
    // A program that never answers: the timeout kills it.
    let spec = ExternalSpec {
        name: "silent".into(),
        argv: vec![
            "python3".into(),
            "-c".into(),
            "import time; time.sleep(30)".into(),
        ],
        timeout: std::time::Duration::from_millis(300),
    };
    let mut r = (spec.candidate().make)(&ctx(0), None).unwrap();
    let e = r.fit(&set).unwrap_err().to_string();
    assert!(e.contains("timeout"), "{e}");
}
