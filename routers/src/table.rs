//! The evaluation table shaped like the paper's Table 3: routers grouped by family, per corpus
//! R.A / F1 / MRR / C.R (percent, mean over folds), then pooled tokens and regrets.

use std::fmt::Write;

use bench_core::{RouteEvalSpec, RouteEvalTest};

use crate::entry::Family;
use crate::eval::Summary;

fn family_name(f: Family) -> &'static str {
    match f {
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

const FAMILY_ORDER: [Family; 8] = [
    Family::Baseline,
    Family::Ml,
    Family::Neural,
    Family::Seed,
    Family::Published,
    Family::Utility,
    Family::CostAware,
    Family::External,
];

/// The display name of a (router, param) pair: `name` or `name(λ=0.5)`.
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

/// Renders the table. `family` names each router's family (unknown routers go under External).
/// Corpus columns follow the corpora in `summaries` by name, the pooled `*` last; the pooled
/// block adds mean tokens per query, the correct-rate regret against Oracle (percentage points)
/// and the token regret, each with its spread over folds.
pub fn render(summaries: &[Summary], family: &dyn Fn(&str) -> Family) -> String {
    let mut corpora: Vec<&str> = summaries
        .iter()
        .map(|s| s.corpus.as_str())
        .filter(|c| *c != "*")
        .collect();
    corpora.sort_unstable();
    corpora.dedup();
    let mut routers: Vec<(String, Option<f64>)> = Vec::new();
    for s in summaries {
        if !routers.iter().any(|(r, p)| *r == s.router && *p == s.param) {
            routers.push((s.router.clone(), s.param));
        }
    }
    let name_w = routers
        .iter()
        .map(|(r, p)| router_label(r, *p).chars().count())
        .max()
        .unwrap_or(6)
        .max(6)
        + 2;
    let find = |r: &str, p: Option<f64>, c: &str| {
        summaries
            .iter()
            .find(|s| s.router == r && s.param == p && s.corpus == c)
    };
    let mut out = String::new();
    // Header: corpus names over their four columns, then the pooled block.
    let _ = write!(out, "{:<name_w$}", "");
    for c in corpora.iter().copied().chain(std::iter::once("all")) {
        let _ = write!(out, "| {:^27} ", truncate(c, 27));
    }
    let _ = writeln!(out, "| {:^36}", "all: cost and regret vs Oracle");
    let _ = write!(out, "{:<name_w$}", "router");
    for _ in 0..=corpora.len() {
        let _ = write!(out, "| {:>6}{:>7}{:>7}{:>7} ", "R.A", "F1", "MRR", "C.R");
    }
    let _ = writeln!(out, "| {:>12}{:>12}{:>12}", "tokens", "ΔC.R pp", "Δtokens");
    let width = out.lines().last().map_or(80, |l| l.chars().count());
    for fam in FAMILY_ORDER {
        let members: Vec<&(String, Option<f64>)> =
            routers.iter().filter(|(r, _)| family(r) == fam).collect();
        if members.is_empty() {
            continue;
        }
        let _ = writeln!(out, "{}", "-".repeat(width));
        let _ = writeln!(out, "{}", family_name(fam));
        for (r, p) in members {
            let _ = write!(out, "{:<name_w$}", router_label(r, *p));
            for c in corpora.iter().copied().chain(std::iter::once("*")) {
                match find(r, *p, c) {
                    Some(s) => {
                        let _ = write!(
                            out,
                            "| {:>6.1}{:>7.1}{:>7.1}{:>7.1} ",
                            100.0 * s.mean.accuracy,
                            100.0 * s.mean.macro_f1,
                            100.0 * s.mean.mrr,
                            100.0 * s.mean.correct_rate
                        );
                    }
                    None => {
                        let _ = write!(out, "| {:>27} ", "-");
                    }
                }
            }
            match find(r, *p, "*") {
                Some(s) => {
                    let _ = writeln!(
                        out,
                        "| {:>12}{:>12}{:>12}",
                        format!("{:.0}±{:.0}", s.mean.mean_tokens, s.std.mean_tokens),
                        format!(
                            "{:.1}±{:.1}",
                            100.0 * s.mean.regret_correct,
                            100.0 * s.std.regret_correct
                        ),
                        format!("{:.0}±{:.0}", s.mean.regret_tokens, s.std.regret_tokens),
                    );
                }
                None => {
                    let _ = writeln!(out, "| {:>12}", "-");
                }
            }
        }
    }
    let _ = writeln!(out, "{}", "-".repeat(width));
    out
}

/// The paired comparison against the baseline (best-single): per (router, param), the pooled
/// correct rate, the difference in percentage points with its 95 % bootstrap interval, the
/// discordant counts and McNemar's p; then the best non-baseline router's share of the gap to Oracle.
pub fn render_tests(
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
            .filter_map(|t| pooled(&t.router, t.param).map(|s| (t, s.mean.correct_rate)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((t, cr)) = best {
            let gap = if o > b { (cr - b) / (o - b) } else { f64::NAN };
            let _ = writeln!(
                out,
                "best router {}: C.R {:.2} vs {baseline} {:.2} and oracle {:.2}: {:.1} % of the {baseline}-to-oracle gap closed (cost in {cost_unit})",
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
pub fn to_json(
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
    use crate::eval::{Measures, Summary};

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

    fn s(router: &str, corpus: &str, acc: f64) -> Summary {
        Summary {
            router: router.into(),
            param: None,
            corpus: corpus.into(),
            folds: 5,
            n: 100,
            mean: Measures {
                accuracy: acc,
                mean_tokens: 1234.0,
                regret_correct: 0.125,
                ..Measures::default()
            },
            std: Measures::default(),
        }
    }

    #[test]
    fn groups_by_family_with_corpus_columns() {
        let rows = [
            s("oracle", "*", 1.0),
            s("oracle", "musique", 1.0),
            s("lr", "*", 0.5),
            s("lr", "musique", 0.456),
        ];
        let fam = |r: &str| {
            if r == "lr" {
                Family::Ml
            } else {
                Family::Baseline
            }
        };
        let t = render(&rows, &fam);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].contains("musique") && lines[0].contains("all"));
        let base = lines.iter().position(|l| *l == "Baselines").unwrap();
        let ml = lines.iter().position(|l| *l == "ML routers").unwrap();
        assert!(base < ml);
        let lr = lines.iter().find(|l| l.starts_with("lr ")).unwrap();
        assert!(
            lr.contains("45.6") && lr.contains("50.0") && lr.contains("1234±0"),
            "{lr}"
        );
        assert!(lr.contains("12.5±0.0"), "{lr}");
        assert_eq!(router_label("cost", Some(0.5)), "cost(λ=0.5)");
        assert_eq!(format_param(0.031_622_776_601_683_79), "0.03162");
        assert_eq!(format_param(316.227_766_016_837_9), "316.2");
        assert_eq!(format_param(1000.0), "1000");
        assert_eq!(format_param(0.0), "0");
        assert_eq!(format_param(-0.25), "-0.25");
    }
}
