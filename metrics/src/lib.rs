//! Pure metric functions: corpus structure and semantics, answer quality and the offline judge.

pub mod answer;
pub mod corpus;
pub mod query;
