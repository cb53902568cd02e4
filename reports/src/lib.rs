//! Reports for ragrouter-bench: cost–accuracy Pareto frontiers and AIQ, the paper's tables and
//! figures (SVG and PNG with an embedded font), raw exports and one self-contained HTML report.
//! Analysis (`pareto`, `aiq`, `tables`) is pure functions on plain data (`model`); `load` reads
//! the store, `figures` and `html` draw, `report` writes the directory.

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
