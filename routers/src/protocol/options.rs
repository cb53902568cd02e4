//! The choices of the protocol, typed and checked before anything is read, and what its steps
//! share: the loader of the encoder, the protocol's error and the default label policy. A leaf:
//! it names neither `protocol` nor its steps.

use std::str::FromStr;
use std::sync::Arc;

use bench_core::{BenchError, Embedder, Mode, ParadigmId};
use metrics::labels::LabelPolicy;

use crate::eval::{Fallback, Split};
use crate::features::FeatureSet;

/// Inputs of the traditional ML routers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Inputs {
    /// Every feature of the chosen feature set.
    #[default]
    Harness,
    /// Appendix D.2: the query-type one-hot, plus the corpus indicators when the features have
    /// them.
    Paper,
}

impl Inputs {
    /// The command-line spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Inputs::Harness => "harness",
            Inputs::Paper => "paper",
        }
    }
}

impl FromStr for Inputs {
    type Err = BenchError;

    fn from_str(s: &str) -> Result<Self, BenchError> {
        match s.trim() {
            "harness" => Ok(Inputs::Harness),
            "paper" => Ok(Inputs::Paper),
            other => Err(BenchError::Invalid(format!(
                "--inputs {other:?}: expected harness or paper"
            ))),
        }
    }
}

/// What the Random baseline draws from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RandomBaseline {
    /// Uniform over the paradigms.
    #[default]
    Paradigms,
    /// Uniform over every class, cannot-answer included (the paper's).
    AllClasses,
}

impl RandomBaseline {
    /// The command-line spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            RandomBaseline::Paradigms => "paradigms",
            RandomBaseline::AllClasses => "all-classes",
        }
    }
}

impl FromStr for RandomBaseline {
    type Err = BenchError;

    fn from_str(s: &str) -> Result<Self, BenchError> {
        match s.trim() {
            "paradigms" => Ok(RandomBaseline::Paradigms),
            "all-classes" => Ok(RandomBaseline::AllClasses),
            other => Err(BenchError::Invalid(format!(
                "--random {other:?}: expected paradigms or all-classes"
            ))),
        }
    }
}

/// Every choice of the evaluation protocol, typed and checked before anything is read.
#[derive(Debug, Clone, PartialEq)]
pub struct Protocol {
    /// How the rows are split into folds.
    pub split: Split,
    /// The features the routers see; probe features (`p`) also bring the cascades.
    pub features: FeatureSet,
    /// `None`: the stored mode's default ([`default_policy`]).
    pub policy: Option<LabelPolicy>,
    /// The label space; `None`: every paradigm with tuples.
    pub classes: Option<Vec<ParadigmId>>,
    /// Inputs of the traditional ML routers.
    pub inputs: Inputs,
    /// What a cannot-answer prediction plays.
    pub fallback: Fallback,
    /// What the Random baseline draws from.
    pub random: RandomBaseline,
    /// Seeds the folds, every router and the significance tests.
    pub seed: u64,
    /// Only these corpora (empty: every corpus with results).
    pub corpora: Vec<String>,
    /// These run ids instead of each corpus's latest run.
    pub runs: Vec<i64>,
    /// Allow runs of different imported sources in one data set.
    pub pool_sources: bool,
    /// Evaluate the routers the data brings beside the named ones: the cascades (with probe
    /// features) and an import's published choices. Off when they were evaluated before and
    /// only new routers are wanted (the leaderboard's incremental evaluations).
    pub data_routers: bool,
}

impl Default for Protocol {
    fn default() -> Self {
        Protocol {
            split: Split::KFold(5),
            features: FeatureSet::QC,
            policy: None,
            classes: None,
            inputs: Inputs::Harness,
            fallback: Fallback::Utility,
            random: RandomBaseline::Paradigms,
            seed: 42,
            corpora: Vec::new(),
            runs: Vec::new(),
            pool_sources: false,
            data_routers: true,
        }
    }
}

/// At most this many distinct probe signals are read as features: each is a column (two with
/// its presence flag) that every router fits, so the evaluation's time grows steeply with
/// them. Real imports have tens (AdaRAGUE about 20).
pub const MAX_SIGNALS: usize = 1000;

/// Loads the question encoder once the tuples are read (so a bad selection is reported before
/// the weights are loaded).
pub type LoadEncoder<'a> = &'a (dyn Fn() -> Result<Arc<dyn Embedder>, BoxError> + Sync);

/// Any error of the caller's encoder loader, kept whole so its type survives.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Why the protocol could not produce an evaluation.
#[derive(Debug, thiserror::Error)]
pub enum ProtocolError {
    /// Bad input or a failure of the store or a router.
    #[error(transparent)]
    Bench(#[from] BenchError),
    /// The encoder could not be loaded.
    #[error("loading the sentence encoder")]
    Encoder(#[source] BoxError),
}

/// The label policy when `--policy` is not given, chosen for each mode: offline runs label the
/// cheapest paradigm (by context tokens) whose context delivered the answer; LLM runs use the
/// paper's policy. An imported run declares its own cost unit (`retrieval steps`, `cost`, ...),
/// which counts no tokens and so says nothing of which correct arm a reader would prefer: its
/// source's score (semantic F1's place) ranks the correct arms, the declared cost breaks ties,
/// which is the paper's policy. No run: the paper's policy.
pub fn default_policy(mode: Option<&Mode>) -> LabelPolicy {
    match mode {
        None => LabelPolicy::JudgeThenSemanticF1,
        Some(Mode::Offline) => LabelPolicy::CheapestCorrect,
        Some(Mode::Llm { .. }) => LabelPolicy::JudgeThenSemanticF1,
        Some(Mode::Imported { .. }) => LabelPolicy::JudgeThenSemanticF1,
    }
}
