//! Figure 7: cost–accuracy scatter per corpus (and pooled) with the Pareto frontier, every
//! paradigm and router labelled, and the λ-sweep of each cost-aware router.

use bench_core::{ParadigmId, Result};
use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::{colour, draw_err, fmt_tokens, label, text, Figure};
use crate::pareto::{Kind, Panel};

const PANEL: (u32, u32) = (560, 430);
const LEGEND: u32 = 270;

/// How a strategy is drawn: colour and marker.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Marker {
    Circle,
    Triangle,
    Square,
}

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

    /// Every strategy's style, in first-seen order: paradigms by their fixed colour, routers
    /// in palette order with triangles, sweeps with squares.
    fn legend(&self) -> Vec<Entry> {
        let mut out: Vec<Entry> = Vec::new();
        let mut routers = 0usize;
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
                        routers += 1;
                        Entry {
                            label: pt.label.clone(),
                            colour: colour(routers - 1),
                            marker: Marker::Triangle,
                        }
                    }
                };
                out.push(e);
            }
            for c in &p.curves {
                let l = format!("{} λ-sweep", c.router);
                if !out.iter().any(|e| e.label == l) {
                    routers += 1;
                    out.push(Entry {
                        label: l,
                        colour: colour(routers - 1),
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
        (cols * PANEL.0 + LEGEND, rows * PANEL.1 + 40)
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
    let mut labels: Vec<((i32, i32), &str)> = Vec::new();
    let mut markers: Vec<(i32, i32)> = Vec::new();
    for pt in &p.points {
        let Some(e) = style_of(legend, &pt.label) else {
            continue;
        };
        let xy = (pt.cost, 100.0 * pt.quality);
        let colour = e.colour;
        markers.push(chart.backend_coord(&xy));
        match e.marker {
            Marker::Circle => {
                chart
                    .draw_series(std::iter::once(Circle::new(xy, 6, colour.filled())))
                    .map_err(draw_err)?;
                labels.push((chart.backend_coord(&xy), &pt.label));
            }
            _ => {
                chart
                    .draw_series(std::iter::once(TriangleMarker::new(xy, 7, colour.filled())))
                    .map_err(draw_err)?;
            }
        }
    }
    for c in &p.curves {
        markers.extend(
            c.points
                .iter()
                .map(|(_, q)| chart.backend_coord(&(q.cost, 100.0 * q.quality))),
        );
    }
    // Paradigm names next to their points: the first free place right or left of the point,
    // then further down or up, so that neither markers nor other names are covered.
    labels.sort_by_key(|((x, y), _)| (*y, *x));
    let base = area.get_base_pixel();
    let (w, h) = area.dim_in_pixel();
    let mut boxes: Vec<(i32, i32, i32, i32)> = markers
        .iter()
        .map(|&(x, y)| {
            (
                x - base.0 - 9,
                y - base.1 - 9,
                x - base.0 + 9,
                y - base.1 + 9,
            )
        })
        .collect();
    let overlaps = |a: (i32, i32, i32, i32), b: &(i32, i32, i32, i32)| {
        a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
    };
    for ((px, py), s) in labels {
        let width = 7 * s.chars().count() as i32;
        let (px, py) = (px - base.0, py - base.1);
        let mut best = None;
        'search: for k in 0..12 {
            let dy = 14 * if k % 2 == 0 { k / 2 } else { -(k / 2 + 1) };
            for x0 in [px + 12, px - 12 - width] {
                let b = (x0, py + dy - 6, x0 + width, py + dy + 6);
                let inside = b.0 >= 2 && b.2 <= w as i32 - 2 && b.1 >= 2 && b.3 <= h as i32 - 2;
                if inside && !boxes.iter().any(|o| overlaps(b, o)) {
                    best = Some(b);
                    break 'search;
                }
            }
        }
        let b = best.unwrap_or((px + 10, py - 6, px + 10 + width, py + 6));
        boxes.push(b);
        label(
            area,
            s,
            (b.0, b.1 + 6),
            &text(12.0),
            HPos::Left,
            VPos::Center,
        )?;
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
        let c = e.colour;
        match e.marker {
            Marker::Circle => area.draw(&Circle::new((22, y), 6, c.filled())),
            Marker::Triangle => area.draw(&TriangleMarker::new((22, y), 7, c.filled())),
            Marker::Square => area.draw(&Rectangle::new([(16, y - 5), (28, y + 5)], c.filled())),
        }
        .map_err(draw_err)?;
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
        "● paradigm  ▲ router  ■ λ-sweep",
        (12, 48 + 22 * legend.len() as i32 + 8),
        &text(11.0),
        HPos::Left,
        VPos::Top,
    )
}
