//! The board from the evaluated views: each cell's Δ, gap share and cost saved against the
//! view's best-single and Oracle, Holm's correction over the routers on the board, and the
//! standings (mean gap share over the ranked matrices, "n of N", wins and losses).

use std::collections::BTreeMap;

use reports::leaderboard::{
    Board, BoardProtocol, Cell, CellMeasures, Matrix, Reference, RouterStanding, ViewBaselines,
    FORMAT,
};

use super::evaluate::{Measured, Status, ViewResult, BEST_SINGLE, ORACLE};

/// Significance level of the win/loss counts.
pub const ALPHA: f64 = 0.05;
/// CostSave is reported where the correct rate is at most this many points below best-single's.
pub const COST_SAVE_POINTS: f64 = 0.5;

/// A router on the board.
#[derive(Debug, Clone)]
pub struct RouterInfo {
    pub name: String,
    pub kind: String,
    pub family: String,
    pub config: serde_json::Value,
}

/// One matrix with its evaluated views.
#[derive(Debug, Clone)]
pub struct Evaluated {
    pub matrix: Matrix,
    pub references: Vec<Reference>,
    pub views: Vec<ViewResult>,
}

/// The predictions file of a cell, relative to the board's folder.
pub fn predictions_path(router: &str, matrix: &str, view: &str) -> String {
    format!(
        "predictions/{}/{}__{}.jsonl",
        super::matrices::slug(router),
        matrix,
        view.replace('+', "")
    )
}

/// Builds the whole board; `generated` is the one field two builds may differ in.
pub fn board(generated: String, routers: &[RouterInfo], evaluated: Vec<Evaluated>) -> Board {
    let mut evaluated = evaluated;
    // Ranked matrices first, each group in the stores' order.
    evaluated.sort_by_key(|e| !e.matrix.ranked);
    let family_size = routers.iter().filter(|r| in_family(&r.name)).count();
    let mut cells = Vec::new();
    let mut matrices = Vec::new();
    let mut references = Vec::new();
    for e in evaluated {
        let mut matrix = e.matrix;
        for v in &e.views {
            if let Some(b) = view_baselines(v) {
                matrix.baselines.push(b);
            }
            cells.extend(view_cells(&matrix.id, v, routers));
        }
        if !e.views.is_empty() && e.views.iter().all(|v| v.skipped.is_some()) {
            matrix.skipped = e.views[0].skipped.clone();
        }
        references.extend(e.references);
        matrices.push(matrix);
    }
    let standings = standings(routers, &matrices, &cells);
    Board {
        format: FORMAT.to_string(),
        generated,
        version: env!("CARGO_PKG_VERSION").to_string(),
        protocol: BoardProtocol {
            ranking: "mean share of the best-single -> Oracle gap over the ranked matrices a router ran on (per matrix, the mean over its views), equal weight per matrix; routers that ran on fewer than half of them are listed below the rest".into(),
            operating_point: "a router with a parameter sweep is ranked at the value fixed on each outer fold's training rows (inner cross-validation: highest correct rate, ties to the lower mean cost, then the earlier value); the sweep values are curves only".into(),
            baseline: BEST_SINGLE.into(),
            resamples: routers::significance::RESAMPLES,
            seed: super::matrices::SEED,
            alpha: ALPHA,
            holm_family: family_size as u32,
            cost_save_within_points: COST_SAVE_POINTS,
        },
        matrices,
        routers: standings,
        cells,
        references,
    }
}

/// Routers whose tests Holm's correction runs over: every router but best-single and Oracle.
fn in_family(name: &str) -> bool {
    name != BEST_SINGLE && name != ORACLE
}

fn ok<'a>(v: &'a ViewResult, name: &str) -> Option<&'a Measured> {
    match v.routers.get(name) {
        Some(Status::Ok(m)) => Some(m),
        _ => None,
    }
}

fn view_baselines(v: &ViewResult) -> Option<ViewBaselines> {
    let (b, o) = (ok(v, BEST_SINGLE)?, ok(v, ORACLE)?);
    Some(ViewBaselines {
        view: v.view.clone(),
        best_single_correct: b.correct,
        best_single_cost: b.cost,
        oracle_correct: o.correct,
        oracle_cost: o.cost,
    })
}

/// Holm's step-down adjustment of `p` (same order out).
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]).then(a.cmp(&b)));
    let mut out = vec![0.0; m];
    let mut running: f64 = 0.0;
    for (i, &j) in order.iter().enumerate() {
        running = running.max(((m - i) as f64 * p[j]).min(1.0));
        out[j] = running;
    }
    out
}

/// The cells of one view, in the board's router order.
fn view_cells(matrix: &str, v: &ViewResult, routers: &[RouterInfo]) -> Vec<Cell> {
    let base = view_baselines(v);
    let family: Vec<&str> = routers
        .iter()
        .map(|r| r.name.as_str())
        .filter(|n| in_family(n))
        .filter(|n| ok(v, n).and_then(|m| m.test.as_ref()).is_some())
        .collect();
    let ps: Vec<f64> = family
        .iter()
        .map(|n| ok(v, n).unwrap().test.as_ref().unwrap().p_mcnemar)
        .collect();
    let adjusted: BTreeMap<&str, f64> = family.iter().copied().zip(holm(&ps)).collect();
    let mut out = Vec::new();
    for r in routers {
        let (status, reason, measures) = match v.routers.get(&r.name) {
            None => continue,
            Some(Status::Skipped(why)) => ("skipped", Some(why.clone()), None),
            Some(Status::Failed(why)) => ("failed", Some(why.clone()), None),
            Some(Status::Ok(m)) => match &base {
                Some(b) => (
                    "ok",
                    None,
                    Some(measures(
                        matrix,
                        &v.view,
                        &r.name,
                        m,
                        b,
                        adjusted.get(r.name.as_str()),
                    )),
                ),
                None => (
                    "skipped",
                    Some("the view has no best-single or Oracle row".into()),
                    None,
                ),
            },
        };
        out.push(Cell {
            router: r.name.clone(),
            matrix: matrix.to_string(),
            view: v.view.clone(),
            status: status.into(),
            reason,
            measures,
        });
    }
    out
}

fn measures(
    matrix: &str,
    view: &str,
    name: &str,
    m: &Measured,
    b: &ViewBaselines,
    holm_p: Option<&f64>,
) -> CellMeasures {
    let (delta, ci_low, ci_high, p) = match &m.test {
        Some(t) => (t.diff, t.ci_low, t.ci_high, t.p_mcnemar),
        None => (0.0, 0.0, 0.0, 1.0),
    };
    let gap = b.oracle_correct - b.best_single_correct;
    let within = m.correct >= b.best_single_correct - COST_SAVE_POINTS / 100.0;
    CellMeasures {
        n: m.n,
        correct_rate: m.correct,
        delta,
        ci_low,
        ci_high,
        p_mcnemar: p,
        p_holm: holm_p.copied().unwrap_or(p),
        gap_share: (gap > 1e-12).then(|| (m.correct - b.best_single_correct) / gap),
        mean_cost: m.cost,
        cost_saved: (within && b.best_single_cost > 0.0).then(|| 1.0 - m.cost / b.best_single_cost),
        operating_point: m.operating_point.clone(),
        predictions: predictions_path(name, matrix, view),
    }
}

/// The measures of a router's ok cells on one matrix.
fn measures_of<'a>(
    cells: &'a [Cell],
    router: &'a str,
    matrix: &'a str,
) -> impl Iterator<Item = &'a CellMeasures> + 'a {
    cells
        .iter()
        .filter(move |c| c.router == router && c.matrix == matrix)
        .filter_map(|c| c.measures.as_ref())
}

/// The standings: ranked routers by mean gap share (ties by name), then the rest (Oracle, the
/// reference, always among them).
fn standings(routers: &[RouterInfo], matrices: &[Matrix], cells: &[Cell]) -> Vec<RouterStanding> {
    let ranked: Vec<&Matrix> = matrices
        .iter()
        .filter(|m| m.ranked && m.skipped.is_none())
        .collect();
    let of = ranked.len() as u32;
    let mut rows: Vec<RouterStanding> = routers
        .iter()
        .map(|r| {
            let mut shares = Vec::new();
            let mut ran = 0;
            for m in &ranked {
                let views: Vec<&CellMeasures> = measures_of(cells, &r.name, &m.id).collect();
                if views.is_empty() {
                    continue;
                }
                ran += 1;
                let s: Vec<f64> = views.iter().filter_map(|c| c.gap_share).collect();
                if !s.is_empty() {
                    shares.push(s.iter().sum::<f64>() / s.len() as f64);
                }
            }
            let counted = |f: &dyn Fn(&CellMeasures) -> bool| {
                ranked
                    .iter()
                    .flat_map(|m| measures_of(cells, &r.name, &m.id))
                    .filter(|c| c.p_holm < ALPHA && f(c))
                    .count() as u32
            };
            RouterStanding {
                name: r.name.clone(),
                kind: r.kind.clone(),
                family: r.family.clone(),
                rank: None,
                mean_gap_share: (!shares.is_empty())
                    .then(|| shares.iter().sum::<f64>() / shares.len() as f64),
                ran,
                of,
                wins: if in_family(&r.name) {
                    counted(&|c| c.delta > 0.0)
                } else {
                    0
                },
                losses: if in_family(&r.name) {
                    counted(&|c| c.delta < 0.0)
                } else {
                    0
                },
                config: r.config.clone(),
            }
        })
        .collect();
    let eligible = |s: &RouterStanding| {
        s.name != ORACLE && of > 0 && 2 * s.ran >= of && s.mean_gap_share.is_some()
    };
    rows.sort_by(|a, b| {
        eligible(b)
            .cmp(&eligible(a))
            .then(
                b.mean_gap_share
                    .unwrap_or(f64::NEG_INFINITY)
                    .total_cmp(&a.mean_gap_share.unwrap_or(f64::NEG_INFINITY)),
            )
            .then(a.name.cmp(&b.name))
    });
    let mut rank = 0;
    for s in rows.iter_mut() {
        if eligible(s) {
            rank += 1;
            s.rank = Some(rank);
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::holm;

    #[test]
    fn holm_steps_down_and_stays_monotone() {
        // Sorted 0.01, 0.03, 0.04 with m = 3: 3 * 0.01, max(that, 2 * 0.03), max(that, 0.04).
        let a = holm(&[0.04, 0.01, 0.03]);
        for (got, want) in a.iter().zip([0.06, 0.03, 0.06]) {
            assert!((got - want).abs() < 1e-12, "{a:?}");
        }
        assert_eq!(holm(&[0.9, 0.6]), vec![1.0, 1.0]);
        assert!(holm(&[]).is_empty());
    }
}
