//! Figure 6: corpus indicator profiles; structural (graph) indicators on the first row, semantic
//! (embedding) ones on the second, one small bar chart per indicator.

use std::path::Path;

use bench_core::Result;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::draw::{colour, draw_err, label, text, Figure};
use super::entry::{drawn, Drawn, FigureEntry, FigureInput, Section};
use crate::model::{CorpusMetrics, CostBasis};

/// Figure 6's line in the report's figure list.
pub const ENTRY: FigureEntry =
    FigureEntry::new("fig6_corpus_profiles", Section::Corpora, entry_draw);

/// Figure 6 from the stored corpus metrics; missing when none are stored.
fn entry_draw(input: &FigureInput<'_>, png: &Path) -> Result<Drawn> {
    match ProfilesFigure::from_metrics(&input.data.metrics, input.corpora) {
        Some(f) => drawn(&f, png, "Figure 6: corpus indicators (graph structure and embedding space) as stored by `ragrouter metrics`.".into()),
        None if matches!(input.basis, CostBasis::Imported(_)) => Drawn::missing(
            "Figure 6 is missing: imported corpora carry outcomes without documents, so they \
             have no corpus metrics (no graph or embedding space to measure).",
        ),
        None => Drawn::missing(
            "Figure 6 is missing: no corpus metrics stored (run `ragrouter metrics <corpus>`).",
        ),
    }
}

/// The indicators drawn: (flat key, label, row), row 0 structural and 1 semantic: the six of
/// `bench_core::CORPUS_INDICATORS`, with the graph's average degree after the structural ones.
pub fn indicators() -> Vec<(&'static str, &'static str, usize)> {
    let row = |structural: bool| usize::from(!structural);
    let mut out: Vec<_> = bench_core::routing::CORPUS_INDICATORS
        .iter()
        .map(|i| (i.key, i.label, row(i.structural)))
        .collect();
    let after_structural = out.iter().filter(|i| i.2 == 0).count();
    out.insert(
        after_structural,
        ("graph.average_degree", "average degree", 0),
    );
    out
}

const PANEL: (u32, u32) = (300, 280);

/// Indicator values per corpus (`values[i][c]`, `None` when not stored).
#[derive(Debug, Clone, PartialEq)]
pub struct ProfilesFigure {
    /// The corpora, one column each.
    pub corpora: Vec<String>,
    /// `values[i][c]`: indicator i of corpus c.
    pub values: Vec<Vec<Option<f64>>>,
}

impl ProfilesFigure {
    /// `None` when no corpus has stored metrics.
    pub fn from_metrics(metrics: &[CorpusMetrics], corpora: &[String]) -> Option<Self> {
        let corpora: Vec<String> = corpora
            .iter()
            .filter(|c| metrics.iter().any(|m| &m.corpus == *c))
            .cloned()
            .collect();
        if corpora.is_empty() {
            return None;
        }
        let values = indicators()
            .iter()
            .map(|(key, _, _)| {
                corpora
                    .iter()
                    .map(|c| {
                        metrics
                            .iter()
                            .find(|m| &m.corpus == c)
                            .and_then(|m| m.values.get(*key).copied())
                    })
                    .collect()
            })
            .collect();
        Some(ProfilesFigure { corpora, values })
    }
}

/// A value in few characters: scientific below 0.01, else 3 significant decimals.
pub fn fmt_value(v: f64) -> String {
    let a = v.abs();
    if a != 0.0 && a < 0.01 {
        format!("{v:.2e}")
    } else if a < 10.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.1}")
    }
}

impl Figure for ProfilesFigure {
    fn name(&self) -> &str {
        ENTRY.stem
    }

    fn size(&self) -> (u32, u32) {
        (4 * PANEL.0, 2 * PANEL.1 + 40)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        let (w, _) = self.size();
        label(
            root,
            "Corpus indicators — top: graph structure, bottom: embedding space",
            (w as i32 / 2, 8),
            &text(16.0),
            HPos::Center,
            VPos::Top,
        )?;
        let body = root.margin(36, 0, 0, 0);
        let cells = body.split_evenly((2, 4));
        let mut col = [0usize; 2];
        for (i, (_, name, row)) in indicators().iter().enumerate() {
            let area = &cells[row * 4 + col[*row]];
            col[*row] += 1;
            self.bars(area, name, &self.values[i])?;
        }
        Ok(())
    }
}

impl ProfilesFigure {
    fn bars<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        name: &str,
        vals: &[Option<f64>],
    ) -> Result<()> {
        let finite: Vec<f64> = vals
            .iter()
            .flatten()
            .copied()
            .filter(|v| v.is_finite())
            .collect();
        let hi = finite.iter().copied().fold(0.0, f64::max);
        let lo = finite.iter().copied().fold(0.0, f64::min);
        let top = if hi > 0.0 { hi * 1.25 } else { 1.0 };
        let bottom = if lo < 0.0 { lo * 1.25 } else { 0.0 };
        let n = self.corpora.len().max(1) as f64;
        let mut chart = ChartBuilder::on(area)
            .caption(name, text(13.0))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(62)
            .build_cartesian_2d(0f64..n, bottom..top)
            .map_err(draw_err)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_labels(5)
            .y_label_formatter(&|v| fmt_value(*v))
            .label_style(text(11.0))
            .light_line_style(RGBColor(246, 246, 246))
            .draw()
            .map_err(draw_err)?;
        let base = area.get_base_pixel();
        for (c, v) in vals.iter().enumerate() {
            let x = c as f64;
            if let Some(v) = v.filter(|v| v.is_finite()) {
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(x + 0.18, 0.0), (x + 0.82, v)],
                        colour(c).filled(),
                    )))
                    .map_err(draw_err)?;
                let (px, py) = chart.backend_coord(&(x + 0.5, v.max(0.0)));
                label(
                    area,
                    &fmt_value(v),
                    (px - base.0, py - 2 - base.1),
                    &text(10.0),
                    HPos::Center,
                    VPos::Bottom,
                )?;
            }
            let (px, py) = chart.backend_coord(&(x + 0.5, bottom));
            label(
                area,
                &self.corpora[c],
                (px - base.0, py + 5 - base.1),
                &text(11.0),
                HPos::Center,
                VPos::Top,
            )?;
        }
        Ok(())
    }
}
