//! The data set's parts that loading and building share: a stored tuple and run as read, the
//! build options, the built set, the feature blocks and the kept question vectors. A leaf: it
//! names neither `dataset` nor `build`.

use std::collections::BTreeMap;

use bench_core::{
    Embedder, FeatureKind, JudgeLabel, ParadigmId, PublishedChoice, QueryType, Result, RoutingSet,
    Signal, SplitTag,
};

use crate::features::INDICATOR_NAMES;
use crate::probe_columns::ProbeBill;
use store::RunRef;

/// One stored tuple, as the data set reads it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Tuple {
    /// The question's id within its corpus.
    pub query_id: String,
    /// The paradigm that answered.
    pub paradigm: ParadigmId,
    /// The judge's label; `None` for a failed tuple.
    pub judge: Option<JudgeLabel>,
    /// The imported score where one exists, else the semantic F1: what the paper's label
    /// policy ranks correct paradigms by.
    pub semantic_f1: Option<f64>,
    /// `cost_tokens` of a benched tuple, the imported cost of an imported one.
    pub tokens: f64,
    /// Why the tuple failed, when it did (it then counts as not correct).
    pub error: Option<String>,
}

/// What the store holds for one run: its questions, tuples and corpus indicators.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawCorpus {
    /// The run read.
    pub run: RunRef,
    /// (query id, text, type), in stored order, only queries with at least one tuple.
    pub queries: Vec<(String, String, QueryType)>,
    /// Its tuples.
    pub tuples: Vec<Tuple>,
    /// In [`INDICATOR_NAMES`] order, or why there are none (only needed for corpus features).
    pub indicators: std::result::Result<[f64; 6], String>,
    /// The run's probe signals, `(query id, signal)`.
    pub signals: Vec<(String, Signal)>,
    /// Published routers' choices of an import, `(query id, choice)`.
    pub published: Vec<(String, PublishedChoice)>,
}

/// The built data set and where it came from.
#[derive(Debug, Clone)]
pub struct RoutingData {
    /// The rows with their features, outcomes and labels.
    pub set: RoutingSet,
    /// Corpus name → run id, in corpus order.
    pub runs: Vec<(String, i64)>,
    /// The runs' common mode (`offline` or the LLM's identity).
    pub mode: String,
    /// The sentence encoder's identity.
    pub encoder: String,
    /// Tuples recorded as failed (counted as not correct).
    pub failed_tuples: usize,
    /// What the outcomes' `tokens` count (`context tokens`, `LLM tokens`, `retrieval steps`, ...).
    pub cost_unit: String,
    /// Per row, the split tag of the run it came from.
    pub splits: Vec<Option<SplitTag>>,
    /// Per row, what reading the probe costs (empty without probe features).
    pub bills: Vec<ProbeBill>,
    /// Per published router (name order), its choice on each row (`None`: none for that row).
    pub published: Vec<(String, Vec<Option<PublishedChoice>>)>,
    /// Per signal name, the paradigms whose answers it needs (what a cascade must run first).
    pub signal_paradigms: BTreeMap<String, Vec<ParadigmId>>,
}

/// What `build_set` builds besides the rows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BuildOptions {
    /// Include the six corpus indicators (every corpus then needs stored corpus metrics).
    pub corpus_features: bool,
    /// Restrict the label space to these paradigms (`None`: every paradigm with tuples).
    pub classes: Option<Vec<ParadigmId>>,
    /// Include the probe signals (the runs then need stored signals).
    pub probe_features: bool,
}

/// The feature blocks of every routing set, named column by column: query type (one-hot), the
/// question's vector (`embedding_dim` wide), its syntax features, the corpus indicators.
pub(crate) fn feature_blocks(embedding_dim: usize) -> Vec<(FeatureKind, Vec<String>)> {
    vec![
        (
            FeatureKind::QueryType,
            QueryType::ALL
                .iter()
                .map(|t| format!("qtype={}", t.as_str()))
                .collect(),
        ),
        (
            FeatureKind::QueryEmbedding,
            (0..embedding_dim).map(|d| format!("emb{d}")).collect(),
        ),
        (
            FeatureKind::QuerySyntax,
            metrics::query::query_features("")
                .to_vec()
                .into_iter()
                .map(|(n, _)| n.to_string())
                .collect(),
        ),
        (
            FeatureKind::CorpusIndicators,
            INDICATOR_NAMES.iter().map(|s| s.to_string()).collect(),
        ),
    ]
}

/// Question vectors embedded before, kept by the caller (the CLI's content-addressed vector
/// cache): routers read them through this instead of depending on the crate that stores them.
pub trait QuestionVectors: Sync {
    /// The vectors of `texts` under `key`, embedding (and keeping) them when not kept yet.
    fn get_or_embed(
        &self,
        key: &str,
        texts: &[&str],
        embedder: &dyn Embedder,
    ) -> Result<bench_core::Embeddings>;
}
