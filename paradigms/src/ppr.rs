//! Personalized PageRank on the knowledge graph's CSR: exact power iteration and local forward push.
//!
//! Both engines solve the same equation (networkx `pagerank` semantics on an undirected, unweighted
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

use std::collections::VecDeque;

use corpora::graph::Csr;
use serde::{Deserialize, Serialize};

/// The push engine's residual threshold at which its top-100 agrees with the exact one on the
/// 2,000-node fixture, order included. It buys that agreement with near-global work: on the
/// MuSiQue-sized graph of `examples/perf_ppr.rs` push is only fast near 1e-5, where its top-100
/// differs from the exact one on most queries (error ~ deg(v) x epsilon / 2 on the hubs of the
/// top-100; numbers in that example's header). So the default engine is the exact one.
pub const DEFAULT_PUSH_EPSILON: f64 = 1e-9;

/// Which PPR solver to run, with its accuracy knob.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "engine", rename_all = "lowercase")]
pub enum PprEngine {
    /// Power iteration to an L1 change below `tol`, at most `max_iter` iterations.
    Exact { tol: f64, max_iter: usize },
    /// Forward push with residual threshold `epsilon` (per unit of degree).
    Push { epsilon: f64 },
}

/// Exact power iteration to 1e-6 L1 (decisions.md): see [`DEFAULT_PUSH_EPSILON`] for why not push.
impl Default for PprEngine {
    fn default() -> Self {
        PprEngine::exact()
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

    pub fn name(&self) -> &'static str {
        match self {
            PprEngine::Exact { .. } => "exact",
            PprEngine::Push { .. } => "push",
        }
    }
}

/// Why a PPR could not run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PprError {
    #[error("seed node {0} is outside the graph ({1} nodes)")]
    SeedOutOfRange(u32, usize),
    #[error("seed weight {0} is negative or not finite")]
    BadWeight(f64),
    #[error("damping {0} is outside [0, 1)")]
    BadDamping(f64),
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

/// Scores of the exact engine: one per node.
#[derive(Debug, Clone, PartialEq)]
pub struct ExactPpr {
    pub scores: Vec<f64>,
    pub iterations: usize,
    /// L1 change of the last iteration.
    pub l1_change: f64,
}

/// Personalized PageRank by power iteration until the L1 change of an iteration is `< tol`
/// (or `max_iter` iterations). All-zero scores when no seed has positive weight.
///
/// Pull form over the CSR: `next[v] = damping * sum over u in N(v) of x[u] / deg(u) + c * p[v]`,
/// with three dense buffers allocated once per call, none per iteration. Starts from `p` (networkx
/// starts from uniform; the fixed point is the same).
pub fn exact_ppr(
    csr: &Csr,
    seeds: &[(u32, f64)],
    damping: f64,
    tol: f64,
    max_iter: usize,
) -> Result<ExactPpr, PprError> {
    check_damping(damping)?;
    let seeds = normalise_seeds(csr, seeds)?;
    let n = csr.node_count();
    let mut p = vec![0.0f64; n];
    for &(s, w) in &seeds {
        p[s as usize] = w;
    }
    let mut x = p.clone();
    if seeds.is_empty() {
        return Ok(ExactPpr {
            scores: x,
            iterations: 0,
            l1_change: 0.0,
        });
    }
    let inv_deg: Vec<f64> = csr
        .offsets
        .windows(2)
        .map(|w| match w[1] - w[0] {
            0 => 0.0,
            d => 1.0 / f64::from(d),
        })
        .collect();
    let mut scaled = vec![0.0f64; n];
    let mut next = vec![0.0f64; n];
    let mut iterations = 0;
    let mut l1_change = f64::INFINITY;
    while iterations < max_iter {
        iterations += 1;
        let mut dangling = 0.0;
        for ((s, &xi), &inv) in scaled.iter_mut().zip(&x).zip(&inv_deg) {
            if inv == 0.0 {
                dangling += xi;
            }
            *s = xi * inv;
        }
        let teleport = damping * dangling + (1.0 - damping);
        let mut change = 0.0;
        for (v, w) in csr.offsets.windows(2).enumerate() {
            let pulled: f64 = csr.neighbors[w[0] as usize..w[1] as usize]
                .iter()
                .map(|&u| scaled[u as usize])
                .sum();
            let value = damping * pulled + teleport * p[v];
            change += (value - x[v]).abs();
            next[v] = value;
        }
        std::mem::swap(&mut x, &mut next);
        l1_change = change;
        if change < tol {
            break;
        }
    }
    Ok(ExactPpr {
        scores: x,
        iterations,
        l1_change,
    })
}

/// Scores of the push engine: only the nodes it reached.
#[derive(Debug, Clone, PartialEq)]
pub struct PushPpr {
    /// `(node, estimate)` for every node with a positive estimate, sorted by node id.
    pub scores: Vec<(u32, f64)>,
    /// Push operations performed.
    pub pushes: usize,
    /// Residual mass left unpushed (`1 - sum of estimates`).
    pub residual: f64,
}

/// Dense scratch arrays of the push engine, reused across queries so that a query costs what it
/// touches, not the size of the graph. Entries are reset after each run.
#[derive(Debug, Clone, Default)]
pub struct PushWorkspace {
    estimate: Vec<f64>,
    residual: Vec<f64>,
    /// Bit 0: touched (in `touched`), bit 1: queued.
    flags: Vec<u8>,
    touched: Vec<u32>,
    queue: VecDeque<u32>,
}

const TOUCHED: u8 = 1;
const QUEUED: u8 = 2;

impl PushWorkspace {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds mass to v's residual and queues v once it crosses its threshold.
    #[inline]
    fn add(&mut self, v: u32, mass: f64, threshold: f64) {
        let vi = v as usize;
        let f = self.flags[vi];
        if f & TOUCHED == 0 {
            self.touched.push(v);
        }
        self.residual[vi] += mass;
        if f & QUEUED == 0 && self.residual[vi] > threshold {
            self.queue.push_back(v);
            self.flags[vi] = f | TOUCHED | QUEUED;
        } else {
            self.flags[vi] = f | TOUCHED;
        }
    }

    /// Collects the reached nodes' estimates (sorted by node) and clears the touched entries.
    fn finish(&mut self, pushes: usize) -> PushPpr {
        self.touched.sort_unstable();
        let mut scores = Vec::with_capacity(self.touched.len());
        let mut left = 0.0;
        for &v in &self.touched {
            let vi = v as usize;
            if self.estimate[vi] > 0.0 {
                scores.push((v, self.estimate[vi]));
            }
            left += self.residual[vi];
            self.estimate[vi] = 0.0;
            self.residual[vi] = 0.0;
            self.flags[vi] = 0;
        }
        self.touched.clear();
        PushPpr {
            scores,
            pushes,
            residual: left,
        }
    }

    fn prepare(&mut self, n: usize) {
        if self.flags.len() != n {
            self.estimate = vec![0.0; n];
            self.residual = vec![0.0; n];
            self.flags = vec![0; n];
        }
        self.touched.clear();
        self.queue.clear();
    }
}

/// Approximate Personalized PageRank by forward push: every node ends with residual
/// `<= epsilon * max(deg, 1)`. Estimates never exceed the exact scores.
pub fn push_ppr(
    csr: &Csr,
    seeds: &[(u32, f64)],
    damping: f64,
    epsilon: f64,
    ws: &mut PushWorkspace,
) -> Result<PushPpr, PprError> {
    check_damping(damping)?;
    let seeds = normalise_seeds(csr, seeds)?;
    let n = csr.node_count();
    ws.prepare(n);
    let offsets = &csr.offsets;
    let threshold = |v: usize| epsilon * f64::from((offsets[v + 1] - offsets[v]).max(1));
    for &(s, w) in &seeds {
        ws.add(s, w, threshold(s as usize));
    }
    let mut pushes = 0usize;
    while let Some(u) = ws.queue.pop_front() {
        let ui = u as usize;
        ws.flags[ui] &= !QUEUED;
        let r = ws.residual[ui];
        ws.residual[ui] = 0.0;
        ws.estimate[ui] += (1.0 - damping) * r;
        pushes += 1;
        let nbrs = csr.neighbors(u);
        if nbrs.is_empty() {
            // Dangling: networkx sends the mass back along the personalization.
            for &(s, w) in &seeds {
                ws.add(s, damping * r * w, threshold(s as usize));
            }
        } else {
            let share = damping * r / nbrs.len() as f64;
            for &v in nbrs {
                ws.add(v, share, threshold(v as usize));
            }
        }
    }
    Ok(ws.finish(pushes))
}

/// Personalized PageRank to a certified L1 error: forward push in Gauss–Seidel sweeps over the
/// nodes it has reached, until the residual mass left is at most `tol`.
///
/// It keeps push's invariant `pi = e + PPR(r)` with `r >= 0`, so `PPR(r)`, which sums to the
/// residual mass `R`, is the whole error: `0 <= pi(v) - e(v)` and `sum_v (pi(v) - e(v)) = R <= tol`.
/// That is a stronger guarantee than [`exact_ppr`]'s stopping rule (an iteration's L1 change below
/// `tol`, which leaves an error of up to `tol * damping / (1 - damping)`). It only visits the seeds'
/// connected components. A sweep pushes, in node order, every reached node whose degree-normalised
/// residual `r(u) / deg(u)` is at least half the mean `R / vol(reached)` (so each sweep removes a
/// fixed share of `R`); nodes reached during a sweep join it at once.
pub fn sweep_ppr(
    csr: &Csr,
    seeds: &[(u32, f64)],
    damping: f64,
    tol: f64,
    ws: &mut PushWorkspace,
) -> Result<PushPpr, PprError> {
    check_damping(damping)?;
    let seeds = normalise_seeds(csr, seeds)?;
    let n = csr.node_count();
    ws.prepare(n);
    // Queue flags are unused here; `add` with an infinite threshold only marks nodes touched.
    for &(s, w) in &seeds {
        ws.add(s, w, f64::INFINITY);
    }
    let offsets = &csr.offsets;
    let mut total = seeds.iter().map(|&(_, w)| w).sum::<f64>();
    let mut pushes = 0usize;
    let mut sorted_len = 0usize;
    while total > tol && !ws.touched.is_empty() {
        let volume: f64 = ws
            .touched
            .iter()
            .map(|&v| f64::from((offsets[v as usize + 1] - offsets[v as usize]).max(1)))
            .sum();
        let floor = 0.5 * total / volume;
        let mut i = 0;
        while i < ws.touched.len() {
            let u = ws.touched[i];
            i += 1;
            let ui = u as usize;
            let r = ws.residual[ui];
            let deg = offsets[ui + 1] - offsets[ui];
            if r <= 0.0 || r < floor * f64::from(deg.max(1)) {
                continue;
            }
            ws.residual[ui] = 0.0;
            ws.estimate[ui] += (1.0 - damping) * r;
            pushes += 1;
            if deg == 0 {
                for &(s, w) in &seeds {
                    ws.add(s, damping * r * w, f64::INFINITY);
                }
            } else {
                let share = damping * r / f64::from(deg);
                for &v in csr.neighbors(u) {
                    ws.add(v, share, f64::INFINITY);
                }
            }
        }
        // Node order makes the next sweep's memory access sequential.
        if ws.touched.len() > sorted_len + sorted_len / 8 {
            ws.touched.sort_unstable();
            sorted_len = ws.touched.len();
        }
        // Recompute the residual mass now and then: the running total drifts by rounding.
        total = ws.touched.iter().map(|&v| ws.residual[v as usize]).sum();
    }
    Ok(ws.finish(pushes))
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
    pub engine: PprEngine,
    /// `(node, score)`, best first, at most the requested number, each `>= min_score`.
    pub top: Vec<(u32, f64)>,
    /// The score of each input seed, in input order (a seed may fall outside `top`).
    pub seed_scores: Vec<(u32, f64)>,
    /// Power iterations (exact) or push operations (push).
    pub work: usize,
    /// Last L1 change (exact) or residual mass left (push).
    pub error: f64,
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
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_of_two_splits_by_hand() {
        // 0 - 1, seed 0: pi0 = 0.15 + 0.85 pi1, pi1 = 0.85 pi0 -> pi0 = 0.15 / (1 - 0.7225).
        let g = Csr::from_edges(2, [(0, 1)]);
        let r = exact_ppr(&g, &[(0, 2.0)], 0.85, 1e-15, 10_000).unwrap();
        let pi0 = 0.15 / (1.0 - 0.85 * 0.85);
        assert!((r.scores[0] - pi0).abs() < 1e-12);
        assert!((r.scores[1] - 0.85 * pi0).abs() < 1e-12);
        let mut ws = PushWorkspace::new();
        let p = push_ppr(&g, &[(0, 2.0)], 0.85, 1e-14, &mut ws).unwrap();
        assert!((p.scores[0].1 - pi0).abs() < 1e-10);
    }

    #[test]
    fn an_isolated_seed_keeps_its_share_and_dangling_mass_returns_to_the_seeds() {
        // Node 2 is isolated and a seed: its mass goes back along p.
        let g = Csr::from_edges(3, [(0, 1)]);
        let seeds = [(0, 1.0), (2, 1.0)];
        let e = exact_ppr(&g, &seeds, 0.85, 1e-15, 10_000).unwrap();
        assert!((e.scores.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        let mut ws = PushWorkspace::new();
        let p = push_ppr(&g, &seeds, 0.85, 1e-15, &mut ws).unwrap();
        for &(v, s) in &p.scores {
            assert!((e.scores[v as usize] - s).abs() < 1e-10, "{v}");
        }
    }

    #[test]
    fn bad_input_is_an_error_and_no_seed_gives_nothing() {
        let g = Csr::from_edges(2, [(0, 1)]);
        assert_eq!(
            exact_ppr(&g, &[(5, 1.0)], 0.85, 1e-6, 10),
            Err(PprError::SeedOutOfRange(5, 2))
        );
        assert!(exact_ppr(&g, &[(0, f64::NAN)], 0.85, 1e-6, 10).is_err());
        assert!(exact_ppr(&g, &[(0, 1.0)], 1.0, 1e-6, 10).is_err());
        let e = exact_ppr(&g, &[(0, 0.0)], 0.85, 1e-6, 10).unwrap();
        assert!(e.scores.iter().all(|&s| s == 0.0));
        let p = push_ppr(&g, &[], 0.85, 1e-6, &mut PushWorkspace::new()).unwrap();
        assert!(p.scores.is_empty());
    }

    #[test]
    fn top_k_breaks_ties_by_node_and_applies_the_floor() {
        let t = top_k([(3, 0.5), (1, 0.5), (2, 0.9), (0, 1e-6)], 3, 1e-5);
        assert_eq!(t, vec![(2, 0.9), (1, 0.5), (3, 0.5)]);
        assert_eq!(top_k([(3, 0.5), (1, 0.5)], 1, 0.0), vec![(1, 0.5)]);
    }
}
