//! Plain data the report is made from: tuples, runs, corpora, router evaluations, corpus metrics.
//!
//! `load` fills these from the store; tests build them by hand. Nothing here touches SQL.

use std::collections::BTreeMap;

use bench_core::{JudgeLabel, Mode, ParadigmId, QueryType, RouteEvalRow, RouteEvalSpec};
use serde::Serialize;
use store::{CorpusRow, ReportTupleRow, RunRow};

/// One stored (query, corpus, paradigm) tuple with its question: the store's row (question
/// text from the data: escape before showing), the run it belongs to, and its share of the
/// corpus's graph build.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tuple {
    /// The run the tuple belongs to.
    pub run_id: i64,
    /// The run's corpus.
    pub corpus: String,
    /// The stored tuple.
    #[serde(flatten)]
    pub row: ReportTupleRow,
    /// The tuple's share of the corpus's graph build, prompt tokens (graph-using paradigms
    /// only, fractional): shown in Table 16 but not in the cost (the routers' cost measure
    /// leaves it out too, and both share Figure 7's axis).
    pub amortised_in: f64,
    /// The tuple's share of the corpus's graph build, reply tokens.
    pub amortised_out: f64,
}

/// A tuple reads as its stored row: `t.paradigm`, `t.judge_label`, `t.tokens`, ...
impl std::ops::Deref for Tuple {
    type Target = ReportTupleRow;
    fn deref(&self) -> &ReportTupleRow {
        &self.row
    }
}

impl Tuple {
    /// Judged correct. A failed tuple counts as not correct: the question was not answered.
    pub fn correct(&self) -> bool {
        self.judge_label == Some(JudgeLabel::Correct)
    }
}

/// A benchmark run as stored (the store's row), for provenance.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunInfo {
    /// The stored run.
    #[serde(flatten)]
    pub row: RunRow,
    /// What a tuple's cost counts in this run (`context tokens`, `LLM tokens`, an import's unit).
    pub cost_unit: String,
    /// Graph construction tokens (in, out) of the build this run's extractor made, if any.
    pub construction: Option<(f64, f64)>,
}

/// A run reads as its stored row: `run.corpus`, `run.mode`, ...
impl std::ops::Deref for RunInfo {
    type Target = RunRow;
    fn deref(&self) -> &RunRow {
        &self.row
    }
}

/// The stored corpus metrics of one corpus (flat keys such as `graph.lcc_ratio`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CorpusMetrics {
    /// The corpus.
    pub corpus: String,
    /// The key of the configuration the metrics were computed under.
    pub configuration: String,
    /// The values by flat key.
    pub values: BTreeMap<String, f64>,
}

/// One stored router evaluation with its rows.
#[derive(Debug, Clone, PartialEq)]
pub struct RouteEval {
    /// The evaluation's id in the store.
    pub id: i64,
    /// Its protocol and configuration.
    pub spec: RouteEvalSpec,
    /// Its per-fold rows.
    pub rows: Vec<RouteEvalRow>,
    /// Paired tests of each (router, λ) against best-single (empty for older evaluations).
    pub tests: Vec<bench_core::RouteEvalTest>,
}

/// The family `route eval` stores for its baselines (Random, best-single, Oracle, always-p).
pub const BASELINE_FAMILY: &str = "baseline";

impl RouteEval {
    /// Each router's family as the evaluation stored it (its configuration's `routers`): the one
    /// place a report reads router identity. A router missing there (an older evaluation) has
    /// none and counts as a router.
    pub fn families(&self) -> Vec<(String, String)> {
        self.spec.config["routers"]
            .as_array()
            .map(|rs| {
                rs.iter()
                    .filter_map(|r| {
                        Some((
                            r["name"].as_str()?.to_owned(),
                            r["family"].as_str()?.to_owned(),
                        ))
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether `router` is a baseline by its stored family.
    pub fn is_baseline(&self, router: &str) -> bool {
        self.families()
            .iter()
            .any(|(n, f)| n == router && f == BASELINE_FAMILY)
    }
}

/// Everything a report shows.
#[derive(Debug, Clone, Default)]
pub struct ReportData {
    /// The runs, in corpus order (one per corpus by default).
    pub runs: Vec<RunInfo>,
    /// The corpora of the runs.
    pub corpora: Vec<CorpusRow>,
    /// The runs' tuples, in run then question order.
    pub tuples: Vec<Tuple>,
    /// Router evaluations, oldest first; empty when none were stored or selected.
    pub evals: Vec<RouteEval>,
    /// The stored corpus metrics of those corpora.
    pub metrics: Vec<CorpusMetrics>,
    /// The runs' probe signals, in run then question then name order.
    pub signals: Vec<SignalRow>,
    /// The database the data came from, for the record.
    pub source: String,
}

/// One probe signal of one question of a run, for the exports.
#[derive(Debug, Clone, PartialEq)]
pub struct SignalRow {
    /// The run.
    pub run_id: i64,
    /// The run's corpus.
    pub corpus: String,
    /// The question's id.
    pub query_id: String,
    /// The signal.
    pub signal: bench_core::Signal,
}

impl ReportData {
    /// Corpus names in run order (deduplicated).
    pub fn corpus_names(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for r in &self.runs {
            if !out.contains(&r.corpus) {
                out.push(r.corpus.clone());
            }
        }
        for t in &self.tuples {
            if !out.contains(&t.corpus) {
                out.push(t.corpus.clone());
            }
        }
        out
    }

    /// How the tuples' costs are measured: by their runs' modes. [`crate::load()`] refuses runs of
    /// different modes, so `Mixed` only arises from data built by hand.
    pub fn cost_basis(&self) -> CostBasis {
        let kind = |m: &Mode| match m {
            Mode::Offline => 0u8,
            Mode::Llm { .. } => 1,
            Mode::Imported { .. } => 2,
        };
        let kinds: std::collections::BTreeSet<u8> =
            self.tuples.iter().map(|t| kind(&t.mode)).collect();
        match kinds.into_iter().collect::<Vec<_>>()[..] {
            [] | [1] => CostBasis::LlmTokens,
            [0] => CostBasis::ContextTokens,
            [2] => {
                let units: std::collections::BTreeSet<&str> =
                    self.runs.iter().map(|r| r.cost_unit.as_str()).collect();
                CostBasis::Imported(match units.into_iter().collect::<Vec<_>>()[..] {
                    [u] => u.to_owned(),
                    _ => "cost".to_owned(),
                })
            }
            _ => CostBasis::Mixed,
        }
    }

    /// Paradigms present in the tuples, in `ParadigmId::ALL` order.
    pub fn paradigms(&self) -> Vec<ParadigmId> {
        ParadigmId::ALL
            .into_iter()
            .filter(|p| self.tuples.iter().any(|t| t.paradigm == *p))
            .collect()
    }

    /// Query types present in the tuples, in `QueryType::ALL` order.
    pub fn qtypes(&self) -> Vec<QueryType> {
        QueryType::ALL
            .into_iter()
            .filter(|q| self.tuples.iter().any(|t| t.qtype == *q))
            .collect()
    }
}

/// What the cost axis counts: `bench_core::cost_tokens`, the measure the routers' evaluation
/// uses too, so paradigms and routers share one axis. LLM runs count the stored LLM tokens
/// (construction, retrieval, generation); offline runs bill no LLM and count the context tokens
/// a generator would have been sent; imported runs count the import's declared unit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CostBasis {
    /// Every run called an LLM.
    LlmTokens,
    /// Every run was offline.
    ContextTokens,
    /// Every run was imported; the unit the import declared (`retrieval steps`, ...).
    Imported(String),
    /// Runs of different kinds (only from data built by hand: `load` refuses to pool modes).
    Mixed,
}

impl CostBasis {
    /// A tuple's cost, `bench_core::cost_tokens` (the same for every basis: the basis names it).
    pub fn of(&self, t: &Tuple) -> f64 {
        bench_core::cost_tokens(
            &t.mode,
            t.tokens.paradigm(),
            t.context_tokens,
            t.cost.unwrap_or(0.0),
        )
    }

    /// What "correct" means for the offline tuples (decisions.md, "Offline default"); `None`
    /// when every run called an LLM (then the LLM judge decided) or was imported (the import's
    /// own verdict).
    pub fn offline_correct(&self) -> Option<&'static str> {
        match self {
            CostBasis::LlmTokens | CostBasis::Imported(_) => None,
            CostBasis::ContextTokens | CostBasis::Mixed => Some(
                "Offline runs judge retrieval, not an answer: a tuple is correct when the context \
                 the paradigm delivered (within the budget) holds a gold answer or alias as whole \
                 SQuAD-normalised tokens (for yes/no golds: all gold evidence chunks); LLM-only, \
                 with no context, is no-answer.",
            ),
        }
    }

    /// The unit alone, for a column header.
    pub fn unit(&self) -> String {
        match self {
            CostBasis::LlmTokens => "LLM tokens".into(),
            CostBasis::ContextTokens => "context tokens".into(),
            CostBasis::Imported(unit) => unit.clone(),
            CostBasis::Mixed => "cost (mixed units)".into(),
        }
    }

    /// The cost axis's description, with its unit.
    pub fn axis(&self) -> String {
        match self {
            CostBasis::LlmTokens => "mean LLM tokens per query (cl100k)".into(),
            CostBasis::ContextTokens => {
                "mean context tokens per query (cl100k; offline, no LLM billed)".into()
            }
            CostBasis::Imported(unit) => format!("mean {unit} per query (imported)"),
            CostBasis::Mixed => {
                "mean cost per query in mixed units (LLM tokens, context tokens, imported units)"
                    .into()
            }
        }
    }
}
