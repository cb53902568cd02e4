//! Table 3's model: routers grouped by family, per corpus routing accuracy, macro F1, MRR and
//! correct rate, and over all corpora the cost and the regrets against Oracle, each as mean and
//! spread over folds. Built from stored evaluation rows ([`RouteEvalRow`]), so the terminal
//! table of `route eval` (`routers::table`) and the report's Markdown and CSV
//! (`reports::tables`) render the same rows, cells and groups.

use crate::RouteEvalRow;

/// Which part of the router zoo a router belongs to: tables group by it, and reports recognise
/// baselines by it (stored with each evaluated router).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// Random, best-single, always-p and Oracle.
    Baseline,
    /// Traditional machine-learning classifiers.
    Ml,
    /// Neural classifiers.
    Neural,
    /// Routers of the seed papers.
    Seed,
    /// Routers of the paper's Table 3 from other papers (Adaptive-RAG, MBA-RAG, RouterDC).
    Published,
    /// Routers that trade correctness against cost with a parameter λ.
    CostAware,
    /// Calibrated P(correct) per paradigm minus λ·cost.
    Utility,
    /// A router outside the registry, speaking docs/router-protocol.md.
    External,
}

impl Family {
    /// Every family, in the order tables show them.
    pub(crate) const ORDER: [Family; 8] = [
        Family::Baseline,
        Family::Ml,
        Family::Neural,
        Family::Seed,
        Family::Published,
        Family::Utility,
        Family::CostAware,
        Family::External,
    ];

    /// The stored name, also what `route list` shows.
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Baseline => "baseline",
            Family::Ml => "ml",
            Family::Neural => "neural",
            Family::Seed => "seed",
            Family::Published => "published",
            Family::CostAware => "cost-aware",
            Family::Utility => "utility",
            Family::External => "external",
        }
    }

    /// The family of a stored name; `None` for a name no family has.
    pub fn parse(name: &str) -> Option<Family> {
        Family::ORDER.into_iter().find(|f| f.as_str() == name)
    }

    /// The heading of the family's group in Table 3.
    pub fn heading(self) -> &'static str {
        match self {
            Family::Baseline => "Baselines",
            Family::Ml => "ML routers",
            Family::Neural => "Neural routers",
            Family::Seed => "Seed-paper routers",
            Family::Published => "Published routers (Table 3)",
            Family::CostAware => "Cost-aware routers",
            Family::Utility => "Utility routers (calibrated P(correct) − λ·cost)",
            Family::External => "External routers",
        }
    }
}

/// A measurement over folds: mean and sample standard deviation (0 for one fold).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Stat {
    /// Mean over folds.
    pub mean: f64,
    /// Sample standard deviation over folds (n − 1).
    pub std: f64,
}

impl Stat {
    fn of(values: &[f64]) -> Stat {
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let std = if values.len() > 1 {
            (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
        } else {
            0.0
        };
        Stat { mean, std }
    }
}

/// One router on one corpus (or all corpora): every measure of Table 3 over its folds.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Cell {
    /// Folds measured.
    pub folds: usize,
    /// Routing accuracy (a fraction).
    pub accuracy: Stat,
    /// Macro F1 of the routing labels (a fraction).
    pub macro_f1: Stat,
    /// Mean reciprocal rank of the label (a fraction).
    pub mrr: Stat,
    /// Correct rate of the paradigms played (a fraction).
    pub correct_rate: Stat,
    /// Mean cost per question, in the evaluation's cost unit.
    pub cost: Stat,
    /// Oracle's correct rate minus this router's (a fraction).
    pub regret_correct: Stat,
    /// This router's mean cost minus Oracle's.
    pub regret_cost: Stat,
}

/// One router (and sweep value) of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The router's name.
    pub router: String,
    /// Its sweep value (λ), if it has one.
    pub param: Option<f64>,
    /// What the table shows: `name` or `name(λ=0.5)` ([`router_label`]).
    pub label: String,
    /// One cell per column of [`Table3::corpora`]; `None` where it has no rows.
    pub cells: Vec<Option<Cell>>,
}

/// The routers of one family, in the order they were evaluated.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// The family.
    pub family: Family,
    /// Its routers.
    pub rows: Vec<Row>,
}

/// Table 3: one column group per corpus, the pooled one (`*`) last, and the routers grouped by
/// family in table order (baseline, ML, neural, seed-paper, published, utility, cost-aware,
/// external).
#[derive(Debug, Clone, PartialEq)]
pub struct Table3 {
    /// Corpus keys of the columns; `*` (all corpora pooled) last when present.
    pub corpora: Vec<String>,
    /// The groups; a family without routers has none.
    pub groups: Vec<Group>,
    /// The unit of the cost columns (`context tokens`, `LLM tokens`, an import's unit).
    pub cost_unit: String,
}

/// The key of the pooled column.
pub const POOLED: &str = "*";

impl Table3 {
    /// The table of per-fold `rows`. Corpus columns come in `corpus_order` first, then any other
    /// corpus by name, then `*`; `family` gives each router's family.
    pub fn build(
        rows: &[RouteEvalRow],
        corpus_order: &[String],
        family: &dyn Fn(&str) -> Family,
        cost_unit: &str,
    ) -> Table3 {
        let mut corpora: Vec<String> = corpus_order
            .iter()
            .filter(|c| rows.iter().any(|r| &r.corpus == *c))
            .cloned()
            .collect();
        let mut others: Vec<String> = rows
            .iter()
            .map(|r| r.corpus.clone())
            .filter(|c| c != POOLED && !corpora.contains(c))
            .collect();
        others.sort_unstable();
        others.dedup();
        corpora.extend(others);
        if rows.iter().any(|r| r.corpus == POOLED) {
            corpora.push(POOLED.into());
        }
        let same = |r: &RouteEvalRow, router: &str, param: Option<f64>| {
            r.router == router && r.param.map(f64::to_bits) == param.map(f64::to_bits)
        };
        let mut routers: Vec<(String, Option<f64>)> = Vec::new();
        for r in rows {
            if !routers.iter().any(|(n, p)| same(r, n, *p)) {
                routers.push((r.router.clone(), r.param));
            }
        }
        // A swept router's own row (its fixed operating point) comes before its sweep's rows.
        let seen: Vec<String> = routers.iter().map(|(n, _)| n.clone()).collect();
        routers.sort_by_key(|(n, p)| (seen.iter().position(|s| s == n), p.is_some()));
        let cell = |router: &str, param: Option<f64>, corpus: &str| {
            let of: Vec<&RouteEvalRow> = rows
                .iter()
                .filter(|r| same(r, router, param) && r.corpus == corpus)
                .collect();
            if of.is_empty() {
                return None;
            }
            let stat = |f: fn(&RouteEvalRow) -> f64| {
                Stat::of(&of.iter().map(|r| f(r)).collect::<Vec<_>>())
            };
            Some(Cell {
                folds: of.len(),
                accuracy: stat(|r| r.measures.accuracy),
                macro_f1: stat(|r| r.measures.macro_f1),
                mrr: stat(|r| r.measures.mrr),
                correct_rate: stat(|r| r.measures.correct_rate),
                cost: stat(|r| r.measures.mean_tokens),
                regret_correct: stat(|r| r.measures.regret_correct),
                regret_cost: stat(|r| r.measures.regret_tokens),
            })
        };
        let groups = Family::ORDER
            .into_iter()
            .filter_map(|fam| {
                let rows: Vec<Row> = routers
                    .iter()
                    .filter(|(r, _)| family(r) == fam)
                    .map(|(r, p)| Row {
                        router: r.clone(),
                        param: *p,
                        label: router_label(r, *p),
                        cells: corpora.iter().map(|c| cell(r, *p, c)).collect(),
                    })
                    .collect();
                (!rows.is_empty()).then_some(Group { family: fam, rows })
            })
            .collect();
        Table3 {
            corpora,
            groups,
            cost_unit: cost_unit.to_owned(),
        }
    }

    /// Every row, group by group.
    pub fn rows(&self) -> impl Iterator<Item = (Family, &Row)> {
        self.groups
            .iter()
            .flat_map(|g| g.rows.iter().map(move |r| (g.family, r)))
    }

    /// The pooled cell of a row (the `*` column), if the table has one.
    pub fn pooled<'a>(&self, row: &'a Row) -> Option<&'a Cell> {
        let i = self.corpora.iter().position(|c| c == POOLED)?;
        row.cells.get(i)?.as_ref()
    }
}

/// The display name of a (router, param) pair: `name` or `name(λ=0.5)`, λ with at most four
/// significant digits.
pub fn router_label(router: &str, param: Option<f64>) -> String {
    match param {
        Some(p) => format!("{router}(λ={})", format_param(p)),
        None => router.to_string(),
    }
}

/// A sweep value with at most four significant digits (`0.03162`, `316.2`, `1000`).
pub fn format_param(p: f64) -> String {
    if p == 0.0 || !p.is_finite() {
        return p.to_string();
    }
    let magnitude = p.abs().log10().floor() as i32;
    let decimals = (3 - magnitude).max(0) as usize;
    let s = format!("{p:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A cost: two decimals below 10 (retrieval steps: 1.85 against 2.41 stay apart), whole
/// numbers above (token counts).
pub fn format_cost(v: f64) -> String {
    if v.abs() < 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.0}")
    }
}

/// A cost and its spread at one precision, chosen by the larger of the two as
/// [`format_cost`] chooses (`4.69±0.12`, `1466±0`, `364±113`).
pub fn format_cost_spread(mean: f64, std: f64) -> String {
    if mean.abs().max(std.abs()) < 10.0 {
        format!("{mean:.2}±{std:.2}")
    } else {
        format!("{mean:.0}±{std:.0}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(router: &str, corpus: &str, fold: u32, acc: f64) -> RouteEvalRow {
        RouteEvalRow {
            router: router.into(),
            param: None,
            corpus: corpus.into(),
            fold,
            n: 10,
            measures: crate::Measures {
                accuracy: acc,
                mean_tokens: 2.5,
                ..Default::default()
            },
        }
    }

    #[test]
    fn groups_by_family_with_pooled_column_last() {
        let rows = [
            row("lr", "b", 0, 0.4),
            row("lr", "b", 1, 0.6),
            row("lr", "*", 0, 0.5),
            row("oracle", "a", 0, 1.0),
            row("oracle", "*", 0, 1.0),
        ];
        let fam = |r: &str| {
            if r == "lr" {
                Family::Ml
            } else {
                Family::Baseline
            }
        };
        let t = Table3::build(&rows, &[], &fam, "retrieval steps");
        assert_eq!(t.corpora, ["a", "b", "*"]);
        let order: Vec<(Family, &str)> = t.rows().map(|(f, r)| (f, r.label.as_str())).collect();
        assert_eq!(order, [(Family::Baseline, "oracle"), (Family::Ml, "lr")]);
        let lr = &t.groups[1].rows[0];
        assert!(lr.cells[0].is_none());
        let b = lr.cells[1].unwrap();
        assert_eq!(b.folds, 2);
        assert!((b.accuracy.mean - 0.5).abs() < 1e-12);
        assert!((b.accuracy.std - 0.02f64.sqrt()).abs() < 1e-12);
        assert_eq!(t.pooled(lr).unwrap().accuracy.mean, 0.5);
        assert_eq!(format_cost(2.5), "2.50");
        assert_eq!(format_cost(1234.4), "1234");
        assert_eq!(format_cost_spread(1466.0, 0.0), "1466±0");
        assert_eq!(format_cost_spread(4.6875, 0.0), "4.69±0.00");
        assert_eq!(Family::parse("cost-aware"), Some(Family::CostAware));
        assert_eq!(Family::parse("nope"), None);
        assert_eq!(
            router_label("cost", Some(0.031_622_776_601_683_79)),
            "cost(λ=0.03162)"
        );
        assert_eq!(format_param(316.227_766_016_837_9), "316.2");
        assert_eq!(format_param(1000.0), "1000");
        assert_eq!(format_param(-0.25), "-0.25");
    }
}
