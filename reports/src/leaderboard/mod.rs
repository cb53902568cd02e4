//! The leaderboard: its document ([`Board`], written as `leaderboard.json`) and the static page
//! that embeds it.

mod model;

pub use model::{
    Board, BoardProtocol, Cell, CellMeasures, Matrix, PredictionLine, Reference, RouterStanding,
    ViewBaselines, FORMAT,
};
