//! The end-of-run table, printed from the stored rows.

use store::SummaryRow;

fn pct(x: f64) -> String {
    format!("{:.1}", 100.0 * x)
}

/// What "correct" means in an offline table (decisions.md, "Offline default").
pub const OFFLINE_CORRECT: &str =
    "offline: correct % = the delivered context holds a gold answer or alias \
(whole SQuAD tokens; yes/no golds: all gold evidence chunks; answers longer than a short span \
with evidence statements: the chunks of a share of the matched statements), not an answer a model \
gave; reader % = the extractive reader's sentence holds it (recall >= 0.8); evid. recall is over \
the questions with gold chunks";

/// Renders rows as an aligned text table: per paradigm its query types, then its overall row.
/// Offline rows (those with a reader verdict) get a `reader %` column after `correct %`; runs
/// whose evidence names whole documents a `doc recall` column after `evid. recall`.
pub fn render(rows: &[SummaryRow]) -> String {
    let offline = rows.iter().any(|r| r.reader_correct.is_some());
    let documents = rows.iter().any(|r| r.document_recall.is_some());
    let mut header = vec![
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
    if documents {
        header.insert(6, "doc recall");
    }
    if offline {
        header.insert(4, "reader %");
    }
    let mut cells: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
    for r in rows {
        let mut row = vec![
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
        ];
        if documents {
            let d = r.document_recall;
            row.insert(6, d.map_or_else(|| "-".to_owned(), |d| format!("{d:.3}")));
        }
        if offline {
            row.insert(4, r.reader_correct.map_or_else(|| "-".to_owned(), pct));
        }
        cells.push(row);
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
