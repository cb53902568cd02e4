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
//!
//! # Modules
//!
//! - The routing data set from stored tuples (`dataset`).
//! - Feature sets Q / C / Q+C (`features`).
//! - The protocol of `route eval` as one library call (`protocol`: run selection, labels, split,
//!   best-single always, Appendix D.2 inputs for the ML routers, cascades and published routers,
//!   paired tests, the configuration to store).
//! - What a router is and may use (`entry`, a leaf: `RouterEntry`, `Family`, `Candidate`,
//!   `RouterContext` with the seed, the router LLM and the `FitCache` a λ sweep shares).
//! - The registry (`registry`; `registry::OPT_IN` names the routers `--routers all` leaves out for
//!   their cost).
//! - Baselines (`baselines`: Random, Best-fixed, Oracle).
//! - ML and neural routers (`models`: lr, svm, rf, gbt, knn, mlp, dnn, two-tower, on the small
//!   dense-net toolkit `models::nn` and the Appendix D.2 input encoding `models::prep`;
//!   `models::lr_fit` runs linfa-logistic's fit, bit for bit, on `models::products`, which keeps a
//!   training matrix once and multiplies it bit for bit as ndarray does, without ndarray's per-call
//!   copy; router-dc uses it too).
//! - The seed papers' routers and the cost-aware λ sweep (`seed_papers`).
//! - Table 3's routers from other papers (`published`: Adaptive-RAG's classifier, MBA-RAG's bandit,
//!   RouterDC).
//! - Utility routers (`utility`: calibrated P(correct) per paradigm minus λ·cost, cross-fitted
//!   Platt calibration; `utility::safe`: best-single unless the estimate beats it by a margin tuned
//!   on the held-out training estimates).
//! - Best-single / oracle-per-corpus / always-p baselines (`baselines`).
//! - The expected-cost model the cost-aware, utility and bandit routers share (`cost`).
//! - External programs over JSON lines (`external`, docs/router-protocol.md).
//! - Probe signals as routing-feature columns and their billing (`probe_columns`).
//! - Published routers of an import scored from their own answers (`imported`).
//! - Cascades in cost order with a calibrated stop (`cascade`).
//! - Per-signal AUROC, gap share and CostSave@BestSingle (`signal_reading`).
//! - Cross-validation with per-question predictions and the utility fallback, and the rows of a
//!   router decided elsewhere (`eval`).
//! - Paired bootstrap and exact McNemar tests against best-single (`significance`).
//! - The terminal renderer of Table 3 (within 100 columns unless `--wide`), `--json` and the
//!   `route list` catalogue (`table`).
//! - A synthetic set with a known rule (`synthetic`).
//!
//! Why a crate of its own: the plug-in point for routers and the ML dependencies (linfa, smartcore,
//! ndarray; argmin, the optimiser linfa-logistic runs, for lr's fit; pulp for mba-rag's SIMD loops
//! and `models::products`, and gemm through metrics' `gram_block` for knn's distances).
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
mod probe_columns;
pub mod protocol;
mod published;
pub mod registry;
mod signal_reading;
pub use bench_core::rng;
mod seed_papers;
pub mod significance;
pub mod synthetic;
pub mod table;
mod utility;

pub use entry::{Family, FitCache, LlmAccess, RouterContext, RouterEntry};
pub use features::{FeatureSet, INDICATOR_NAMES};
pub use probe_columns::ProbeBill;
pub use registry::registry;
pub use rng::SplitMix64;
pub use synthetic::{synthetic_rule, synthetic_set, synthetic_set_with};
