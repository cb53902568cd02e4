//! One matrix's cost–correct-rate plot as hand-written SVG: one panel per feature view with every
//! router's fixed operating point, best-single, Oracle, the reference lines and the Pareto frontier.
//!
//! Hand-written rather than drawn with plotters: the page is one self-contained file, so its
//! text is SVG `<text>` in a generic font family (no embedded font), and every point carries its
//! router's name (`data-router`, `<title>`) for the page's script and its tests.

use std::fmt::Write as _;

use super::model::{Board, Cell, Matrix, ViewBaselines};
use crate::html::escape;
use crate::pareto::{frontier, ORACLE};

/// The best-single baseline's router name (drawn from the matrix's baselines instead).
pub const BEST_SINGLE: &str = "best-single";

const PANEL_W: f64 = 470.0;
const PANEL_H: f64 = 380.0;
const LEGEND_W: f64 = 250.0;
const LINE_H: f64 = 17.0;
/// Plot area inside a panel: left, top, right and bottom margins.
const MARGIN: (f64, f64, f64, f64) = (62.0, 34.0, 14.0, 48.0);
const FONT: &str = "font-family=\"DejaVu Sans,Verdana,sans-serif\"";

/// Routers' colours: Okabe–Ito's (colour-blind safe) then Paul Tol's muted scheme.
const PALETTE: [&str; 14] = [
    "#0072b2", "#e69f00", "#009e73", "#d55e00", "#cc79a7", "#56b4e9", "#332288", "#117733",
    "#999933", "#882255", "#aa4499", "#44aa99", "#ddcc77", "#88ccee",
];

/// Routers' marker shapes; the palette runs through each before the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Circle,
    Triangle,
    Square,
    InvertedTriangle,
    Diamond,
}

const SHAPES: [Shape; 4] = [
    Shape::Circle,
    Shape::Triangle,
    Shape::Square,
    Shape::InvertedTriangle,
];

/// How one strategy is drawn.
#[derive(Debug, Clone, Copy)]
struct Style {
    colour: &'static str,
    shape: Shape,
    filled: bool,
}

const BEST_STYLE: Style = Style {
    colour: "#000000",
    shape: Shape::Diamond,
    filled: true,
};
const ORACLE_STYLE: Style = Style {
    colour: "#000000",
    shape: Shape::Square,
    filled: false,
};

/// The `i`-th router's style (its index among the plotted routers of the board).
fn router_style(i: usize) -> Style {
    Style {
        colour: PALETTE[i % PALETTE.len()],
        shape: SHAPES[(i / PALETTE.len()) % SHAPES.len()],
        filled: true,
    }
}

/// Whether a router is drawn as a router point (best-single and Oracle are drawn from the
/// matrix's baselines).
fn plotted(name: &str) -> bool {
    name != BEST_SINGLE && name != ORACLE
}

/// The plot's file name: `pareto-<matrix id>.svg`, any character outside `[A-Za-z0-9._-]`
/// replaced by `_` so an id can never name a path.
pub fn file_name(matrix_id: &str) -> String {
    let safe: String = matrix_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("pareto-{safe}.svg")
}

/// One point of a panel.
#[derive(Debug, Clone)]
struct Point {
    label: String,
    cost: f64,
    rate: f64,
    style: Style,
    /// `router`, `best-single` or `oracle`.
    class: &'static str,
}

/// The SVG of one matrix: a panel per view and a legend of every router drawn.
pub fn matrix_svg(board: &Board, matrix: &Matrix) -> String {
    let routers: Vec<&str> = board
        .routers
        .iter()
        .map(|r| r.name.as_str())
        .filter(|n| plotted(n))
        .collect();
    let views: Vec<&str> = if matrix.views.is_empty() {
        vec![""]
    } else {
        matrix.views.iter().map(String::as_str).collect()
    };
    let drawn: Vec<&str> = routers
        .iter()
        .copied()
        .filter(|r| {
            views
                .iter()
                .any(|v| ok_cell(board, r, &matrix.id, v).is_some())
        })
        .collect();
    let width = PANEL_W * views.len() as f64 + LEGEND_W;
    let legend_h = 40.0 + LINE_H * (drawn.len() + 4) as f64;
    let height = PANEL_H.max(legend_h);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"pareto\" data-matrix=\"{}\" \
         width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" {FONT} font-size=\"12\">\n\
         <title>{}: cost against correct rate</title>\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n",
        escape(&matrix.id),
        escape(&matrix.title)
    );
    for (k, view) in views.iter().enumerate() {
        let points = panel_points(board, matrix, view, &routers);
        let refs: Vec<(String, f64)> = board
            .references
            .iter()
            .filter(|r| r.matrix == matrix.id)
            .map(|r| (format!("{} (not re-scored)", r.name), r.correct_rate))
            .collect();
        panel(&mut svg, PANEL_W * k as f64, matrix, view, &points, &refs);
    }
    legend(&mut svg, PANEL_W * views.len() as f64, &routers, &drawn);
    svg.push_str("</svg>\n");
    svg
}

/// The measured cell of a router on a matrix and view, if it ran.
fn ok_cell<'a>(board: &'a Board, router: &str, matrix: &str, view: &str) -> Option<&'a Cell> {
    board.cells.iter().find(|c| {
        c.router == router
            && c.matrix == matrix
            && c.view == view
            && c.status == "ok"
            && c.measures.is_some()
    })
}

/// A panel's points: best-single and Oracle from the baselines, then every router that ran.
/// A skipped matrix has none.
fn panel_points(board: &Board, matrix: &Matrix, view: &str, routers: &[&str]) -> Vec<Point> {
    let mut points = Vec::new();
    if matrix.skipped.is_some() {
        return points;
    }
    if let Some(b) = matrix.baselines.iter().find(|b| b.view == view) {
        points.extend(baseline_points(b));
    }
    for (i, r) in routers.iter().enumerate() {
        if let Some(m) = ok_cell(board, r, &matrix.id, view).and_then(|c| c.measures.as_ref()) {
            points.push(Point {
                label: (*r).to_owned(),
                cost: m.mean_cost,
                rate: m.correct_rate,
                style: router_style(i),
                class: "router",
            });
        }
    }
    points
}

fn baseline_points(b: &ViewBaselines) -> [Point; 2] {
    [
        Point {
            label: BEST_SINGLE.into(),
            cost: b.best_single_cost,
            rate: b.best_single_correct,
            style: BEST_STYLE,
            class: "best-single",
        },
        Point {
            label: "Oracle".into(),
            cost: b.oracle_cost,
            rate: b.oracle_correct,
            style: ORACLE_STYLE,
            class: "oracle",
        },
    ]
}

/// Maps data to panel pixels.
struct Axes {
    x0: f64,
    x: (f64, f64),
    y: (f64, f64),
}

impl Axes {
    fn px(&self, cost: f64) -> f64 {
        let (l, r) = (self.x0 + MARGIN.0, self.x0 + PANEL_W - MARGIN.2);
        l + (cost - self.x.0) / (self.x.1 - self.x.0) * (r - l)
    }

    fn py(&self, rate: f64) -> f64 {
        let (t, b) = (MARGIN.1, PANEL_H - MARGIN.3);
        b - (rate - self.y.0) / (self.y.1 - self.y.0) * (b - t)
    }
}

/// One view's panel at horizontal offset `x0`.
fn panel(
    svg: &mut String,
    x0: f64,
    matrix: &Matrix,
    view: &str,
    points: &[Point],
    refs: &[(String, f64)],
) {
    let title = if view.is_empty() {
        matrix.title.clone()
    } else {
        format!("{} — view {view}", matrix.title)
    };
    let _ = writeln!(
        svg,
        "<g class=\"panel\" data-view=\"{}\">\n<text x=\"{}\" y=\"20\" font-weight=\"bold\" font-size=\"13\">{}</text>",
        escape(view),
        x0 + MARGIN.0,
        escape(&title)
    );
    let finite: Vec<&Point> = points
        .iter()
        .filter(|p| p.cost.is_finite() && p.rate.is_finite())
        .collect();
    if finite.is_empty() {
        let why = matrix
            .skipped
            .as_deref()
            .unwrap_or("no router ran on this view");
        let _ = writeln!(
            svg,
            "<text x=\"{}\" y=\"{}\" fill=\"#666\">{}</text>\n</g>",
            x0 + MARGIN.0,
            PANEL_H / 2.0,
            escape(&format!("Nothing to plot: {why}"))
        );
        return;
    }
    let costs = finite.iter().map(|p| p.cost);
    let rates = finite
        .iter()
        .map(|p| p.rate)
        .chain(refs.iter().map(|r| r.1).filter(|r| r.is_finite()));
    let axes = Axes {
        x0,
        x: padded(
            costs.clone().fold(f64::INFINITY, f64::min),
            costs.fold(f64::NEG_INFINITY, f64::max),
        ),
        y: padded(
            rates.clone().fold(f64::INFINITY, f64::min),
            rates.fold(f64::NEG_INFINITY, f64::max),
        ),
    };
    draw_axes(svg, &axes, &matrix.cost_unit);
    draw_frontier(svg, &axes, points);
    for (label, rate) in refs.iter().filter(|r| r.1.is_finite()) {
        let y = axes.py(*rate);
        let _ = writeln!(
            svg,
            "<g class=\"reference\"><line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#888\" stroke-dasharray=\"2 3\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" fill=\"#555\" font-size=\"10\">{}</text></g>",
            x0 + MARGIN.0,
            x0 + PANEL_W - MARGIN.2,
            x0 + MARGIN.0 + 4.0,
            y - 3.0,
            escape(&format!("{label}: {:.1} %", rate * 100.0))
        );
    }
    for p in &finite {
        draw_point(svg, &axes, p, &matrix.cost_unit);
    }
    svg.push_str("</g>\n");
}

/// `[lo, hi]` widened by 8 % each side (a fixed width around a single value), never below 0
/// when `lo` is not: costs and rates are not negative.
fn padded(lo: f64, hi: f64) -> (f64, f64) {
    let span = hi - lo;
    let w = if span <= f64::EPSILON * hi.abs().max(1.0) {
        (hi.abs() * 0.1).max(0.01)
    } else {
        span * 0.08
    };
    let low = if lo >= 0.0 { (lo - w).max(0.0) } else { lo - w };
    (low, hi + w)
}

/// Round tick values in `[lo, hi]` (steps of 1, 2 or 5 times a power of ten) and their decimals.
fn ticks(lo: f64, hi: f64) -> (Vec<f64>, usize) {
    let raw = (hi - lo) / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    ((first..=last).map(|k| k as f64 * step).collect(), decimals)
}

fn draw_axes(svg: &mut String, a: &Axes, unit: &str) {
    let (l, r) = (a.x0 + MARGIN.0, a.x0 + PANEL_W - MARGIN.2);
    let (t, b) = (MARGIN.1, PANEL_H - MARGIN.3);
    let _ = writeln!(
        svg,
        "<rect x=\"{l}\" y=\"{t}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#444\"/>",
        r - l,
        b - t
    );
    let (xt, xd) = ticks(a.x.0, a.x.1);
    for v in xt {
        let x = a.px(v);
        let _ = writeln!(
            svg,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{t}\" y2=\"{b}\" stroke=\"#eee\"/>\
             <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"10\">{v:.xd$}</text>",
            b + 14.0
        );
    }
    let (yt, yd) = ticks(a.y.0 * 100.0, a.y.1 * 100.0);
    for v in yt {
        let y = a.py(v / 100.0);
        let _ = writeln!(
            svg,
            "<line x1=\"{l}\" x2=\"{r}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#eee\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" font-size=\"10\">{v:.yd$}</text>",
            l - 5.0,
            y + 3.5
        );
    }
    let _ = writeln!(
        svg,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">mean cost ({})</text>\
         <text transform=\"translate({:.1} {:.1}) rotate(-90)\" text-anchor=\"middle\">correct rate (%)</text>",
        (l + r) / 2.0,
        PANEL_H - 12.0,
        escape(unit),
        a.x0 + 16.0,
        (t + b) / 2.0
    );
}

/// The dashed Pareto frontier over the deployable points (Oracle reads the labels: not on it).
fn draw_frontier(svg: &mut String, a: &Axes, points: &[Point]) {
    let deployable: Vec<&Point> = points.iter().filter(|p| p.class != "oracle").collect();
    let xy: Vec<(f64, f64)> = deployable.iter().map(|p| (p.cost, p.rate)).collect();
    let on = frontier(&xy);
    if on.is_empty() {
        return;
    }
    let path: Vec<String> = on
        .iter()
        .map(|&i| format!("{:.1},{:.1}", a.px(xy[i].0), a.py(xy[i].1)))
        .collect();
    let names: Vec<&str> = on.iter().map(|&i| deployable[i].label.as_str()).collect();
    let _ = writeln!(
        svg,
        "<polyline class=\"frontier\" data-points=\"{}\" points=\"{}\" fill=\"none\" stroke=\"#555\" stroke-width=\"1.3\" stroke-dasharray=\"6 4\"/>",
        escape(&names.join("\n")),
        path.join(" ")
    );
}

/// A marker's SVG shape centred at (x, y).
fn marker(x: f64, y: f64, s: Style, r: f64) -> String {
    let fill = if s.filled { s.colour } else { "none" };
    let paint = format!(
        "fill=\"{fill}\" stroke=\"{}\" stroke-width=\"1.4\"",
        s.colour
    );
    let poly = |pts: &[(f64, f64)]| {
        let p: Vec<String> = pts
            .iter()
            .map(|(dx, dy)| format!("{:.1},{:.1}", x + dx * r, y + dy * r))
            .collect();
        format!("<polygon points=\"{}\" {paint}/>", p.join(" "))
    };
    match s.shape {
        Shape::Circle => format!("<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"{r}\" {paint}/>"),
        Shape::Square => format!(
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{}\" height=\"{}\" {paint}/>",
            x - r,
            y - r,
            2.0 * r,
            2.0 * r
        ),
        Shape::Triangle => poly(&[(0.0, -1.2), (1.1, 0.8), (-1.1, 0.8)]),
        Shape::InvertedTriangle => poly(&[(0.0, 1.2), (1.1, -0.8), (-1.1, -0.8)]),
        Shape::Diamond => poly(&[(0.0, -1.3), (1.3, 0.0), (0.0, 1.3), (-1.3, 0.0)]),
    }
}

fn draw_point(svg: &mut String, a: &Axes, p: &Point, unit: &str) {
    let (x, y) = (a.px(p.cost), a.py(p.rate));
    let _ = write!(
        svg,
        "<g class=\"pt {}\" data-router=\"{}\" data-cost=\"{}\" data-rate=\"{}\"><title>{}</title>{}",
        p.class,
        escape(&p.label),
        p.cost,
        p.rate,
        escape(&format!(
            "{}: {:.2} % correct at {:.2} {unit}",
            p.label,
            p.rate * 100.0,
            p.cost
        )),
        marker(x, y, p.style, 4.5)
    );
    if p.class != "router" {
        // Left of the point where the label would cross the panel's right edge.
        let right = a.x0 + PANEL_W - MARGIN.2;
        let (lx, anchor) = if x + 7.0 + 6.0 * p.label.chars().count() as f64 > right {
            (x - 7.0, "end")
        } else {
            (x + 7.0, "start")
        };
        let _ = write!(
            svg,
            "<text x=\"{lx:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\" font-size=\"10\">{}</text>",
            y - 6.0,
            escape(&p.label)
        );
    }
    svg.push_str("</g>\n");
}

/// The legend at horizontal offset `x0`: best-single, Oracle, the frontier, then every router
/// drawn in this plot (in its board-wide style).
fn legend(svg: &mut String, x0: f64, routers: &[&str], drawn: &[&str]) {
    let x = x0 + 10.0;
    let mut y = MARGIN.1 + 4.0;
    svg.push_str("<g class=\"legend\">\n");
    let line = |svg: &mut String, item: String, label: &str, y: f64| {
        let _ = writeln!(
            svg,
            "<g class=\"legend-item\" data-router=\"{}\">{item}<text x=\"{:.1}\" y=\"{:.1}\">{}</text></g>",
            escape(label),
            x + 18.0,
            y + 4.0,
            escape(label)
        );
    };
    line(svg, marker(x + 6.0, y, BEST_STYLE, 4.5), BEST_SINGLE, y);
    y += LINE_H;
    line(
        svg,
        marker(x + 6.0, y, ORACLE_STYLE, 4.5),
        "Oracle (reads the labels)",
        y,
    );
    y += LINE_H;
    let dash = format!(
        "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#555\" stroke-dasharray=\"6 4\"/>",
        x - 2.0,
        x + 14.0
    );
    line(svg, dash, "Pareto frontier", y);
    y += LINE_H * 1.5;
    for (i, r) in routers.iter().enumerate() {
        if drawn.contains(r) {
            line(svg, marker(x + 6.0, y, router_style(i), 4.5), r, y);
            y += LINE_H;
        }
    }
    svg.push_str("</g>\n");
}
