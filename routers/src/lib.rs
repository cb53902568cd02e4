//! Routers for ragrouter-bench: the routing data set built from stored tuples, features, the
//! router zoo behind one registry, and cross-validated evaluation against Random, Best-fixed and
//! Oracle. Routers see features and outcomes only; this crate never depends on `paradigms`.

pub mod registry;

pub use registry::{registry, Family, LlmAccess, RouterContext, RouterEntry};
