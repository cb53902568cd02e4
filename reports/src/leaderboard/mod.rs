//! The leaderboard: its document ([`Board`], written as `leaderboard.json`) and the static page
//! that embeds it.

mod model;
mod page;
mod plot;

use std::fs;
use std::path::{Path, PathBuf};

use bench_core::{BenchError, Result};

pub use model::{
    Board, BoardProtocol, Cell, CellMeasures, Matrix, PredictionLine, Reference, RouterStanding,
    ViewBaselines, FORMAT,
};
pub use page::embed_json;
pub use plot::file_name as plot_file_name;

/// The board as `leaderboard.json` holds it (pretty, fields in the model's order, a final
/// newline); the page embeds exactly this text.
pub fn board_json(board: &Board) -> Result<String> {
    let mut json = serde_json::to_string_pretty(board)
        .map_err(|e| BenchError::Other(format!("writing the leaderboard as JSON: {e}")))?;
    json.push('\n');
    Ok(json)
}

/// Writes the page into `dir`, an existing folder: `index.html` (self-contained: the board's JSON,
/// the script, the style and every plot inline) and one `pareto-<matrix id>.svg` per matrix.
/// Returns the files written, relative to `dir`, in writing order.
pub fn write_page(dir: &Path, board: &Board) -> Result<Vec<PathBuf>> {
    let json = board_json(board)?;
    let svgs: Vec<String> = board
        .matrices
        .iter()
        .map(|m| plot::matrix_svg(board, m))
        .collect();
    let mut written = Vec::with_capacity(svgs.len() + 1);
    for (m, svg) in board.matrices.iter().zip(&svgs) {
        let name = PathBuf::from(plot::file_name(&m.id));
        write(dir, &name, svg)?;
        written.push(name);
    }
    let index = PathBuf::from("index.html");
    write(dir, &index, &page::document(board, &json, &svgs))?;
    written.push(index);
    Ok(written)
}

fn write(dir: &Path, name: &Path, text: &str) -> Result<()> {
    let path = dir.join(name);
    fs::write(&path, text).map_err(|e| BenchError::io(format!("writing {}", path.display()), e))
}
