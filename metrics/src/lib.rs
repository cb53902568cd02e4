//! Pure metric functions: corpus structure and semantics, answer and generation quality, judges, labels.
//!
//! The principal types: [`TupleEvaluator`] (everything measured of one answered tuple; the
//! paradigms whose faithfulness it measures are given to it, so this crate names no paradigm),
//! the judges ([`DeliveredJudge`] offline, [`LlmJudge`]), routing labels
//! ([`labels::LabelPolicy`]) and the corpus metrics of [`corpus`]. The metric functions are
//! reached through their modules: [`answer`], [`generation`], [`query`], [`labels`], [`agreement`],
//! [`pairs`].
//!
//! ```
//! use metrics::answer::{exact_match, token_f1};
//!
//! // SQuAD normalisation: case, punctuation and articles do not count.
//! assert_eq!(exact_match("The Eiffel Tower.", "eiffel tower"), 1.0);
//! assert!(token_f1("the tower in Paris", "Eiffel Tower") > 0.0);
//! ```
//!
//! # Modules
//!
//! - Pure functions: answer quality and the sentence judge (`answer`).
//! - The offline judge "answer delivered" (`delivered`).
//! - Corpus structure and semantics (`corpus`: graph metrics, one shared kNN pass for TwoNN and
//!   hubness whose candidates are screened in bfloat16 or float32 under a certified error bound and
//!   re-ranked in float64, so exact; dispersion).
//! - EA-GraphRAG's query complexity s(q) (`query`).
//! - The answer-agreement probe's signals and the refusal rule (`agreement`).
//! - The post-arm probe's signals: every pair of arms' answers compared, each answer's shape
//!   (`pairs`).
//! - Semantic F1 / coverage / faithfulness (`generation`).
//! - The evaluation of one tuple: judge label, EM/F1, evidence recall, faithfulness, then semantic
//!   F1 and coverage per question in one encoder pass (`evaluate`, over the `TokenEncoder` trait).
//! - The LLM judge (`judge`).
//! - Routing labels (`labels`).
//!
//! Why a crate of its own: reuse: the CLI, the paradigms' evaluation and the routers' features all
//! call them.

#![warn(missing_docs)]

pub mod agreement;
pub mod answer;
pub mod corpus;
mod delivered;
mod evaluate;
pub mod generation;
mod judge;
pub mod labels;
pub mod pairs;
pub mod query;

pub use delivered::{delivered_label, informative_golds, DeliveredJudge, DeliveredRule};
pub use evaluate::{
    generation_quality, generation_quality_batch, FaithfulnessCache, Judged, TupleEvaluator,
};
pub use judge::{judge_request, parse_judge_reply, LlmJudge, JUDGE_PROMPT_VERSION};
