//! Figure 7: cost–accuracy scatter per corpus (and pooled) with the Pareto frontier, every
//! paradigm and router in a style of its own (`placement`), paradigms labelled where a label
//! fits without covering anything, and the λ-sweep of each cost-aware router.

use std::path::Path;

use bench_core::{ParadigmId, Result};
use plotters::coord::cartesian::Cartesian2d;
use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::draw::{colour, draw_err, fmt_tokens, label, text, Figure};
use super::entry::{drawn, Drawn, FigureEntry, FigureInput, Section};
use super::placement::{draw_marker, place_labels, Marker, Px};
use crate::model::RouteEval;
use crate::pareto::{Kind, Panel};

/// Figure 7's line in the report's figure list.
pub const ENTRY: FigureEntry = FigureEntry::new("fig7_cost_accuracy", Section::Cost, entry_draw);

/// Figure 7 from the report's panels, with the main evaluation's routers.
fn entry_draw(input: &FigureInput<'_>, png: &Path) -> Result<Drawn> {
    let fig = CostFigure {
        panels: input.panels.to_vec(),
        mode: input.modes.to_owned(),
        axis: input.basis.axis(),
        families: input.eval.map_or_else(Vec::new, RouteEval::families),
    };
    let caption = format!(
        "Figure 7: {} against correct rate, per corpus and pooled; dashed line: Pareto frontier.{}",
        input.basis.axis(),
        input.eval.map_or_else(String::new, |e| format!(
            " Routers from evaluation {} ({} split, features {}).",
            e.id, e.spec.split, e.spec.features
        ))
    );
    drawn(&fig, png, caption)
}

const PANEL: (u32, u32) = (560, 430);
const LEGEND: u32 = 270;

/// One legend line: a series (with its style) or a group heading (no marker).
#[derive(Debug, Clone)]
struct Entry {
    label: String,
    colour: RGBColor,
    marker: Option<Marker>,
}

/// The figure: one panel per corpus plus the pooled one.
#[derive(Debug, Clone)]
pub struct CostFigure {
    /// The panels, the per-corpus ones first.
    pub panels: Vec<Panel>,
    /// `offline` or the LLM's identity, shown in the title.
    pub mode: String,
    /// The cost axis's description with its unit.
    pub axis: String,
    /// Each evaluated router's stored family (`baseline`, `ml`, `utility`, ...), from the
    /// evaluation's configuration; routers not named here are drawn as routers.
    pub families: Vec<(String, String)>,
}

/// Baselines in greys, so that no baseline shares a hue with a paradigm or a learned router.
const GREYS: [RGBColor; 4] = [
    RGBColor(60, 60, 60),
    RGBColor(105, 105, 105),
    RGBColor(150, 150, 150),
    RGBColor(190, 190, 190),
];

/// Routers: Paul Tol's "muted" scheme, hues apart from the paradigms' Okabe-Ito colours.
const TOL_MUTED: [RGBColor; 9] = [
    RGBColor(51, 34, 136),
    RGBColor(136, 204, 238),
    RGBColor(68, 170, 153),
    RGBColor(17, 119, 51),
    RGBColor(153, 153, 51),
    RGBColor(221, 204, 119),
    RGBColor(204, 102, 119),
    RGBColor(136, 34, 85),
    RGBColor(170, 68, 153),
];

/// Router markers, the palette running through each before the next (9 x 3 = 27 routers).
const ROUTER_MARKERS: [Marker; 3] = [Marker::Triangle, Marker::InvertedTriangle, Marker::Diamond];

impl CostFigure {
    fn grid(&self) -> (u32, u32) {
        let n = self.panels.len().max(1) as u32;
        let cols = n.min(2);
        (n.div_ceil(cols), cols)
    }

    fn is_baseline(&self, router: &str) -> bool {
        self.families
            .iter()
            .any(|(n, f)| n == router && f == "baseline")
    }

    /// Every strategy's style, grouped under headings: paradigms (their fixed colours, circles),
    /// Oracle (a black square outline: a reference that reads the test labels), baselines
    /// (greys, diamonds), routers (a palette apart from the paradigms', triangles, inverted
    /// triangles, then diamonds), λ-sweeps (squares). One label per strategy.
    fn legend(&self) -> Vec<Entry> {
        let mut groups: [Vec<Entry>; 5] = Default::default();
        let seen =
            |groups: &[Vec<Entry>; 5], l: &str| groups.iter().flatten().any(|e| e.label == l);
        for p in &self.panels {
            for pt in &p.points {
                if seen(&groups, &pt.label) {
                    continue;
                }
                let (g, colour, marker) = match pt.kind {
                    Kind::Paradigm => {
                        let i = pt.label.parse::<ParadigmId>().map_or(6, |id| {
                            ParadigmId::ALL.iter().position(|x| *x == id).unwrap_or(6)
                        });
                        (0, colour(i), Marker::Circle)
                    }
                    Kind::Reference => (1, RGBColor(0, 0, 0), Marker::Square),
                    Kind::Router if self.is_baseline(&pt.label) => {
                        let i = groups[2].len();
                        (2, GREYS[i % GREYS.len()], Marker::Diamond)
                    }
                    Kind::Router => {
                        let i = groups[3].len();
                        let n = TOL_MUTED.len();
                        (
                            3,
                            TOL_MUTED[i % n],
                            ROUTER_MARKERS[(i / n) % ROUTER_MARKERS.len()],
                        )
                    }
                };
                groups[g].push(Entry {
                    label: pt.label.clone(),
                    colour,
                    marker: Some(marker),
                });
            }
            for c in &p.curves {
                let l = format!("{} λ-sweep", c.router);
                if !seen(&groups, &l) {
                    let i = groups[4].len();
                    groups[4].push(Entry {
                        label: l,
                        colour: TOL_MUTED[i % TOL_MUTED.len()],
                        marker: Some(Marker::Square),
                    });
                }
            }
        }
        let names = ["Paradigms", "Reference", "Baselines", "Routers", "λ-sweeps"];
        let mut out = Vec::new();
        for (name, g) in names.iter().zip(groups) {
            if g.is_empty() {
                continue;
            }
            out.push(Entry {
                label: (*name).to_owned(),
                colour: RGBColor(0, 0, 0),
                marker: None,
            });
            out.extend(g);
        }
        out
    }
}

impl Figure for CostFigure {
    fn name(&self) -> &str {
        ENTRY.stem
    }

    fn size(&self) -> (u32, u32) {
        let (rows, cols) = self.grid();
        // Tall enough for the legend too: up to 24 routers plus paradigms and sweeps.
        let legend = 40 + 48 + 22 * self.legend().len() as u32 + 44;
        (cols * PANEL.0 + LEGEND, (rows * PANEL.1 + 40).max(legend))
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let (w, _) = self.size();
        label(
            root,
            &format!(
                "Cost vs correct rate ({}); dashed: Pareto frontier of deployable strategies",
                self.mode
            ),
            (((w - LEGEND) / 2) as i32, 10),
            &text(18.0),
            HPos::Center,
            VPos::Top,
        )?;
        let body = root.margin(40, 0, 0, 0);
        let (plots, legend_area) = body.split_horizontally(w - LEGEND);
        let legend = self.legend();
        let (rows, cols) = self.grid();
        let cells = plots.split_evenly((rows as usize, cols as usize));
        for (p, area) in self.panels.iter().zip(cells.iter()) {
            draw_panel(area, p, &legend, &self.axis)?;
        }
        draw_legend(&legend_area, &legend)
    }
}

fn style_of<'a>(legend: &'a [Entry], label: &str) -> Option<&'a Entry> {
    legend.iter().find(|e| e.label == label)
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    p: &Panel,
    legend: &[Entry],
    axis: &str,
) -> Result<()> {
    let mut xs: Vec<f64> = p.points.iter().map(|q| q.cost).collect();
    let mut ys: Vec<f64> = p.points.iter().map(|q| q.quality).collect();
    for c in &p.curves {
        xs.extend(c.points.iter().map(|(_, q)| q.cost));
        ys.extend(c.points.iter().map(|(_, q)| q.quality));
    }
    xs.retain(|v| v.is_finite());
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let ymax = ys
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let ytop = ((ymax * 100.0 * 1.15 / 10.0).ceil() * 10.0).clamp(10.0, 100.0);
    let aiq = p
        .aiq_paradigms
        .map_or_else(String::new, |a| format!(" — AIQ of paradigms {a:.3}"));
    let caption = format!("{}{aiq}", p.corpus);
    if xs.is_empty() {
        return label(
            area,
            &format!("{caption}: no data"),
            (20, 20),
            &text(14.0),
            HPos::Left,
            VPos::Top,
        );
    }
    if lo > 0.0 && hi / lo >= 20.0 {
        let range = (lo / 1.6..hi * 1.6).log_scale();
        draw_chart(area, p, legend, (&caption, axis), range, ytop)
    } else {
        let pad = ((hi - lo) * 0.12).max(hi.abs() * 0.05).max(1.0);
        draw_chart(
            area,
            p,
            legend,
            (&caption, axis),
            // Not clamped at 0: a strategy at cost 0 (LLM-only) sits off the axis, away from
            // the 0 tick; negative ticks are not labelled.
            lo - pad..hi + pad,
            ytop,
        )
    }
}

/// One panel's chart: the cost axis as given, the correct rate (%) from 0 to the panel's top.
type PanelChart<'a, DB, X> = ChartContext<'a, DB, Cartesian2d<X, RangedCoordf64>>;

/// A point named on the plot: its marker's pixel in the panel, and its label.
type Named<'p> = (Px, &'p str);

fn draw_chart<DB, R>(
    area: &DrawingArea<DB, Shift>,
    p: &Panel,
    legend: &[Entry],
    (caption, axis): (&str, &str),
    xr: R,
    ytop: f64,
) -> Result<()>
where
    DB: DrawingBackend,
    R: AsRangedCoord<Value = f64>,
    R::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let mut chart = chart_with_mesh(area, (caption, axis), xr, ytop)?;
    draw_frontier(&mut chart, p)?;
    draw_curves(&mut chart, p, legend)?;
    let (labels, mut markers) = draw_points(area, &chart, p, legend)?;
    for c in &p.curves {
        markers.extend(
            c.points
                .iter()
                .map(|(_, q)| panel_px(area, &chart, (q.cost, 100.0 * q.quality))),
        );
    }
    draw_point_labels(area, labels, &markers)
}

/// The panel's chart with its caption, axes, tick labels and light grid drawn.
fn chart_with_mesh<'a, DB, R>(
    area: &'a DrawingArea<DB, Shift>,
    (caption, axis): (&str, &str),
    xr: R,
    ytop: f64,
) -> Result<PanelChart<'a, DB, R::CoordDescType>>
where
    DB: DrawingBackend,
    R: AsRangedCoord<Value = f64>,
    R::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(area)
        .caption(caption, text(15.0))
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(60)
        .build_cartesian_2d(xr, 0f64..ytop)
        .map_err(draw_err)?;
    chart
        .configure_mesh()
        .x_desc(axis)
        .y_desc("correct rate (%)")
        .x_label_formatter(&|v| {
            if *v < 0.0 {
                String::new()
            } else {
                fmt_tokens(*v)
            }
        })
        .y_label_formatter(&|v| format!("{v:.0}"))
        .label_style(text(12.0))
        .axis_desc_style(text(13.0))
        .light_line_style(RGBColor(246, 246, 246))
        .max_light_lines(1)
        .draw()
        .map_err(draw_err)?;
    Ok(chart)
}

/// The frontier: dashed grey through its points in cost order, each point ringed.
fn draw_frontier<DB, CT>(chart: &mut ChartContext<'_, DB, CT>, p: &Panel) -> Result<()>
where
    DB: DrawingBackend,
    CT: CoordTranslate<From = (f64, f64)>,
{
    let front: Vec<(f64, f64)> = p
        .frontier
        .iter()
        .map(|&i| (p.points[i].cost, 100.0 * p.points[i].quality))
        .collect();
    if front.len() > 1 {
        chart
            .draw_series(DashedLineSeries::new(
                front.clone(),
                8,
                5,
                RGBColor(110, 110, 110).stroke_width(2),
            ))
            .map_err(draw_err)?;
    }
    chart
        .draw_series(
            front
                .iter()
                .map(|&xy| Circle::new(xy, 9, RGBColor(110, 110, 110).stroke_width(1))),
        )
        .map_err(draw_err)?;
    Ok(())
}

/// Each cost-aware router's λ-sweep: a line in its legend colour with a square at each λ.
fn draw_curves<DB, CT>(
    chart: &mut ChartContext<'_, DB, CT>,
    p: &Panel,
    legend: &[Entry],
) -> Result<()>
where
    DB: DrawingBackend,
    CT: CoordTranslate<From = (f64, f64)>,
{
    for c in &p.curves {
        let Some(e) = style_of(legend, &format!("{} λ-sweep", c.router)) else {
            continue;
        };
        let pts: Vec<(f64, f64)> = c
            .points
            .iter()
            .map(|(_, q)| (q.cost, 100.0 * q.quality))
            .collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), e.colour.stroke_width(2)))
            .map_err(draw_err)?;
        let colour = e.colour;
        chart
            .draw_series(pts.iter().map(move |&xy| {
                EmptyElement::at(xy) + Rectangle::new([(-4, -4), (4, 4)], colour.filled())
            }))
            .map_err(draw_err)?;
    }
    Ok(())
}

/// The pixel of the data point `xy` in the panel's own coordinates (those of the markers).
fn panel_px<DB, X>(
    area: &DrawingArea<DB, Shift>,
    chart: &PanelChart<'_, DB, X>,
    xy: (f64, f64),
) -> (i32, i32)
where
    DB: DrawingBackend,
    X: Ranged<ValueType = f64>,
{
    let base = area.get_base_pixel();
    let (x, y) = chart.backend_coord(&xy);
    (x - base.0, y - base.1)
}

/// Draws each point's marker (the same shapes as the legend's) and returns the points to
/// name on the plot and the pixels of every marker drawn.
fn draw_points<'p, DB, X>(
    area: &DrawingArea<DB, Shift>,
    chart: &PanelChart<'_, DB, X>,
    p: &'p Panel,
    legend: &[Entry],
) -> Result<(Vec<Named<'p>>, Vec<Px>)>
where
    DB: DrawingBackend,
    X: Ranged<ValueType = f64>,
{
    let mut labels: Vec<Named<'p>> = Vec::new();
    let mut markers: Vec<(i32, i32)> = Vec::new();
    // Paradigms last, on top: a baseline that plays one paradigm (best-fixed, best-single)
    // sits on that paradigm's point and must not hide its colour.
    let mut order: Vec<&crate::pareto::Point> = p.points.iter().collect();
    order.sort_by_key(|pt| pt.kind != Kind::Router);
    for pt in order {
        let Some(e) = style_of(legend, &pt.label) else {
            continue;
        };
        let Some(marker) = e.marker else {
            continue;
        };
        let at = panel_px(area, chart, (pt.cost, 100.0 * pt.quality));
        markers.push(at);
        if pt.kind == Kind::Reference {
            draw_reference(area, at)?;
        } else {
            draw_marker(area, at, marker, e.colour)?;
        }
        // Paradigms and Oracle are named on the plot; every other series by the legend alone.
        if matches!(pt.kind, Kind::Paradigm | Kind::Reference) {
            labels.push((at, &pt.label));
        }
    }
    Ok((labels, markers))
}

/// Paradigm names next to their own points where they cover nothing; the legend names the
/// rest (every series has a style of its own).
fn draw_point_labels<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    mut labels: Vec<Named<'_>>,
    markers: &[(i32, i32)],
) -> Result<()> {
    labels.sort_by_key(|((x, y), _)| (*y, *x));
    let style = text(12.0);
    let sized: Vec<((i32, i32), (i32, i32))> = labels
        .iter()
        .map(|&(at, s)| {
            let (w, h) = area
                .estimate_text_size(s, &style)
                .unwrap_or((7 * s.len() as u32, 12));
            (at, (w as i32 + 2, h as i32 + 2))
        })
        .collect();
    let (w, h) = area.dim_in_pixel();
    let placed = place_labels(&sized, markers, (w as i32, h as i32));
    for ((_, s), b) in labels.iter().zip(placed) {
        if let Some(b) = b {
            label(
                area,
                s,
                (b.0 + 1, (b.1 + b.3) / 2),
                &style,
                HPos::Left,
                VPos::Center,
            )?;
        }
    }
    Ok(())
}

fn draw_legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, legend: &[Entry]) -> Result<()> {
    label(
        area,
        "Strategies",
        (12, 20),
        &text(14.0),
        HPos::Left,
        VPos::Top,
    )?;
    for (i, e) in legend.iter().enumerate() {
        let y = 48 + 22 * i as i32;
        match e.marker {
            // A group heading.
            None => label(
                area,
                &e.label,
                (12, y),
                &text(12.5),
                HPos::Left,
                VPos::Center,
            )?,
            Some(m) => {
                if e.label == crate::pareto::ORACLE {
                    draw_reference(area, (22, y))?;
                } else {
                    draw_marker(area, (22, y), m, e.colour)?;
                }
                label(
                    area,
                    &e.label,
                    (36, y),
                    &text(12.0),
                    HPos::Left,
                    VPos::Center,
                )?;
            }
        }
    }
    label(
        area,
        "Oracle reads the test labels: a reference,",
        (12, 48 + 22 * legend.len() as i32 + 8),
        &text(11.0),
        HPos::Left,
        VPos::Top,
    )?;
    label(
        area,
        "not on the frontier of deployable strategies",
        (12, 48 + 22 * legend.len() as i32 + 22),
        &text(11.0),
        HPos::Left,
        VPos::Top,
    )
}

/// Oracle's mark: a black square outline with a cross, unlike every filled series marker.
fn draw_reference<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x, y): (i32, i32),
) -> Result<()> {
    let black = RGBColor(0, 0, 0).stroke_width(2);
    area.draw(&Rectangle::new([(x - 6, y - 6), (x + 6, y + 6)], black))
        .map_err(draw_err)?;
    area.draw(&PathElement::new(
        vec![(x - 6, y - 6), (x + 6, y + 6)],
        black,
    ))
    .map_err(draw_err)?;
    area.draw(&PathElement::new(
        vec![(x - 6, y + 6), (x + 6, y - 6)],
        black,
    ))
    .map_err(draw_err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pareto::{Point, SweepCurve};

    fn point(label: &str, kind: Kind, i: usize) -> Point {
        Point {
            label: label.into(),
            kind,
            cost: 1000.0 + 10.0 * i as f64,
            quality: 0.1 + 0.001 * i as f64,
            n: 20,
        }
    }

    /// Every built-in paradigm and router (the registry's names), plus the λ-sweep.
    fn everything(extra_routers: usize) -> CostFigure {
        let mut points: Vec<Point> = ParadigmId::ALL
            .iter()
            .enumerate()
            .map(|(i, p)| point(p.as_str(), Kind::Paradigm, i))
            .collect();
        let routers = [
            "random",
            "best-fixed",
            "oracle",
            "lr",
            "svm",
            "rf",
            "gbt",
            "knn",
            "mlp",
            "dnn",
            "two-tower",
            "r2adapter",
            "ea-graphrag",
            "rap-rag",
            "ner",
            "llm-router",
            "cost-aware",
        ];
        let mut names: Vec<String> = routers.iter().map(|s| s.to_string()).collect();
        names.extend((0..extra_routers).map(|i| format!("external-{i}")));
        points.extend(names.iter().enumerate().map(|(i, r)| {
            let kind = if r == "oracle" {
                Kind::Reference
            } else {
                Kind::Router
            };
            point(r, kind, 10 + i)
        }));
        let curve = SweepCurve {
            router: "cost-aware".into(),
            corpus: "*".into(),
            points: vec![(0.0, point("cost-aware", Kind::Router, 40))],
        };
        CostFigure {
            panels: vec![Panel {
                corpus: "*".into(),
                points,
                frontier: vec![],
                curves: vec![curve],
                range: None,
                aiq_paradigms: None,
                aiq_all: None,
                aiq_curves: vec![],
            }],
            mode: "offline".into(),
            axis: "tokens".into(),
            families: ["random", "best-fixed", "oracle"]
                .iter()
                .map(|r| (r.to_string(), "baseline".to_string()))
                .collect(),
        }
    }

    #[test]
    fn no_two_series_share_colour_and_marker() {
        // 17 built-in routers, then up to 27 routers with externals.
        for extra in [0, 10] {
            let legend = everything(extra).legend();
            // Five group headings, each strategy once.
            assert_eq!(legend.len(), 5 + 7 + 17 + extra + 1);
            let series: Vec<&Entry> = legend.iter().filter(|e| e.marker.is_some()).collect();
            assert_eq!(series.len(), 7 + 17 + extra + 1);
            for (i, a) in series.iter().enumerate() {
                for b in &series[..i] {
                    assert!(
                        (a.colour, a.marker) != (b.colour, b.marker),
                        "{} and {} look the same",
                        a.label,
                        b.label
                    );
                }
            }
        }
    }

    #[test]
    fn legend_groups_by_family_and_baselines_share_no_hue_with_paradigms_or_routers() {
        let legend = everything(0).legend();
        let labels: Vec<&str> = legend.iter().map(|e| e.label.as_str()).collect();
        let at = |l: &str| labels.iter().position(|x| *x == l).unwrap();
        assert!(at("Paradigms") < at("naive") && at("naive") < at("Reference"));
        assert!(at("Reference") < at("oracle") && at("oracle") < at("Baselines"));
        assert!(at("Baselines") < at("random") && at("random") < at("Routers"));
        assert!(at("Routers") < at("lr") && at("lr") < at("λ-sweeps"));
        let colour_of = |l: &str| legend[at(l)].colour;
        for b in ["random", "best-fixed"] {
            for other in ["naive", "graph", "lr", "svm", "cost-aware"] {
                assert_ne!(colour_of(b), colour_of(other), "{b} / {other}");
            }
        }
        for p in ParadigmId::ALL {
            assert!(!TOL_MUTED.contains(&colour_of(p.as_str())), "{p:?}");
        }
    }

    #[test]
    fn the_canvas_holds_the_whole_legend() {
        let fig = everything(7);
        let (_, h) = fig.size();
        assert!(h >= 40 + 48 + 22 * fig.legend().len() as u32, "{h}");
    }
}
