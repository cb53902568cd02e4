//! The result tuple: what one (query, corpus, paradigm) run produced and cost.

use serde::{Deserialize, Serialize};
use std::fmt;

use crate::types::ParadigmId;

/// Tokens in and out of LLM calls, per phase (decisions.md "Costs").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhaseTokens {
    /// The tuple's share of the knowledge graph's construction, sent (graph paradigms only).
    pub construction_in: u64,
    /// The tuple's share of the construction, received.
    pub construction_out: u64,
    /// Sent while retrieving (entity extraction, sub-questions, self-evaluation).
    pub retrieval_in: u64,
    /// Received while retrieving.
    pub retrieval_out: u64,
    /// Sent to the reader for the answer.
    pub generation_in: u64,
    /// Received from the reader.
    pub generation_out: u64,
}

impl PhaseTokens {
    /// All six counts together.
    pub fn total(&self) -> u64 {
        self.construction_in
            + self.construction_out
            + self.retrieval_in
            + self.retrieval_out
            + self.generation_in
            + self.generation_out
    }

    /// Adds `other`'s counts, phase by phase.
    pub fn add(&mut self, other: &PhaseTokens) {
        self.construction_in += other.construction_in;
        self.construction_out += other.construction_out;
        self.retrieval_in += other.retrieval_in;
        self.retrieval_out += other.retrieval_out;
        self.generation_in += other.generation_in;
        self.generation_out += other.generation_out;
    }
}

/// Where token counts came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum TokenSource {
    /// Counted locally with cl100k_base over what was sent and received.
    #[default]
    Cl100k,
    /// The endpoint's `usage` field.
    Usage,
    /// Some calls reported usage and others were counted.
    Mixed,
}

impl TokenSource {
    /// The stored name: `cl100k`, `usage` or `mixed`.
    pub fn as_str(self) -> &'static str {
        match self {
            TokenSource::Cl100k => "cl100k",
            TokenSource::Usage => "usage",
            TokenSource::Mixed => "mixed",
        }
    }

    /// The source of a total made of `self` and `other`.
    pub fn merge(self, other: TokenSource) -> TokenSource {
        if self == other {
            self
        } else {
            TokenSource::Mixed
        }
    }
}

/// Wall-clock latency per phase, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseLatency {
    /// Retrieving the context (LLM calls while retrieving included).
    pub retrieval_ms: f64,
    /// Producing the answer from the context.
    pub generation_ms: f64,
    /// Judging the answer (the benchmark's overhead, not the paradigm's).
    pub judge_ms: f64,
}

impl PhaseLatency {
    /// Retrieval plus generation: what the paradigm itself cost (judging is the benchmark's overhead).
    pub fn paradigm_ms(&self) -> f64 {
        self.retrieval_ms + self.generation_ms
    }
}

/// The judge's verdict (paper §3.4; decisions.md for the offline judge).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum JudgeLabel {
    /// The response answers the question (offline: the delivered context holds the answer).
    Correct,
    /// Part of the answer (offline: some, not all, of the gold evidence is in the context).
    Incomplete,
    /// The response does not answer the question (offline: the context holds none of it).
    Incorrect,
    /// The response was empty (the offline LLM-only baseline always answers nothing).
    NoAnswer,
}

impl JudgeLabel {
    /// The stored name: `correct`, `incomplete`, `incorrect` or `no-answer`.
    pub fn as_str(self) -> &'static str {
        match self {
            JudgeLabel::Correct => "correct",
            JudgeLabel::Incomplete => "incomplete",
            JudgeLabel::Incorrect => "incorrect",
            JudgeLabel::NoAnswer => "no-answer",
        }
    }

    /// The label of a stored name ([`as_str`](JudgeLabel::as_str)); `None` for any other text.
    pub fn parse(s: &str) -> Option<JudgeLabel> {
        [
            JudgeLabel::Correct,
            JudgeLabel::Incomplete,
            JudgeLabel::Incorrect,
            JudgeLabel::NoAnswer,
        ]
        .into_iter()
        .find(|l| l.as_str() == s)
    }
}

impl fmt::Display for JudgeLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Answer-quality values of one result.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct QualityMetrics {
    /// Exact match after SQuAD normalisation, best over the gold answer and its aliases.
    pub em: f64,
    /// SQuAD token F1, best over the gold answer and its aliases.
    pub f1: f64,
    /// Share of the best gold answer's tokens found in the response (the sentence judge's evidence).
    pub answer_recall: f64,
    /// Offline only: the sentence judge's verdict on the reader's answer ("reader correct":
    /// some gold answer or alias has answer recall >= the configured threshold). The offline
    /// judge label itself is "answer delivered" (decisions.md); `None` in LLM mode.
    #[serde(default)]
    pub reader_correct: Option<bool>,
    /// Share of the gold chunks inside the context; `None` when the query has no gold chunks.
    pub evidence_recall: Option<f64>,
    /// Share of the gold documents with at least one chunk inside the context; `None` when the
    /// evidence names no whole document. A long gold document (a book) caps chunk-level recall
    /// far below 1 even when the right document is in the context; this does not.
    #[serde(default)]
    pub document_recall: Option<f64>,
    /// BERTScore-style F1 over contextual token embeddings of the run's encoder (paper eq. 10-12;
    /// the paper used deberta-xlarge-mnli); `None` when not computed.
    #[serde(default)]
    pub semantic_f1: Option<f64>,
    /// Soft coverage of the gold answer's sentences by the response's (eq. 13).
    #[serde(default)]
    pub coverage: Option<f64>,
    /// Faithfulness of the response's sentences to the context's (eq. 14-15, tau 0.7): computed,
    /// as in the paper, for NaiveRAG and GraphRAG in LLM mode only (an offline answer is a
    /// context sentence, faithful by construction).
    #[serde(default)]
    pub faithfulness_hard: Option<f64>,
    /// Soft faithfulness (eq. 15): the mean over the response's sentences of their best cosine
    /// to a context sentence (the hard form counts those at or above tau); computed where
    /// `faithfulness_hard` is.
    #[serde(default)]
    pub faithfulness_soft: Option<f64>,
}

/// How a run's tuples came to be: answered offline, answered by a named LLM endpoint, or
/// imported from someone else's measurements. Stored as its [`label`](Mode::label) and parsed
/// back once, where the store reads a run ([`Mode::parse`]); nothing else tests the label.
/// Serialised as its label, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Mode {
    /// No model called: the offline reader and judge.
    Offline,
    /// `base_url` and `model` of the answering LLM; never a key.
    Llm {
        /// The endpoint's base URL (as configured, without credentials).
        base_url: String,
        /// The model name the endpoint serves.
        model: String,
    },
    /// An imported outcome matrix (`import`): `source` names it (`adaptive-rag/flan_t5_xl`).
    Imported {
        /// The import's source name.
        source: String,
    },
}

/// The prefix of an LLM run's label: `llm:MODEL@BASE_URL`.
const LLM_PREFIX: &str = "llm:";
/// The prefix of an imported run's label: `imported:SOURCE`.
const IMPORTED_PREFIX: &str = "imported:";

impl Mode {
    /// The label stored with every run and record: `offline`, `llm:<model>@<base url>` or
    /// `imported:<source>`.
    pub fn label(&self) -> String {
        match self {
            Mode::Offline => "offline".to_owned(),
            Mode::Llm { base_url, model } => format!("{LLM_PREFIX}{model}@{base_url}"),
            Mode::Imported { source } => format!("{IMPORTED_PREFIX}{source}"),
        }
    }

    /// Reads a stored label back; `None` for anything [`label`](Mode::label) never writes.
    /// The model is what precedes the first `@` (a URL may hold one, a model name does not).
    pub fn parse(label: &str) -> Option<Mode> {
        if label == "offline" {
            return Some(Mode::Offline);
        }
        if let Some(rest) = label.strip_prefix(LLM_PREFIX) {
            let (model, base_url) = rest.split_once('@').unwrap_or((rest, ""));
            return (!model.is_empty()).then(|| Mode::Llm {
                base_url: base_url.to_owned(),
                model: model.to_owned(),
            });
        }
        let source = label.strip_prefix(IMPORTED_PREFIX)?;
        (!source.is_empty()).then(|| Mode::Imported {
            source: source.to_owned(),
        })
    }

    /// Whether the tuples were imported rather than benched.
    pub fn is_imported(&self) -> bool {
        match self {
            Mode::Imported { .. } => true,
            Mode::Offline | Mode::Llm { .. } => false,
        }
    }
}

impl From<Mode> for String {
    fn from(m: Mode) -> String {
        m.label()
    }
}

impl TryFrom<String> for Mode {
    type Error = String;
    fn try_from(label: String) -> Result<Mode, String> {
        Mode::parse(&label).ok_or_else(|| {
            format!("mode {label:?}: expected offline, llm:MODEL@BASE_URL or imported:SOURCE")
        })
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

/// One chunk as it entered a paradigm's context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetrievedChunk {
    /// The chunk's [`Chunk::id`](crate::Chunk::id).
    pub chunk_id: String,
    /// The retriever's score (cosine, fused rank score, ...): higher ranked first.
    pub score: f32,
}

/// What a paradigm returns for one query, before judging.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ParadigmOutput {
    /// The response (empty when the reader gave none).
    pub answer: String,
    /// Chunks in the order they were placed in the context (after the budget cut).
    pub context: Vec<RetrievedChunk>,
    /// cl100k tokens of the context handed to the reader.
    pub context_tokens: u64,
    /// LLM tokens per phase (all 0 offline).
    pub tokens: PhaseTokens,
    /// Where `tokens` came from.
    pub token_source: TokenSource,
    /// Wall-clock time per phase.
    pub latency: PhaseLatency,
    /// Paradigm-specific trace (rounds, seeds, scores) a researcher can read; `null` when none.
    pub trace: serde_json::Value,
}

/// One stored tuple: (query, corpus, paradigm, performance).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultRecord {
    /// The question's [`Query::id`](crate::Query::id).
    pub query_id: String,
    /// The paradigm that answered.
    pub paradigm: ParadigmId,
    /// What the paradigm returned (empty when it failed).
    pub output: ParadigmOutput,
    /// `None` when the paradigm failed before producing an answer.
    pub judge: Option<JudgeLabel>,
    /// Answer-quality values of the response.
    pub quality: QualityMetrics,
    /// Tokens the judge spent on this tuple (not a cost of the paradigm).
    #[serde(default)]
    pub judge_tokens_in: u64,
    /// Tokens the judge received for this tuple.
    #[serde(default)]
    pub judge_tokens_out: u64,
    /// `offline` or the LLM's identity.
    pub mode: String,
    /// The run's configuration hash, copied so that a row stands alone.
    pub config_hash: String,
    /// Why the query failed, when it did; a failed query is a recorded result, not a crashed run.
    pub error: Option<String>,
    /// The signature of the graph build the tuple was answered on; `None` for a paradigm that
    /// does not read the graph.
    #[serde(default)]
    pub graph_build: Option<String>,
}

/// The cost measure of one tuple that routers and reports trade against correctness.
///
/// In LLM mode it is the paradigm's billed tokens (construction share, retrieval, generation;
/// the judge is an evaluation cost and is left out). Offline no model is called and every LLM
/// column is zero, so the cost is the context the paradigm assembled for its reader, in cl100k
/// tokens: what a generator would have been sent. An imported tuple's cost is what its source
/// declared (`imported`, in the run's cost unit). Reports say which measure they plot.
pub fn cost_tokens(mode: &Mode, llm_tokens: u64, context_tokens: u64, imported: f64) -> f64 {
    match mode {
        Mode::Offline => context_tokens as f64,
        Mode::Llm { .. } => llm_tokens as f64,
        Mode::Imported { .. } => imported,
    }
}

#[cfg(test)]
mod mode_tests {
    use super::*;

    #[test]
    fn every_mode_reads_back_from_its_label() {
        for m in [
            Mode::Offline,
            Mode::Llm {
                base_url: "http://127.0.0.1:8080/v1".into(),
                model: "smollm2-135m-instruct".into(),
            },
            Mode::Imported {
                source: "adaptive-rag/flan_t5_xl".into(),
            },
        ] {
            assert_eq!(Mode::parse(&m.label()), Some(m.clone()), "{m}");
        }
        assert_eq!(Mode::parse("offline").unwrap().label(), "offline");
        let imported = Mode::Imported { source: "s".into() };
        assert_eq!(serde_json::to_string(&imported).unwrap(), r#""imported:s""#);
        assert_eq!(
            serde_json::from_str::<Mode>(r#""imported:s""#).unwrap(),
            imported
        );
        assert!(serde_json::from_str::<Mode>(r#""gpt-x""#).is_err());
        for bad in ["", "Offline", "gpt-x", "llm:", "imported:", "llm:@http://x"] {
            assert_eq!(Mode::parse(bad), None, "{bad:?}");
        }
    }
}
