//! Plain data the report is made from: tuples, runs, corpora, router evaluations, corpus metrics.
//!
//! `load` fills these from the store; tests build them by hand. Nothing here touches SQL.

use std::collections::BTreeMap;

use bench_core::{ParadigmId, QueryType, RouteEvalRow, RouteEvalSpec};
use serde::Serialize;

/// Tokens of one tuple by phase, as stored; `amortised_*` is the tuple's share of the corpus's
/// graph build (graph-using paradigms only, fractional), shown in Table 16 but not in `cost`
/// (the routers' cost measure leaves it out too, and both share Figure 7's axis).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Tokens {
    pub construction_in: f64,
    pub construction_out: f64,
    pub amortised_in: f64,
    pub amortised_out: f64,
    pub retrieval_in: f64,
    pub retrieval_out: f64,
    pub generation_in: f64,
    pub generation_out: f64,
    /// The judge's tokens: a cost of the benchmark, not of the paradigm (never in `cost`).
    pub judge_in: f64,
    pub judge_out: f64,
}

impl Tokens {
    /// The LLM tokens stored for the query: construction, retrieval and generation.
    pub fn cost(&self) -> f64 {
        self.construction_in
            + self.construction_out
            + self.retrieval_in
            + self.retrieval_out
            + self.generation_in
            + self.generation_out
    }
}

/// One stored (query, corpus, paradigm) tuple with its question.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tuple {
    pub run_id: i64,
    pub corpus: String,
    pub query_id: String,
    /// The question text (from the data: escape before showing).
    pub query: String,
    pub qtype: QueryType,
    pub paradigm: ParadigmId,
    pub answer: String,
    /// The judge label (`correct`, `incomplete`, ...), `None` when the tuple failed.
    pub judge: Option<String>,
    pub em: f64,
    pub f1: f64,
    pub semantic_f1: Option<f64>,
    pub evidence_recall: Option<f64>,
    pub tokens: Tokens,
    pub context_tokens: f64,
    pub latency_ms: f64,
    pub mode: String,
    pub error: Option<String>,
}

impl Tuple {
    /// Judged correct. A failed tuple counts as not correct: the question was not answered.
    pub fn correct(&self) -> bool {
        self.judge.as_deref() == Some(bench_core::JudgeLabel::Correct.as_str())
    }
}

/// A benchmark run as stored, for provenance.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunInfo {
    pub id: i64,
    pub corpus: String,
    pub corpus_hash: String,
    pub config_json: String,
    pub config_hash: String,
    pub seed: i64,
    pub crate_version: String,
    pub mode: String,
    pub reader: String,
    pub judge: String,
    pub embedder: String,
    pub extractor: String,
    pub started_at: String,
    pub finished_at: Option<String>,
    /// Graph construction tokens (in, out) of the build this run's extractor made, if any.
    pub construction: Option<(f64, f64)>,
}

/// A corpus as stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CorpusInfo {
    pub name: String,
    pub content_hash: String,
    pub source: String,
    pub documents: i64,
    pub chunks: i64,
    pub queries: i64,
}

/// The stored corpus metrics of one corpus (flat keys such as `graph.lcc_ratio`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CorpusMetrics {
    pub corpus: String,
    pub configuration: String,
    pub values: BTreeMap<String, f64>,
}

/// One stored router evaluation with its rows.
#[derive(Debug, Clone, PartialEq)]
pub struct RouteEval {
    pub id: i64,
    pub spec: RouteEvalSpec,
    pub rows: Vec<RouteEvalRow>,
    /// Paired tests of each (router, λ) against best-single (empty for older evaluations).
    pub tests: Vec<bench_core::RouteEvalTest>,
}

/// Everything a report shows.
#[derive(Debug, Clone, Default)]
pub struct ReportData {
    /// The runs, in corpus order (one per corpus by default).
    pub runs: Vec<RunInfo>,
    pub corpora: Vec<CorpusInfo>,
    /// The runs' tuples, in run then question order.
    pub tuples: Vec<Tuple>,
    /// Router evaluations, oldest first; empty when none were stored or selected.
    pub evals: Vec<RouteEval>,
    pub metrics: Vec<CorpusMetrics>,
    /// The runs' probe signals, in run then question then name order.
    pub signals: Vec<SignalRow>,
    /// The database the data came from, for the record.
    pub source: String,
}

/// One probe signal of one question of a run, for the exports.
#[derive(Debug, Clone, PartialEq)]
pub struct SignalRow {
    pub run_id: i64,
    pub corpus: String,
    pub query_id: String,
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

    /// How the tuples' costs are measured: by their runs' modes.
    pub fn cost_basis(&self) -> CostBasis {
        let offline = self.tuples.iter().filter(|t| t.mode == "offline").count();
        if offline == 0 {
            CostBasis::LlmTokens
        } else if offline == self.tuples.len() {
            CostBasis::ContextTokens
        } else {
            CostBasis::Mixed
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
/// a generator would have been sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CostBasis {
    /// Every run called an LLM.
    LlmTokens,
    /// Every run was offline.
    ContextTokens,
    /// Some of each: each tuple by its own run's measure.
    Mixed,
}

impl CostBasis {
    /// A tuple's cost (the same for every basis: the basis only names it).
    pub fn of(self, t: &Tuple) -> f64 {
        bench_core::cost_tokens(
            &t.mode,
            t.tokens.cost().round() as u64,
            t.context_tokens as u64,
        ) as f64
    }

    /// What "correct" means for the offline tuples (decisions.md, "Offline default"); `None`
    /// when every run called an LLM (then the LLM judge decided).
    pub fn offline_correct(self) -> Option<&'static str> {
        match self {
            CostBasis::LlmTokens => None,
            CostBasis::ContextTokens | CostBasis::Mixed => Some(
                "Offline runs judge retrieval, not an answer: a tuple is correct when the context \
                 the paradigm delivered (within the budget) holds a gold answer or alias as whole \
                 SQuAD-normalised tokens (for yes/no golds: all gold evidence chunks); LLM-only, \
                 with no context, is no-answer.",
            ),
        }
    }

    /// The cost axis's description, with its unit.
    pub fn axis(self) -> &'static str {
        match self {
            CostBasis::LlmTokens => "mean LLM tokens per query (cl100k)",
            CostBasis::ContextTokens => {
                "mean context tokens per query (cl100k; offline, no LLM billed)"
            }
            CostBasis::Mixed => {
                "mean tokens per query (LLM tokens; context tokens for offline runs)"
            }
        }
    }
}
