//! The frontier, the non-decreasing hull and AIQ on hand-made point sets; points from tuples
//! and router rows; table rendering.

use bench_core::{JudgeLabel, ParadigmId, PhaseTokens, QueryType, RouteEvalRow};
use reports::aiq::{aiq, cost_range, hull_at, nondecreasing_hull};
use reports::pareto::{frontier, paradigm_points, router_points, sweep_curves, Kind};
use reports::tables::{mean_std, Table};
use reports::{CostBasis, ReportData, Tuple};
use store::{ReportTupleRow, TupleTokens};

fn close(a: f64, b: f64) {
    assert!((a - b).abs() < 1e-12, "{a} != {b}");
}

#[test]
fn identical_points_are_both_on_the_frontier() {
    let pts = [(1.0, 0.5), (1.0, 0.5), (2.0, 0.4)];
    assert_eq!(frontier(&pts), vec![0, 1]);
}

#[test]
fn a_single_point_is_its_own_frontier_and_aiq() {
    assert_eq!(frontier(&[(3.0, 0.2)]), vec![0]);
    let r = cost_range(&[(3.0, 0.2)]).unwrap();
    assert_eq!(r, (3.0, 3.0));
    close(aiq(&[(3.0, 0.2)], r).unwrap(), 0.2);
    assert!(frontier(&[]).is_empty());
    assert_eq!(aiq(&[], (0.0, 1.0)), None);
}

#[test]
fn dominated_duplicates_leave_together() {
    let pts = [(1.0, 0.8), (2.0, 0.5), (2.0, 0.5), (3.0, 0.9)];
    assert_eq!(frontier(&pts), vec![0, 3]);
    // Same cost: only the better one; same quality: only the cheaper one.
    assert_eq!(frontier(&[(1.0, 0.5), (1.0, 0.6)]), vec![1]);
    assert_eq!(frontier(&[(2.0, 0.5), (1.0, 0.5)]), vec![1]);
    // A non-finite point never counts, nor dominates.
    assert_eq!(frontier(&[(f64::NAN, 1.0), (1.0, 0.1)]), vec![1]);
}

#[test]
fn frontier_is_exactly_the_non_dominated_points() {
    // Deterministic pseudo-random sets (LCG), with coarse values so that ties happen.
    let mut s: u64 = 0x5eed;
    let mut next = || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((s >> 33) % 6) as f64
    };
    for _ in 0..200 {
        let n = 1 + (next() as usize) * 2;
        let pts: Vec<(f64, f64)> = (0..n).map(|_| (next(), next() / 5.0)).collect();
        let f = frontier(&pts);
        for i in 0..n {
            let dominated = pts.iter().any(|q| reports::pareto::dominates(*q, pts[i]));
            assert_eq!(f.contains(&i), !dominated, "{pts:?} {f:?}");
        }
        // Increasing cost along the frontier, quality increasing with it.
        for w in f.windows(2) {
            assert!(pts[w[0]].0 <= pts[w[1]].0 && pts[w[0]].1 <= pts[w[1]].1);
        }
    }
}

#[test]
fn aiq_of_a_convex_set_by_hand() {
    // Hull (0,.2) -> (1,.6) -> (4,1.0); (2,.5) lies below it.
    // Area: 1*(.2+.6)/2 + 3*(.6+1)/2 = 0.4 + 2.4 = 2.8 over a width of 4.
    let pts = [(0.0, 0.2), (1.0, 0.6), (2.0, 0.5), (4.0, 1.0)];
    assert_eq!(
        nondecreasing_hull(&pts),
        vec![(0.0, 0.2), (1.0, 0.6), (4.0, 1.0)]
    );
    close(aiq(&pts, (0.0, 4.0)).unwrap(), 0.7);
    close(hull_at(&nondecreasing_hull(&pts), 2.5), 0.8);
}

#[test]
fn aiq_of_a_non_convex_set_by_hand() {
    // The expensive worse point (3,.5) is replaced by the flat extension at .95:
    // 1*.9/2 + 1*(.9+.95)/2 + 1*.95 = .45 + .925 + .95 = 2.325 over 3.
    let pts = [(0.0, 0.0), (1.0, 0.9), (2.0, 0.95), (3.0, 0.5)];
    assert_eq!(
        nondecreasing_hull(&pts),
        vec![(0.0, 0.0), (1.0, 0.9), (2.0, 0.95)]
    );
    close(aiq(&pts, (0.0, 3.0)).unwrap(), 2.325 / 3.0);
    // A concave dent: (1, .1) is under the chord (0,0)-(2,1) and leaves the hull.
    let dent = [(0.0, 0.0), (1.0, 0.1), (2.0, 1.0)];
    assert_eq!(nondecreasing_hull(&dent), vec![(0.0, 0.0), (2.0, 1.0)]);
    close(aiq(&dent, (0.0, 2.0)).unwrap(), 0.5);
}

#[test]
fn aiq_on_a_wider_range_counts_nothing_left_of_the_cheapest_point() {
    // Nothing below cost 2, then .5 -> 1.0 linearly up to 4: 2*(.5+1)/2 = 1.5 over 4.
    let pts = [(2.0, 0.5), (4.0, 1.0)];
    close(aiq(&pts, (0.0, 4.0)).unwrap(), 0.375);
    // Right of the best point the hull stays flat: [2,6] gives (1.5 + 2*1.0) / 4.
    close(aiq(&pts, (2.0, 6.0)).unwrap(), 3.5 / 4.0);
    // Ties at the cheapest cost: the better one starts the hull.
    assert_eq!(
        nondecreasing_hull(&[(1.0, 0.1), (1.0, 0.3)]),
        vec![(1.0, 0.3)]
    );
}

fn tuple(corpus: &str, q: &str, p: ParadigmId, correct: bool, tokens: u64) -> Tuple {
    Tuple {
        run_id: 1,
        corpus: corpus.into(),
        row: ReportTupleRow {
            query_id: q.into(),
            question: format!("question {q}"),
            qtype: QueryType::Factual,
            paradigm: p,
            answer: String::new(),
            judge_label: Some(if correct {
                JudgeLabel::Correct
            } else {
                JudgeLabel::Incorrect
            }),
            em: 0.0,
            f1: 0.0,
            semantic_f1: None,
            evidence_recall: None,
            tokens: TupleTokens {
                phases: PhaseTokens {
                    generation_in: tokens,
                    ..PhaseTokens::default()
                },
                judge_in: 1000,
                judge_out: 0,
            },
            context_tokens: 2 * tokens,
            latency_ms: 0.0,
            mode: bench_core::Mode::parse("llm:m@http://localhost").unwrap(),
            error: None,
            cost: None,
        },
        amortised_in: 0.0,
        amortised_out: 0.0,
    }
}

#[test]
fn paradigm_points_average_tokens_and_count_failures_as_wrong() {
    let mut failed = tuple("a", "q3", ParadigmId::Naive, false, 300);
    failed.row.judge_label = None;
    failed.row.error = Some("timeout".into());
    let ts = vec![
        tuple("a", "q1", ParadigmId::Naive, true, 100),
        tuple("a", "q2", ParadigmId::Naive, false, 200),
        failed,
        tuple("b", "q1", ParadigmId::Naive, true, 1000),
        tuple("a", "q1", ParadigmId::LlmOnly, false, 10),
    ];
    let a = paradigm_points(&ts, Some("a"), &CostBasis::LlmTokens);
    assert_eq!(a.len(), 2);
    assert_eq!(
        (a[0].label.as_str(), a[0].kind),
        ("llm-only", Kind::Paradigm)
    );
    // Naive on a: (100+200+300)/3 tokens (the judge's tokens are not a paradigm cost), 1 of 3.
    close(a[1].cost, 200.0);
    close(a[1].quality, 1.0 / 3.0);
    let pooled = paradigm_points(&ts, None, &CostBasis::LlmTokens);
    close(pooled[1].cost, 400.0);
    close(pooled[1].quality, 0.5);
    // LLM runs are costed by LLM tokens; offline runs (no LLM billed) by context tokens,
    // as bench_core::cost_tokens says for the routers too.
    let mut data = ReportData {
        tuples: ts,
        ..ReportData::default()
    };
    assert_eq!(data.cost_basis(), CostBasis::LlmTokens);
    data.tuples[0].row.mode = bench_core::Mode::Offline;
    assert_eq!(data.cost_basis(), CostBasis::Mixed);
    for t in &mut data.tuples {
        t.row.mode = bench_core::Mode::Offline;
    }
    assert_eq!(data.cost_basis(), CostBasis::ContextTokens);
    let ctx = paradigm_points(&data.tuples, Some("a"), &CostBasis::ContextTokens);
    close(ctx[1].cost, 400.0);
    // Imported tuples sit at the import's own cost (retrieval steps here), never at 0 tokens.
    for (t, steps) in data.tuples.iter_mut().zip([1.0, 2.0, 3.0, 5.0, 0.0]) {
        t.row.mode = bench_core::Mode::Imported {
            source: "adaptive-rag".into(),
        };
        t.row.cost = Some(steps);
    }
    let basis = data.cost_basis();
    assert_eq!(basis, CostBasis::Imported("cost".into()));
    assert_eq!(basis.axis(), "mean cost per query (imported)");
    let imp = paradigm_points(&data.tuples, Some("a"), &basis);
    close(imp[0].cost, 0.0);
    close(imp[1].cost, 2.0);
}

fn row(
    router: &str,
    param: Option<f64>,
    corpus: &str,
    fold: u32,
    n: u32,
    cr: f64,
    tok: f64,
) -> RouteEvalRow {
    let base = fixtures::route_eval_row(router, param, corpus, fold);
    RouteEvalRow {
        n,
        measures: bench_core::Measures {
            correct_rate: cr,
            mean_tokens: tok,
            ..base.measures
        },
        ..base
    }
}

#[test]
fn router_points_weight_folds_by_test_rows_and_sweeps_order_by_lambda() {
    let rows = vec![
        row("lr", None, "a", 0, 10, 0.2, 100.0),
        row("lr", None, "a", 1, 30, 0.6, 300.0),
        row("lr", None, "b", 0, 5, 0.9, 1.0),
        row("cost", Some(1.0), "a", 0, 10, 0.1, 10.0),
        row("cost", Some(0.0), "a", 0, 10, 0.7, 900.0),
        row("cost", Some(0.5), "a", 0, 10, 0.4, 400.0),
    ];
    let pts = router_points(&rows, "a");
    let lr = pts.iter().find(|p| p.label == "lr").unwrap();
    close(lr.cost, (10.0 * 100.0 + 30.0 * 300.0) / 40.0);
    close(lr.quality, (10.0 * 0.2 + 30.0 * 0.6) / 40.0);
    assert_eq!(lr.n, 40);
    let curves = sweep_curves(&rows, "a");
    assert_eq!(curves.len(), 1);
    let lambdas: Vec<f64> = curves[0].points.iter().map(|(l, _)| *l).collect();
    assert_eq!(lambdas, vec![0.0, 0.5, 1.0]);
    assert_eq!(curves[0].points[1].1.label, "cost (λ=0.5)");
    assert!(sweep_curves(&rows, "b").is_empty());
}

#[test]
fn tables_escape_markdown_and_quote_csv() {
    let t = Table {
        name: "t".into(),
        title: "T".into(),
        headers: vec!["a".into(), "b".into()],
        rows: vec![vec!["x|y".into(), "say \"hi\", then\nleave".into()]],
    };
    let md = t.to_markdown();
    assert!(md.contains("| x\\|y | say \"hi\", then leave |"), "{md}");
    // Markup in a name is shown as text: entities for HTML, a backslash kept literal, so each
    // row still has exactly its cells.
    let hostile = Table {
        name: "h".into(),
        title: "<b>T</b>".into(),
        headers: vec!["a".into(), "b".into()],
        rows: vec![vec![
            "<script>alert(1)</script>".into(),
            "a\\|b & <img src=x onerror=y>\r\nz".into(),
        ]],
    };
    let md = hostile.to_markdown();
    assert!(!md.contains('<') && !md.contains('>'), "{md}");
    assert!(md.starts_with("### &lt;b&gt;T&lt;/b&gt;\n"), "{md}");
    assert!(
        md.contains(
            "| &lt;script&gt;alert(1)&lt;/script&gt; | a\\\\\\|b &amp; &lt;img src=x onerror=y&gt;  z |"
        ),
        "{md}"
    );
    assert_eq!(t.to_csv(), "a,b\nx|y,\"say \"\"hi\"\", then\nleave\"\n");
    let (m, s) = mean_std(&[1.0, 2.0, 3.0, 4.0]);
    close(m, 2.5);
    close(s, (5.0f64 / 3.0).sqrt());
    assert_eq!(mean_std(&[7.0]), (7.0, 0.0));
}
