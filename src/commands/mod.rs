//! The sub-commands, one module each: flags, then the work.

pub mod bench;
pub mod check_llm;
pub mod corpora;
pub mod db;
pub mod generate;
pub mod graph;
pub mod import;
pub mod leaderboard;
pub mod merge;
pub mod metrics;
pub mod report;
pub mod route;
pub mod setup;
