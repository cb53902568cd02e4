//! The self-contained HTML report: figures inline as SVG, tables, provenance. Every string that
//! comes from the data is escaped.

use crate::tables::Table;

/// Escapes text for HTML element content and quoted attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A table as HTML, every cell escaped.
pub fn table(t: &Table) -> String {
    let mut out = format!(
        "<table>\n<caption>{}</caption>\n<thead><tr>",
        escape(&t.title)
    );
    for h in &t.headers {
        out.push_str(&format!("<th>{}</th>", escape(h)));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for r in &t.rows {
        out.push_str("<tr>");
        for c in r {
            out.push_str(&format!("<td>{}</td>", escape(c)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
    out
}

/// One part of the page.
#[derive(Debug, Clone)]
pub enum Block {
    /// A section heading.
    Heading(String),
    /// A paragraph of text (escaped when written).
    Paragraph(String),
    /// A note shown highlighted (missing parts).
    Note(String),
    /// A table.
    Table(Table),
    /// An inline SVG (produced by plotters, which escapes its text) with a caption.
    Figure {
        /// The SVG markup.
        svg: String,
        /// Its caption.
        caption: String,
    },
    /// Preformatted text (configuration JSON) under a summary line.
    Details {
        /// The summary line.
        summary: String,
        /// The preformatted text.
        body: String,
    },
}

const STYLE: &str = "body{font-family:'DejaVu Sans',Verdana,sans-serif;max-width:1400px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:13px}caption{text-align:left;font-weight:bold;padding:4px 0}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:right}th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}
figure{margin:1.5em 0}figure svg{max-width:100%;height:auto}figcaption{font-size:13px;color:#444}
.note{background:#fff4e0;border-left:4px solid #e69f00;padding:.5em 1em}pre{background:#f6f6f6;padding:.6em;overflow-x:auto;font-size:12px}";

/// The whole page.
pub fn document(title: &str, blocks: &[Block]) -> String {
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        escape(title),
        escape(title)
    );
    for b in blocks {
        match b {
            Block::Heading(h) => out.push_str(&format!("<h2>{}</h2>\n", escape(h))),
            Block::Paragraph(p) => out.push_str(&format!("<p>{}</p>\n", escape(p))),
            Block::Note(p) => out.push_str(&format!("<p class=\"note\">{}</p>\n", escape(p))),
            Block::Table(t) => out.push_str(&table(t)),
            Block::Figure { svg, caption } => {
                // Drop an XML declaration if the backend wrote one: it is not valid inside HTML.
                let body = match svg.find("<svg") {
                    Some(i) => &svg[i..],
                    None => svg.as_str(),
                };
                out.push_str(&format!(
                    "<figure>\n{body}\n<figcaption>{}</figcaption>\n</figure>\n",
                    escape(caption)
                ));
            }
            Block::Details { summary, body } => out.push_str(&format!(
                "<details><summary>{}</summary><pre>{}</pre></details>\n",
                escape(summary),
                escape(body)
            )),
        }
    }
    out.push_str("</body>\n</html>\n");
    out
}
