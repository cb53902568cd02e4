//! Sub-commands other than `bench`.

pub mod corpora;
// pub mod metrics; (arrives with the metrics work)
pub mod setup;
