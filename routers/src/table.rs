//! The terminal rendering of Table 3 (`route eval`): the table model of
//! [`bench_core::table3`] (routers grouped by family, per corpus R.A / F1 / MRR / C.R in percent,
//! mean over folds, then the pooled cost and regrets), after a short legend. By default the table
//! fits 100 columns (the pooled measures, each corpus's correct rate while they fit, cost and
//! regrets); `wide` shows every corpus's four measures.

use std::fmt::Write;

use bench_core::table3::{format_cost_spread, Cell, Table3, POOLED};
use bench_core::{RouteEvalSpec, RouteEvalTest};

use crate::entry::Family;
use crate::eval::Summary;

pub use bench_core::table3::{format_param, router_label};

/// The width the default table keeps within.
pub(crate) const NARROW: usize = 100;

/// Renders `table` for a terminal: a legend, then the table, `NARROW` columns wide unless `wide`.
pub fn render(table: &Table3, wide: bool) -> String {
    let layout = Layout::of(table, wide);
    let mut out = String::new();
    layout.legend(&mut out);
    layout.group_titles(&mut out);
    layout.column_names(&mut out);
    let width = out
        .lines()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(80)
        .min(if wide { usize::MAX } else { NARROW });
    for g in &table.groups {
        let _ = writeln!(out, "{}", "-".repeat(width));
        let _ = writeln!(out, "{}", g.family.heading());
        for r in &g.rows {
            layout.row(&mut out, &r.label, &r.cells);
        }
    }
    let _ = writeln!(out, "{}", "-".repeat(width));
    out
}

/// The pooled cost of a cell, `mean±std`.
fn cost(c: &Cell) -> String {
    format_cost_spread(c.cost.mean, c.cost.std)
}

/// The correct-rate regret of a cell in percentage points, `mean±std`.
fn regret_cr(c: &Cell) -> String {
    format!(
        "{:.1}±{:.1}",
        100.0 * c.regret_correct.mean,
        100.0 * c.regret_correct.std
    )
}

/// The cost regret of a cell, `mean±std`.
fn regret_cost(c: &Cell) -> String {
    format_cost_spread(c.regret_cost.mean, c.regret_cost.std)
}

/// Where Table 3's columns go and how wide they are.
struct Layout<'t> {
    table: &'t Table3,
    wide: bool,
    /// The pooled column's index, if any.
    pooled: Option<usize>,
    /// The per-corpus columns' indices.
    per_corpus: Vec<usize>,
    /// The router name column's width.
    name_w: usize,
    /// The cost block's three column widths: cost, correct-rate regret, cost regret.
    cw: usize,
    rw: usize,
    dw: usize,
    cost_title: String,
    /// Narrow: each corpus's correct-rate column width.
    corpus_w: Vec<usize>,
    /// Narrow: whether each corpus's correct rate fits beside the pooled measures.
    narrow_corpora: bool,
}

impl<'t> Layout<'t> {
    /// The layout of `table`: names cut at 24 characters unless `wide`, the cost block as wide
    /// as its widest cell, and, narrow, the corpora's correct rates while the line fits NARROW.
    fn of(table: &'t Table3, wide: bool) -> Self {
        let pooled = table.corpora.iter().position(|c| c == POOLED);
        let per_corpus: Vec<usize> = (0..table.corpora.len())
            .filter(|&i| Some(i) != pooled)
            .collect();
        let max_name = if wide { usize::MAX } else { 24 };
        let name_w = table
            .rows()
            .map(|(_, r)| r.label.chars().count().min(max_name))
            .max()
            .unwrap_or(6)
            .max(6)
            + 2;
        let width_of = |f: &dyn Fn(&Cell) -> String, head: &str| {
            table
                .rows()
                .filter_map(|(_, r)| pooled.and_then(|i| r.cells[i].as_ref()))
                .map(|c| f(c).chars().count())
                .chain(std::iter::once(head.chars().count()))
                .max()
                .unwrap_or(0)
                + 2
        };
        let (cw, rw, dw) = (
            width_of(&cost, "cost"),
            width_of(&regret_cr, "ΔC.R pp"),
            width_of(&regret_cost, "Δcost"),
        );
        let cost_title = format!("cost in {}", table.cost_unit);
        let cost_w = (cw + rw + dw).max(cost_title.chars().count() + 1);
        let corpus_w: Vec<usize> = per_corpus
            .iter()
            .map(|&i| table.corpora[i].chars().count().clamp(5, 12) + 1)
            .collect();
        let narrow_corpora = {
            let fixed = name_w + 30 + 2 + cost_w;
            let all: usize = corpus_w.iter().sum::<usize>() + 2;
            per_corpus.len() > 1 && fixed + all <= NARROW
        };
        Layout {
            table,
            wide,
            pooled,
            per_corpus,
            name_w,
            cw,
            rw,
            dw,
            cost_title,
            corpus_w,
            narrow_corpora,
        }
    }

    /// What the abbreviations mean, and which columns `--wide` adds.
    fn legend(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "R.A routing accuracy, F1 macro F1, MRR mean reciprocal rank, C.R correct rate:"
        );
        let _ = writeln!(
            out,
            "  percent, mean over folds; ΔC.R pp and Δcost: regret against Oracle, ± std over folds"
        );
        let mut rows = self.table.groups.iter().flat_map(|g| &g.rows);
        if rows.any(|r| r.label.contains("(λ=")) {
            let _ = writeln!(
                out,
                "  name(λ=v): one value of a sweep, for curves; a swept router's plain row is at the"
            );
            let _ = writeln!(
                out,
                "  value fixed on each fold's training rows (inner 3-fold CV, best correct rate)"
            );
        }
        if !self.wide && self.per_corpus.len() > 1 && !self.narrow_corpora {
            let _ = writeln!(out, "  (per-corpus columns: --wide)");
        } else if !self.wide && self.narrow_corpora {
            let _ = writeln!(out, "  (per-corpus R.A, F1 and MRR: --wide)");
        }
    }

    /// Header line 1: the group titles.
    fn group_titles(&self, out: &mut String) {
        let (name_w, metrics_w) = (self.name_w, 27);
        let _ = write!(out, "{:<name_w$}", "");
        if self.wide {
            for &i in self.per_corpus.iter().chain(self.pooled.iter()) {
                let c = if Some(i) == self.pooled {
                    "all"
                } else {
                    &self.table.corpora[i]
                };
                let _ = write!(out, "| {:^27} ", truncate(c, 27));
            }
        } else {
            if self.pooled.is_some() {
                let _ = write!(out, "| {:^w$}", "all corpora", w = metrics_w + 1);
            }
            if self.narrow_corpora {
                let w: usize = self.corpus_w.iter().sum();
                let title = if w >= 13 { "C.R by corpus" } else { "C.R" };
                let _ = write!(out, "| {:^w$}", title);
            }
        }
        let _ = writeln!(out, "| {}", self.cost_title);
    }

    /// Header line 2: the column names.
    fn column_names(&self, out: &mut String) {
        let name_w = self.name_w;
        let _ = write!(out, "{:<name_w$}", "router");
        let four = |out: &mut String| {
            let _ = write!(out, "| {:>6}{:>7}{:>7}{:>7} ", "R.A", "F1", "MRR", "C.R");
        };
        if self.wide {
            for _ in self.per_corpus.iter().chain(self.pooled.iter()) {
                four(out);
            }
        } else {
            if self.pooled.is_some() {
                four(out);
            }
            if self.narrow_corpora {
                let _ = write!(out, "| ");
                for (&i, w) in self.per_corpus.iter().zip(&self.corpus_w) {
                    let _ = write!(out, "{:>w$}", truncate(&self.table.corpora[i], w - 1));
                }
            }
        }
        let (cw, rw, dw) = (self.cw, self.rw, self.dw);
        let _ = writeln!(out, "| {:>cw$}{:>rw$}{:>dw$}", "cost", "ΔC.R pp", "Δcost");
    }

    /// One router's line: its measures per column group, then the pooled cost and regrets.
    fn row(&self, out: &mut String, label: &str, cells: &[Option<Cell>]) {
        let name_w = self.name_w;
        let _ = write!(out, "{:<name_w$}", truncate(label, name_w - 2));
        if self.wide {
            for &i in self.per_corpus.iter().chain(self.pooled.iter()) {
                measures(out, cells[i].as_ref());
            }
        } else {
            if let Some(i) = self.pooled {
                measures(out, cells[i].as_ref());
            }
            if self.narrow_corpora {
                let _ = write!(out, "| ");
                for (&i, w) in self.per_corpus.iter().zip(&self.corpus_w) {
                    let v = cells[i].as_ref().map_or("-".to_string(), |c| {
                        format!("{:.1}", 100.0 * c.correct_rate.mean)
                    });
                    let _ = write!(out, "{v:>w$}");
                }
            }
        }
        let (cw, rw, dw) = (self.cw, self.rw, self.dw);
        match self.pooled.and_then(|i| cells[i].as_ref()) {
            Some(c) => {
                let _ = writeln!(
                    out,
                    "| {:>cw$}{:>rw$}{:>dw$}",
                    cost(c),
                    regret_cr(c),
                    regret_cost(c)
                );
            }
            None => {
                let _ = writeln!(out, "| {:>cw$}", "-");
            }
        }
    }
}

/// A cell's R.A, F1, MRR and C.R in percent, or `-` across the four columns.
fn measures(out: &mut String, c: Option<&Cell>) {
    match c {
        Some(c) => {
            let _ = write!(
                out,
                "| {:>6.1}{:>7.1}{:>7.1}{:>7.1} ",
                100.0 * c.accuracy.mean,
                100.0 * c.macro_f1.mean,
                100.0 * c.mrr.mean,
                100.0 * c.correct_rate.mean
            );
        }
        None => {
            let _ = write!(out, "| {:>27} ", "-");
        }
    }
}

/// The paired comparison against the baseline (best-single): per (router, param), the pooled
/// correct rate, the difference in percentage points with its 95 % bootstrap interval, the
/// discordant counts and McNemar's p; then the best non-baseline router's share of the gap to Oracle.
pub(crate) fn render_tests(
    summaries: &[Summary],
    tests: &[RouteEvalTest],
    cost_unit: &str,
    family: &dyn Fn(&str) -> Family,
) -> String {
    let mut out = String::new();
    let Some(baseline) = tests.first().map(|t| t.baseline.clone()) else {
        return out;
    };
    let pooled = |r: &str, p: Option<f64>| {
        summaries
            .iter()
            .find(|s| s.router == r && s.param == p && s.corpus == "*")
    };
    let name_w = tests
        .iter()
        .map(|t| router_label(&t.router, t.param).chars().count())
        .max()
        .unwrap_or(6)
        .max(6)
        + 2;
    let base_cr = pooled(&baseline, None).map(|s| s.mean.correct_rate);
    let _ = writeln!(
        out,
        "\npaired against {baseline} (C.R {}), {} bootstrap resamples:",
        base_cr.map_or("-".to_string(), |c| format!("{:.2}", 100.0 * c)),
        tests[0].resamples
    );
    let _ = writeln!(
        out,
        "{:<name_w$}{:>8}{:>10}{:>20}{:>12}{:>11}{:>12}",
        "router", "C.R", "Δ pp", "95% CI (pp)", "wins/losses", "McNemar p", "cost"
    );
    for t in tests {
        let s = pooled(&t.router, t.param);
        let _ = writeln!(
            out,
            "{:<name_w$}{:>8}{:>10}{:>20}{:>12}{:>11}{:>12}",
            router_label(&t.router, t.param),
            s.map_or("-".into(), |s| format!(
                "{:.2}",
                100.0 * s.mean.correct_rate
            )),
            format!("{:+.2}", 100.0 * t.diff),
            format!("[{:+.2}, {:+.2}]", 100.0 * t.ci_low, 100.0 * t.ci_high),
            format!("{}/{}", t.wins, t.losses),
            format_p(t.p_mcnemar),
            s.map_or("-".into(), |s| format!("{:.2}", s.mean.mean_tokens)),
        );
    }
    if let (Some(b), Some(o)) = (base_cr, pooled("oracle", None).map(|s| s.mean.correct_rate)) {
        let best = tests
            .iter()
            .filter(|t| family(&t.router) != Family::Baseline)
            // A router's own row: its operating point was fixed on the training folds, so
            // this maximum is over routers, never over one router's sweep of test rows.
            .filter(|t| t.param.is_none())
            .filter_map(|t| pooled(&t.router, t.param).map(|s| (t, s.mean.correct_rate)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((t, cr)) = best {
            let gap = if o > b { (cr - b) / (o - b) } else { f64::NAN };
            let _ = writeln!(
                out,
                "best router {}: C.R {:.2} vs {baseline} {:.2} and oracle {:.2}:\n  {:.1} % of the {baseline}-to-oracle gap closed (cost in {cost_unit})",
                router_label(&t.router, t.param),
                100.0 * cr,
                100.0 * b,
                100.0 * o,
                100.0 * gap
            );
        }
    }
    out
}

/// A p-value with three significant digits, or `<1e-6`.
fn format_p(p: f64) -> String {
    if p < 1e-6 {
        "<1e-6".into()
    } else if p < 0.001 {
        format!("{p:.1e}")
    } else {
        format!("{p:.3}")
    }
}

/// The whole evaluation as one JSON document (`route eval --json`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn to_json(
    eval_id: i64,
    spec: &RouteEvalSpec,
    cost_unit: &str,
    summaries: &[Summary],
    tests: &[RouteEvalTest],
    skipped: &[(String, String)],
    failed: &[(String, String)],
    family: &dyn Fn(&str) -> Family,
) -> serde_json::Value {
    let m = |m: &crate::eval::Measures| {
        serde_json::json!({
            "accuracy": m.accuracy, "macro_f1": m.macro_f1, "mrr": m.mrr,
            "correct_rate": m.correct_rate, "mean_cost": m.mean_tokens,
            "regret_correct": m.regret_correct, "regret_cost": m.regret_tokens,
            "latency_ms": m.latency_ms, "fit_ms": m.fit_ms,
        })
    };
    serde_json::json!({
        "evaluation": eval_id,
        "split": spec.split, "folds": spec.folds, "seed": spec.seed,
        "features": spec.features, "policy": spec.policy, "mode": spec.mode,
        "cost_unit": cost_unit,
        "runs": spec.runs,
        "config": spec.config,
        "rows": summaries.iter().map(|s| serde_json::json!({
            "router": s.router, "param": s.param, "family": family(&s.router).as_str(),
            "corpus": s.corpus, "folds": s.folds, "n": s.n,
            "mean": m(&s.mean), "std": m(&s.std),
        })).collect::<Vec<_>>(),
        "tests": tests,
        "skipped": skipped.iter().map(|(r, w)| serde_json::json!({"router": r, "reason": w})).collect::<Vec<_>>(),
        "failed": failed.iter().map(|(r, w)| serde_json::json!({"router": r, "error": w})).collect::<Vec<_>>(),
    })
}

/// The router catalogue of `route list`: name, family, whether it calls an LLM, its sweep.
pub fn render_list(entries: &[crate::entry::RouterEntry]) -> String {
    let mut out = format!(
        "{:<18} {:<11} {:<5} {:<18} about\n",
        "router", "family", "llm", "sweep"
    );
    for e in entries {
        let fmt = |v: &f64| format_param(*v);
        let sweep = if e.sweep.len() > 3 {
            format!(
                "{} values {}..{}",
                e.sweep.len(),
                fmt(&e.sweep[0]),
                fmt(&e.sweep[e.sweep.len() - 1])
            )
        } else {
            e.sweep.iter().map(fmt).collect::<Vec<_>>().join(",")
        };
        out.push_str(&format!(
            "{:<18} {:<11} {:<5} {:<18} {}\n",
            e.name,
            e.family.as_str(),
            if e.needs_llm { "yes" } else { "no" },
            if sweep.is_empty() {
                "-".to_string()
            } else {
                sweep
            },
            e.about
        ));
    }
    out.push_str(
        "\nexternal routers: --external NAME='PROGRAM ARGS...' (protocol: docs/router-protocol.md)\n",
    );
    out
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n - 1).chain(std::iter::once('…')).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_names_every_router() {
        let l = render_list(&crate::registry::registry());
        for e in crate::registry::registry() {
            assert!(l.contains(e.name));
        }
        // Families in the command-line spelling, not Rust's.
        assert!(l.contains(" ml ") && l.contains(" cost-aware "), "{l}");
        assert!(!l.contains("CostAware") && !l.contains(" Ml "), "{l}");
    }

    fn row(router: &str, corpus: &str, acc: f64, cost: f64) -> bench_core::RouteEvalRow {
        bench_core::RouteEvalRow {
            router: router.into(),
            param: None,
            corpus: corpus.into(),
            fold: 0,
            n: 100,
            measures: bench_core::Measures {
                accuracy: acc,
                macro_f1: 0.0,
                mrr: 0.0,
                correct_rate: 0.0,
                mean_tokens: cost,
                regret_correct: 0.125,
                regret_tokens: 0.0,
                latency_ms: 0.0,
                fit_ms: 0.0,
            },
        }
    }

    #[test]
    fn groups_by_family_with_corpus_columns() {
        let rows = [
            row("oracle", "*", 1.0, 1234.0),
            row("oracle", "musique", 1.0, 1234.0),
            row("lr", "*", 0.5, 1234.0),
            row("lr", "musique", 0.456, 1234.0),
        ];
        let fam = |r: &str| {
            if r == "lr" {
                Family::Ml
            } else {
                Family::Baseline
            }
        };
        let table = Table3::build(&rows, &[], &fam, "context tokens");
        for wide in [false, true] {
            let t = render(&table, wide);
            let lines: Vec<&str> = t.lines().collect();
            // The legend comes first, then the table under its headers.
            assert!(lines[0].starts_with("R.A routing accuracy"), "{t}");
            // One corpus: its columns repeat the pooled ones, shown with --wide only.
            assert_eq!(t.contains("musique"), wide, "{t}");
            assert!(t.contains("cost in context tokens"), "{t}");
            let base = lines.iter().position(|l| *l == "Baselines").unwrap();
            let ml = lines.iter().position(|l| *l == "ML routers").unwrap();
            assert!(base < ml);
            let lr = lines.iter().find(|l| l.starts_with("lr ")).unwrap();
            assert_eq!(lr.contains("45.6"), wide, "{lr}");
            assert!(lr.contains("50.0") && lr.contains("1234±0"), "{lr}");
            assert!(lr.contains("12.5±0.0"), "{lr}");
            assert!(
                wide || lines.iter().all(|l| l.chars().count() <= NARROW),
                "{t}"
            );
        }
        // Small costs (retrieval steps) keep two decimals.
        let steps = Table3::build(&[row("lr", "*", 0.5, 4.6875)], &[], &fam, "retrieval steps");
        assert!(render(&steps, false).contains("4.69±0.00"));
        assert_eq!(router_label("cost", Some(0.5)), "cost(λ=0.5)");
        assert_eq!(format_param(0.031_622_776_601_683_79), "0.03162");
        assert_eq!(format_param(316.227_766_016_837_9), "316.2");
        assert_eq!(format_param(1000.0), "1000");
        assert_eq!(format_param(0.0), "0");
        assert_eq!(format_param(-0.25), "-0.25");
    }

    #[test]
    fn many_corpora_move_to_wide_and_the_default_stays_narrow() {
        let mut rows = Vec::new();
        for c in [
            "2wiki",
            "medical",
            "musique-dev",
            "hotpotqa",
            "nq",
            "squad",
            "trivia",
            "*",
        ] {
            rows.push(row("util-lr-with-a-long-name", c, 0.5, 4321.0));
        }
        let table = Table3::build(&rows, &[], &|_| Family::Utility, "context tokens");
        let narrow = render(&table, false);
        assert!(
            narrow.lines().all(|l| l.chars().count() <= NARROW),
            "{narrow}"
        );
        assert!(narrow.contains("--wide"), "{narrow}");
        let wide = render(&table, true);
        assert!(wide.lines().any(|l| l.chars().count() > NARROW));
        assert!(wide.contains("squad"));
    }
}
