//! The router registry: every built-in router is one file exposing `entry()` and one line here.

use std::fmt;
use std::sync::Arc;

use bench_core::{Llm, ParadigmId, Result, Router};

/// What a router may use besides its training rows.
#[derive(Clone)]
pub struct RouterContext {
    /// Seeds every random choice (initialisation, shuffles, tie-breaks): same seed, same numbers.
    pub seed: u64,
    /// The LLM for routers that call one (LLM router, R2Adapter's rewriter); `None` offline.
    pub llm: Option<LlmAccess>,
}

impl fmt::Debug for RouterContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RouterContext")
            .field("seed", &self.seed)
            .field("llm", &self.llm.as_ref().map(|l| l.llm.identity()))
            .finish()
    }
}

/// An LLM and the runtime to block on: routers run on a blocking thread (see `Router`).
#[derive(Clone)]
pub struct LlmAccess {
    pub llm: Arc<dyn Llm>,
    pub handle: tokio::runtime::Handle,
}

impl fmt::Debug for LlmAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmAccess")
            .field("llm", &self.llm.identity())
            .finish_non_exhaustive()
    }
}

/// Which part of the zoo a router belongs to (tables group by it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    Baseline,
    Ml,
    Neural,
    Seed,
    /// Routers of the paper's Table 3 from other papers (Adaptive-RAG, MBA-RAG, RouterDC).
    Published,
    CostAware,
    /// Calibrated P(correct) per paradigm minus λ·cost.
    Utility,
    External,
}

impl Family {
    /// The name `route list` shows.
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Baseline => "baseline",
            Family::Ml => "ml",
            Family::Neural => "neural",
            Family::Seed => "seed",
            Family::Published => "published",
            Family::CostAware => "cost-aware",
            Family::Utility => "utility",
            Family::External => "external",
        }
    }
}

/// One registered router.
#[derive(Clone, Copy)]
pub struct RouterEntry {
    /// The name on the command line and in the store (`lr`, `svm`, `r2adapter`, ...).
    pub name: &'static str,
    /// One line for `route list`.
    pub about: &'static str,
    pub family: Family,
    /// Needs an LLM (`RouterContext::llm`); skipped with a note offline.
    pub needs_llm: bool,
    /// Sees test rows' outcomes and labels (Oracle only): every other router is scored on rows
    /// whose label and outcomes are scrubbed.
    pub sees_outcomes: bool,
    /// The default parameter sweep (λ of a cost-aware router); empty when it has no parameter.
    pub sweep: &'static [f64],
    /// The lanes it routes between, each named with its preference list of paradigms; the
    /// evaluation skips the router (with the reason) on a data set without a class for a lane.
    pub lanes: &'static [(&'static str, &'static [ParadigmId])],
    /// A fresh, unfitted router; `param` is one value of the sweep (`None` without a sweep).
    pub make: MakeRouter,
}

/// Builds a fresh, unfitted router from the context and one sweep value.
pub type MakeRouter = fn(&RouterContext, Option<f64>) -> Result<Box<dyn Router>>;

impl fmt::Debug for RouterEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RouterEntry")
            .field("name", &self.name)
            .field("family", &self.family)
            .finish()
    }
}

/// Every built-in router, in table order.
pub fn registry() -> Vec<RouterEntry> {
    vec![
        crate::baselines::random_entry(),
        crate::baselines::best_fixed_entry(),
        crate::baselines::oracle_entry(),
        crate::baselines::best_single_entry(),
        crate::baselines::oracle_per_corpus_entry(),
        // ML and neural
        crate::models::lr::entry(),
        crate::models::svm::entry(),
        crate::models::rf::entry(),
        crate::models::gbt::entry(),
        crate::models::knn::entry(),
        crate::models::mlp::entry(),
        crate::models::dnn::entry(),
        crate::models::two_tower::entry(),
        // seed papers, published routers, cost-aware and utility
        crate::seed_papers::ner::entry(),
        crate::seed_papers::ea_graphrag::entry(),
        crate::seed_papers::rap_rag::entry(),
        crate::seed_papers::r2adapter::entry(),
        crate::seed_papers::llm_router::entry(),
        crate::published::adaptive_rag::entry(),
        crate::published::mba_rag::entry(),
        crate::published::router_dc::entry(),
        crate::seed_papers::cost_aware::entry(),
        crate::utility::lr_entry(),
        crate::utility::gbt_entry(),
        crate::utility::knn_entry(),
        crate::utility::mlp_entry(),
        crate::utility::tfidf::entry(),
        crate::utility::safe::entry(),
    ]
}

/// The entry of `name`, or an error listing the known names.
pub fn lookup(name: &str) -> Result<RouterEntry> {
    let all = registry();
    all.iter().find(|e| e.name == name).copied().ok_or_else(|| {
        bench_core::BenchError::Invalid(format!(
            "unknown router {name:?}: known routers are {}",
            all.iter().map(|e| e.name).collect::<Vec<_>>().join(", ")
        ))
    })
}
