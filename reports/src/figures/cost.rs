//! Figure 7: cost–accuracy scatter per corpus (and pooled) with the Pareto frontier, every
//! paradigm and router in a style of its own (`placement`), paradigms labelled where a label
//! fits without covering anything, and the λ-sweep of each cost-aware router.

use bench_core::{ParadigmId, Result};
use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::placement::{draw_marker, place_labels, router_style, Marker};
use super::{colour, draw_err, fmt_tokens, label, text, Figure};
use crate::pareto::{Kind, Panel};

const PANEL: (u32, u32) = (560, 430);
const LEGEND: u32 = 270;

#[derive(Debug, Clone)]
struct Entry {
    label: String,
    colour: RGBColor,
    marker: Marker,
}

/// The figure: one panel per corpus plus the pooled one.
#[derive(Debug, Clone)]
pub struct CostFigure {
    pub panels: Vec<Panel>,
    /// `offline` or the LLM's identity, shown in the title.
    pub mode: String,
    /// The cost axis's description with its unit.
    pub axis: String,
}

impl CostFigure {
    fn grid(&self) -> (u32, u32) {
        let n = self.panels.len().max(1) as u32;
        let cols = n.min(2);
        (n.div_ceil(cols), cols)
    }

    /// Every strategy's style, in first-seen order: paradigms by their fixed colour with
    /// circles, routers through the palette with triangles, then diamonds, then inverted
    /// triangles (unique up to 24 routers), sweeps with squares.
    fn legend(&self) -> Vec<Entry> {
        let mut out: Vec<Entry> = Vec::new();
        let (mut routers, mut sweeps) = (0usize, 0usize);
        for p in &self.panels {
            for pt in &p.points {
                if out.iter().any(|e| e.label == pt.label) {
                    continue;
                }
                let e = match pt.kind {
                    Kind::Paradigm => {
                        let i = pt.label.parse::<ParadigmId>().map_or(6, |id| {
                            ParadigmId::ALL.iter().position(|x| *x == id).unwrap_or(6)
                        });
                        Entry {
                            label: pt.label.clone(),
                            colour: colour(i),
                            marker: Marker::Circle,
                        }
                    }
                    Kind::Router => {
                        let (colour, marker) = router_style(routers);
                        routers += 1;
                        Entry {
                            label: pt.label.clone(),
                            colour,
                            marker,
                        }
                    }
                };
                out.push(e);
            }
            for c in &p.curves {
                let l = format!("{} λ-sweep", c.router);
                if !out.iter().any(|e| e.label == l) {
                    sweeps += 1;
                    out.push(Entry {
                        label: l,
                        colour: colour(sweeps - 1),
                        marker: Marker::Square,
                    });
                }
            }
        }
        out
    }
}

impl Figure for CostFigure {
    fn name(&self) -> &str {
        "fig7_cost_accuracy"
    }

    fn size(&self) -> (u32, u32) {
        let (rows, cols) = self.grid();
        // Tall enough for the legend too: up to 24 routers plus paradigms and sweeps.
        let legend = 40 + 48 + 22 * self.legend().len() as u32 + 30;
        (cols * PANEL.0 + LEGEND, (rows * PANEL.1 + 40).max(legend))
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let (w, _) = self.size();
        label(
            root,
            &format!(
                "Cost vs correct rate ({}); dashed: Pareto frontier",
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
            (lo - pad).max(0.0)..hi + pad,
            ytop,
        )
    }
}

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
        .x_label_formatter(&|v| fmt_tokens(*v))
        .y_label_formatter(&|v| format!("{v:.0}"))
        .label_style(text(12.0))
        .axis_desc_style(text(13.0))
        .light_line_style(RGBColor(246, 246, 246))
        .max_light_lines(1)
        .draw()
        .map_err(draw_err)?;
    // The frontier: dashed grey through its points in cost order.
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
    // Markers in pixel coordinates of the panel (the same shapes as the legend's).
    let base = area.get_base_pixel();
    let to_px = |(x, y): (i32, i32)| (x - base.0, y - base.1);
    let mut labels: Vec<((i32, i32), &str)> = Vec::new();
    let mut markers: Vec<(i32, i32)> = Vec::new();
    for pt in &p.points {
        let Some(e) = style_of(legend, &pt.label) else {
            continue;
        };
        let at = to_px(chart.backend_coord(&(pt.cost, 100.0 * pt.quality)));
        markers.push(at);
        draw_marker(area, at, e.marker, e.colour)?;
        if e.marker == Marker::Circle {
            labels.push((at, &pt.label));
        }
    }
    for c in &p.curves {
        markers.extend(
            c.points
                .iter()
                .map(|(_, q)| to_px(chart.backend_coord(&(q.cost, 100.0 * q.quality)))),
        );
    }
    // Paradigm names next to their own points where they cover nothing; the legend names the
    // rest (every series has a style of its own).
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
    let placed = place_labels(&sized, &markers, (w as i32, h as i32));
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
        draw_marker(area, (22, y), e.marker, e.colour)?;
        label(
            area,
            &e.label,
            (36, y),
            &text(12.0),
            HPos::Left,
            VPos::Center,
        )?;
    }
    label(
        area,
        "● paradigm  ▲ ◆ ▼ router  ■ λ-sweep",
        (12, 48 + 22 * legend.len() as i32 + 8),
        &text(11.0),
        HPos::Left,
        VPos::Top,
    )
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
        points.extend(
            names
                .iter()
                .enumerate()
                .map(|(i, r)| point(r, Kind::Router, 10 + i)),
        );
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
        }
    }

    #[test]
    fn no_two_series_share_colour_and_marker() {
        // 17 built-in routers, then up to 24 routers with externals.
        for extra in [0, 7] {
            let legend = everything(extra).legend();
            assert_eq!(legend.len(), 7 + 17 + extra + 1);
            for (i, a) in legend.iter().enumerate() {
                for b in &legend[..i] {
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
    fn the_canvas_holds_the_whole_legend() {
        let fig = everything(7);
        let (_, h) = fig.size();
        assert!(h >= 40 + 48 + 22 * fig.legend().len() as u32, "{h}");
    }
}
