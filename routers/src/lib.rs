//! Routers for ragrouter-bench: the routing data set built from stored tuples, features, the
//! router zoo behind one registry, and cross-validated evaluation against Random, Best-fixed and
//! Oracle. Routers see features and outcomes only; this crate never depends on `paradigms`.

pub mod baselines;
pub mod cascade;
pub mod cost;
pub mod dataset;
pub mod entry;
pub mod eval;
pub mod external;
pub mod features;
pub mod imported;
pub mod models;
pub mod probe;
pub mod protocol;
pub mod published;
pub mod reading;
pub mod registry;
pub use bench_core::rng;
pub mod seed_papers;
pub mod significance;
pub mod synthetic;
pub mod table;
pub mod utility;

pub use entry::{Family, FitCache, LlmAccess, RouterContext, RouterEntry};
pub use features::{FeatureSet, INDICATOR_NAMES};
pub use registry::registry;
pub use rng::SplitMix64;
pub use synthetic::{synthetic_rule, synthetic_set, synthetic_set_with};
