//! Reports for ragrouter-bench: cost–accuracy Pareto frontiers and AIQ, the paper's tables and
//! figures (SVG and PNG with an embedded font), raw exports and one self-contained HTML report.
//! Analysis ([`pareto`], [`aiq`], [`tables`]) is pure functions on plain data ([`ReportData`] and
//! its [`Tuple`]s, [`RunInfo`]s, [`RouteEval`]s, [`CorpusMetrics`] and [`SignalRow`]s); reading
//! the store, drawing the figures and writing the directory are private to the crate.
//!
//! The principal types: [`Selection`] and [`load()`] (what a report reads from a results store),
//! [`write_report`] (the whole report, written atomically, into a folder [`check_out_dir`]
//! accepts), and the pure analysis: the cost–quality frontier of [`pareto`], AIQ of [`aiq`], the
//! paper's tables of [`tables`].
//!
//! ```
//! // (cost, correct rate) of four strategies: the third costs more for less.
//! let points = [(100.0, 0.30), (400.0, 0.45), (500.0, 0.40), (900.0, 0.50)];
//! assert_eq!(reports::pareto::frontier(&points), [0, 1, 3]);
//! assert!(reports::pareto::dominates(points[1], points[2]));
//! ```
//!
//! # Modules
//!
//! - Loading runs and evaluations (`load`).
//! - Pareto frontier (`pareto`) and AIQ (`aiq`) as pure functions, Tables 2 / 3 / 16 (`tables`;
//!   Table 3 rendered as Markdown and CSV from the same model `route eval` prints,
//!   `bench_core::table3`).
//! - Raw exports (`export`).
//! - Figures 4-7 with plotters and an embedded font (`figures`; series styles and overlap-free
//!   labels in `figures::placement`, PNG text at the font's glyph positions in `figures::png`).
//! - The self-contained HTML (`html`).
//! - The whole report written atomically into a fresh folder swapped in with a manifest of its
//!   files (`report`, `outdir`).
//!
//! Why a crate of its own: analysis apart from drawing; the plotting dependencies.

#![warn(missing_docs)]

pub mod aiq;
mod export;
mod figures;
mod html;
pub mod leaderboard;
mod load;
mod model;
mod outdir;
pub mod pareto;
mod report;
pub mod tables;

pub use load::{load, Selection};
pub use model::{CorpusMetrics, CostBasis, ReportData, RouteEval, RunInfo, SignalRow, Tuple};
pub use outdir::{check_out_dir, staging_dir, swap_in};
pub use report::{main_eval, write_report, Written};

/// The file stem of every figure a report can draw (`figures/<stem>.svg` and `.png`), in the
/// order the report draws them within a section.
pub fn figure_stems() -> impl Iterator<Item = &'static str> {
    figures::FIGURES.iter().map(|f| f.stem)
}
