//! Personalized PageRank on the knowledge graph's CSR: power iteration, forward push, and a certified solver.
//!
//! All engines solve the same equation (networkx `pagerank` semantics on an undirected, unweighted
//! simple graph):
//!
//! `pi = damping * (A D^-1 pi + (sum of pi over dangling nodes) * p) + (1 - damping) * p`
//!
//! where `p` is the personalization (seed weights normalised to sum 1) and a dangling node is one
//! of degree 0, whose mass is sent back along `p` (networkx's default `dangling = personalization`).
//! Scores sum to 1.
//!
//! - [`exact_ppr`]: dense power iteration over the whole graph until the L1 change of one
//!   iteration is below `tol`. Cost: O(iterations x (nodes + edges)).
//! - [`push_ppr`]: forward push (Andersen, Chung and Lang 2006, non-lazy form). It keeps an
//!   estimate `e` and a residual `r` (initially `p`) with the invariant `pi = e + PPR(r)`, and
//!   pushes every node whose residual exceeds `epsilon * max(deg, 1)`. Its cost depends on the
//!   neighbourhood of the seeds only (at most `1 / (epsilon * (1 - damping))` edge visits), and
//!   `0 <= pi(v) - e(v) <= epsilon * deg(v) + (residual left on dangling nodes)` on an undirected
//!   graph, so `e` is a lower bound whose error is tiny next to the scores that make a top-100.
//! - [`sweep_ppr`]: the same push run in Gauss-Seidel sweeps until the residual mass, which is
//!   exactly the L1 error, is at most `tol`: a certified exact solver that only visits the seeds'
//!   components. On the MuSiQue-sized graph it costs about what [`exact_ppr`] does (numbers in
//!   `examples/perf_ppr.rs`).
//! - [`certified_ppr`]: a per-graph partial Cholesky factorization ([`PprFactor`]) plus conjugate
//!   gradients on the remaining core, and a certificate that its top-k is the exact top-k up to
//!   ties within `tie` (1e-12): the residual, evaluated on the graph itself at the core's nodes
//!   and bounded a priori at the eliminated ones (where back-substitution leaves rounding
//!   alone); ties that no error bound can separate are proven exact by the graph's symmetries.
//!   It is the default: exact where it matters (the top-k's order) at a small fraction of power
//!   iteration's cost on MuSiQue-sized graphs; `examples/perf_ppr.rs` prints the ratio and the
//!   measured runs are in `docs/performance.md`.
//! - [`certified_ppr_many`]: the certified engine on a set of queries, [`PPR_LANES`] of them
//!   sharing each pass over the core's triangle (a pass streams memory, so four vectors cost
//!   well under four passes) and the groups spread over threads; every result is bit for bit
//!   [`certified_ppr`]'s. Throughput for a query set known up front, not one query's latency.
//!
//! Where the code lives: `exact` (power iteration), `push` (forward push, [`PushWorkspace`]
//! and its cache of factors), `factor` ([`PprFactor`]: elimination order, the core's Schur
//! complement, the a priori bound of the solved rows), `storage` (sparse rows, the core's
//! blocked triangle, the sweep's balanced pieces), `symmetry` (provably tied nodes), `certified`
//! (the solve and its tightening loop, written for `B` queries in the lanes of one sweep:
//! [`certified_ppr`] runs one lane), `batch` ([`certified_ppr_many`]: groups of [`PPR_LANES`]
//! over threads), `certificate` (the residual sweep and the error bounds it gives), `proof`
//! (the top-k's intervals, narrowed by symmetry class, and the comparisons that certify it), and
//! `synthetic` (a seeded MuSiQue-shaped graph of any size, for the scaling example
//! `examples/perf_ppr_scale.rs`).

use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::sync::Arc;

use corpora::Csr;
use serde::{Deserialize, Serialize};

mod batch;
mod certificate;
mod certified;
mod exact;
mod factor;
mod proof;
mod push;
mod storage;
mod symmetry;
mod synthetic;
#[cfg(test)]
mod tests;

pub use batch::*;
pub use certified::*;
pub use exact::*;
pub use factor::*;
pub use push::*;
pub use synthetic::*;

use certificate::*;
use proof::*;
use storage::*;
use symmetry::*;

/// The push engine's residual threshold at which its top-100 agrees with the exact one on the
/// 2,000-node fixture, order included. It buys that agreement with near-global work: on the
/// MuSiQue-sized graph of `examples/perf_ppr.rs` push is only fast near 1e-5, where its top-100
/// differs from the exact one on most queries (error ~ deg(v) x epsilon / 2 on the hubs of the
/// top-100; numbers in that example's header). So push is never the default.
pub const DEFAULT_PUSH_EPSILON: f64 = 1e-9;

/// Which PPR solver to run, with its accuracy knob.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "engine", rename_all = "lowercase")]
pub enum PprEngine {
    /// Power iteration to an L1 change below `tol`, at most `max_iter` iterations.
    Exact {
        /// Stop once the L1 change of an iteration is below this.
        tol: f64,
        /// At most this many iterations.
        max_iter: usize,
    },
    /// Forward push with residual threshold `epsilon` (per unit of degree).
    Push {
        /// Residual threshold per unit of degree.
        epsilon: f64,
    },
    /// Partial elimination plus conjugate gradients, refined until a certificate proves the
    /// top-k equal to the exact one up to ties within `tie` ([`certified_ppr`]).
    Certified {
        /// Scores within this of each other count as tied.
        tie: f64,
    },
}

/// The certified engine: the exact top-k (proven per query, ties within 1e-12), about 30x
/// faster than power iteration to 1e-6 L1; see [`DEFAULT_PUSH_EPSILON`] for why not push.
impl Default for PprEngine {
    fn default() -> Self {
        PprEngine::certified()
    }
}

impl PprEngine {
    /// The exact engine at decisions.md's tolerance (1e-6 L1).
    pub fn exact() -> Self {
        PprEngine::Exact {
            tol: 1e-6,
            max_iter: 1000,
        }
    }

    /// The push engine at [`DEFAULT_PUSH_EPSILON`].
    pub fn push() -> Self {
        PprEngine::Push {
            epsilon: DEFAULT_PUSH_EPSILON,
        }
    }

    /// The certified engine at [`DEFAULT_TIE`].
    pub fn certified() -> Self {
        PprEngine::Certified { tie: DEFAULT_TIE }
    }

    /// The engine's name, as traces record it.
    pub fn name(&self) -> &'static str {
        match self {
            PprEngine::Exact { .. } => "exact",
            PprEngine::Push { .. } => "push",
            PprEngine::Certified { .. } => "certified",
        }
    }
}

/// Why a PPR could not run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PprError {
    /// A seed node outside the graph: (node, node count).
    #[error("seed node {0} is outside the graph ({1} nodes)")]
    SeedOutOfRange(u32, usize),
    /// A seed weight that is negative or not finite.
    #[error("seed weight {0} is negative or not finite")]
    BadWeight(f64),
    /// A damping outside [0, 1).
    #[error("damping {0} is outside [0, 1)")]
    BadDamping(f64),
    /// A factor built for another graph.
    #[error("the PPR factor was built for another graph")]
    FactorMismatch,
}

/// Validates seeds and returns them merged by node (sorted by node id, weights summed) and
/// normalised to sum 1; empty when no seed has positive weight.
pub fn normalise_seeds(csr: &Csr, seeds: &[(u32, f64)]) -> Result<Vec<(u32, f64)>, PprError> {
    let n = csr.node_count();
    let mut merged: Vec<(u32, f64)> = Vec::with_capacity(seeds.len());
    for &(node, w) in seeds {
        if node as usize >= n {
            return Err(PprError::SeedOutOfRange(node, n));
        }
        if !w.is_finite() || w < 0.0 {
            return Err(PprError::BadWeight(w));
        }
        merged.push((node, w));
    }
    merged.sort_by_key(|&(node, _)| node);
    merged.dedup_by(|b, a| {
        if a.0 == b.0 {
            a.1 += b.1;
            true
        } else {
            false
        }
    });
    merged.retain(|&(_, w)| w > 0.0);
    let total: f64 = merged.iter().map(|&(_, w)| w).sum();
    for s in &mut merged {
        s.1 /= total;
    }
    Ok(merged)
}

fn check_damping(damping: f64) -> Result<(), PprError> {
    if (0.0..1.0).contains(&damping) {
        Ok(())
    } else {
        Err(PprError::BadDamping(damping))
    }
}

/// The `k` best `(node, score)` pairs with `score >= min_score`, best first, ties broken by the
/// lower node id (so a ranking is deterministic).
pub fn top_k(
    scores: impl IntoIterator<Item = (u32, f64)>,
    k: usize,
    min_score: f64,
) -> Vec<(u32, f64)> {
    let mut all: Vec<(u32, f64)> = scores
        .into_iter()
        .filter(|&(_, s)| s >= min_score)
        .collect();
    let order = |a: &(u32, f64), b: &(u32, f64)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if all.len() > k && k > 0 {
        all.select_nth_unstable_by(k - 1, order);
    }
    all.truncate(k);
    all.sort_unstable_by(order);
    all
}

/// What one PPR run reports for a trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PprRun {
    /// How PPR is computed.
    pub engine: PprEngine,
    /// `(node, score)`, best first, at most the requested number, each `>= min_score`.
    pub top: Vec<(u32, f64)>,
    /// The score of each input seed, in input order (a seed may fall outside `top`).
    pub seed_scores: Vec<(u32, f64)>,
    /// Power iterations (exact) or push operations (push).
    pub work: usize,
    /// Last L1 change (exact), residual mass left (push), or the largest certified error bound
    /// on a listed score (certified).
    pub error: f64,
    /// Whether the certificate held (certified engine only).
    pub certified: Option<bool>,
}

/// Runs `engine` and keeps the top `k` nodes scoring at least `min_score`.
pub fn ppr_top_k(
    engine: PprEngine,
    csr: &Csr,
    seeds: &[(u32, f64)],
    damping: f64,
    k: usize,
    min_score: f64,
    ws: &mut PushWorkspace,
) -> Result<PprRun, PprError> {
    Ok(match engine {
        PprEngine::Exact { tol, max_iter } => {
            let r = exact_ppr(csr, seeds, damping, tol, max_iter)?;
            PprRun {
                engine,
                seed_scores: seeds
                    .iter()
                    .map(|&(v, _)| (v, r.scores[v as usize]))
                    .collect(),
                top: top_k(
                    r.scores.iter().enumerate().map(|(i, &s)| (i as u32, s)),
                    k,
                    min_score,
                ),
                work: r.iterations,
                error: r.l1_change,
                certified: None,
            }
        }
        PprEngine::Push { epsilon } => {
            let r = push_ppr(csr, seeds, damping, epsilon, ws)?;
            let score = |v: u32| {
                r.scores
                    .binary_search_by_key(&v, |p| p.0)
                    .map_or(0.0, |i| r.scores[i].1)
            };
            PprRun {
                engine,
                seed_scores: seeds.iter().map(|&(v, _)| (v, score(v))).collect(),
                top: top_k(r.scores, k, min_score),
                work: r.pushes,
                error: r.residual,
                certified: None,
            }
        }
        PprEngine::Certified { tie } => {
            let factor = ws.factor(csr, damping)?;
            let r = certified_ppr(&factor, csr, seeds, k, min_score, tie, &mut ws.certified)?;
            PprRun {
                engine,
                seed_scores: seeds
                    .iter()
                    .map(|&(v, _)| (v, ws.certified.score(&factor, v)))
                    .collect(),
                top: r.top,
                work: r.iterations,
                error: r.top_error,
                certified: Some(r.certified),
            }
        }
    })
}
