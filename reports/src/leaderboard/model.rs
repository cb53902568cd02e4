//! The leaderboard document (`leaderboard.json`): matrices, routers, one cell per (router, matrix,
//! view), and the reference lines; the page embeds it verbatim and `leaderboard verify` re-reads it.

use serde::{Deserialize, Serialize};

/// The format tag written first in every document.
pub const FORMAT: &str = "ragrouter-leaderboard/1";

/// The whole board.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Board {
    /// Always [`FORMAT`].
    pub format: String,
    /// When the board was built (RFC 3339, UTC): the one field two builds of the same stores
    /// may differ in.
    pub generated: String,
    /// The crate version that built it.
    pub version: String,
    /// The rules every number follows, as printed on the page.
    pub protocol: BoardProtocol,
    /// The outcome matrices, ranked ones first.
    pub matrices: Vec<Matrix>,
    /// Every router on the board, in rank order (ranked, then those listed below the rest).
    pub routers: Vec<RouterStanding>,
    /// One cell per (router, matrix, view) the board tried.
    pub cells: Vec<Cell>,
    /// Published aggregate figures with no per-question choices: reference lines, not re-scored.
    pub references: Vec<Reference>,
}

/// The rules of the board.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoardProtocol {
    /// How routers are ranked, in words.
    pub ranking: String,
    /// How each router's operating point is fixed, in words.
    pub operating_point: String,
    /// The baseline of every Δ and gap share (`best-single`).
    pub baseline: String,
    /// Paired-bootstrap resamples behind each interval.
    pub resamples: u32,
    /// Seed of the splits, the routers and the bootstrap.
    pub seed: u64,
    /// Significance level of the win/loss counts, after Holm's correction.
    pub alpha: f64,
    /// How many routers Holm's correction runs over (adding a router changes it).
    pub holm_family: u32,
    /// CostSave is reported where the correct rate is within this many points of best-single's.
    pub cost_save_within_points: f64,
}

/// One outcome matrix: a store (or a corpus of one) under one protocol.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Matrix {
    /// Stable id (`offline-pooled`, `offline-2wiki`, `adarague-llama8b`, ...).
    pub id: String,
    /// Title shown on the page.
    pub title: String,
    /// The store's file name (never a folder path).
    pub store: String,
    /// sha256 of the matrix content the routers saw (tuples of the selected runs, canonical).
    pub digest: String,
    /// `kfold` or `given`.
    pub split: String,
    /// Folds (1 for a given split).
    pub folds: u32,
    /// The split's seed.
    pub seed: u64,
    /// Feature views evaluated (`q+c+p`, `q`, ...).
    pub views: Vec<String>,
    /// Counted in the ranking (the pooled offline matrix and each import); per-corpus offline
    /// matrices are shown, not ranked.
    pub ranked: bool,
    /// The unit of every cost on this matrix (context tokens, LLM tokens, retrieval steps).
    pub cost_unit: String,
    /// Routing rows (questions).
    pub n: u32,
    /// Per view: best-single's and Oracle's pooled correct rate and cost.
    pub baselines: Vec<ViewBaselines>,
    /// Why the matrix could not be evaluated, when it could not.
    pub skipped: Option<String>,
}

/// Best-single and Oracle on one view of a matrix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ViewBaselines {
    /// The feature view.
    pub view: String,
    /// Best-single's correct rate (0-1).
    pub best_single_correct: f64,
    /// Best-single's mean cost.
    pub best_single_cost: f64,
    /// Oracle's correct rate (0-1).
    pub oracle_correct: f64,
    /// Oracle's mean cost.
    pub oracle_cost: f64,
}

/// Where a router stands over the ranked matrices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouterStanding {
    /// The router's name (an external one's as given on the command line).
    pub name: String,
    /// `baseline`, `built-in`, `external`, `published`.
    pub kind: String,
    /// Its family in Table 3 (`baseline`, `ml`, `utility`, ...), or `external`.
    pub family: String,
    /// 1-based rank; `None` for routers listed below the rest and for baselines not ranked.
    pub rank: Option<u32>,
    /// Mean share of the best-single -> Oracle gap over the ranked matrices it ran on.
    pub mean_gap_share: Option<f64>,
    /// Ranked matrices it ran on.
    pub ran: u32,
    /// Ranked matrices on the board.
    pub of: u32,
    /// Ranked (matrix, view) cells where it beats best-single (Holm-corrected p < alpha).
    pub wins: u32,
    /// Ranked cells where it loses to best-single (Holm-corrected p < alpha).
    pub losses: u32,
    /// What identifies its evaluation: its configuration; for an external router its command and
    /// the sha256 of its program file.
    pub config: serde_json::Value,
}

/// One (router, matrix, view).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// Router name.
    pub router: String,
    /// Matrix id.
    pub matrix: String,
    /// Feature view.
    pub view: String,
    /// `ok`, `skipped` or `failed`.
    pub status: String,
    /// Why it was skipped or failed (redacted; the page escapes it).
    pub reason: Option<String>,
    /// The measures at the fixed operating point; `None` unless `status` is `ok`.
    pub measures: Option<CellMeasures>,
}

/// The numbers of one cell, all at the router's fixed operating point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellMeasures {
    /// Test questions scored.
    pub n: u32,
    /// Correct rate (0-1).
    pub correct_rate: f64,
    /// Correct rate minus best-single's (0-1 scale).
    pub delta: f64,
    /// Paired-bootstrap 95 % interval of `delta`.
    pub ci_low: f64,
    /// Upper end of that interval.
    pub ci_high: f64,
    /// Exact McNemar p against best-single.
    pub p_mcnemar: f64,
    /// Holm-corrected p over the routers on the board.
    pub p_holm: f64,
    /// Share of the best-single -> Oracle gap closed: (correct rate - best-single's) /
    /// (Oracle's - best-single's), each a mean over folds, so best-single is 0 and Oracle 1;
    /// `None` when Oracle is not above best-single.
    pub gap_share: Option<f64>,
    /// Mean cost per question in the matrix's unit.
    pub mean_cost: f64,
    /// 1 - mean_cost / best-single's, where the correct rate is within the protocol's points of
    /// best-single's; else `None`.
    pub cost_saved: Option<f64>,
    /// The operating point fixed on each fold's training rows (empty without a parameter).
    pub operating_point: Vec<f64>,
    /// Per-question predictions, relative to the board's folder.
    pub predictions: String,
}

/// A published aggregate figure with no per-question choices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reference {
    /// Matrix id it belongs to.
    pub matrix: String,
    /// Who published it (`Adaptive-RAG`, `MBA-RAG`).
    pub name: String,
    /// The published correct rate (0-1).
    pub correct_rate: f64,
    /// Where it comes from; always says it is not re-scored.
    pub note: String,
}

/// One line of a predictions file (`predictions/<router>/<matrix>__<view>.jsonl`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PredictionLine {
    /// The question's corpus.
    pub corpus: String,
    /// The question's id in its corpus.
    pub query_id: String,
    /// The outer fold it was a test question of.
    pub fold: u32,
    /// The class the router chose (a paradigm or `cannot-answer`).
    pub chosen: String,
    /// Every arm paid for on this question, in order (one for a plain router).
    pub arms_played: Vec<String>,
    /// The arm whose answer was delivered; `None` when none could be.
    pub delivered: Option<String>,
    /// Whether the delivered answer was judged correct.
    pub correct: bool,
    /// The question's cost in the matrix's unit (every arm played, plus probes).
    pub cost: f64,
}
