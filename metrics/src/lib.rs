//! Pure metric functions: corpus structure and semantics, answer and generation quality, judges, labels.
//!
//! The principal types: [`TupleEvaluator`] (everything measured of one answered tuple; the
//! paradigms whose faithfulness it measures are given to it, so this crate names no paradigm),
//! the judges ([`DeliveredJudge`] offline, [`LlmJudge`]), routing labels
//! ([`labels::LabelPolicy`]) and the corpus metrics of [`corpus`]. The metric functions are
//! reached through their modules: [`answer`], [`generation`], [`query`], [`labels`], [`probe`].
//!
//! ```
//! use metrics::answer::{exact_match, token_f1};
//!
//! // SQuAD normalisation: case, punctuation and articles do not count.
//! assert_eq!(exact_match("The Eiffel Tower.", "eiffel tower"), 1.0);
//! assert!(token_f1("the tower in Paris", "Eiffel Tower") > 0.0);
//! ```

#![warn(missing_docs)]

pub mod answer;
pub mod corpus;
mod delivered;
mod evaluate;
pub mod generation;
mod judge;
pub mod labels;
pub mod probe;
pub mod query;

pub use delivered::{delivered_label, informative_golds, DeliveredJudge, DeliveredRule};
pub use evaluate::{
    generation_quality, generation_quality_batch, FaithfulnessCache, Judged, TupleEvaluator,
};
pub use judge::{judge_request, parse_judge_reply, LlmJudge, JUDGE_PROMPT_VERSION};
