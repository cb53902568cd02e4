//! What a registered router is (`RouterEntry`, its `Family`) and what it may use
//! (`RouterContext`: the seed, the router LLM and the fits a sweep shares); a leaf module every
//! router names and that names none of them.

use std::any::Any;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use bench_core::{BenchError, Llm, ParadigmId, Result, Router};

/// What a router may use besides its training rows.
#[derive(Clone)]
pub struct RouterContext {
    /// Seeds every random choice (initialisation, shuffles, tie-breaks): same seed, same numbers.
    pub seed: u64,
    /// The LLM for routers that call one (LLM router, R2Adapter's rewriter); `None` offline.
    pub llm: Option<LlmAccess>,
    /// Fits shared by the routers made from this context.
    pub fits: FitCache,
}

impl RouterContext {
    /// A context with `seed`, no LLM and an empty fit cache.
    pub fn new(seed: u64) -> Self {
        RouterContext {
            seed,
            llm: None,
            fits: FitCache::default(),
        }
    }
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
    /// The router LLM.
    pub llm: Arc<dyn Llm>,
    /// The runtime its async calls are blocked on from the router's thread.
    pub handle: tokio::runtime::Handle,
}

impl fmt::Debug for LlmAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmAccess")
            .field("llm", &self.llm.identity())
            .finish_non_exhaustive()
    }
}

/// Which part of the zoo a router belongs to (tables group by it); defined with Table 3's
/// model in `bench_core`, where reports read it back from the store.
pub use bench_core::table3::Family;

/// One registered router.
#[derive(Clone, Copy)]
pub struct RouterEntry {
    /// The name on the command line and in the store (`lr`, `svm`, `r2adapter`, ...).
    pub name: &'static str,
    /// One line for `route list`.
    pub about: &'static str,
    /// Its group in Table 3 and `route list`.
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

/// Fits the routers of one evaluation share: the routers of a λ sweep (and the folds' routers
/// on the same rows) fit their λ-independent part once. Keyed by the caller (learner, seed and
/// a fingerprint of the training rows); only the last [`FitCache::KEPT`] are kept. A fit in
/// progress is a cell the others wait on, so it runs once.
#[derive(Clone, Default)]
pub struct FitCache {
    cells: Arc<Mutex<Vec<(u64, FitCell)>>>,
}

type FitCell = Arc<OnceLock<std::result::Result<Arc<dyn Any + Send + Sync>, String>>>;

impl fmt::Debug for FitCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.cells.lock().map_or(0, |c| c.len());
        f.debug_struct("FitCache").field("fits", &n).finish()
    }
}

impl FitCache {
    /// Fits kept at most.
    pub const KEPT: usize = 40;

    /// The fit under `key`, made by `fit` the first time (an error is kept too, as its text).
    pub(crate) fn get_or_fit<T: Any + Send + Sync>(
        &self,
        key: u64,
        fit: impl FnOnce() -> Result<T>,
    ) -> Result<Arc<T>> {
        let cell: FitCell = {
            let mut cells = self.cells.lock().unwrap_or_else(|e| e.into_inner());
            match cells.iter().find(|(k, _)| *k == key) {
                Some((_, c)) => Arc::clone(c),
                None => {
                    if cells.len() >= Self::KEPT {
                        cells.remove(0);
                    }
                    let c: FitCell = Arc::new(OnceLock::new());
                    cells.push((key, Arc::clone(&c)));
                    c
                }
            }
        };
        let got = cell
            .get_or_init(|| {
                fit()
                    .map(|t| Arc::new(t) as Arc<dyn Any + Send + Sync>)
                    .map_err(|e| e.to_string())
            })
            .clone()
            .map_err(BenchError::Invalid)?;
        got.downcast::<T>()
            .map_err(|_| BenchError::Other(format!("fit cache: key {key:#x} holds another type")))
    }
}

/// Builds a fresh router for a context and a sweep value.
pub type MakeCandidate =
    Arc<dyn Fn(&RouterContext, Option<f64>) -> Result<Box<dyn Router>> + Send + Sync>;

/// A router to evaluate: a registry entry, or one built at run time (an external program, a
/// fixed paradigm).
#[derive(Clone)]
pub struct Candidate {
    /// The name in tables and the store.
    pub name: String,
    /// Its group in Table 3.
    pub family: Family,
    /// Needs an LLM; skipped with a note offline.
    pub needs_llm: bool,
    /// Scored on unscrubbed test rows (Oracle only; see [`RouterEntry::sees_outcomes`]).
    pub sees_outcomes: bool,
    /// The parameter values to evaluate (λ); empty when it has no parameter.
    pub sweep: Vec<f64>,
    /// Lanes the router routes between, each a preference list of paradigms; the router is
    /// skipped on a data set that has no class for some lane.
    pub lanes: Vec<(String, Vec<ParadigmId>)>,
    /// A fresh, unfitted router for one sweep value.
    pub make: MakeCandidate,
}

impl fmt::Debug for Candidate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Candidate")
            .field("name", &self.name)
            .field("family", &self.family)
            .field("sweep", &self.sweep)
            .finish_non_exhaustive()
    }
}

impl From<RouterEntry> for Candidate {
    fn from(e: RouterEntry) -> Self {
        let make = e.make;
        Candidate {
            name: e.name.to_string(),
            family: e.family,
            needs_llm: e.needs_llm,
            sees_outcomes: e.sees_outcomes,
            sweep: e.sweep.to_vec(),
            lanes: e
                .lanes
                .iter()
                .map(|(n, ps)| (n.to_string(), ps.to_vec()))
                .collect(),
            make: Arc::new(make),
        }
    }
}

impl Candidate {
    /// Why the router cannot run on `schema` (a lane without a class), if it cannot.
    pub(crate) fn missing_lane(&self, schema: &bench_core::RoutingSchema) -> Option<String> {
        self.lanes.iter().find_map(|(lane, prefs)| {
            (!prefs.iter().any(|&p| schema.class_of(p).is_some())).then(|| {
                format!(
                    "needs a {lane} lane ({}), and the data set's classes are {}",
                    prefs
                        .iter()
                        .map(|p| p.as_str())
                        .collect::<Vec<_>>()
                        .join(" or "),
                    schema.classes.join(", ")
                )
            })
        })
    }
}
