//! The board's folder, written under the report folder's rules (checked first, written whole
//! into a fresh sibling and swapped in with a manifest): the page, leaderboard.json,
//! leaderboard.csv, provenance.json and one predictions file per (router, matrix, view).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use reports::leaderboard::{board_json, Board, PredictionLine};
use serde_json::json;

use super::evaluate::{Status, ViewResult};
use super::rank::predictions_path;

/// The commit the build was made from, where the build was told it.
pub const COMMIT: Option<&str> = option_env!("RAGROUTER_GIT_COMMIT");

/// Writes every file into a staging folder beside `out`, then puts it in `out`'s place.
pub fn write(out: &Path, board: &Board, views: &[(String, &ViewResult)]) -> Result<()> {
    let staging = reports::staging_dir(out)?;
    let written = write_all(&staging, board, views);
    let swapped = written.and_then(|files| Ok(reports::swap_in(&staging, out, &files)?));
    if swapped.is_err() {
        // Our own fresh folder: nothing of the user's is in it.
        let _ = std::fs::remove_dir_all(&staging);
    }
    swapped
}

fn write_all(dir: &Path, board: &Board, views: &[(String, &ViewResult)]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut put = |name: &str, text: &str| -> Result<()> {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        files.push(PathBuf::from(name));
        Ok(())
    };
    put("leaderboard.json", &board_json(board)?)?;
    put("leaderboard.csv", &csv(board))?;
    put("provenance.json", &format!("{:#}\n", provenance(board)))?;
    for (matrix, v) in views {
        for (router, status) in &v.routers {
            let Status::Ok(m) = status else { continue };
            let mut text = String::new();
            for p in &m.predictions {
                let line = PredictionLine {
                    corpus: p.corpus.clone(),
                    query_id: p.query_id.clone(),
                    fold: p.fold,
                    chosen: p.chosen.clone(),
                    arms_played: if p.arms_played.is_empty() {
                        p.played.iter().cloned().collect()
                    } else {
                        p.arms_played.clone()
                    },
                    delivered: p.played.clone(),
                    correct: p.correct,
                    cost: p.cost,
                };
                text.push_str(&serde_json::to_string(&line)?);
                text.push('\n');
            }
            put(&predictions_path(router, matrix, &v.view), &text)?;
        }
    }
    files.extend(reports::leaderboard::write_page(dir, board)?);
    Ok(files)
}

/// What the board was built from: version, commit, every matrix's digest and protocol, seeds,
/// the routers' configurations and the date.
pub fn provenance(board: &Board) -> serde_json::Value {
    json!({
        "version": board.version,
        "commit": COMMIT,
        "generated": board.generated,
        "seed": board.protocol.seed,
        "resamples": board.protocol.resamples,
        "matrices": board.matrices.iter().map(|m| json!({
            "id": m.id, "store": m.store, "digest": m.digest, "split": m.split, "folds": m.folds,
            "seed": m.seed, "views": m.views, "n": m.n, "cost_unit": m.cost_unit,
        })).collect::<Vec<_>>(),
        "routers": board.routers.iter().map(|r| json!({"name": r.name, "kind": r.kind, "config": r.config})).collect::<Vec<_>>(),
    })
}

/// One CSV row per cell, with the router's standing repeated.
pub fn csv(board: &Board) -> String {
    let mut out = String::from(
        "router,kind,family,rank,mean_gap_share,ran,of,wins,losses,matrix,view,status,reason,n,correct_rate,delta,ci_low,ci_high,p_mcnemar,p_holm,gap_share,mean_cost,cost_saved\n",
    );
    let opt = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
    for c in &board.cells {
        let Some(r) = board.routers.iter().find(|r| r.name == c.router) else {
            continue;
        };
        let mut f: Vec<String> = vec![
            quote(&r.name),
            r.kind.clone(),
            r.family.clone(),
            r.rank.map(|x| x.to_string()).unwrap_or_default(),
            opt(r.mean_gap_share),
            r.ran.to_string(),
            r.of.to_string(),
            r.wins.to_string(),
            r.losses.to_string(),
            quote(&c.matrix),
            quote(&c.view),
            c.status.clone(),
            quote(c.reason.as_deref().unwrap_or("")),
        ];
        match &c.measures {
            Some(m) => f.extend([
                m.n.to_string(),
                m.correct_rate.to_string(),
                m.delta.to_string(),
                m.ci_low.to_string(),
                m.ci_high.to_string(),
                m.p_mcnemar.to_string(),
                m.p_holm.to_string(),
                opt(m.gap_share),
                m.mean_cost.to_string(),
                opt(m.cost_saved),
            ]),
            None => f.extend(std::iter::repeat_n(String::new(), 10)),
        }
        out.push_str(&f.join(","));
        out.push('\n');
    }
    out
}

/// A CSV field, quoted when it holds a comma, a quote or a line break.
fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}
