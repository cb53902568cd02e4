//! The end-of-run table, printed from the stored rows.

use bench_core::SummaryRow;

fn pct(x: f64) -> String {
    format!("{:.1}", 100.0 * x)
}

/// Renders rows as an aligned text table: per paradigm its query types, then its overall row.
pub fn render(rows: &[SummaryRow]) -> String {
    let header = [
        "paradigm",
        "type",
        "n",
        "correct %",
        "no-answer %",
        "evid. recall",
        "ctx tokens",
        "LLM tokens",
        "latency ms",
        "errors",
    ];
    let mut cells: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
    for r in rows {
        cells.push(vec![
            r.paradigm.to_string(),
            r.qtype.map_or_else(|| "all".to_owned(), |t| t.to_string()),
            r.n.to_string(),
            pct(r.correct),
            pct(r.no_answer),
            r.evidence_recall
                .map_or_else(|| "-".to_owned(), |e| format!("{e:.3}")),
            format!("{:.0}", r.context_tokens),
            format!("{:.0}", r.total_tokens),
            format!("{:.1}", r.latency_ms),
            r.errors.to_string(),
        ]);
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|c| cells.iter().map(|row| row[c].len()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for (i, row) in cells.iter().enumerate() {
        let line: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(c, s)| {
                if c < 2 {
                    format!("{s:<w$}", w = widths[c])
                } else {
                    format!("{s:>w$}", w = widths[c])
                }
            })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
        if i == 0 {
            out.push_str(&"-".repeat(widths.iter().sum::<usize>() + 2 * (widths.len() - 1)));
            out.push('\n');
        }
    }
    out
}
