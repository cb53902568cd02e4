//! Pure metric functions: corpus structure and semantics, answer and generation quality, judges, labels.
//!
//! The principal types: [`evaluate::TupleEvaluator`] (everything measured of one answered
//! tuple; the paradigms whose faithfulness it measures are given to it, so this crate names no
//! paradigm), the judges ([`delivered::DeliveredJudge`] offline, [`judge::LlmJudge`]), routing
//! labels ([`labels::LabelPolicy`]) and the corpus metrics of [`corpus`].
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
pub mod delivered;
pub mod evaluate;
pub mod generation;
pub mod judge;
pub mod labels;
pub mod probe;
pub mod query;
