//! The routing vocabulary: the data set a router learns from and the `Router` plug-in trait.
//!
//! A routing data set has one row per (query, corpus) pair: a feature vector laid out by the
//! data set's [`RoutingSchema`], the label class under a label policy, and what every paradigm
//! achieved on that query (for Oracle, cost-aware routers and the evaluation). Classes are the
//! paradigms present in the data in `ParadigmId::ALL` order, then `cannot-answer` last.
//! Routers see features and outcomes only, never a paradigm implementation.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::error::{BenchError, Result};
use crate::types::{ParadigmId, QueryType};

/// The name of the class that says no paradigm answers the query.
pub const CANNOT_ANSWER: &str = "cannot-answer";

/// One of the six corpus indicators routers read (paper Appendix D.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CorpusIndicator {
    /// The flat key of `ragrouter metrics`' stored JSON.
    pub key: &'static str,
    /// The routing feature's column name.
    pub name: &'static str,
    /// How tables and figures label it.
    pub label: &'static str,
    /// A structural (graph) indicator; else a semantic (embedding) one.
    pub structural: bool,
}

/// The six corpus indicators, in feature-column order: the one list that routers, reports and
/// the CLI read (the intrinsic dimension is the paper's form 1/mean(ln mu)).
pub const CORPUS_INDICATORS: [CorpusIndicator; 6] = [
    CorpusIndicator {
        key: "graph.lcc_ratio",
        name: "lcc_ratio",
        label: "LCC ratio",
        structural: true,
    },
    CorpusIndicator {
        key: "graph.density",
        name: "density",
        label: "density",
        structural: true,
    },
    CorpusIndicator {
        key: "graph.average_clustering",
        name: "clustering",
        label: "clustering",
        structural: true,
    },
    CorpusIndicator {
        key: "embeddings.twonn_mle",
        name: "intrinsic_dim",
        label: "intrinsic dimension (TwoNN)",
        structural: false,
    },
    CorpusIndicator {
        key: "embeddings.hubness_skew_k10",
        name: "hubness",
        label: "hubness (skew N10)",
        structural: false,
    },
    CorpusIndicator {
        key: "embeddings.dispersion_mean",
        name: "mean_dispersion",
        label: "mean dispersion",
        structural: false,
    },
];

/// What a block of feature columns holds: routers that treat inputs differently (the neural
/// routers project text and bin indicators, paper Appendix D.2) find their columns by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FeatureKind {
    /// One-hot query type (`QueryType::ALL` order).
    QueryType,
    /// The query text's sentence embedding (the local encoder, L2-normalised).
    QueryEmbedding,
    /// EA-GraphRAG's syntactic complexity features (`metrics::query::QueryFeatures::to_vec`).
    QuerySyntax,
    /// The six corpus indicators: LCC ratio, density, clustering, intrinsic dimension, hubness,
    /// mean dispersion (Appendix D.2).
    CorpusIndicators,
    /// One-hot of the row's corpus among the training corpora (built inside routers that use
    /// the corpus's identity, never stored in a data set).
    CorpusId,
    /// Per-question probe signals (the `signals` table): per signal a value column (0 when
    /// missing) and a `:present` column (1 or 0), so a missing signal is explicit.
    ProbeSignals,
    /// The question's TF-IDF terms (built inside a router from its training rows' questions,
    /// never stored in a data set).
    QueryTerms,
}

impl FeatureKind {
    /// Whether the block describes the query itself (Q): type, vector, syntax.
    pub fn is_query(self) -> bool {
        matches!(
            self,
            FeatureKind::QueryType
                | FeatureKind::QueryEmbedding
                | FeatureKind::QuerySyntax
                | FeatureKind::QueryTerms
        )
    }
}

/// A contiguous run of feature columns of one kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeatureBlock {
    /// What the columns hold.
    pub kind: FeatureKind,
    /// The first column's index.
    pub start: usize,
    /// Number of columns.
    pub len: usize,
}

impl FeatureBlock {
    /// The block's column indices.
    pub fn range(&self) -> std::ops::Range<usize> {
        self.start..self.start + self.len
    }
}

/// The layout shared by every row of a routing data set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoutingSchema {
    /// Class names: paradigm ids in `ParadigmId::ALL` order, then [`CANNOT_ANSWER`].
    pub classes: Vec<String>,
    /// One name per feature column.
    pub feature_names: Vec<String>,
    /// The column blocks, in column order, covering every column exactly once.
    pub blocks: Vec<FeatureBlock>,
}

impl RoutingSchema {
    /// A schema whose classes are `paradigms` (reordered to `ParadigmId::ALL`) plus
    /// `cannot-answer`, and whose columns are `blocks` given as (kind, column names).
    pub fn new(paradigms: &[ParadigmId], blocks: Vec<(FeatureKind, Vec<String>)>) -> Self {
        let mut classes: Vec<String> = ParadigmId::ALL
            .iter()
            .filter(|p| paradigms.contains(p))
            .map(|p| p.as_str().to_string())
            .collect();
        classes.push(CANNOT_ANSWER.to_string());
        let mut feature_names = Vec::new();
        let mut out = Vec::new();
        for (kind, names) in blocks {
            out.push(FeatureBlock {
                kind,
                start: feature_names.len(),
                len: names.len(),
            });
            feature_names.extend(names);
        }
        RoutingSchema {
            classes,
            feature_names,
            blocks: out,
        }
    }

    /// Number of classes (the paradigms present plus `cannot-answer`).
    pub fn n_classes(&self) -> usize {
        self.classes.len()
    }

    /// Number of feature columns.
    pub fn n_features(&self) -> usize {
        self.feature_names.len()
    }

    /// Index of the `cannot-answer` class (always the last).
    pub fn cannot_answer(&self) -> usize {
        self.classes.len() - 1
    }

    /// The class index of a paradigm, if the data set has it.
    pub fn class_of(&self, p: ParadigmId) -> Option<usize> {
        self.classes.iter().position(|c| c == p.as_str())
    }

    /// The paradigm a class stands for (`None` for `cannot-answer`).
    pub fn paradigm_of(&self, class: usize) -> Option<ParadigmId> {
        self.classes.get(class).and_then(|c| c.parse().ok())
    }

    /// The block of a kind, if the schema has one.
    pub fn block(&self, kind: FeatureKind) -> Option<&FeatureBlock> {
        self.blocks.iter().find(|b| b.kind == kind)
    }

    /// A copy keeping only the blocks `keep` accepts (columns renumbered), with the map from
    /// new column to old column, for projecting rows to a feature set (Q, C, Q+C).
    pub fn select(&self, keep: impl Fn(FeatureKind) -> bool) -> (RoutingSchema, Vec<usize>) {
        let mut names = Vec::new();
        let mut blocks = Vec::new();
        let mut map = Vec::new();
        for b in self.blocks.iter().filter(|b| keep(b.kind)) {
            blocks.push(FeatureBlock {
                kind: b.kind,
                start: names.len(),
                len: b.len,
            });
            for c in b.range() {
                names.push(self.feature_names[c].clone());
                map.push(c);
            }
        }
        (
            RoutingSchema {
                classes: self.classes.clone(),
                feature_names: names,
                blocks,
            },
            map,
        )
    }
}

/// What one paradigm achieved on one query, as routers and their evaluation need it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ClassOutcome {
    /// Judged `Correct`.
    pub correct: bool,
    /// Semantic F1 (0 when not computed).
    pub semantic_f1: f64,
    /// All tokens the paradigm spent on the query (construction share, retrieval, generation).
    pub tokens: f64,
}

/// One (query, corpus) pair of the routing data set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoutingRow {
    /// The question's id in its corpus.
    pub query_id: String,
    /// The corpus's name.
    pub corpus: String,
    /// The question, for routers that read text (NER, rule planners, the LLM router).
    pub text: String,
    /// The question's type.
    pub qtype: QueryType,
    /// One value per schema column.
    pub features: Vec<f64>,
    /// The label class under the data set's policy.
    pub label: usize,
    /// Per paradigm class (same order as the schema's classes, `cannot-answer` excluded): the
    /// outcome, `None` when that paradigm has no tuple for the query.
    pub outcomes: Vec<Option<ClassOutcome>>,
}

/// A routing data set: a schema and rows that follow it.
#[derive(Debug, Clone, PartialEq)]
pub struct RoutingSet {
    /// The layout of every row, shared by the subsets and projections made from the set.
    pub schema: Arc<RoutingSchema>,
    /// The (query, corpus) rows.
    pub rows: Vec<RoutingRow>,
}

impl RoutingSet {
    /// Checks that every row matches the schema (feature count, label range, outcome count).
    pub fn validate(&self) -> Result<()> {
        let nf = self.schema.n_features();
        let k = self.schema.n_classes();
        for (i, r) in self.rows.iter().enumerate() {
            let what = |m: String| {
                BenchError::Invalid(format!(
                    "routing row {i} (query {} of {}): {m}",
                    r.query_id, r.corpus
                ))
            };
            if r.features.len() != nf {
                return Err(what(format!(
                    "{} features, the schema has {nf}",
                    r.features.len()
                )));
            }
            if r.label >= k {
                return Err(what(format!("label {} outside 0..{k}", r.label)));
            }
            if r.outcomes.len() != k - 1 {
                return Err(what(format!(
                    "{} outcomes, expected one per paradigm class ({})",
                    r.outcomes.len(),
                    k - 1
                )));
            }
            if r.features.iter().any(|v| !v.is_finite()) {
                return Err(what("a feature is not finite".into()));
            }
        }
        Ok(())
    }

    /// The rows at `idx`, sharing the schema.
    pub fn subset(&self, idx: &[usize]) -> RoutingSet {
        RoutingSet {
            schema: Arc::clone(&self.schema),
            rows: idx.iter().map(|&i| self.rows[i].clone()).collect(),
        }
    }

    /// The data set projected onto the blocks `keep` accepts (a feature configuration).
    pub fn project(&self, keep: impl Fn(FeatureKind) -> bool) -> RoutingSet {
        let (schema, map) = self.schema.select(keep);
        RoutingSet {
            schema: Arc::new(schema),
            rows: self
                .rows
                .iter()
                .map(|r| RoutingRow {
                    features: map.iter().map(|&c| r.features[c]).collect(),
                    ..r.clone()
                })
                .collect(),
        }
    }

    /// Every row's label class, in row order.
    pub fn labels(&self) -> Vec<usize> {
        self.rows.iter().map(|r| r.label).collect()
    }
}

/// Tokens and time a router itself spent deciding one row (the LLM router's call, R2Adapter's
/// rewriter); charged to the router in the evaluation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct RoutingCost {
    /// LLM tokens the router sent.
    pub tokens_in: u64,
    /// LLM tokens the router received.
    pub tokens_out: u64,
}

/// A router: fitted on training rows, it scores every class of a row; the highest score is its
/// choice. Implementations get a fresh instance per fold from the registry, so `fit` may
/// assume it is called once. Routers run on a blocking thread: one that calls an LLM may block
/// on a runtime handle it holds.
pub trait Router: Send + fmt::Debug {
    /// A stable name, as the registry and the stored evaluations know it.
    fn name(&self) -> &str;

    /// Learns from the training rows (validated, same schema as the rows scored later).
    fn fit(&mut self, train: &RoutingSet) -> Result<()>;

    /// One score per class of the schema (higher is better); need not be normalised.
    fn scores(&self, schema: &RoutingSchema, row: &RoutingRow) -> Result<Vec<f64>>;

    /// Scores of many rows; override when batching is cheaper.
    fn scores_batch(&self, schema: &RoutingSchema, rows: &[RoutingRow]) -> Result<Vec<Vec<f64>>> {
        rows.iter().map(|r| self.scores(schema, r)).collect()
    }

    /// The chosen class: the highest score, the lowest class index on ties; NaN never wins.
    fn predict(&self, schema: &RoutingSchema, row: &RoutingRow) -> Result<usize> {
        Ok(argmax(&self.scores(schema, row)?))
    }

    /// What deciding `row` cost in LLM tokens (zero for routers that call no model).
    fn cost(&self, _row: &RoutingRow) -> RoutingCost {
        RoutingCost::default()
    }
}

/// `row`'s scores through `router`'s `scores_batch`: the `scores` of a router whose batch is the
/// real implementation (a default method could not be, as the batch's default calls `scores`).
pub fn scores_via_batch<R: Router + ?Sized>(
    router: &R,
    schema: &RoutingSchema,
    row: &RoutingRow,
) -> Result<Vec<f64>> {
    let mut v = router.scores_batch(schema, std::slice::from_ref(row))?;
    Ok(v.pop().unwrap_or_default())
}

/// Index of the highest value, the first on ties; NaN never wins; 0 for an empty slice.
pub fn argmax(v: &[f64]) -> usize {
    let mut best = 0;
    let mut best_v = f64::NEG_INFINITY;
    for (i, &x) in v.iter().enumerate() {
        if x > best_v {
            best = i;
            best_v = x;
        }
    }
    best
}

/// The nine routing measures of one router on a group of test questions: one fold's corpus (or
/// `*` pooled) in a [`RouteEvalRow`], or their mean or spread over folds in a summary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Measures {
    /// Share of questions whose chosen class is the label (routing accuracy).
    pub accuracy: f64,
    /// Macro-averaged F1 of the chosen classes against the labels.
    pub macro_f1: f64,
    /// Mean reciprocal rank of the label in the router's scores.
    pub mrr: f64,
    /// Share of questions the played paradigm answered correctly.
    pub correct_rate: f64,
    /// Mean total tokens of the chosen paradigm per query, plus the router's own cost.
    pub mean_tokens: f64,
    /// Oracle correct rate minus this router's.
    pub regret_correct: f64,
    /// This router's mean tokens minus Oracle's.
    pub regret_tokens: f64,
    /// Mean wall time to route one query, in milliseconds (fit excluded).
    pub latency_ms: f64,
    /// Mean wall time of `fit` for a fold, in milliseconds.
    pub fit_ms: f64,
}

impl Measures {
    /// The nine values in field order.
    pub fn to_array(self) -> [f64; 9] {
        [
            self.accuracy,
            self.macro_f1,
            self.mrr,
            self.correct_rate,
            self.mean_tokens,
            self.regret_correct,
            self.regret_tokens,
            self.latency_ms,
            self.fit_ms,
        ]
    }

    /// The measures from nine values in field order.
    pub fn from_array(v: [f64; 9]) -> Measures {
        Measures {
            accuracy: v[0],
            macro_f1: v[1],
            mrr: v[2],
            correct_rate: v[3],
            mean_tokens: v[4],
            regret_correct: v[5],
            regret_tokens: v[6],
            latency_ms: v[7],
            fit_ms: v[8],
        }
    }
}

/// One router's measurements on one corpus (or `*` pooled) in one fold of an evaluation. Its
/// JSON is flat: the measures' keys follow `n`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouteEvalRow {
    /// The router's registry name.
    pub router: String,
    /// The router's trade-off parameter (λ of a cost-aware router), when it has one.
    pub param: Option<f64>,
    /// A corpus name, or `*` for all test rows of the fold together.
    pub corpus: String,
    /// The fold's index.
    pub fold: u32,
    /// Test questions measured.
    pub n: u32,
    /// The nine measures on those questions.
    #[serde(flatten)]
    pub measures: Measures,
}

/// What one router chose for one test question of one fold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoutePrediction {
    /// The router's registry name.
    pub router: String,
    /// The router's trade-off parameter (λ), when it has one.
    pub param: Option<f64>,
    /// The fold's index.
    pub fold: u32,
    /// The question's corpus.
    pub corpus: String,
    /// The question's id in its corpus.
    pub query_id: String,
    /// The class the router ranked first (a paradigm id or `cannot-answer`).
    pub chosen: String,
    /// The paradigm played: `chosen`, or the fallback's for `cannot-answer`; `None` when no
    /// paradigm could be played.
    pub played: Option<String>,
    /// Whether the played paradigm was judged correct on the question.
    pub correct: bool,
    /// The played paradigm's cost plus the router's own (the probe's included).
    pub cost: f64,
    /// The share of `cost` that paid for the probe whose signals the router read (0 without).
    #[serde(default)]
    pub probe_cost: f64,
    /// Every paradigm paid for on the question, in the order they ran (a probe's arms, a
    /// cascade's stages, then the one played if not among them), each once; `played` is the
    /// one delivered. Empty in predictions stored before the list was kept.
    #[serde(default)]
    pub arms_played: Vec<String>,
    /// The router's score per class, in schema class order.
    pub scores: Vec<f64>,
}

/// A paired comparison of one router against a baseline on the same test questions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouteEvalTest {
    /// The router's registry name.
    pub router: String,
    /// The router's trade-off parameter (λ), when it has one.
    pub param: Option<f64>,
    /// The router it is compared against.
    pub baseline: String,
    /// Paired questions.
    pub n: u32,
    /// Router correct rate minus the baseline's, as a fraction.
    pub diff: f64,
    /// Percentile interval of `diff` over paired bootstrap resamples.
    pub ci_low: f64,
    /// Upper end of that interval.
    pub ci_high: f64,
    /// Questions the router got right and the baseline wrong.
    pub wins: u32,
    /// Questions the baseline got right and the router wrong.
    pub losses: u32,
    /// Exact (binomial) two-sided McNemar p-value.
    pub p_mcnemar: f64,
    /// Bootstrap resamples behind the interval.
    pub resamples: u32,
}

/// The settings of one `route eval` invocation, stored with its rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouteEvalSpec {
    /// `kfold`, `loco` (leave one corpus out) or `given` (the data set's own train/test split).
    pub split: String,
    /// Number of folds.
    pub folds: u32,
    /// Seed of the fold assignment; each fold's routers get one derived from it.
    pub seed: u64,
    /// `q`, `c` or `q+c`.
    pub features: String,
    /// The label policy that chose each row's class.
    pub policy: String,
    /// `offline` or `llm` (from the runs the tuples come from).
    pub mode: String,
    /// The runs whose tuples made the data set: corpus name → run id.
    pub runs: Vec<(String, i64)>,
    /// Anything else that shaped the evaluation (router settings, encoder), as JSON.
    pub config: serde_json::Value,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> RoutingSchema {
        RoutingSchema::new(
            &[ParadigmId::Naive, ParadigmId::LlmOnly],
            vec![
                (FeatureKind::QueryType, vec!["t0".into(), "t1".into()]),
                (FeatureKind::CorpusIndicators, vec!["lcc".into()]),
            ],
        )
    }

    #[test]
    fn classes_follow_paradigm_order_then_cannot_answer() {
        let s = schema();
        assert_eq!(s.classes, vec!["llm-only", "naive", "cannot-answer"]);
        assert_eq!(s.class_of(ParadigmId::Naive), Some(1));
        assert_eq!(s.paradigm_of(2), None);
        assert_eq!(s.cannot_answer(), 2);
        assert_eq!(
            s.block(FeatureKind::CorpusIndicators).unwrap().range(),
            2..3
        );
    }

    #[test]
    fn projection_keeps_selected_columns_in_order() {
        let set = RoutingSet {
            schema: Arc::new(schema()),
            rows: vec![RoutingRow {
                query_id: "q".into(),
                corpus: "c".into(),
                text: "t".into(),
                qtype: QueryType::Factual,
                features: vec![1.0, 0.0, 0.5],
                label: 0,
                outcomes: vec![None, None],
            }],
        };
        set.validate().unwrap();
        let c = set.project(|k| !k.is_query());
        assert_eq!(c.schema.feature_names, vec!["lcc"]);
        assert_eq!(c.rows[0].features, vec![0.5]);
        assert_eq!(c.schema.blocks[0].start, 0);
        let mut bad = set.clone();
        bad.rows[0].label = 3;
        assert!(bad.validate().is_err());
    }

    #[test]
    fn argmax_prefers_first_and_skips_nan() {
        assert_eq!(argmax(&[1.0, 3.0, 3.0]), 1);
        assert_eq!(argmax(&[f64::NAN, 0.5]), 1);
        assert_eq!(argmax(&[]), 0);
    }

    #[test]
    fn route_eval_row_json_stays_flat_in_the_old_key_order() {
        let row = RouteEvalRow {
            router: "knn".into(),
            param: Some(0.5),
            corpus: "*".into(),
            fold: 2,
            n: 40,
            measures: Measures::from_array([0.5, 0.25, 0.75, 0.625, 812.5, 0.125, 3.5, 1.5, 20.0]),
        };
        // The key order and layout RouteEvalRow had when it declared the nine fields itself.
        let golden = concat!(
            r#"{"router":"knn","param":0.5,"corpus":"*","fold":2,"n":40,"accuracy":0.5,"#,
            r#""macro_f1":0.25,"mrr":0.75,"correct_rate":0.625,"mean_tokens":812.5,"#,
            r#""regret_correct":0.125,"regret_tokens":3.5,"latency_ms":1.5,"fit_ms":20.0}"#
        );
        assert_eq!(serde_json::to_string(&row).unwrap(), golden);
        assert_eq!(serde_json::from_str::<RouteEvalRow>(golden).unwrap(), row);
        let no_param = golden.replace(r#""param":0.5,"#, "");
        let back: RouteEvalRow = serde_json::from_str(&no_param).unwrap();
        assert_eq!(back.param, None);
        assert_eq!(back.measures.to_array(), row.measures.to_array());
    }
}
