//! The leaderboard's static page (`index.html`): the protocol, the reference lines and every
//! matrix's plot written here; the ranked table and the drill-down drawn by its script from the
//! embedded `leaderboard.json`. One file: no server, no network, nothing loaded from elsewhere.

use std::fmt::Write as _;

use super::model::{Board, Matrix};
use crate::html::escape;

/// The page's script (plain JavaScript, no framework).
const SCRIPT: &str = include_str!("page.js");

const STYLE: &str = "body{font-family:'DejaVu Sans',Verdana,sans-serif;max-width:1500px;margin:1.5em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.8em 0;font-size:13px}caption{text-align:left;font-weight:bold;padding:4px 0}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:right;vertical-align:top}th{background:#f3f3f3}
td{white-space:nowrap}td.t,th.t{text-align:left}th.group{text-align:center;cursor:default}
span.ci{display:block;font-size:11px;color:#666}td.status-skipped small{color:#777}td.router{white-space:normal;max-width:16em}
#ranking th{cursor:pointer;user-select:none}#ranking th.sorted-asc::after{content:' \\25B2'}
#ranking th.sorted-desc::after{content:' \\25BC'}#ranking tr.below td{background:#fafafa;color:#555}
#ranking tr.selected td{background:#e8f1fb}td small{display:block;color:#a33;max-width:22em;white-space:normal;text-align:left}
td.status{text-align:center}td.status small{display:-webkit-box;-webkit-line-clamp:2;-webkit-box-orient:vertical;overflow:hidden;margin:auto}
.scroll{overflow-x:auto}button.router{text-align:left;font:inherit;border:0;background:none;color:#0057a8;text-decoration:underline;cursor:pointer;padding:0}
.controls label{margin-right:1.5em}.note{background:#fff4e0;border-left:4px solid #e69f00;padding:.5em 1em}
.meta{color:#555}figure{margin:1.2em 0;overflow-x:auto}figcaption{font-size:13px;color:#444}
svg.pareto g.pt.hl>*:first-child{stroke:#000;stroke-width:3}svg.pareto g.pt.dim{opacity:.25}
pre{background:#f6f6f6;padding:.6em;overflow-x:auto;font-size:12px}code{font-size:12px}";

/// The whole page: `plots` are the matrices' plots (file name, SVG), in the board's matrix order.
pub fn document(board: &Board, board_json: &str, plots: &[(&str, &str)]) -> String {
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>RAG routing leaderboard</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <h1>RAG routing leaderboard</h1>\n<p class=\"meta\">{} routers on {} outcome matrices; \
         built {} by ragrouter-bench {}. Every number below is read from the <code>leaderboard.json</code> \
         embedded in this page.</p>\n\
         <noscript><p class=\"note\">The ranked table and the per-router drill-down are drawn by \
         this page's script from the embedded leaderboard.json: they need JavaScript. The plots, \
         the reference lines and the protocol below are shown without it.</p></noscript>\n",
        board.routers.len(),
        board.matrices.len(),
        escape(&board.generated),
        escape(&board.version),
    );
    out.push_str(RANKING);
    references(&mut out, board);
    figures(&mut out, board, plots);
    protocol(&mut out, board);
    let _ = write!(
        out,
        "<pre id=\"selftest\" hidden></pre>\n\
         <script type=\"application/json\" id=\"board\">{}</script>\n<script>\n{SCRIPT}</script>\n\
         </body>\n</html>\n",
        embed_json(board_json)
    );
    out
}

/// The ranking's frame; the script fills the selects, the table and the drill-down.
const RANKING: &str = "<section id=\"ranking-section\">\n<h2>Ranking</h2>\n\
<div class=\"controls\"><label>Matrix <select id=\"filter-matrix\"></select></label>\
<label>View <select id=\"filter-view\"></select></label></div>\n\
<p class=\"meta\">Click a column's header to sort by it (again to reverse; missing values stay last), \
a router's name for its cells on every matrix. Δ is the correct rate minus best-single's, in points, \
with its paired-bootstrap 95 % interval.</p>\n\
<div class=\"scroll\"><table id=\"ranking\"><thead></thead><tbody></tbody></table></div>\n\
<p id=\"holm-note\" class=\"meta\"></p>\n<div id=\"drill\"></div>\n</section>\n";

/// The published figures with no per-question choices, as lines marked not re-scored.
fn references(out: &mut String, board: &Board) {
    if board.references.is_empty() {
        return;
    }
    out.push_str("<section id=\"references\">\n<h2>Reference lines</h2>\n<ul>\n");
    for r in &board.references {
        let _ = writeln!(
            out,
            "<li class=\"reference\">{} on {}: {:.2} % correct — not re-scored ({})</li>",
            escape(&r.name),
            escape(&matrix_title(board, &r.matrix)),
            r.correct_rate * 100.0,
            escape(&r.note)
        );
    }
    out.push_str("</ul>\n</section>\n");
}

fn matrix_title(board: &Board, id: &str) -> String {
    board
        .matrices
        .iter()
        .find(|m| m.id == id)
        .map_or_else(|| id.to_owned(), |m| m.title.clone())
}

/// Every matrix's plot inline, each as in its own file.
fn figures(out: &mut String, board: &Board, plots: &[(&str, &str)]) {
    out.push_str("<section id=\"plots\">\n<h2>Cost and correct rate</h2>\n");
    for (m, (file, svg)) in board.matrices.iter().zip(plots) {
        let _ = writeln!(
            out,
            "<figure id=\"plot-{}\">\n{svg}<figcaption>{}: mean cost ({}) against correct rate at each \
             router's fixed operating point, per feature view; dashed line: the Pareto frontier of the \
             deployable points (Oracle reads the test labels). Also in <code>{}</code>.</figcaption>\n</figure>",
            escape(&m.id),
            escape(&m.title),
            escape(&m.cost_unit),
            escape(file)
        );
    }
    out.push_str("</section>\n");
}

/// The rules every number follows and the matrices' protocol table.
fn protocol(out: &mut String, board: &Board) {
    let p = &board.protocol;
    let _ = write!(
        out,
        "<section id=\"protocol\">\n<h2>Protocol</h2>\n<ul>\n<li>Ranking: {}</li>\n\
         <li>Operating point: {}</li>\n<li>Baseline of every Δ and gap share: {}</li>\n\
         <li>Intervals: paired bootstrap, {} resamples; seed {}.</li>\n\
         <li>Wins and losses: McNemar's exact test, p &lt; {} after Holm's correction over the {} \
         routers on the board; adding a router to the board changes the correction.</li>\n\
         <li>Cost saved is shown where the correct rate is within {} points of best-single's.</li>\n</ul>\n",
        escape(&p.ranking),
        escape(&p.operating_point),
        escape(&p.baseline),
        p.resamples,
        p.seed,
        p.alpha,
        p.holm_family,
        p.cost_save_within_points
    );
    out.push_str(
        "<table id=\"matrices\"><caption>Matrices</caption><thead><tr><th class=\"t\">matrix</th>\
         <th class=\"t\">store</th><th class=\"t\">split</th><th>folds</th><th>seed</th>\
         <th class=\"t\">views</th><th class=\"t\">cost unit</th><th>questions</th>\
         <th class=\"t\">ranked</th><th class=\"t\">digest (sha256)</th><th class=\"t\">status</th>\
         </tr></thead>\n<tbody>\n",
    );
    for m in &board.matrices {
        matrix_row(out, m);
    }
    out.push_str("</tbody></table>\n</section>\n");
}

fn matrix_row(out: &mut String, m: &Matrix) {
    let status = m
        .skipped
        .as_ref()
        .map_or_else(|| "evaluated".to_owned(), |why| format!("skipped: {why}"));
    let _ = writeln!(
        out,
        "<tr data-matrix=\"{}\"><td class=\"t\">{}</td><td class=\"t\">{}</td><td class=\"t\">{}</td>\
         <td>{}</td><td>{}</td><td class=\"t\">{}</td><td class=\"t\">{}</td><td>{}</td>\
         <td class=\"t\">{}</td><td class=\"t\"><code>{}</code></td><td class=\"t\">{}</td></tr>",
        escape(&m.id),
        escape(&m.title),
        escape(&m.store),
        escape(&m.split),
        m.folds,
        m.seed,
        escape(&m.views.join(", ")),
        escape(&m.cost_unit),
        m.n,
        if m.ranked { "yes" } else { "no (shown)" },
        escape(&m.digest),
        escape(&status)
    );
}

/// The JSON as the content of a `<script>` element: `</` becomes `<\/` and `<!--` becomes
/// `<\u0021--`, so no string in it (a router's name) can close the element or open a comment
/// that hides its end. Both are JSON escapes inside strings, and `<` occurs only in strings, so
/// `JSON.parse` reads the same document.
pub fn embed_json(json: &str) -> String {
    json.replace("</", "<\\/").replace("<!--", "<\\u0021--")
}
