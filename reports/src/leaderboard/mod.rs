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
    let names = plot_files(board);
    let mut written = Vec::with_capacity(svgs.len() + 1);
    for (name, svg) in names.iter().zip(&svgs) {
        let name = PathBuf::from(name);
        write(dir, &name, svg)?;
        written.push(name);
    }
    let index = PathBuf::from("index.html");
    let plots: Vec<(&str, &str)> = names
        .iter()
        .zip(&svgs)
        .map(|(n, s)| (n.as_str(), s.as_str()))
        .collect();
    write(dir, &index, &page::document(board, &json, &plots))?;
    written.push(index);
    Ok(written)
}

/// Each matrix's plot file, in matrix order: [`plot_file_name`] of its id, with `-2`, `-3`, ...
/// added where two ids make the same name (`a/b` and `a_b`), so no plot overwrites another.
/// These are the names [`write_page`] writes.
pub fn plot_files(board: &Board) -> Vec<String> {
    let mut names: Vec<String> = Vec::with_capacity(board.matrices.len());
    for m in &board.matrices {
        let base = plot::file_name(&m.id);
        let mut name = base.clone();
        let mut k = 2;
        while names.contains(&name) {
            name = format!("{}-{k}.svg", base.trim_end_matches(".svg"));
            k += 1;
        }
        names.push(name);
    }
    names
}

fn write(dir: &Path, name: &Path, text: &str) -> Result<()> {
    let path = dir.join(name);
    fs::write(&path, text).map_err(|e| BenchError::io(format!("writing {}", path.display()), e))
}
