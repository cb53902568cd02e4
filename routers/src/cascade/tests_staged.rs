//! The staged cascades on synthetic sets with a known rule: the bill, the arm delivered, and
//! the operating point fixed on the training rows.

use std::collections::BTreeMap;
use std::sync::Arc;

use bench_core::{
    ClassOutcome, FeatureKind, ParadigmId, QueryType, RouteEvalRow, RoutingRow, RoutingSchema,
    RoutingSet,
};

use super::*;

/// Classes llm-only (cost 0), naive (1), iterative (4), with the probe columns of `signals`.
fn schema(signals: &[&str]) -> Arc<RoutingSchema> {
    let cols = signals
        .iter()
        .flat_map(|s| [format!("p:{s}"), format!("p:{s}:present")])
        .collect();
    Arc::new(RoutingSchema::new(
        &[
            ParadigmId::LlmOnly,
            ParadigmId::Naive,
            ParadigmId::Iterative,
        ],
        vec![(FeatureKind::ProbeSignals, cols)],
    ))
}

/// One question: the signals' values (all present) and whether each arm is right.
fn row(i: usize, values: &[f64], right: [bool; 3]) -> RoutingRow {
    let o = |correct, tokens| {
        Some(ClassOutcome {
            correct,
            semantic_f1: 0.0,
            tokens,
        })
    };
    RoutingRow {
        query_id: format!("q{i}"),
        corpus: "c".into(),
        text: String::new(),
        qtype: QueryType::Other,
        features: values.iter().flat_map(|&v| [v, 1.0]).collect(),
        label: right.iter().position(|&r| r).unwrap_or(3),
        outcomes: vec![o(right[0], 0.0), o(right[1], 1.0), o(right[2], 4.0)],
    }
}

fn needs(pairs: &[(&str, &[ParadigmId])]) -> BTreeMap<String, Vec<ParadigmId>> {
    pairs
        .iter()
        .map(|(n, p)| (n.to_string(), p.to_vec()))
        .collect()
}

fn run(set: &RoutingSet, folds: &[Fold], sp: &BTreeMap<String, Vec<ParadigmId>>) -> Evaluation {
    let own = vec![0.0; set.rows.len()];
    evaluate_cascades(&CascadeInput {
        set,
        folds,
        signal_paradigms: sp,
        own_cost: &own,
        seed: 3,
    })
    .unwrap()
}

/// (correct rate, mean cost) of a router's pooled rows at `param`, over the folds.
fn pooled(rows: &[RouteEvalRow], router: &str, param: Option<f64>) -> (f64, f64) {
    let rows: Vec<_> = rows
        .iter()
        .filter(|r| r.router == router && r.param == param && r.corpus == "*")
        .collect();
    let n: f64 = rows.iter().map(|r| f64::from(r.n)).sum();
    let sum = |f: &dyn Fn(&RouteEvalRow) -> f64| {
        rows.iter().map(|r| f(r) * f64::from(r.n)).sum::<f64>() / n
    };
    (
        sum(&|r| r.measures.correct_rate),
        sum(&|r| r.measures.mean_tokens),
    )
}

#[test]
fn an_arm_played_twice_is_billed_once_and_only_a_played_arm_is_delivered() {
    let set = RoutingSet {
        schema: schema(&[]),
        rows: vec![row(0, &[], [false, true, true])],
    };
    // Naive listed twice (a probe ran it, then a stage): paid once, 0 + 1 + 4 + 0.5 own.
    let d = decide(&set, 0, &[0, 1, 1, 2], 1, 0.5).unwrap();
    assert_eq!(d.arms, [0, 1, 2]);
    assert_eq!((d.cost, d.probe_cost), (5.5, 4.5));
    assert!(d.correct);
    // Delivering multi-step when only the cheap arms ran is refused: it was never paid for.
    let err = decide(&set, 0, &[0, 1], 2, 0.0).unwrap_err().to_string();
    assert!(
        err.contains("iterative") && err.contains("without having run"),
        "{err}"
    );
}

#[test]
fn select_delivers_the_best_arm_played_where_the_last_arm_is_wrong() {
    // Half the questions: naive right, multi-step wrong (`x` = 1, known once the cheap arms
    // ran); the other half the reverse. Nothing tells them apart before the cheap stage.
    let rows: Vec<RoutingRow> = (0..300)
        .map(|i| {
            let a = i % 2 == 0;
            row(i, &[f64::from(u8::from(a))], [false, a, !a])
        })
        .collect();
    let set = RoutingSet {
        schema: schema(&["x"]),
        rows,
    };
    let sp = needs(&[("x", &[ParadigmId::LlmOnly, ParadigmId::Naive])]);
    let folds = crate::eval::stratified_kfold(&set.labels(), 3, 5).unwrap();
    let ev = run(&set, &folds, &sp);
    // τ above 1: every question runs every stage; select delivers the arm it trusts most.
    let (cr, cost) = pooled(&ev.rows, SELECT, Some(1.01));
    assert!(cr > 0.99, "{cr}");
    assert!((cost - 5.0).abs() < 1e-9, "{cost}");
    // The same walk delivering the last arm run (multi-step) is right on half.
    let preds: Vec<_> = ev
        .predictions
        .iter()
        .filter(|p| p.router == SELECT && p.param == Some(1.01))
        .collect();
    assert_eq!(preds.len(), 300);
    let last_right = preds
        .iter()
        .filter(|p| {
            set.rows[p.query_id[1..].parse::<usize>().unwrap()].outcomes[2]
                .unwrap()
                .correct
        })
        .count() as f64
        / 300.0;
    assert!((last_right - 0.5).abs() < 1e-9);
    assert!(cr - last_right > 0.45);
    // Every prediction delivers an arm it paid for, and pays for each arm once.
    for p in &ev.predictions {
        let played = p.played.as_deref().unwrap();
        assert!(p.arms_played.iter().any(|a| a == played), "{p:?}");
        let mut seen = p.arms_played.clone();
        seen.dedup();
        assert_eq!(seen, p.arms_played);
    }
    // At the point fixed on the training rows, the naive half stops after the cheap stage.
    let (cr, cost) = pooled(&ev.rows, SELECT, None);
    assert!(cr > 0.99, "{cr}");
    assert!((cost - 3.0).abs() < 0.05, "{cost}");
    // The VOI cascade finds the same: going on pays only where naive is not trusted.
    let (cr, cost) = pooled(&ev.rows, VOI, None);
    assert!(cr > 0.99 && (cost - 3.0).abs() < 0.05, "{cr} {cost}");
}

#[test]
fn the_summary_is_at_the_point_fixed_on_the_training_rows_not_the_test_best() {
    // Training rows: naive is right on 65 % and nothing known after the cheap stage says which;
    // after multi-step `y` says which arm is right, so going on is worth 35 points there. The
    // test rows are all of the naive kind: stopping early is as right and 4 steps cheaper.
    let train: Vec<RoutingRow> = (0..200)
        .map(|i| {
            let nv = i % 20 < 13;
            row(i, &[f64::from(u8::from(!nv))], [false, nv, !nv])
        })
        .collect();
    let test: Vec<RoutingRow> = (200..260)
        .map(|i| row(i, &[0.0], [false, true, false]))
        .collect();
    let set = RoutingSet {
        schema: schema(&["y"]),
        rows: train.into_iter().chain(test).collect(),
    };
    let sp = needs(&[("y", &[ParadigmId::Iterative])]);
    let folds = [Fold {
        train: (0..200).collect(),
        test: (200..260).collect(),
    }];
    let ev = run(&set, &folds, &sp);
    let point = ev
        .operating_points
        .iter()
        .find(|p| p.router == SELECT)
        .unwrap();
    assert!(point.param >= 0.7, "{point:?}");
    // On the test rows a low τ is the best row: as right, cheaper.
    let best_on_test = pooled(&ev.rows, SELECT, Some(0.2));
    let fixed = pooled(&ev.rows, SELECT, Some(point.param));
    assert_eq!(best_on_test, (1.0, 1.0));
    assert_eq!(fixed.0, 1.0);
    assert!(fixed.1 > 4.9, "{fixed:?}");
    // The router's own row is the fixed point's, not the test's best.
    assert_eq!(pooled(&ev.rows, SELECT, None), fixed);
    for name in [CASCADE, SELECT, VOI] {
        assert_eq!(
            ev.operating_points
                .iter()
                .filter(|p| p.router == name)
                .count(),
            1,
            "{name}"
        );
    }
}
