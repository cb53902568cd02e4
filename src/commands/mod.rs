//! Sub-commands other than `bench`.

pub mod check_llm;
pub mod corpora;
pub mod generate;
pub mod graph;
pub mod import;
pub mod merge;
pub mod metrics;
pub mod report;
pub mod route;
pub mod setup;
