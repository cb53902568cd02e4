//! The paper's tables from plain data: paradigms × corpora × query types (Table 2), routers ×
//! corpora (Table 3), token cost by phase (Table 16), and the frontier / AIQ summary; each
//! renders as Markdown and CSV.

use bench_core::table3::{Cell, Family, Stat, Table3, POOLED};
use bench_core::{ParadigmId, QueryType};

use crate::export::csv_field;
use crate::model::{CostBasis, ReportData, RouteEval, Tuple};
use crate::pareto::{router_label, Kind, Panel};

/// A rectangular table of text cells.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// File stem (`table2`, ...).
    pub name: String,
    /// The title, shown above the table.
    pub title: String,
    /// Column headers.
    pub headers: Vec<String>,
    /// Rows of cells, as many as headers each.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// GitHub-flavoured Markdown; every cell and the title go through [`markdown_cell`].
    pub fn to_markdown(&self) -> String {
        let cell = markdown_cell;
        let line = |cells: &[String]| {
            let inner: Vec<String> = cells.iter().map(|c| cell(c)).collect();
            format!("| {} |\n", inner.join(" | "))
        };
        let mut out = format!("### {}\n\n", cell(&self.title));
        out.push_str(&line(&self.headers));
        out.push_str(&format!("|{}\n", "---|".repeat(self.headers.len())));
        for r in &self.rows {
            out.push_str(&line(r));
        }
        out
    }

    /// RFC 4180 CSV with a header line.
    pub fn to_csv(&self) -> String {
        let line = |cells: &[String]| {
            let v: Vec<String> = cells.iter().map(|c| csv_field(c)).collect();
            v.join(",") + "\n"
        };
        let mut out = line(&self.headers);
        for r in &self.rows {
            out.push_str(&line(r));
        }
        out
    }
}

/// One Markdown table cell showing `s` as text: a backslash and `|` are escaped (a `|` would
/// end the cell), `&`, `<` and `>` become entities (a renderer would otherwise take `<script>`
/// or `<img ...>` for HTML), and line breaks become spaces (a row is one line).
pub fn markdown_cell(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '|' => out.push_str("\\|"),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

fn pct(v: f64) -> String {
    if v.is_finite() {
        format!("{:.1}", 100.0 * v)
    } else {
        "–".into()
    }
}

fn tokens(v: f64) -> String {
    format!("{v:.0}")
}

/// A mean cost per query: whole numbers for token counts, two decimals below 100 so that
/// small units (retrieval steps: 1.85 against 2.41) stay apart.
fn cost_cell(v: f64) -> String {
    if v == 0.0 || v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

fn short(t: QueryType) -> &'static str {
    match t {
        QueryType::Factual => "Fac.",
        QueryType::Reasoning => "Rea.",
        QueryType::Summary => "Sum.",
        QueryType::Other => "Oth.",
    }
}

/// Correct rate and count of `tuples`.
fn rate<'a>(tuples: impl Iterator<Item = &'a Tuple>) -> (f64, usize) {
    let (mut c, mut n) = (0usize, 0usize);
    for t in tuples {
        c += usize::from(t.correct());
        n += 1;
    }
    (
        if n == 0 {
            f64::NAN
        } else {
            c as f64 / n as f64
        },
        n,
    )
}

/// Table 2: per paradigm and corpus, the correct rate (%) by query type, over all types, and
/// mean tokens per query under the data's cost basis. Empty cells (no tuple) show `–`.
pub fn table2(data: &ReportData) -> Table {
    let basis = data.cost_basis();
    let corpora = data.corpus_names();
    let qtypes = data.qtypes();
    let mut headers = vec!["Paradigm".to_owned()];
    for c in &corpora {
        for q in &qtypes {
            headers.push(format!("{c} {}", short(*q)));
        }
        headers.push(format!("{c} Avg."));
        headers.push(format!("{c} Tok."));
    }
    let mut rows = Vec::new();
    for p in data.paradigms() {
        let mut row = vec![p.as_str().to_owned()];
        for c in &corpora {
            let of = || {
                data.tuples
                    .iter()
                    .filter(move |t| t.paradigm == p && &t.corpus == c)
            };
            for q in &qtypes {
                row.push(pct(rate(of().filter(|t| t.qtype == *q)).0));
            }
            let (avg, n) = rate(of());
            row.push(pct(avg));
            let cost: f64 = of().map(|t| basis.of(t)).sum();
            row.push(if n == 0 {
                "–".into()
            } else {
                cost_cell(cost / n as f64)
            });
        }
        rows.push(row);
    }
    Table {
        name: "table2".into(),
        title: format!(
            "Table 2: correct rate (%) by query type{}; Tok.: {}",
            if basis.offline_correct().is_some() {
                " (offline: answer delivered in the context)"
            } else {
                ""
            },
            basis.axis()
        ),
        headers,
        rows,
    }
}

/// Mean and sample standard deviation (n − 1; 0 for one value).
pub fn mean_std(v: &[f64]) -> (f64, f64) {
    if v.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    if v.len() == 1 {
        return (m, 0.0);
    }
    let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
    (m, var.sqrt())
}

/// Table order of routers: the baselines (by their stored family) first, Oracle last, the
/// rest by name.
pub fn router_order(name: &str, baseline: bool) -> (u8, String) {
    let rank = if name == crate::pareto::ORACLE {
        3
    } else if baseline {
        1
    } else {
        2
    };
    (rank, name.to_owned())
}

fn shown(key: &str) -> &str {
    if key == POOLED {
        crate::pareto::POOLED
    } else {
        key
    }
}

/// A Table 3 column: its name and how to read it from a cell.
type Metric = (&'static str, fn(&Cell) -> Stat);

/// Table 3 from Table 3's model (`bench_core::table3`, the one `route eval` prints): per router
/// (and λ) and corpus, R.A / F1 / MRR / C.R in %, mean ± std over folds, the routers grouped by
/// their stored family. Returns the Markdown-shaped table (cells `m ± s`, a bold row naming each
/// family) and the CSV-shaped one (a family column; mean and std in columns of their own).
pub fn table3(eval: &RouteEval, corpora: &[String]) -> (Table, Table) {
    let families = eval.families();
    // A router without a stored family (an older evaluation) is shown apart from the others.
    let family = |r: &str| {
        families
            .iter()
            .find(|(n, _)| n == r)
            .and_then(|(_, f)| Family::parse(f))
            .unwrap_or(Family::External)
    };
    let model = Table3::build(&eval.rows, corpora, &family, "");
    let metrics: [Metric; 4] = [
        ("R.A", |c| c.accuracy),
        ("F1", |c| c.macro_f1),
        ("MRR", |c| c.mrr),
        ("C.R", |c| c.correct_rate),
    ];
    let mut md_headers = vec!["Router".to_owned()];
    let mut csv_headers = vec!["router".to_owned(), "family".to_owned()];
    for k in &model.corpora {
        for (m, _) in &metrics {
            md_headers.push(format!("{} {m}", shown(k)));
            csv_headers.push(format!("{} {m} mean", shown(k)));
            csv_headers.push(format!("{} {m} std", shown(k)));
        }
    }
    let (mut md_rows, mut csv_rows) = (Vec::new(), Vec::new());
    for g in &model.groups {
        let mut heading = vec![format!("**{}**", g.family.heading())];
        heading.resize(md_headers.len(), String::new());
        md_rows.push(heading);
        for row in &g.rows {
            let label = router_label(&row.router, row.param);
            let mut md = vec![label.clone()];
            let mut csv = vec![label, g.family.as_str().to_owned()];
            for cell in &row.cells {
                for (_, f) in &metrics {
                    match cell {
                        None => {
                            md.push("–".into());
                            csv.extend(["".into(), "".into()]);
                        }
                        Some(c) => {
                            let s = f(c);
                            md.push(format!("{} ± {}", pct(s.mean), pct(s.std)));
                            csv.push(format!("{:.4}", 100.0 * s.mean));
                            csv.push(format!("{:.4}", 100.0 * s.std));
                        }
                    }
                }
            }
            md_rows.push(md);
            csv_rows.push(csv);
        }
    }
    let title = "Table 3: routers — routing accuracy, macro F1, MRR and correct rate (%), mean ± std over folds";
    (
        Table {
            name: "table3".into(),
            title: title.into(),
            headers: md_headers,
            rows: md_rows,
        },
        Table {
            name: "table3".into(),
            title: title.into(),
            headers: csv_headers,
            rows: csv_rows,
        },
    )
}

/// Each router's paired comparison with best-single: pooled correct rate, the difference in
/// percentage points with its 95 % bootstrap interval, discordant counts, McNemar's p.
pub fn significance(eval: &RouteEval) -> Table {
    let (tests, rows) = (&eval.tests[..], &eval.rows[..]);
    let pooled = |r: &str, p: Option<f64>| {
        let v: Vec<f64> = rows
            .iter()
            .filter(|x| x.router == r && x.param == p && x.corpus == "*")
            .map(|x| x.measures.correct_rate)
            .collect();
        mean_std(&v).0
    };
    let mut ordered: Vec<&bench_core::RouteEvalTest> = tests.iter().collect();
    ordered.sort_by_key(|t| {
        (
            router_order(&t.router, eval.is_baseline(&t.router)),
            t.param.map(f64::to_bits),
        )
    });
    Table {
        name: "significance".into(),
        title: format!(
            "Paired comparison with {} (same test questions; {} bootstrap resamples, exact McNemar)",
            tests.first().map_or("best-single", |t| t.baseline.as_str()),
            tests.first().map_or(0, |t| t.resamples)
        ),
        headers: ["router", "C.R %", "Δ pp", "95% CI (pp)", "wins / losses", "McNemar p"]
            .map(String::from)
            .to_vec(),
        rows: ordered
            .iter()
            .map(|t| {
                vec![
                    router_label(&t.router, t.param),
                    pct(pooled(&t.router, t.param)),
                    format!("{:+.2}", 100.0 * t.diff),
                    format!("[{:+.2}, {:+.2}]", 100.0 * t.ci_low, 100.0 * t.ci_high),
                    format!("{} / {}", t.wins, t.losses),
                    if t.p_mcnemar < 1e-4 {
                        format!("{:.1e}", t.p_mcnemar)
                    } else {
                        format!("{:.4}", t.p_mcnemar)
                    },
                ]
            })
            .collect(),
    }
}

/// Table 16: LLM tokens by phase per corpus and paradigm, summed over the run's tuples (Avg-Ctx
/// is the mean context length). Construction includes the graph build amortised over the
/// questions.
pub fn table16(data: &ReportData) -> Table {
    let headers: Vec<String> = [
        "Corpus",
        "Paradigm",
        "N",
        "Avg-Ctx",
        "Con-In",
        "Con-Out",
        "Ret-In",
        "Ret-Out",
        "Gen-In",
        "Gen-Out",
        "Total",
        "Judge-In",
        "Judge-Out",
    ]
    .map(String::from)
    .to_vec();
    let mut rows = Vec::new();
    for c in data.corpus_names() {
        for p in ParadigmId::ALL {
            let ts: Vec<&Tuple> = data
                .tuples
                .iter()
                .filter(|t| t.corpus == c && t.paradigm == p)
                .collect();
            if ts.is_empty() {
                continue;
            }
            let sum = |f: fn(&Tuple) -> f64| ts.iter().map(|t| f(t)).sum::<f64>();
            rows.push(vec![
                c.clone(),
                p.as_str().to_owned(),
                ts.len().to_string(),
                tokens(sum(|t| t.context_tokens as f64) / ts.len() as f64),
                tokens(sum(|t| {
                    t.tokens.phases.construction_in as f64 + t.amortised_in
                })),
                tokens(sum(|t| {
                    t.tokens.phases.construction_out as f64 + t.amortised_out
                })),
                tokens(sum(|t| t.tokens.phases.retrieval_in as f64)),
                tokens(sum(|t| t.tokens.phases.retrieval_out as f64)),
                tokens(sum(|t| t.tokens.phases.generation_in as f64)),
                tokens(sum(|t| t.tokens.phases.generation_out as f64)),
                tokens(sum(|t| {
                    t.tokens.paradigm() as f64 + t.amortised_in + t.amortised_out
                })),
                tokens(sum(|t| t.tokens.judge_in as f64)),
                tokens(sum(|t| t.tokens.judge_out as f64)),
            ]);
        }
    }
    Table {
        name: "table16".into(),
        title: "Table 16: tokens by phase (totals over the questions; Avg-Ctx per question)".into(),
        headers,
        rows,
    }
}

/// Every strategy of every panel with its cost, correct rate and whether it is on the frontier.
pub fn frontier_table(panels: &[Panel], basis: &CostBasis) -> Table {
    let headers = [
        "Corpus",
        "Strategy",
        "Kind",
        &format!("Mean {}", basis.unit()),
        "Correct (%)",
        "N",
        "Pareto",
    ]
    .map(String::from)
    .to_vec();
    let mut rows = Vec::new();
    for p in panels {
        for (i, pt) in p.points.iter().enumerate() {
            rows.push(vec![
                p.corpus.clone(),
                pt.label.clone(),
                match pt.kind {
                    Kind::Paradigm => "paradigm".into(),
                    Kind::Router => "router".into(),
                    Kind::Reference => "reference (reads test labels)".into(),
                },
                cost_cell(pt.cost),
                pct(pt.quality),
                pt.n.to_string(),
                match (pt.kind, p.frontier.contains(&i)) {
                    (Kind::Reference, _) => "–",
                    (_, true) => "yes",
                    (_, false) => "no",
                }
                .into(),
            ]);
        }
        for c in &p.curves {
            for (_, pt) in &c.points {
                rows.push(vec![
                    p.corpus.clone(),
                    pt.label.clone(),
                    "router sweep".into(),
                    cost_cell(pt.cost),
                    pct(pt.quality),
                    pt.n.to_string(),
                    "–".into(),
                ]);
            }
        }
    }
    Table {
        name: "frontier".into(),
        title: "Cost–accuracy points and the Pareto frontier".into(),
        headers,
        rows,
    }
}

/// AIQ per panel: the fixed paradigms as arms, everything together, and each λ-sweep.
pub fn aiq_table(panels: &[Panel]) -> Table {
    let headers = ["Corpus", "Strategies", "AIQ", "Cost range (tokens/query)"]
        .map(String::from)
        .to_vec();
    let fmt = |v: Option<f64>| v.map_or_else(|| "–".into(), |v| format!("{v:.4}"));
    let range = |p: &Panel| {
        p.range
            .map_or_else(|| "–".into(), |(a, b)| format!("{a:.0}–{b:.0}"))
    };
    let mut rows = Vec::new();
    for p in panels {
        rows.push(vec![
            p.corpus.clone(),
            "paradigms".into(),
            fmt(p.aiq_paradigms),
            range(p),
        ]);
        rows.push(vec![
            p.corpus.clone(),
            "all strategies".into(),
            fmt(p.aiq_all),
            range(p),
        ]);
        for (c, a) in p.curves.iter().zip(&p.aiq_curves) {
            rows.push(vec![
                p.corpus.clone(),
                format!("{} λ-sweep", c.router),
                fmt(*a),
                range(p),
            ]);
        }
    }
    Table {
        name: "aiq".into(),
        title:
            "AIQ (area under the non-decreasing convex hull, cost normalised to the panel's range)"
                .into(),
        headers,
        rows,
    }
}
