//! What a figure is drawn from and what drawing it yields: the shared input, the report section,
//! a registry entry and its outcome. A leaf: it names no figure file.

use std::path::Path;

use bench_core::Result;

use super::draw::{render, Figure};
use crate::model::{CostBasis, ReportData, RouteEval};
use crate::pareto::Panel;

/// The report section a figure is shown in; the report draws each section's figures in its place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// Cost and accuracy (Figure 7).
    Cost,
    /// Paradigms by corpus and query type (Figure 4).
    Paradigms,
    /// Routers (Figure 5).
    Routers,
    /// Corpora (Figure 6).
    Corpora,
}

/// What every figure is drawn from: the report's data and what the report derives from it once.
#[derive(Debug, Clone, Copy)]
pub struct FigureInput<'a> {
    /// Everything the report read.
    pub data: &'a ReportData,
    /// The corpora, in report order.
    pub corpora: &'a [String],
    /// The runs' modes, joined with `, `.
    pub modes: &'a str,
    /// The evaluation whose routers are drawn (`report::main_eval`), if any.
    pub eval: Option<&'a RouteEval>,
    /// What the cost axis measures.
    pub basis: &'a CostBasis,
    /// Figure 7's cost–accuracy panels, which the frontier tables share.
    pub panels: &'a [Panel],
}

/// A registry entry's outcome: the figure drawn (its SVG; the PNG is written) with its caption,
/// or why it could not be drawn.
#[derive(Debug, Clone)]
pub enum Drawn {
    /// The figure's SVG and its caption.
    Figure {
        /// The SVG markup.
        svg: String,
        /// The caption under it in the HTML.
        caption: String,
    },
    /// A note saying why the figure is missing.
    Missing(String),
}

/// One figure of the report.
#[derive(Debug, Clone, Copy)]
pub struct FigureEntry {
    /// File stem under `figures/` (`fig7_cost_accuracy`); the figure's `Figure::name`.
    pub stem: &'static str,
    /// The section it is shown in.
    pub section: Section,
    /// Builds the figure from the input and draws it, writing the PNG to the given path.
    pub draw: fn(&FigureInput<'_>, &Path) -> Result<Drawn>,
}

impl FigureEntry {
    /// The entry of the figure with file stem `stem`, shown in `section`, drawn by `draw`.
    pub const fn new(
        stem: &'static str,
        section: Section,
        draw: fn(&FigureInput<'_>, &Path) -> Result<Drawn>,
    ) -> Self {
        FigureEntry {
            stem,
            section,
            draw,
        }
    }
}

impl Drawn {
    /// The figure is missing, for the reason `why`.
    pub fn missing(why: &str) -> Result<Drawn> {
        Ok(Drawn::Missing(why.to_owned()))
    }
}

/// Draws `fig` (PNG to `png`, SVG returned in the outcome) with `caption`.
pub fn drawn<F: Figure>(fig: &F, png: &Path, caption: String) -> Result<Drawn> {
    let svg = render(fig, png)?;
    Ok(Drawn::Figure { svg, caption })
}
