//! The figures of a report: [`FIGURES`] lists the figures a report draws; a figure is its own
//! file plus its line there. The figure files name only the leaves `entry` (input, entry, outcome)
//! and `draw` (rendering, font, palette), never this list.

pub mod cost;
pub mod draw;
pub mod entry;
pub mod features;
pub mod heatmap;
pub mod placement;
pub mod png;
pub mod profiles;

pub use entry::{Drawn, FigureEntry, FigureInput, Section};

/// Every figure of a report, in drawing order within each section.
pub const FIGURES: &[FigureEntry] = &[
    cost::ENTRY,
    heatmap::ENTRY,
    features::ENTRY,
    profiles::ENTRY,
];
