//! A hand-built leaderboard for the page's tests (reports/tests/leaderboard_page.rs and the
//! browser test tests/leaderboard_browser.rs): four matrices (one per-corpus, not ranked; one
//! skipped), the four baselines, learned routers, a published router that runs on one matrix only,
//! and an external router whose name and failure reason are markup.

#![allow(dead_code)]

use reports::leaderboard::{
    Board, BoardProtocol, Cell, CellMeasures, Matrix, Reference, RouterStanding, ViewBaselines,
    FORMAT,
};

/// The external router's name: it tries to close the page's script and run its own.
pub const EVIL: &str = "mine</script><img src=x onerror=alert(1)><!--<script>";
/// Its failure reason on the import: markup too.
pub const EVIL_REASON: &str = "exit status 3: <b>boom</b> & \"quoted\" </script>";
/// The published router, which runs only on AdaRAGUE's matrix.
pub const PUBLISHED: &str = "adarague-classifier";

/// (id, title, ranked, views, cost unit, best-single and Oracle rates per view, costs).
struct MatrixSpec {
    id: &'static str,
    title: &'static str,
    ranked: bool,
    split: &'static str,
    views: &'static [&'static str],
    unit: &'static str,
    best: f64,
    oracle: f64,
    best_cost: f64,
    skipped: Option<&'static str>,
}

const MATRICES: [MatrixSpec; 5] = [
    MatrixSpec {
        id: "offline-pooled",
        title: "Offline, pooled",
        ranked: true,
        split: "kfold",
        views: &["q+c+p", "q"],
        unit: "context tokens",
        best: 0.46,
        oracle: 0.71,
        best_cost: 1450.0,
        skipped: None,
    },
    MatrixSpec {
        id: "offline-2wiki",
        title: "2Wiki",
        ranked: false,
        split: "kfold",
        views: &["q+c+p", "q"],
        unit: "context tokens",
        best: 0.41,
        oracle: 0.66,
        best_cost: 1600.0,
        skipped: None,
    },
    MatrixSpec {
        id: "offline-medical",
        title: "Medical",
        ranked: false,
        split: "kfold",
        views: &["q+c+p", "q"],
        unit: "context tokens",
        best: 0.5,
        oracle: 0.5,
        best_cost: 900.0,
        skipped: Some("one class: every question's best arm is no-retrieval"),
    },
    MatrixSpec {
        id: "adarague-llama8b",
        title: "AdaRAGUE LLaMA-3.1-8B",
        ranked: true,
        split: "given",
        views: &["p", "q"],
        unit: "LLM tokens",
        best: 0.52,
        oracle: 0.78,
        best_cost: 820.0,
        skipped: None,
    },
    MatrixSpec {
        id: "adaptive-rag-flan-t5-xl",
        title: "Adaptive-RAG FLAN-T5-XL",
        ranked: true,
        split: "kfold",
        views: &["q"],
        unit: "retrieval steps",
        best: 0.35,
        oracle: 0.55,
        best_cost: 1.0,
        skipped: None,
    },
];

/// (name, kind, family, how far it closes the gap, its relative cost).
const ROUTERS: [(&str, &str, &str, f64, f64); 10] = [
    ("best-single", "baseline", "baseline", 0.0, 1.0),
    ("oracle", "baseline", "baseline", 1.0, 0.55),
    ("random", "baseline", "baseline", -0.6, 0.9),
    ("oracle-per-corpus", "baseline", "baseline", 0.05, 1.0),
    ("knn", "built-in", "ml", 0.18, 0.85),
    ("logreg", "built-in", "ml", 0.27, 0.8),
    ("mlp", "built-in", "ml", 0.22, 0.95),
    ("utility", "built-in", "utility", 0.31, 0.62),
    (PUBLISHED, "published", "published", 0.12, 0.7),
    (EVIL, "external", "external", 0.09, 1.1),
];

/// The board: routers in rank order (ranked ones by mean gap share, then the rest).
pub fn board() -> Board {
    let matrices: Vec<Matrix> = MATRICES.iter().map(matrix).collect();
    let mut cells = Vec::new();
    let mut routers = Vec::new();
    for (k, &(name, kind, family, share, rel)) in ROUTERS.iter().enumerate() {
        let mut shares = Vec::new();
        for (j, spec) in MATRICES.iter().enumerate() {
            for (v, view) in spec.views.iter().enumerate() {
                let cell = cell(
                    name,
                    spec,
                    view,
                    share - 0.03 * v as f64 + 0.01 * (j + k) as f64 % 0.05,
                    rel,
                );
                if spec.ranked && v == 0 {
                    if let Some(m) = &cell.measures {
                        shares.push(m.gap_share.unwrap_or(0.0));
                    }
                }
                cells.push(cell);
            }
        }
        let of = MATRICES.iter().filter(|m| m.ranked).count() as u32;
        let ran = shares.len() as u32;
        routers.push(RouterStanding {
            name: name.into(),
            kind: kind.into(),
            family: family.into(),
            rank: None,
            mean_gap_share: (ran > 0).then(|| shares.iter().sum::<f64>() / ran as f64),
            ran,
            of,
            wins: (share > 0.2) as u32 * 2 + (share > 0.28) as u32,
            losses: (share < 0.0) as u32 * 3,
            config: serde_json::json!({ "router": name, "seed": 42 }),
        });
    }
    rank(&mut routers);
    Board {
        format: FORMAT.into(),
        generated: "2026-12-07T12:00:00Z".into(),
        version: "0.1.0".into(),
        protocol: BoardProtocol {
            ranking: "mean share of the best-single -> Oracle gap over the ranked matrices a router ran on".into(),
            operating_point: "chosen per outer fold by inner cross-validation on its training rows".into(),
            baseline: "best-single".into(),
            resamples: 1000,
            seed: 42,
            alpha: 0.05,
            holm_family: ROUTERS.len() as u32,
            cost_save_within_points: 0.5,
        },
        matrices,
        routers,
        cells,
        references: vec![
            Reference {
                matrix: "adaptive-rag-flan-t5-xl".into(),
                name: "Adaptive-RAG".into(),
                correct_rate: 0.3717,
                note: "published aggregate, not re-scored".into(),
            },
            Reference {
                matrix: "adaptive-rag-flan-t5-xl".into(),
                name: "MBA-RAG".into(),
                correct_rate: 0.388,
                note: "published aggregate, not re-scored".into(),
            },
        ],
    }
}

fn matrix(s: &MatrixSpec) -> Matrix {
    Matrix {
        id: s.id.into(),
        title: s.title.into(),
        store: format!("{}.sqlite", s.id),
        digest: format!("{:064x}", s.id.len() * 0x9e37_79b9),
        split: s.split.into(),
        folds: if s.split == "given" { 1 } else { 5 },
        seed: 42,
        views: s.views.iter().map(|v| (*v).to_owned()).collect(),
        ranked: s.ranked,
        cost_unit: s.unit.into(),
        n: 600,
        baselines: s
            .views
            .iter()
            .map(|v| ViewBaselines {
                view: (*v).into(),
                best_single_correct: s.best,
                best_single_cost: s.best_cost,
                oracle_correct: s.oracle,
                oracle_cost: s.best_cost * 0.55,
            })
            .collect(),
        skipped: s.skipped.map(str::to_owned),
    }
}

/// One router's cell on one matrix and view: skipped where the matrix is, the published router
/// skipped off its own matrix, the external one failed on the import.
fn cell(router: &str, s: &MatrixSpec, view: &str, share: f64, rel: f64) -> Cell {
    let (status, reason) = if let Some(why) = s.skipped {
        ("skipped", Some(why.to_owned()))
    } else if router == PUBLISHED && s.id != "adarague-llama8b" {
        (
            "skipped",
            Some("this matrix ships no published choices".to_owned()),
        )
    } else if router == EVIL && s.id == "adarague-llama8b" {
        ("failed", Some(EVIL_REASON.to_owned()))
    } else {
        ("ok", None)
    };
    let measures = (status == "ok").then(|| {
        let gap = s.oracle - s.best;
        let delta = share * gap;
        let correct_rate = s.best + delta;
        let mean_cost = s.best_cost * rel;
        CellMeasures {
            n: 600,
            correct_rate,
            delta,
            ci_low: delta - 0.03,
            ci_high: delta + 0.03,
            p_mcnemar: if delta.abs() > 0.04 { 0.001 } else { 0.4 },
            p_holm: if delta.abs() > 0.04 { 0.009 } else { 1.0 },
            gap_share: Some(share),
            mean_cost,
            cost_saved: (delta > -0.005).then_some(1.0 - rel),
            operating_point: if router == "utility" {
                vec![0.1, 0.2, 0.1, 0.1, 0.3]
            } else {
                vec![]
            },
            predictions: format!("predictions/{router}/{}__{view}.jsonl", s.id),
        }
    });
    Cell {
        router: router.into(),
        matrix: s.id.into(),
        view: view.into(),
        status: status.into(),
        reason,
        measures,
    }
}

/// Ranks routers that ran on at least half the ranked matrices by mean gap share (baselines
/// too, as a real board may; not Oracle, the reference); the rest follow unranked.
fn rank(routers: &mut [RouterStanding]) {
    let ranked = |r: &RouterStanding| 2 * r.ran >= r.of && r.name != "oracle";
    routers.sort_by(|a, b| {
        ranked(b).cmp(&ranked(a)).then(
            b.mean_gap_share
                .unwrap_or(f64::MIN)
                .total_cmp(&a.mean_gap_share.unwrap_or(f64::MIN)),
        )
    });
    for (i, r) in routers.iter_mut().enumerate() {
        if ranked(r) {
            r.rank = Some(i as u32 + 1);
        }
    }
}
