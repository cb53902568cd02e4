//! `ragrouter leaderboard verify DIR --db ...`: re-scores every predictions file against the
//! stores (each line's correctness, and its cost at least the delivered arm's, from the stored
//! tuples), rebuilds every number of leaderboard.json from the predictions alone (correct
//! rates, costs, the paired tests, Holm, gap shares, standings) and compares: exit 0, or 1
//! naming the first mismatch.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use anyhow::{anyhow, Result};
use bench_core::{BenchError, ClassOutcome, RoutePrediction};
use reports::leaderboard::{Board, Cell, PredictionLine};
use routers::dataset::{load_routing_data, BuildOptions};
use serde_json::Value;
use store::{RunSelection, SplitUse, Store};

use super::args::VerifyArgs;
use super::evaluate::{Measured, Status, ViewResult, BEST_SINGLE};
use super::matrices::Plan;
use super::rank::{self, Evaluated, RouterInfo};

/// Per (corpus, question id): the outcome of each paradigm class by name.
type Outcomes = HashMap<(String, String), BTreeMap<String, ClassOutcome>>;

pub fn run(a: &VerifyArgs) -> Result<()> {
    let path = a.dir.join("leaderboard.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| BenchError::io(format!("reading {}", path.display()), e))?;
    let board: Board = serde_json::from_str(&text).map_err(|e| {
        BenchError::Invalid(format!(
            "{}: not a leaderboard document: {e}",
            path.display()
        ))
    })?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let rebuilt = runtime.block_on(async {
        let stores = super::matrices::open_all(&a.dbs).await?;
        let mut plans: Vec<(Plan, usize)> = Vec::new();
        for (i, (db, store)) in a.dbs.iter().zip(&stores).enumerate() {
            for p in super::matrices::plan(store, &super::matrices::store_name(db)).await? {
                plans.push((p, i));
            }
        }
        let r = rebuild(&a.dir, &board, &plans, &stores).await;
        for s in stores {
            s.close().await;
        }
        r
    })?;
    let (want, got) = (
        serde_json::to_value(&board)?,
        serde_json::to_value(&rebuilt)?,
    );
    if let Some((field, w, g)) = first_difference("", &want, &got) {
        return Err(anyhow!(
            "{}: {} expected {w}, found {g}",
            path.display(),
            describe(&board, &field)
        ));
    }
    println!(
        "leaderboard verify: {} cells, {} matrices: every number matches the predictions and the stores",
        board.cells.len(),
        board.matrices.len()
    );
    Ok(())
}

/// "router R, matrix M, view V, field F" for a cell's field, else the JSON path.
fn describe(board: &Board, field: &str) -> String {
    let cell = field
        .strip_prefix("/cells/")
        .and_then(|rest| rest.split('/').next())
        .and_then(|i| i.parse::<usize>().ok())
        .and_then(|i| board.cells.get(i));
    match cell {
        Some(c) => format!(
            "router {}, matrix {}, view {}, field {}",
            c.router,
            c.matrix,
            c.view,
            field.rsplit('/').next().unwrap_or(field)
        ),
        None => format!("field {field}"),
    }
}

/// The first place two documents differ (numbers within a relative 1e-9), as (path, expected,
/// found).
fn first_difference(at: &str, want: &Value, got: &Value) -> Option<(String, String, String)> {
    match (want, got) {
        (Value::Number(a), Value::Number(b)) => {
            let (x, y) = (a.as_f64()?, b.as_f64()?);
            ((x - y).abs() > 1e-9 * x.abs().max(y.abs()).max(1.0))
                .then(|| (at.to_string(), a.to_string(), b.to_string()))
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (x, y))| first_difference(&format!("{at}/{i}"), x, y)),
        (Value::Object(a), Value::Object(b)) if a.len() == b.len() => {
            a.iter().find_map(|(k, x)| match b.get(k) {
                Some(y) => first_difference(&format!("{at}/{k}"), x, y),
                None => Some((format!("{at}/{k}"), x.to_string(), "nothing".into())),
            })
        }
        (a, b) if a == b => None,
        (a, b) => Some((at.to_string(), short(a), short(b))),
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 120 {
        format!("{}…", s.chars().take(119).collect::<String>())
    } else {
        s
    }
}

/// The board rebuilt from its predictions files and the stores.
async fn rebuild(
    dir: &Path,
    board: &Board,
    plans: &[(Plan, usize)],
    stores: &[Store],
) -> Result<Board> {
    let mut evaluated = Vec::new();
    for m in &board.matrices {
        let Some((plan, db)) = plans
            .iter()
            .find(|(p, _)| p.matrix.id == m.id && p.matrix.store == m.store)
        else {
            return Err(anyhow!(
                "matrix {} of store {}: not found in the stores given",
                m.id,
                m.store
            ));
        };
        if plan.matrix.digest != m.digest {
            return Err(anyhow!(
                "matrix {}: digest expected {}, found {} (the store's tuples changed)",
                m.id,
                m.digest,
                plan.matrix.digest
            ));
        }
        let outcomes = if m.skipped.is_none() {
            outcomes(&stores[*db], plan).await?
        } else {
            Outcomes::new()
        };
        let mut views = Vec::new();
        for v in &m.views {
            let cells: Vec<&Cell> = board
                .cells
                .iter()
                .filter(|c| c.matrix == m.id && &c.view == v)
                .collect();
            views.push(view(dir, v, &cells, &outcomes, board.protocol.seed)?);
        }
        let mut matrix = plan.matrix.clone();
        matrix.title = m.title.clone();
        evaluated.push(Evaluated {
            matrix,
            references: plan.references.clone(),
            views,
        });
    }
    // The routers in the order the build gave them: the order of their first cells.
    let mut infos: Vec<RouterInfo> = Vec::new();
    for c in &board.cells {
        if !infos.iter().any(|r| r.name == c.router) {
            let s = board
                .routers
                .iter()
                .find(|r| r.name == c.router)
                .ok_or_else(|| anyhow!("cell of router {} not in routers", c.router))?;
            infos.push(RouterInfo {
                name: s.name.clone(),
                kind: s.kind.clone(),
                family: s.family.clone(),
                config: s.config.clone(),
            });
        }
    }
    Ok(rank::board(board.generated.clone(), &infos, evaluated))
}

/// Every question's per-paradigm outcome from the stored tuples of the matrix's runs.
async fn outcomes(store: &Store, plan: &Plan) -> Result<Outcomes> {
    // The questions tested: under the given split the `test` runs, which are also what the
    // pooled selection (each corpus's latest run not tagged `train`) picks.
    let sel = RunSelection {
        corpora: plan.protocol.corpora.clone(),
        splits: SplitUse::Pooled,
        ..RunSelection::default()
    };
    let runs = store::select_runs(store, &sel).await?;
    let policy = routers::protocol::default_policy(runs.first().map(|r| &r.mode));
    let opts = BuildOptions {
        corpus_features: false,
        classes: None,
        probe_features: false,
    };
    // Outcomes do not depend on the question vectors: a cheap hashing encoder stands in.
    let emb = corpora::HashEmbedder::new(8);
    let data = load_routing_data(store, &sel, policy, &emb, None, &opts).await?;
    let classes = &data.set.schema.classes;
    Ok(data
        .set
        .rows
        .into_iter()
        .map(|r| {
            let per = classes
                .iter()
                .zip(&r.outcomes)
                .filter_map(|(c, o)| o.map(|o| (c.clone(), o)))
                .collect();
            ((r.corpus, r.query_id), per)
        })
        .collect())
}

/// One view rebuilt: each ok cell's predictions re-scored and measured, the paired tests run
/// again on them.
fn view(
    dir: &Path,
    v: &str,
    cells: &[&Cell],
    outcomes: &Outcomes,
    seed: u64,
) -> Result<ViewResult> {
    let mut out = ViewResult {
        view: v.to_string(),
        skipped: None,
        routers: BTreeMap::new(),
        auto: Vec::new(),
    };
    let mut all_preds: Vec<RoutePrediction> = Vec::new();
    for c in cells {
        let status = match (c.status.as_str(), &c.measures) {
            ("ok", Some(m)) => {
                let preds = read_predictions(dir, c, &m.predictions, outcomes)?;
                all_preds.extend(preds.iter().cloned());
                Status::Ok(Box::new(fold_means(preds, m.operating_point.clone())))
            }
            ("skipped", _) => Status::Skipped(c.reason.clone().unwrap_or_default()),
            _ => Status::Failed(c.reason.clone().unwrap_or_default()),
        };
        out.routers.insert(c.router.clone(), status);
    }
    if !cells.is_empty()
        && cells
            .iter()
            .all(|c| c.status == "skipped" && c.reason == cells[0].reason)
    {
        out.skipped = cells[0].reason.clone();
    }
    let tests = routers::significance::compare_to(
        &all_preds,
        BEST_SINGLE,
        routers::significance::RESAMPLES,
        seed,
    )
    .unwrap_or_default();
    for t in tests.into_iter().filter(|t| t.param.is_none()) {
        if let Some(Status::Ok(m)) = out.routers.get_mut(&t.router) {
            m.test = Some(t);
        }
    }
    Ok(out)
}

/// Correct rate and cost, each a mean over folds of the fold's mean (as `route eval` averages).
fn fold_means(preds: Vec<RoutePrediction>, operating_point: Vec<f64>) -> Measured {
    let mut folds: BTreeMap<u32, (f64, f64, f64)> = BTreeMap::new();
    for p in &preds {
        let f = folds.entry(p.fold).or_default();
        f.0 += f64::from(u8::from(p.correct));
        f.1 += p.cost;
        f.2 += 1.0;
    }
    let k = folds.len().max(1) as f64;
    Measured {
        n: preds.len() as u32,
        correct: folds.values().map(|f| f.0 / f.2).sum::<f64>() / k,
        cost: folds.values().map(|f| f.1 / f.2).sum::<f64>() / k,
        test: None,
        predictions: preds,
        operating_point,
    }
}

/// Reads a cell's predictions file, checking each line against the stored outcomes.
fn read_predictions(
    dir: &Path,
    c: &Cell,
    rel: &str,
    outcomes: &Outcomes,
) -> Result<Vec<RoutePrediction>> {
    let path = dir.join(rel);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        anyhow!(
            "{}: router {}, matrix {}: {e}",
            path.display(),
            c.router,
            c.matrix
        )
    })?;
    let mismatch = |line: usize, field: &str, want: String, got: String| {
        anyhow!(
            "{}:{line}: router {}, matrix {}, view {}, field {field}: expected {want}, found {got}",
            path.display(),
            c.router,
            c.matrix,
            c.view
        )
    };
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let p: PredictionLine = serde_json::from_str(l)
            .map_err(|e| mismatch(i + 1, "line", "a prediction".into(), e.to_string()))?;
        let per = outcomes
            .get(&(p.corpus.clone(), p.query_id.clone()))
            .ok_or_else(|| {
                mismatch(
                    i + 1,
                    "query_id",
                    "a question of the store".into(),
                    p.query_id.clone(),
                )
            })?;
        let played = p.delivered.as_ref().and_then(|d| per.get(d));
        let want_correct = played.is_some_and(|o| o.correct);
        if want_correct != p.correct {
            return Err(mismatch(
                i + 1,
                "correct",
                want_correct.to_string(),
                p.correct.to_string(),
            ));
        }
        let floor = played.map_or(0.0, |o| o.tokens);
        if p.cost < floor - 1e-9 * floor.abs().max(1.0) {
            return Err(mismatch(
                i + 1,
                "cost",
                format!("at least {floor}"),
                p.cost.to_string(),
            ));
        }
        out.push(RoutePrediction {
            router: c.router.clone(),
            param: None,
            fold: p.fold,
            corpus: p.corpus,
            query_id: p.query_id,
            chosen: p.chosen,
            arms_played: p.arms_played,
            played: p.delivered,
            correct: p.correct,
            cost: p.cost,
            probe_cost: 0.0,
            scores: Vec::new(),
        });
    }
    Ok(out)
}
