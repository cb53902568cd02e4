//! Sub-commands other than `bench`.

pub mod corpora;
pub mod graph;
pub mod metrics;
pub mod setup;
