//! Reports for ragrouter-bench: cost–accuracy Pareto frontiers and AIQ, the paper's tables and
//! figures (SVG and PNG with an embedded font), raw exports and one self-contained HTML report.
//! Analysis (`pareto`, `aiq`, `tables`) is pure functions on plain data (`model`); `load` reads
//! the store, `figures` and `html` draw, `report` writes the directory.
//!
//! The principal types: [`Selection`] and [`load()`] (what a report reads from a results store),
//! [`write_report`] (the whole report, written atomically), and the pure analysis: the
//! cost–quality frontier of [`pareto`], AIQ of [`aiq`], the paper's tables of [`tables`].
//!
//! ```
//! // (cost, correct rate) of four strategies: the third costs more for less.
//! let points = [(100.0, 0.30), (400.0, 0.45), (500.0, 0.40), (900.0, 0.50)];
//! assert_eq!(reports::pareto::frontier(&points), [0, 1, 3]);
//! assert!(reports::pareto::dominates(points[1], points[2]));
//! ```

#![warn(missing_docs)]

pub mod aiq;
pub mod export;
pub mod figures;
pub mod html;
pub mod load;
pub mod model;
pub mod outdir;
pub mod pareto;
pub mod report;
pub mod tables;

pub use load::{load, Selection};
pub use model::ReportData;
pub use report::{write_report, Written};
