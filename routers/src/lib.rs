//! Routers for ragrouter-bench: the routing data set built from stored tuples, features, the
//! router zoo behind one registry, and cross-validated evaluation against Random, Best-fixed and
//! Oracle. Routers see features and outcomes only; this crate never depends on `paradigms`.
//!
//! The principal types: [`protocol::Protocol`] and [`protocol::evaluate_protocol`] (all of
//! `route eval` as one call on a results store), [`RouterEntry`] and [`registry()`] (the
//! built-in routers), [`eval::Candidate`] (a router to evaluate), [`RouterContext`] (seed,
//! router LLM, shared fits), [`eval::Evaluation`] and [`table::render`] (Table 3).
//! The data set comes from [`dataset`] (question vectors through [`dataset::QuestionVectors`]),
//! its feature blocks from [`FeatureSet`]; a router in another language is an
//! [`external::ExternalSpec`]. The router implementations (baselines, the ML and neural
//! routers, the seed papers', published, cost-aware and utility routers, cascades) are private
//! and reached by name through [`registry()`] and [`registry::lookup`]; [`models`] shows only
//! [`models::Model`] with its [`models::ModelRouter`], [`models::lr`] and the dense-network
//! toolkit [`models::nn`].
//!
//! Cross-validating two registered routers on a synthetic set with a known rule:
//!
//! ```
//! use routers::eval::{evaluate, stratified_kfold, summarize, Candidate};
//! use routers::registry::lookup;
//!
//! let set = routers::synthetic_set(120, 7);
//! let folds = stratified_kfold(&set.labels(), 3, 7).unwrap();
//! let routers: Vec<Candidate> = ["oracle", "knn"]
//!     .iter()
//!     .map(|n| Candidate::from(lookup(n).unwrap()))
//!     .collect();
//! let ev = evaluate(&set, &routers, &folds, &routers::RouterContext::new(7)).unwrap();
//! let pooled = summarize(&ev.rows);
//! let acc = |r: &str| {
//!     pooled.iter().find(|s| s.router == r && s.corpus == "*").unwrap().mean.accuracy
//! };
//! // Oracle reads the outcomes it is graded on: it is always right.
//! assert_eq!(acc("oracle"), 1.0);
//! assert!(acc("knn") <= 1.0);
//! ```
#![warn(missing_docs)]

mod baselines;
mod cascade;
mod cost;
pub mod dataset;
pub mod entry;
pub mod eval;
pub mod external;
mod features;
mod imported;
pub mod models;
mod probe;
pub mod protocol;
mod published;
mod reading;
pub mod registry;
pub use bench_core::rng;
mod seed_papers;
mod significance;
pub mod synthetic;
pub mod table;
mod utility;

pub use entry::{Family, FitCache, LlmAccess, RouterContext, RouterEntry};
pub use features::{FeatureSet, INDICATOR_NAMES};
pub use probe::ProbeBill;
pub use registry::registry;
pub use rng::SplitMix64;
pub use synthetic::{synthetic_rule, synthetic_set, synthetic_set_with};
