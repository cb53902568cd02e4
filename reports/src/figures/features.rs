//! Figure 5: routing accuracy and correct rate by feature set (Q, C, Q+C) per corpus, averaged
//! over the learned routers, between the Random (lower) and Oracle (upper) bands.

use std::path::Path;

use bench_core::{Result, RouteEvalRow};
use plotters::coord::cartesian::Cartesian2d;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::draw::{colour, draw_err, label, text, Figure};
use super::entry::{drawn, Drawn, FigureEntry, FigureInput, Section};
use crate::model::RouteEval;
use crate::pareto::POOLED;

/// Figure 5's line in the report's figure list.
pub const ENTRY: FigureEntry = FigureEntry::new("fig5_feature_sets", Section::Routers, entry_draw);

/// Figure 5 from every stored evaluation; missing without one over features q, c or q+c.
fn entry_draw(input: &FigureInput<'_>, png: &Path) -> Result<Drawn> {
    match FeaturesFigure::from_evals(&input.data.evals, input.corpora) {
        Some(f) => {
            let caption = format!(
                "Figure 5: routing accuracy and correct rate by feature set ({}), mean over the learned routers; shaded band from Random to Oracle.",
                f.sets.join(", ")
            );
            drawn(&f, png, caption)
        }
        None => {
            Drawn::missing("Figure 5 is missing: no router evaluation with features q, c or q+c.")
        }
    }
}

/// Feature sets in the order drawn, with their stored names.
pub const SETS: [(&str, &str); 3] = [("Q", "q"), ("C", "c"), ("Q+C", "q+c")];

/// Per feature set and corpus key: mean over learned routers (no λ) of their fold-weighted
/// accuracy and correct rate; Random and Oracle per corpus key (mean over the feature sets'
/// evaluations that have them).
#[derive(Debug, Clone, PartialEq)]
pub struct FeaturesFigure {
    /// Corpus keys as stored (`*` for pooled).
    pub groups: Vec<String>,
    /// Labels of the feature sets present (`Q`, `C`, `Q+C`).
    pub sets: Vec<String>,
    /// `accuracy[s][g]`, `correct[s][g]`.
    pub accuracy: Vec<Vec<Option<f64>>>,
    /// Correct rate per feature set and group (see `accuracy`).
    pub correct: Vec<Vec<Option<f64>>>,
    /// (accuracy, correct rate) of Random and Oracle per group.
    pub random: Vec<Option<(f64, f64)>>,
    /// (accuracy, correct rate) of Oracle per group.
    pub oracle: Vec<Option<(f64, f64)>>,
}

fn weighted(rows: &[&RouteEvalRow], f: impl Fn(&RouteEvalRow) -> f64) -> Option<f64> {
    let n: f64 = rows.iter().map(|r| f64::from(r.n)).sum();
    (n > 0.0).then(|| rows.iter().map(|r| f(r) * f64::from(r.n)).sum::<f64>() / n)
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

impl FeaturesFigure {
    /// `None` when no evaluation has one of the three feature sets.
    pub fn from_evals(evals: &[RouteEval], corpora: &[String]) -> Option<Self> {
        let chosen = chosen_evals(evals);
        if chosen.is_empty() {
            return None;
        }
        let groups = groups_of(&chosen, corpora);
        let mut accuracy = Vec::new();
        let mut correct = Vec::new();
        for (_, e) in &chosen {
            let (a, c) = learned_means(e, &groups);
            accuracy.push(a);
            correct.push(c);
        }
        Some(FeaturesFigure {
            sets: chosen.iter().map(|(l, _)| (*l).to_owned()).collect(),
            random: bound(&chosen, &groups, "random"),
            oracle: bound(&chosen, &groups, "oracle"),
            groups,
            accuracy,
            correct,
        })
    }
}

/// The newest evaluation of each feature set, k-fold before other splits, with the set's label.
fn chosen_evals(evals: &[RouteEval]) -> Vec<(&'static str, &RouteEval)> {
    SETS.iter()
        .filter_map(|(label, key)| {
            evals
                .iter()
                .filter(|e| e.spec.features == *key)
                .max_by_key(|e| (e.spec.split == "kfold", e.id))
                .map(|e| (*label, e))
        })
        .collect()
}

/// The corpus keys drawn: `corpora` with rows in a chosen evaluation, in that order, then `*`
/// when one has pooled rows.
fn groups_of(chosen: &[(&str, &RouteEval)], corpora: &[String]) -> Vec<String> {
    let mut groups: Vec<String> = corpora
        .iter()
        .filter(|c| {
            chosen
                .iter()
                .any(|(_, e)| e.rows.iter().any(|r| &r.corpus == *c))
        })
        .cloned()
        .collect();
    if chosen
        .iter()
        .any(|(_, e)| e.rows.iter().any(|r| r.corpus == "*"))
    {
        groups.push("*".into());
    }
    groups
}

/// One router's fold-weighted value of `f` on corpus key `g` at its fixed point (no λ).
fn per_router(e: &RouteEval, g: &str, name: &str, f: fn(&RouteEvalRow) -> f64) -> Option<f64> {
    let rows: Vec<&RouteEvalRow> = e
        .rows
        .iter()
        .filter(|r| r.corpus == g && r.router == name && r.param.is_none())
        .collect();
    weighted(&rows, f)
}

/// Per group: the mean over the learned routers of `e` (no λ, no baseline) of their accuracy,
/// and of their correct rate.
fn learned_means(e: &RouteEval, groups: &[String]) -> (Vec<Option<f64>>, Vec<Option<f64>>) {
    let mut names: Vec<&str> = e
        .rows
        .iter()
        .filter(|r| r.param.is_none() && !e.is_baseline(&r.router))
        .map(|r| r.router.as_str())
        .collect();
    names.sort_unstable();
    names.dedup();
    let of = |g: &str, f: fn(&RouteEvalRow) -> f64| {
        let v: Vec<f64> = names
            .iter()
            .filter_map(|n| per_router(e, g, n, f))
            .collect();
        mean(&v)
    };
    (
        groups
            .iter()
            .map(|g| of(g, |r| r.measures.accuracy))
            .collect(),
        groups
            .iter()
            .map(|g| of(g, |r| r.measures.correct_rate))
            .collect(),
    )
}

/// (accuracy, correct rate) of the baseline `name` (Random or Oracle) per group: the mean over
/// the chosen evaluations that have it.
fn bound(chosen: &[(&str, &RouteEval)], groups: &[String], name: &str) -> Vec<Option<(f64, f64)>> {
    groups
        .iter()
        .map(|g| {
            let find = |f: fn(&RouteEvalRow) -> f64| {
                let v: Vec<f64> = chosen
                    .iter()
                    .filter_map(|(_, e)| {
                        let n = e
                            .rows
                            .iter()
                            .map(|r| r.router.as_str())
                            .find(|r| r.eq_ignore_ascii_case(name))?;
                        per_router(e, g, n, f)
                    })
                    .collect();
                mean(&v)
            };
            Some((
                find(|r| r.measures.accuracy)?,
                find(|r| r.measures.correct_rate)?,
            ))
        })
        .collect()
}

impl Figure for FeaturesFigure {
    fn name(&self) -> &str {
        ENTRY.stem
    }

    fn size(&self) -> (u32, u32) {
        let w = (140 * self.groups.len() as u32 + 120).max(420);
        (2 * w, 480)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let (w, _) = self.size();
        label(
            root,
            "Routing by feature set (mean over learned routers); shaded: Random to Oracle",
            (w as i32 / 2, 8),
            &text(16.0),
            HPos::Center,
            VPos::Top,
        )?;
        let body = root.margin(34, 0, 0, 0);
        let (left, right) = body.split_horizontally(w / 2);
        self.panel(
            &left,
            "Routing accuracy",
            "routing accuracy (%)",
            &self.accuracy,
            |b| b.0,
        )?;
        self.panel(
            &right,
            "Correct rate",
            "correct rate (%)",
            &self.correct,
            |b| b.1,
        )
    }
}

/// A panel's chart: x over the corpus groups (one unit each), y in percent.
type PanelChart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// The Random bound's colour.
const GREY: RGBColor = RGBColor(150, 150, 150);

impl FeaturesFigure {
    /// One panel: per corpus group the Random-to-Oracle band, a bar per feature set, each bound
    /// and the group's name; then the legend.
    fn panel<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        title: &str,
        ydesc: &str,
        values: &[Vec<Option<f64>>],
        pick: fn((f64, f64)) -> f64,
    ) -> Result<()> {
        let mut chart = self.panel_axes(area, title, ydesc)?;
        for (g, name) in self.groups.iter().enumerate() {
            self.draw_band(&mut chart, g, pick)?;
            self.draw_bars(&mut chart, area, g, values)?;
            self.draw_bounds(&mut chart, g, pick)?;
            group_label(&chart, area, g, name)?;
        }
        self.legend(&chart, area)
    }

    /// The panel's caption, axes and horizontal grid.
    fn panel_axes<'a, DB: DrawingBackend>(
        &self,
        area: &'a DrawingArea<DB, Shift>,
        title: &str,
        ydesc: &str,
    ) -> Result<PanelChart<'a, DB>> {
        let n = self.groups.len().max(1) as f64;
        let mut chart = ChartBuilder::on(area)
            .caption(title, text(15.0))
            .margin(14)
            .margin_right(20)
            // Room for the legend row between the caption and the 100 % line.
            .margin_top(34)
            .x_label_area_size(44)
            .y_label_area_size(56)
            .build_cartesian_2d(0f64..n, 0f64..100f64)
            .map_err(draw_err)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .x_desc("corpus")
            .y_desc(ydesc)
            .y_label_formatter(&|v| format!("{v:.0}"))
            .label_style(text(12.0))
            .axis_desc_style(text(13.0))
            .light_line_style(RGBColor(246, 246, 246))
            .draw()
            .map_err(draw_err)?;
        Ok(chart)
    }

    /// Group `g`'s shaded band from Random to Oracle, when both are known.
    fn draw_band<DB: DrawingBackend>(
        &self,
        chart: &mut PanelChart<'_, DB>,
        g: usize,
        pick: fn((f64, f64)) -> f64,
    ) -> Result<()> {
        let g0 = g as f64;
        if let (Some(r), Some(o)) = (self.random[g], self.oracle[g]) {
            let (lo, hi) = (100.0 * pick(r), 100.0 * pick(o));
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(g0 + 0.04, lo), (g0 + 0.96, hi)],
                    RGBColor(228, 228, 228).filled(),
                )))
                .map_err(draw_err)?;
        }
        Ok(())
    }

    /// Group `g`'s bar per feature set, each with its value in percent above it.
    fn draw_bars<DB: DrawingBackend>(
        &self,
        chart: &mut PanelChart<'_, DB>,
        area: &DrawingArea<DB, Shift>,
        g: usize,
        values: &[Vec<Option<f64>>],
    ) -> Result<()> {
        let g0 = g as f64;
        let bw = 0.72 / self.sets.len().max(1) as f64;
        for (s, vals) in values.iter().enumerate() {
            let Some(v) = vals[g] else { continue };
            let x = g0 + 0.14 + bw * s as f64;
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(x, 0.0), (x + bw * 0.9, 100.0 * v)],
                    colour(s).filled(),
                )))
                .map_err(draw_err)?;
            let (px, py) = chart.backend_coord(&(x + bw * 0.45, 100.0 * v));
            label(
                area,
                &format!("{:.0}", 100.0 * v),
                (px - area_x(area), py - 2 - area_y(area)),
                &text(10.0),
                HPos::Center,
                VPos::Bottom,
            )?;
        }
        Ok(())
    }

    /// Group `g`'s Random (dashed) and Oracle (solid) lines, each on its own where the other is
    /// missing (the band needs both).
    fn draw_bounds<DB: DrawingBackend>(
        &self,
        chart: &mut PanelChart<'_, DB>,
        g: usize,
        pick: fn((f64, f64)) -> f64,
    ) -> Result<()> {
        let g0 = g as f64;
        if let Some(lo) = self.random[g].map(|r| 100.0 * pick(r)) {
            chart
                .draw_series(DashedLineSeries::new(
                    [(g0 + 0.04, lo), (g0 + 0.96, lo)],
                    6,
                    4,
                    GREY.stroke_width(2),
                ))
                .map_err(draw_err)?;
        }
        if let Some(hi) = self.oracle[g].map(|o| 100.0 * pick(o)) {
            chart
                .draw_series(LineSeries::new(
                    [(g0 + 0.04, hi), (g0 + 0.96, hi)],
                    BLACK.stroke_width(2),
                ))
                .map_err(draw_err)?;
        }
        Ok(())
    }

    /// The legend: one row in the top margin, above the caption (plotters draws the caption
    /// inside the margins, so a row just above the plot would cross it); the bounds are named
    /// only when drawn somewhere.
    fn legend<DB: DrawingBackend>(
        &self,
        chart: &PanelChart<'_, DB>,
        area: &DrawingArea<DB, Shift>,
    ) -> Result<()> {
        let (lx, _) = chart.backend_coord(&(0.0, 100.0));
        let (mut x, y) = (lx - area_x(area) + 8, 14);
        for (s, name) in self.sets.iter().enumerate() {
            area.draw(&Rectangle::new(
                [(x, y - 5), (x + 12, y + 5)],
                colour(s).filled(),
            ))
            .map_err(draw_err)?;
            label(
                area,
                name,
                (x + 16, y),
                &text(11.0),
                HPos::Left,
                VPos::Center,
            )?;
            x += 30 + 8 * name.chars().count() as i32;
        }
        for (name, bound, style) in [
            ("Random", &self.random, GREY.stroke_width(2)),
            ("Oracle", &self.oracle, BLACK.stroke_width(2)),
        ] {
            if bound.iter().all(Option::is_none) {
                continue;
            }
            area.draw(&PathElement::new([(x, y), (x + 18, y)], style))
                .map_err(draw_err)?;
            label(
                area,
                name,
                (x + 22, y),
                &text(11.0),
                HPos::Left,
                VPos::Center,
            )?;
            x += 80;
        }
        Ok(())
    }
}

/// Group `g`'s name (`*` shown as the pooled label) under its slot on the x axis.
fn group_label<DB: DrawingBackend>(
    chart: &PanelChart<'_, DB>,
    area: &DrawingArea<DB, Shift>,
    g: usize,
    name: &str,
) -> Result<()> {
    let (px, py) = chart.backend_coord(&(g as f64 + 0.5, 0.0));
    let shown = if name == "*" { POOLED } else { name };
    label(
        area,
        shown,
        (px - area_x(area), py + 6 - area_y(area)),
        &text(12.0),
        HPos::Center,
        VPos::Top,
    )
}

/// The area's offset in backend pixels (backend_coord is absolute, area drawing is relative).
fn area_x<DB: DrawingBackend>(a: &DrawingArea<DB, Shift>) -> i32 {
    a.get_base_pixel().0
}

fn area_y<DB: DrawingBackend>(a: &DrawingArea<DB, Shift>) -> i32 {
    a.get_base_pixel().1
}
