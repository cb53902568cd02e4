//! Pure metric functions: corpus structure and semantics, answer and generation quality, judges, labels.

pub mod answer;
pub mod corpus;
pub mod delivered;
pub mod evaluate;
pub mod generation;
pub mod judge;
pub mod labels;
pub mod probe;
pub mod query;
