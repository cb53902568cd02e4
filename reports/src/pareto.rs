//! Cost–accuracy points of paradigms and routers, the Pareto frontier, and λ-sweep curves.
//!
//! Cost is mean tokens per query (lower is better), quality is the correct rate (higher is
//! better). A point dominates another when it is no worse on both and better on one. Identical
//! points do not dominate each other, so both stay on the frontier (two strategies with the same
//! numbers are equally good; dropping one would hide a strategy). A duplicate of a dominated point
//! is dominated too and leaves with it. Non-finite points are never on the frontier.

use std::collections::BTreeMap;

use bench_core::{ParadigmId, RouteEvalRow};
use serde::Serialize;

use crate::model::{CostBasis, Tuple};

/// What kind of strategy a point stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// A paradigm run alone.
    Paradigm,
    /// A router (a baseline among them).
    Router,
    /// Oracle: it reads the test labels, so it is a reference mark, not a deployable strategy,
    /// and stays off the Pareto frontier.
    Reference,
}

/// The router that reads the test labels (`routers`' baseline of that name).
pub const ORACLE: &str = "oracle";

/// One strategy on one corpus (or pooled): its mean tokens per query and correct rate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    /// What the point is labelled with.
    pub label: String,
    /// What kind of strategy it is.
    pub kind: Kind,
    /// Mean tokens per query.
    pub cost: f64,
    /// Correct rate in [0, 1].
    pub quality: f64,
    /// Queries (paradigms) or test rows (routers) behind the point.
    pub n: u64,
}

/// Whether `a` dominates `b`: no more cost, no less quality, strictly better in one.
pub fn dominates(a: (f64, f64), b: (f64, f64)) -> bool {
    a.0 <= b.0 && a.1 >= b.1 && (a.0 < b.0 || a.1 > b.1)
}

/// Indices of the non-dominated points over (cost, quality), in increasing cost (ties by
/// decreasing quality, then index). Identical points are all kept.
pub fn frontier(points: &[(f64, f64)]) -> Vec<usize> {
    let finite = |p: &(f64, f64)| p.0.is_finite() && p.1.is_finite();
    let mut keep: Vec<usize> = (0..points.len())
        .filter(|&i| finite(&points[i]))
        .filter(|&i| !points.iter().any(|q| finite(q) && dominates(*q, points[i])))
        .collect();
    keep.sort_by(|&a, &b| {
        let (pa, pb) = (points[a], points[b]);
        pa.0.total_cmp(&pb.0)
            .then(pb.1.total_cmp(&pa.1))
            .then(a.cmp(&b))
    });
    keep
}

/// The frontier of labelled points (see [`frontier`]).
pub fn frontier_of(points: &[Point]) -> Vec<usize> {
    let xy: Vec<(f64, f64)> = points.iter().map(|p| (p.cost, p.quality)).collect();
    frontier(&xy)
}

/// One point per paradigm over the tuples of `corpus` (`None`: all corpora pooled), in
/// `ParadigmId::ALL` order, cost counted under `basis`. Every tuple counts, failed ones as not
/// correct.
pub fn paradigm_points(tuples: &[Tuple], corpus: Option<&str>, basis: &CostBasis) -> Vec<Point> {
    let mut acc: BTreeMap<ParadigmId, (f64, u64, u64)> = BTreeMap::new();
    for t in tuples
        .iter()
        .filter(|t| corpus.is_none_or(|c| t.corpus == c))
    {
        let e = acc.entry(t.paradigm).or_insert((0.0, 0, 0));
        e.0 += basis.of(t);
        e.1 += u64::from(t.correct());
        e.2 += 1;
    }
    acc.into_iter()
        .map(|(p, (cost, correct, n))| Point {
            label: p.as_str().to_owned(),
            kind: Kind::Paradigm,
            cost: cost / n as f64,
            quality: correct as f64 / n as f64,
            n,
        })
        .collect()
}

/// A router's name as shown: with its parameter when it has one, λ with at most four
/// significant digits (`cost (λ=0.03162)`, not every digit of the sweep value).
pub fn router_label(router: &str, param: Option<f64>) -> String {
    match param {
        Some(p) => format!("{router} (λ={})", bench_core::table3::format_param(p)),
        None => router.to_owned(),
    }
}

/// Mean over folds of a router's rows on one corpus key (`*` for pooled), weighted by each
/// fold's test rows so that the pooled value equals the rate over all rows.
fn fold_mean(rows: &[&RouteEvalRow], f: impl Fn(&RouteEvalRow) -> f64) -> f64 {
    let n: f64 = rows.iter().map(|r| f64::from(r.n)).sum();
    if n == 0.0 {
        return rows.iter().map(|r| f(r)).sum::<f64>() / rows.len().max(1) as f64;
    }
    rows.iter().map(|r| f(r) * f64::from(r.n)).sum::<f64>() / n
}

/// One point per (router, parameter) on `corpus` (`*` pooled): test-row-weighted means over
/// folds of mean tokens and correct rate, ordered by router then parameter.
pub fn router_points(rows: &[RouteEvalRow], corpus: &str) -> Vec<Point> {
    router_groups(rows, corpus)
        .into_iter()
        .map(|(_, _, p)| p)
        .collect()
}

/// (router, parameter, point) per group of `corpus`'s rows, ordered by router then parameter.
fn router_groups(rows: &[RouteEvalRow], corpus: &str) -> Vec<(String, Option<f64>, Point)> {
    let mut groups: BTreeMap<(String, ParamKey), Vec<&RouteEvalRow>> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.corpus == corpus) {
        groups
            .entry((r.router.clone(), ParamKey(r.param)))
            .or_default()
            .push(r);
    }
    groups
        .into_iter()
        .map(|((router, ParamKey(param)), rs)| {
            let point = Point {
                label: router_label(&router, param),
                kind: if router == ORACLE && param.is_none() {
                    Kind::Reference
                } else {
                    Kind::Router
                },
                cost: fold_mean(&rs, |r| r.measures.mean_tokens),
                quality: fold_mean(&rs, |r| r.measures.correct_rate),
                n: rs.iter().map(|r| u64::from(r.n)).sum(),
            };
            (router, param, point)
        })
        .collect()
}

/// Orders optional parameters (none first, then by value) so results never depend on hashing.
#[derive(Debug, Clone, Copy, PartialEq)]
struct ParamKey(Option<f64>);

impl Eq for ParamKey {}

impl PartialOrd for ParamKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ParamKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        match (self.0, other.0) {
            (None, None) => std::cmp::Ordering::Equal,
            (None, Some(_)) => std::cmp::Ordering::Less,
            (Some(_), None) => std::cmp::Ordering::Greater,
            (Some(a), Some(b)) => a.total_cmp(&b),
        }
    }
}

/// The λ-sweep of one cost-aware router on one corpus: (λ, point) in increasing λ.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepCurve {
    /// The router.
    pub router: String,
    /// The corpus key (`*` for pooled).
    pub corpus: String,
    /// (λ, point), in increasing λ.
    pub points: Vec<(f64, Point)>,
}

/// The λ-sweep curve of every router that has rows with a parameter, on `corpus`.
pub fn sweep_curves(rows: &[RouteEvalRow], corpus: &str) -> Vec<SweepCurve> {
    let mut by_router: BTreeMap<String, Vec<(f64, Point)>> = BTreeMap::new();
    for (router, param, point) in router_groups(rows, corpus) {
        if let Some(l) = param {
            by_router.entry(router).or_default().push((l, point));
        }
    }
    by_router
        .into_iter()
        .map(|(router, points)| SweepCurve {
            router,
            corpus: corpus.to_owned(),
            points,
        })
        .collect()
}

/// The label of the pooled panel (router rows call it `*`).
pub const POOLED: &str = "all";

/// One panel of the cost–accuracy figure: a corpus, or all corpora pooled.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Panel {
    /// Corpus name, or [`POOLED`].
    pub corpus: String,
    /// Paradigm points, then router points without a parameter.
    pub points: Vec<Point>,
    /// Indices into `points` on the Pareto frontier, in increasing cost.
    pub frontier: Vec<usize>,
    /// λ-sweeps of the cost-aware routers.
    pub curves: Vec<SweepCurve>,
    /// The plotted cost range: every point and every sweep point.
    pub range: Option<(f64, f64)>,
    /// AIQ of the fixed paradigms as arms, over `range`.
    pub aiq_paradigms: Option<f64>,
    /// AIQ of every strategy in the panel (paradigms, routers, sweep points), over `range`.
    pub aiq_all: Option<f64>,
    /// AIQ of each λ-sweep (same order as `curves`), over `range`.
    pub aiq_curves: Vec<Option<f64>>,
}

/// Builds one panel from paradigm points and the router rows of the same corpus key.
pub fn panel(
    corpus: &str,
    paradigms: Vec<Point>,
    router_rows: &[RouteEvalRow],
    key: &str,
) -> Panel {
    let curves = sweep_curves(router_rows, key);
    let mut points = paradigms;
    // A paradigm evaluated as a baseline router is the paradigm's own point again: drawn and
    // labelled once, as the paradigm.
    let drawn: Vec<String> = points.iter().map(|p| p.label.clone()).collect();
    points.extend(
        router_groups(router_rows, key)
            .into_iter()
            .filter(|(router, param, _)| param.is_none() && !drawn.contains(router))
            .map(|(_, _, p)| p),
    );
    // The frontier is over deployable strategies: Oracle is a reference mark beside it.
    let deployable: Vec<usize> = (0..points.len())
        .filter(|&i| points[i].kind != Kind::Reference)
        .collect();
    let frontier = frontier_of(
        &deployable
            .iter()
            .map(|&i| points[i].clone())
            .collect::<Vec<_>>(),
    )
    .into_iter()
    .map(|j| deployable[j])
    .collect();
    let xy = |ps: &mut dyn Iterator<Item = &Point>| -> Vec<(f64, f64)> {
        ps.map(|p| (p.cost, p.quality)).collect()
    };
    let mut all = xy(&mut points.iter());
    for c in &curves {
        all.extend(xy(&mut c.points.iter().map(|(_, p)| p)));
    }
    let range = crate::aiq::cost_range(&all);
    let paradigm_xy = xy(&mut points.iter().filter(|p| p.kind == Kind::Paradigm));
    let aiq_of = |v: &[(f64, f64)]| range.and_then(|r| crate::aiq::aiq(v, r));
    Panel {
        corpus: corpus.to_owned(),
        aiq_paradigms: aiq_of(&paradigm_xy),
        aiq_all: aiq_of(&all),
        aiq_curves: curves
            .iter()
            .map(|c| aiq_of(&xy(&mut c.points.iter().map(|(_, p)| p))))
            .collect(),
        points,
        frontier,
        curves,
        range,
    }
}

/// One panel per corpus (in `corpora` order), then the pooled panel when there is more than one
/// corpus. Router rows come from `router_rows` (empty when no evaluation is available); their
/// costs were measured by `bench_core::cost_tokens` too, so both sit on the basis's one axis.
pub fn panels(
    tuples: &[Tuple],
    corpora: &[String],
    router_rows: &[RouteEvalRow],
    basis: &CostBasis,
) -> Vec<Panel> {
    let mut out: Vec<Panel> = corpora
        .iter()
        .map(|c| panel(c, paradigm_points(tuples, Some(c), basis), router_rows, c))
        .collect();
    if corpora.len() > 1 {
        out.push(panel(
            POOLED,
            paradigm_points(tuples, None, basis),
            router_rows,
            "*",
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dominance_is_strict_in_one_coordinate() {
        assert!(dominates((1.0, 0.5), (2.0, 0.5)));
        assert!(dominates((1.0, 0.6), (1.0, 0.5)));
        assert!(!dominates((1.0, 0.5), (1.0, 0.5)));
        assert!(!dominates((1.0, 0.4), (2.0, 0.5)));
    }
}
