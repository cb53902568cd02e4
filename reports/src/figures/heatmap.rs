//! Figure 4: correct rate by paradigm × query type × corpus, one panel per paradigm (rows query
//! types, columns corpora), with `*` on the best paradigm of each (query type, corpus) cell.

use std::path::Path;

use bench_core::{ParadigmId, QueryType, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::draw::{draw_err, label, text, Figure};
use super::entry::{drawn, Drawn, FigureEntry, FigureInput, Section};
use crate::model::Tuple;

/// Figure 4's line in the report's figure list.
pub const ENTRY: FigureEntry = FigureEntry::new("fig4_heatmap", Section::Paradigms, entry_draw);

/// Figure 4 from every tuple of the report.
fn entry_draw(input: &FigureInput<'_>, png: &Path) -> Result<Drawn> {
    let data = input.data;
    let fig = HeatmapFigure::from_tuples(
        &data.tuples,
        data.paradigms(),
        data.qtypes(),
        input.corpora.to_vec(),
    );
    drawn(&fig, png, "Figure 4: correct rate (%) per paradigm, query type and corpus; * marks the best paradigm of each (query type, corpus).".into())
}

const CELL: (i32, i32) = (86, 40);
const ROW_LABELS: i32 = 78;
const PER_ROW: usize = 4;

/// Correct rates: `rates[p][q][c]`, `None` where there is no tuple.
#[derive(Debug, Clone)]
pub struct HeatmapFigure {
    /// The paradigms, one row of panels each.
    pub paradigms: Vec<ParadigmId>,
    /// The query types present.
    pub qtypes: Vec<QueryType>,
    /// The corpora present.
    pub corpora: Vec<String>,
    /// `rates[p][q][c]`: the correct rate of paradigm p on query type q and corpus c.
    pub rates: Vec<Vec<Vec<Option<f64>>>>,
}

impl HeatmapFigure {
    /// The correct rate of every (paradigm, query type, corpus) present in the tuples.
    pub fn from_tuples(
        tuples: &[Tuple],
        paradigms: Vec<ParadigmId>,
        qtypes: Vec<QueryType>,
        corpora: Vec<String>,
    ) -> Self {
        let rates = paradigms
            .iter()
            .map(|p| {
                qtypes
                    .iter()
                    .map(|q| {
                        corpora
                            .iter()
                            .map(|c| {
                                let (mut k, mut n) = (0usize, 0usize);
                                for t in tuples
                                    .iter()
                                    .filter(|t| t.paradigm == *p && t.qtype == *q && &t.corpus == c)
                                {
                                    k += usize::from(t.correct());
                                    n += 1;
                                }
                                (n > 0).then(|| k as f64 / n as f64)
                            })
                            .collect()
                    })
                    .collect()
            })
            .collect();
        HeatmapFigure {
            paradigms,
            qtypes,
            corpora,
            rates,
        }
    }

    /// Whether paradigm `p` has the highest rate of its (query type, corpus) cell (ties all win).
    pub fn is_best(&self, p: usize, q: usize, c: usize) -> bool {
        let Some(v) = self.rates[p][q][c] else {
            return false;
        };
        self.rates
            .iter()
            .all(|other| other[q][c].is_none_or(|o| o <= v))
    }

    /// The top of the colour scale: the highest rate rounded up to 10 points (at least 10%),
    /// so that low-accuracy runs still show their differences.
    pub fn scale_top(&self) -> f64 {
        let max = self
            .rates
            .iter()
            .flatten()
            .flatten()
            .flatten()
            .copied()
            .fold(0.0, f64::max);
        ((max * 10.0).ceil() / 10.0).clamp(0.1, 1.0)
    }

    fn panel_size(&self) -> (i32, i32) {
        (
            ROW_LABELS + CELL.0 * self.corpora.len() as i32 + 16,
            56 + CELL.1 * self.qtypes.len() as i32 + 12,
        )
    }
}

/// A sequential colour-blind-safe scale (viridis anchors), `t` in [0, 1].
pub fn viridis(t: f64) -> RGBColor {
    const A: [(f64, f64, f64); 5] = [
        (68.0, 1.0, 84.0),
        (59.0, 82.0, 139.0),
        (33.0, 145.0, 140.0),
        (94.0, 201.0, 98.0),
        (253.0, 231.0, 37.0),
    ];
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let x = t * (A.len() - 1) as f64;
    let i = (x.floor() as usize).min(A.len() - 2);
    let f = x - i as f64;
    let mix = |a: f64, b: f64| (a + (b - a) * f).round() as u8;
    RGBColor(
        mix(A[i].0, A[i + 1].0),
        mix(A[i].1, A[i + 1].1),
        mix(A[i].2, A[i + 1].2),
    )
}

impl Figure for HeatmapFigure {
    fn name(&self) -> &str {
        ENTRY.stem
    }

    fn size(&self) -> (u32, u32) {
        let (pw, ph) = self.panel_size();
        let cols = self.paradigms.len().clamp(1, PER_ROW) as i32;
        let rows = self.paradigms.len().div_ceil(PER_ROW).max(1) as i32;
        ((pw * cols + 20) as u32, (ph * rows + 40 + 70) as u32)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let (w, h) = self.size();
        label(
            root,
            "Correct rate (%) by paradigm, query type and corpus; * best paradigm per cell",
            (w as i32 / 2, 10),
            &text(16.0),
            HPos::Center,
            VPos::Top,
        )?;
        let (pw, ph) = self.panel_size();
        let top = self.scale_top();
        for pi in 0..self.paradigms.len() {
            let x0 = 10 + pw * (pi % PER_ROW) as i32;
            let y0 = 40 + ph * (pi / PER_ROW) as i32;
            self.draw_panel(root, pi, (x0, y0), top)?;
        }
        draw_colour_bar(root, h as i32, top)
    }
}

impl HeatmapFigure {
    /// Paradigm `pi`'s panel with its top-left corner at `(x0, y0)`: its name, the corpus
    /// headings, and one row of cells per query type.
    fn draw_panel<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        pi: usize,
        (x0, y0): (i32, i32),
        top: f64,
    ) -> Result<()> {
        let gx = x0 + ROW_LABELS;
        label(
            root,
            self.paradigms[pi].as_str(),
            (gx + CELL.0 * self.corpora.len() as i32 / 2, y0 + 4),
            &text(14.0),
            HPos::Center,
            VPos::Top,
        )?;
        for (ci, c) in self.corpora.iter().enumerate() {
            label(
                root,
                c,
                (gx + CELL.0 * ci as i32 + CELL.0 / 2, y0 + 26),
                &text(11.0),
                HPos::Center,
                VPos::Top,
            )?;
        }
        for (qi, q) in self.qtypes.iter().enumerate() {
            let y = y0 + 48 + CELL.1 * qi as i32;
            label(
                root,
                q.as_str(),
                (gx - 6, y + CELL.1 / 2),
                &text(12.0),
                HPos::Right,
                VPos::Center,
            )?;
            for ci in 0..self.corpora.len() {
                self.draw_cell(root, (pi, qi, ci), (gx + CELL.0 * ci as i32, y), top)?;
            }
        }
        Ok(())
    }

    /// One cell at `(x, y)`: its colour on the scale up to `top`, its rate and the best mark
    /// (a dash and grey where there is no rate).
    fn draw_cell<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        (pi, qi, ci): (usize, usize, usize),
        (x, y): (i32, i32),
        top: f64,
    ) -> Result<()> {
        let v = self.rates[pi][qi][ci];
        let fill = v.map_or(RGBColor(220, 220, 220), |v| viridis(v / top));
        root.draw(&Rectangle::new(
            [(x, y), (x + CELL.0 - 2, y + CELL.1 - 2)],
            fill.filled(),
        ))
        .map_err(draw_err)?;
        let s = match v {
            Some(v) => format!(
                "{:.1}{}",
                100.0 * v,
                if self.is_best(pi, qi, ci) { "*" } else { "" }
            ),
            None => "–".into(),
        };
        // Dark text on the light end of the scale, white on the dark end.
        let ink = if v.is_some_and(|v| v / top > 0.6) || v.is_none() {
            BLACK
        } else {
            WHITE
        };
        label(
            root,
            &s,
            (x + CELL.0 / 2 - 1, y + CELL.1 / 2 - 1),
            &text(13.0).color(&ink),
            HPos::Center,
            VPos::Center,
        )
    }
}

/// The colour bar under the panels (figure height `h`), ticked at 0, half and `top`.
fn draw_colour_bar<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    h: i32,
    top: f64,
) -> Result<()> {
    let (bx, by, bw) = (20 + ROW_LABELS, h - 56, 300);
    for i in 0..bw {
        root.draw(&Rectangle::new(
            [(bx + i, by), (bx + i + 1, by + 14)],
            viridis(f64::from(i) / f64::from(bw - 1)).filled(),
        ))
        .map_err(draw_err)?;
    }
    for (t, v) in [(0, 0.0), (bw / 2, top / 2.0), (bw, top)] {
        label(
            root,
            &format!("{:.0}", 100.0 * v),
            (bx + t, by + 18),
            &text(11.0),
            HPos::Center,
            VPos::Top,
        )?;
    }
    label(
        root,
        "correct rate (%)",
        (bx + bw + 14, by + 7),
        &text(12.0),
        HPos::Left,
        VPos::Center,
    )
}
