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
//!   On the MuSiQue-sized graph: 3.9-4.8 ms per query in the recorded runs, 31-39x faster than
//!   [`exact_ppr`] (3.7-4.3 ms with the certificate's sweep on two threads,
//!   [`CertifiedWorkspace::with_threads`], the same bits), every sampled top-100 certified
//!   (numbers in `examples/perf_ppr.rs`).

use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::sync::Arc;

use corpora::graph::Csr;
use serde::{Deserialize, Serialize};

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
    Exact { tol: f64, max_iter: usize },
    /// Forward push with residual threshold `epsilon` (per unit of degree).
    Push { epsilon: f64 },
    /// Partial elimination plus conjugate gradients, refined until a certificate proves the
    /// top-k equal to the exact one up to ties within `tie` ([`certified_ppr`]).
    Certified { tie: f64 },
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
    #[error("seed node {0} is outside the graph ({1} nodes)")]
    SeedOutOfRange(u32, usize),
    #[error("seed weight {0} is negative or not finite")]
    BadWeight(f64),
    #[error("damping {0} is outside [0, 1)")]
    BadDamping(f64),
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
    /// The certified engine's factor, with a cheap key of the graph it was built for (the
    /// factor holds its own copy of the graph, which the certificate is about; see
    /// [`PprFactor`]).
    factor: Option<(FactorKey, Arc<PprFactor>)>,
    certified: CertifiedWorkspace,
}

/// Address of the graph's neighbour array, node count, arc count, damping bits, a sample of
/// the arcs.
type FactorKey = (usize, usize, usize, u64, u64);

/// One eliminated node: id, pivot, off-diagonal entries of its row at elimination.
type EliminatedRow = (u32, f64, Vec<(u32, f64)>);

const TOUCHED: u8 = 1;
const QUEUED: u8 = 2;

impl PushWorkspace {
    pub fn new() -> Self {
        Self::default()
    }

    /// The cached factor for `csr` and `damping`, built when missing.
    fn factor(&mut self, csr: &Csr, damping: f64) -> Result<Arc<PprFactor>, PprError> {
        // The arcs at 64 evenly spaced places: O(1), and with the address and the sizes it
        // tells graphs apart unless one is rebuilt in place into a near copy.
        let arcs = csr.neighbors.len();
        let places = 64.min(arcs);
        let sample = fnv1a((0..places).map(|i| csr.neighbors[i * arcs / places]));
        let key = (
            csr.neighbors.as_ptr() as usize,
            csr.node_count(),
            arcs,
            damping.to_bits(),
            sample,
        );
        if let Some((k, f)) = &self.factor {
            if *k == key {
                return Ok(f.clone());
            }
        }
        let f = Arc::new(PprFactor::build(csr, damping)?);
        self.factor = Some((key, f.clone()));
        Ok(f)
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

/// Elimination stops once every remaining node has more neighbours than this in the elimination
/// graph (leaves and chains add no fill). The measured optimum on the synthetic MuSiQue-sized
/// graph: a lower bound leaves a larger core to CG, a higher one densifies it
/// (`examples/perf_ppr.rs`).
pub const ELIMINATION_MAX_DEGREE: usize = 10;

/// The certified engine's default tie tolerance: rankings may differ only between nodes whose
/// exact scores are within this of each other.
pub const DEFAULT_TIE: f64 = 1e-12;

/// Unit roundoff of f64, doubled: the rounding allowance per floating-point operation.
const ROUND: f64 = f64::EPSILON;

/// Width of [`PprFactor`]'s fixed-width neighbour rows.
const SHORT: usize = 4;

/// Pieces per phase of the certificate's sweep: enough that two threads taking them in turn
/// finish close together, few enough that taking one costs nothing next to its work.
const SWEEP_PIECES: usize = 16;
/// A node's cost in the sweep, in arcs (a rough fit of the sweep's section times on the
/// MuSiQue-sized graph: ~6 ns per node plus ~1 ns per arc).
const SWEEP_NODE_COST: usize = 6;

/// A per-graph preprocessing for [`certified_ppr`]: a partial LDL^T factorization of the
/// symmetric positive definite matrix `M = D - damping * A` (PPR on an undirected graph is
/// `pi = D y` with `M y = (1 - damping) p`), and the graph itself, renumbered.
///
/// Nodes are eliminated in minimum-degree order while their degree in the elimination graph is at
/// most [`ELIMINATION_MAX_DEGREE`] (trees and chains are eliminated without fill); what remains is
/// the core, whose Schur complement `S` is solved per query by conjugate gradients. Every node
/// gets a position: the core first, in breadth-first order (so the CG sweeps read neighbours
/// close in memory); then the eliminated nodes level by level of their elimination tree from the
/// core down (a node's row only names nodes above it, so back-substitution is one forward pass;
/// within a level by row length, so its inner loop runs the same count many times in a row);
/// then the pristine nodes (eliminated with their graph row intact, all leaves of the tree),
/// grouped by row length and neighbour, so a hub's leaves sit side by side; then the isolated
/// nodes. The certificate reads the graph in these positions, so its sweep over the core's and
/// the pristine nodes' arcs reads memory nearby too. The core is stored scaled to unit diagonal
/// and split into its two strict triangles, for the Gauss-Seidel sweeps. [`Symmetry`] classes
/// (nodes with provably equal scores) are computed once here too.
///
/// The factor holds its own copy of the graph, and [`certified_ppr`]'s certificate is about
/// that copy: apply a factor only to the graph it was built from ([`PprFactor::fits`] checks).
#[derive(Debug, Clone)]
pub struct PprFactor {
    damping: f64,
    /// Identity of the graph it was built from: node count, arc count, a checksum.
    key: (usize, usize, u64),
    /// Node id -> position.
    position: Vec<u32>,
    /// Position -> node id.
    order: Vec<u32>,
    /// Positions `0..core` are the core, `core..core + eliminated` the eliminated nodes, of
    /// which those from `pristine` on kept their graph row until eliminated.
    core: usize,
    eliminated: usize,
    pristine: usize,
    /// The a priori residual bound of the eliminated rows.
    solved: Solved,
    /// `(1 / pivot, weight)` of a pristine row of each length `d`: `(1 / d, -damping / d)`,
    /// equal bit for bit to its `inv_pivot` and `elimination` entries.
    pristine_weights: [(f64, f64); ELIMINATION_MAX_DEGREE + 1],
    /// Runs of pristine rows of one length: (first position, row length), by position.
    pristine_runs: Vec<(u32, u32)>,
    /// The same for the other eliminated rows (positions `core..pristine`).
    elimination_runs: Vec<(u32, u32)>,
    /// The graph by position: each position's neighbours' positions, ascending.
    graph: Rows<()>,
    /// The same rows at a fixed width of [`SHORT`] for nodes of degree at most that, padded
    /// with the node count (the certificate's sweep).
    short: Vec<u32>,
    max_degree: usize,
    /// `1 / pivot` of each eliminated node (index: position - core).
    inv_pivot: Vec<f64>,
    /// Each eliminated node's off-diagonal entries of M (after earlier eliminations) at its
    /// elimination over its pivot, by position, all above its own (index: position - core).
    elimination: Rows<f64>,
    /// `1 / sqrt(diagonal)` of the core's Schur complement `S`.
    s_scale: Vec<f64>,
    /// Strict lower triangle of the unit-diagonal scaled `S` (the upper one is its transpose).
    lower: Triangle,
    /// Bounds of the certificate sweep's pieces ([`residual_sweep`]): of the pristine positions,
    /// and of the positions before them (checked on their graph rows).
    pieces: (Vec<u32>, Vec<u32>),
    /// [`Symmetry`] classes, branch tops and pendant parents, by position.
    class: Vec<u32>,
    branch: Vec<u32>,
    up: Vec<u32>,
}

/// `gamma_k = k u / (1 - k u)` (`u` the unit roundoff): the classic bound on the relative
/// rounding of `k` floating-point operations in a row.
fn gamma(k: usize) -> f64 {
    let ku = k as f64 * f64::EPSILON / 2.0;
    ku / (1.0 - ku)
}

/// An a priori bound on the residual of the *solved* rows: the eliminated nodes, whose scores
/// back-substitution (for the pristine ones, the certificate's sweep) computes from their rows
/// of the factor. In exact arithmetic their equations hold whatever the core's values, so their
/// residual is rounding alone, and the certificate bounds it instead of evaluating it arc by
/// arc (those rows hold ~70% of the MuSiQue-sized graph's arcs).
///
/// With `L` the factor's unit lower triangle (its stored, rounded entries), `P` its pivots,
/// `G = L P L^T` and `z`, `q`, `y` the computed forward elimination, its values over the
/// pivots and the solution, a solved row's residual is exactly
/// `r(v) = -f(v) - sum_j L(v,j) (g(j) + P(j) h(j)) + ((G - M) y)(v)`, `j` over `v` and its
/// children, where `f`, `g`, `h` are the roundings of the forward elimination, the division
/// and the back-substitution: `|f(v)| <= gamma (|b(v)| + sum_c |L(v,c)| |z(c)|)`,
/// `|g(j)| <= gamma |z(j)|`, `|h(j)| <= gamma (|q(j)| + sum_p |L(p,j)| |y(p)|)`, with `gamma`
/// over more operations than any of these sums has. `G - M` is measured row by row when the
/// factor is built (its own rounding added). So `|r(v)| <= a(v) B + b(v) Z + c(v) Q + d(v) Y`
/// with `B`, `Z`, `Q`, `Y` the largest `|b|`, `|z|`, `|q|`, `|y|` of the query: four
/// coefficients per row, kept as their largest value, largest value over the node's degree,
/// and sum over the rows.
#[derive(Debug, Clone, Copy, Default)]
struct Solved {
    max: [f64; 4],
    per_degree: [f64; 4],
    sum: [f64; 4],
}

impl Solved {
    /// The coefficients of rows `core..stop` (positions; every eliminated row when `stop` is
    /// their end), from the factor's rows by position (`elimination`, `pivots` from position
    /// `core` on) and the graph by position.
    fn build(
        core: usize,
        stop: usize,
        elimination: &Rows<f64>,
        pivots: &[f64],
        graph: &Rows<()>,
        damping: f64,
    ) -> Solved {
        let end = core + pivots.len();
        let row = |j: usize| {
            let r = elimination.row(j - core);
            elimination.cols[r.clone()].iter().zip(&elimination.vals[r])
        };
        // Each solved row's children: (position j, L(v, j)).
        let mut children: Vec<Vec<(u32, f64)>> = vec![Vec::new(); stop - core];
        for j in core..end {
            for (&x, &l) in row(j) {
                if (core..stop).contains(&(x as usize)) {
                    children[x as usize - core].push((j as u32, l));
                }
            }
        }
        // Operations per sum: a product and a subtraction per term, a few more for the
        // divisions and the measured entries of `G - M`; generous, as it costs nothing.
        let most = children.iter().map(Vec::len).max().unwrap_or(0);
        let g = gamma(2 * (most.max(ELIMINATION_MAX_DEGREE) + 2) + 16);
        let pivot = |j: usize| pivots[j - core];
        // `sum_p |L(p, j)|` of each row, once (a row is the child of up to ten others).
        let mu: Vec<f64> = (core..end)
            .map(|j| row(j).map(|(_, l)| l.abs()).sum())
            .collect();
        let mu = |j: usize| mu[j - core];
        let mut out = Solved::default();
        // Row v of `G - M`: per column, (value, sum of |terms|), and the columns touched.
        let mut diff: Vec<(f64, f64)> = vec![(0.0, 0.0); end];
        let mut touched: Vec<u32> = Vec::new();
        let add = |x: u32, t: f64, diff: &mut [(f64, f64)], touched: &mut Vec<u32>| {
            let e = &mut diff[x as usize];
            if *e == (0.0, 0.0) {
                touched.push(x);
            }
            e.0 += t;
            e.1 += t.abs();
        };
        for v in core..stop {
            let ch = &children[v - core];
            let (mut lambda, mut lp, mut lpm) = (0.0, pivot(v), pivot(v) * mu(v));
            for (j, l) in std::iter::once((v as u32, 1.0)).chain(ch.iter().copied()) {
                let j = j as usize;
                let f = l * pivot(j);
                if j != v {
                    lambda += l.abs();
                    lp += l.abs() * pivot(j);
                    lpm += l.abs() * pivot(j) * mu(j);
                }
                add(j as u32, f, &mut diff, &mut touched);
                for (&x, &l) in row(j) {
                    add(x, f * l, &mut diff, &mut touched);
                }
            }
            // Minus M's row: the degree on the diagonal, -damping at each neighbour.
            let d = graph.row(v).len();
            add(v as u32, -(d as f64), &mut diff, &mut touched);
            for &u in &graph.cols[graph.row(v)] {
                add(u, damping, &mut diff, &mut touched);
            }
            let mut delta = 0.0;
            for x in touched.drain(..) {
                let (x, a) = std::mem::take(&mut diff[x as usize]);
                delta += x.abs() + g * a;
            }
            let coefficients = [g, g * (1.0 + 2.0 * lambda), g * lp, g * lpm + delta];
            for (i, c) in coefficients.into_iter().enumerate() {
                out.max[i] = out.max[i].max(c);
                out.per_degree[i] = out.per_degree[i].max(c / d.max(1) as f64);
                out.sum[i] += c;
            }
        }
        // Pads the rounding of these sums (a relative 1e-9 covers 10^6 terms and more).
        for c in [&mut out.max, &mut out.per_degree, &mut out.sum] {
            for x in c.iter_mut() {
                *x *= 1.0 + 1e-9;
            }
        }
        out
    }

    /// `c . (B, Z, Q, Y)`, padded for its own rounding; not a number when one of them is not.
    fn bound(c: [f64; 4], x: [f64; 4]) -> f64 {
        (c[0] * x[0] + c[1] * x[1] + c[2] * x[2] + c[3] * x[3]) * (1.0 + 1e-9)
    }
}

/// A sparse matrix by rows: columns (u32) and values (`()` for a pattern).
#[derive(Debug, Clone)]
struct Rows<T> {
    offsets: Vec<u32>,
    cols: Vec<u32>,
    vals: Vec<T>,
}

impl<T> Default for Rows<T> {
    fn default() -> Self {
        Rows {
            offsets: vec![0],
            cols: Vec::new(),
            vals: Vec::new(),
        }
    }
}

impl<T> Rows<T> {
    fn row(&self, i: usize) -> std::ops::Range<usize> {
        self.offsets[i] as usize..self.offsets[i + 1] as usize
    }

    fn push_row(&mut self, entries: impl IntoIterator<Item = (u32, T)>) {
        for (c, v) in entries {
            self.cols.push(c);
            self.vals.push(v);
        }
        self.offsets.push(self.cols.len() as u32);
    }
}

/// The strict lower triangle `L` of the core for the CG's two sweeps, in blocks of [`BLOCK`]
/// entries, rows in increasing order; each row's entries padded to whole blocks with zero
/// weights on the row's own position (finite whenever the sweep's input is), rows without
/// entries left out. No loop runs a row-dependent number of times, so a sweep pays no branch
/// misprediction at a row's end, and the upper sweep reads `L` by columns (a scatter), so both
/// sweeps stream the same memory: on the MuSiQue-sized core the pair of sweeps ran ~1.25x
/// faster than gathers over CSR rows of `L` and `L^T` with the caches warm and ~1.6x with them
/// cold, as they are after a query's certificate (a microbenchmark of the pair; a lone CSR
/// sweep repeated looks faster than it runs inside CG, the predictor learning the repeated row
/// lengths).
/// Columns are `u16` where the core allows ([`Triangle`]): a sweep streams the whole
/// triangle, so its bytes count.
#[derive(Debug, Clone, Default)]
struct Blocks<C> {
    cols: Vec<[C; BLOCK]>,
    vals: Vec<[f64; BLOCK]>,
    /// Each block's row, [`FIRST`] set on the row's first block.
    rows: Vec<u32>,
    /// Entries before padding.
    entries: usize,
}

/// Entries per block of [`Blocks`] (8 measured best for the pair of sweeps; 6 a little slower,
/// 16 slower).
const BLOCK: usize = 8;
/// Marks a row's first block in [`Blocks::rows`].
const FIRST: u32 = 1 << 31;

impl<C: Copy + Into<u32> + TryFrom<u32>> Blocks<C> {
    /// Rows `0, 1, ...`, each with its entries (columns below the row, ascending).
    fn from_rows(rows: impl Iterator<Item = Vec<(u32, f64)>>) -> Self {
        let mut blocks = Blocks {
            cols: Vec::new(),
            vals: Vec::new(),
            rows: Vec::new(),
            entries: 0,
        };
        for (i, row) in rows.enumerate() {
            blocks.push_row(i, &row);
        }
        blocks
    }

    /// Appends row `row` (after every earlier row) with its entries, columns below `row`.
    fn push_row(&mut self, row: usize, entries: &[(u32, f64)]) {
        assert!(row < FIRST as usize, "core of 2^31 nodes or more");
        let narrow = |c: u32| C::try_from(c).ok().expect("a column past the index type");
        self.entries += entries.len();
        for (k, chunk) in entries.chunks(BLOCK).enumerate() {
            let (mut cols, mut vals) = ([narrow(row as u32); BLOCK], [0.0; BLOCK]);
            for (j, &(c, w)) in chunk.iter().enumerate() {
                (cols[j], vals[j]) = (narrow(c), w);
            }
            self.cols.push(cols);
            self.vals.push(vals);
            self.rows.push(row as u32 | if k == 0 { FIRST } else { 0 });
        }
    }

    /// `v <- (I + L)^-1 v`: rows first to last, each gathering its columns.
    fn solve_lower(&self, v: &mut [f64]) {
        let Some(last) = v.len().checked_sub(1) else {
            return;
        };
        let mut s = 0.0;
        for ((cols, vals), &r) in self.cols.iter().zip(&self.vals).zip(&self.rows) {
            let row = clamp(r & !FIRST, last);
            let mut p = [0.0; BLOCK];
            for ((p, &c), &w) in p.iter_mut().zip(cols).zip(vals) {
                *p = w * v[clamp(c.into(), last)];
            }
            // Pairwise, in a fixed order.
            let mut m = BLOCK;
            while m > 1 {
                let h = m / 2;
                for j in 0..h {
                    p[j] += p[m - 1 - j];
                }
                m -= h;
            }
            let start = if r & FIRST != 0 { v[row] } else { s };
            s = start - p[0];
            v[row] = s;
        }
    }

    /// `v <- (I + L^T)^-1 v`: rows last to first, each final once reached and scattered into
    /// its columns.
    fn solve_upper(&self, v: &mut [f64]) {
        let Some(last) = v.len().checked_sub(1) else {
            return;
        };
        for ((cols, vals), &r) in self.cols.iter().zip(&self.vals).zip(&self.rows).rev() {
            let x = v[clamp(r & !FIRST, last)];
            for (&c, &w) in cols.iter().zip(vals) {
                v[clamp(c.into(), last)] -= w * x;
            }
        }
    }
}

/// The core's strict lower triangle, with the narrowest column type its size allows.
#[derive(Debug, Clone)]
enum Triangle {
    Narrow(Blocks<u16>),
    Wide(Blocks<u32>),
}

impl Triangle {
    /// Rows `0..n` of `n`, each with its entries (columns below the row, ascending).
    fn new(n: usize, rows: impl Iterator<Item = Vec<(u32, f64)>>) -> Triangle {
        if n <= usize::from(u16::MAX) + 1 {
            Triangle::Narrow(Blocks::from_rows(rows))
        } else {
            Triangle::Wide(Blocks::from_rows(rows))
        }
    }

    fn entries(&self) -> usize {
        match self {
            Triangle::Narrow(b) => b.entries,
            Triangle::Wide(b) => b.entries,
        }
    }

    fn solve_lower(&self, v: &mut [f64]) {
        match self {
            Triangle::Narrow(b) => b.solve_lower(v),
            Triangle::Wide(b) => b.solve_lower(v),
        }
    }

    fn solve_upper(&self, v: &mut [f64]) {
        match self {
            Triangle::Narrow(b) => b.solve_upper(v),
            Triangle::Wide(b) => b.solve_upper(v),
        }
    }
}

/// Index `c`, known to be at most `last`, in a form whose bound the compiler sees: the bounds
/// check of a gather `v[c]` then goes away (a `min` costs less than a compare and branch per
/// entry; ~1.25x on the core's triangular sweeps).
#[inline(always)]
fn clamp(c: u32, last: usize) -> usize {
    debug_assert!(c as usize <= last, "column {c} past {last}");
    (c as usize).min(last)
}

/// Bounds `lo = b0 < b1 < ... = hi` of [`SWEEP_PIECES`] pieces of about equal total `weight`
/// (fewer when the range is short; just `[lo]` when it is empty).
fn cut(lo: usize, hi: usize, weight: impl Fn(usize) -> usize) -> Vec<u32> {
    let total: usize = (lo..hi).map(&weight).sum();
    let mut bounds = vec![lo as u32];
    let mut sum = 0;
    for p in lo..hi {
        sum += weight(p);
        // Piece `k` ends once the running weight reaches `k / SWEEP_PIECES` of the total.
        if sum * SWEEP_PIECES >= total * bounds.len() || p + 1 == hi {
            bounds.push(p as u32 + 1);
        }
    }
    bounds
}

/// Checksum of a graph's CSR (FNV-1a over every offset and neighbour), so a cached factor is
/// never applied to another graph.
fn csr_checksum(csr: &Csr) -> u64 {
    fnv1a(csr.offsets.iter().chain(&csr.neighbors).copied())
}

/// FNV-1a over 32-bit words.
fn fnv1a(words: impl Iterator<Item = u32>) -> u64 {
    words.fold(0xcbf2_9ce4_8422_2325, |h, x| {
        (h ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Classes of nodes whose exact scores are provably equal, built once per graph; per query,
/// seeds split or void them as below (applied in `certify`).
///
/// - Pendant trees (what peeling leaves off the graph removes, rooted where they hang): two
///   nodes whose paths from the same attachment node run through isomorphic rooted subtrees
///   level by level are exchanged by automorphisms that swap isomorphic sibling subtrees and
///   fix everything else, so PPR gives them equal scores when no seed lies in the swapped
///   subtrees. Per query, a class splits by each member's lowest ancestor-or-self whose
///   subtree holds a seed (none when its branch, the subtree hanging off the attachment, holds
///   none): members with the same such ancestor `z` meet at or below `z`, and the subtrees
///   swapped there lie strictly below `z`, so hold no seed; a member that is `z` itself is a
///   class of its own. A hub's leaves are the common case; a hub's isomorphic two-node chains
///   are the next.
/// - The rest (the 2-core): twins, nodes with the same open neighbourhood (`N(u) = N(w)`) or
///   the same closed one (`N[u] = N[w]`). Open twins sum the same neighbours' shares; closed
///   twins have equal degrees and `pi(u) - pi(w) = -damping (pi(u) - pi(w)) / deg`, so both
///   tie when neither is a seed.
#[derive(Debug, Clone)]
struct Symmetry {
    /// Class of each node, [`NO_CLASS`] when it has no other member.
    class: Vec<u32>,
    /// Branch of each pendant node (the node id of its top), [`NO_CLASS`] in the 2-core.
    branch: Vec<u32>,
    /// Parent of each pendant node below the top of its branch, else [`NO_CLASS`].
    up: Vec<u32>,
}

/// No class, no branch, no parent.
const NO_CLASS: u32 = u32::MAX;

impl Symmetry {
    fn build(csr: &Csr) -> Symmetry {
        let n = csr.node_count();
        // Peel leaves, layer by layer: each peeled node's parent is the neighbour left when it
        // went (none for the last node of a tree component, its root: a centre of the tree, so
        // a symmetric tree's symmetric parts hang off one root).
        let mut degree: Vec<u32> = (0..n as u32).map(|v| csr.degree(v) as u32).collect();
        let mut peeled = vec![false; n];
        let mut parent = vec![NO_CLASS; n];
        let mut order: Vec<u32> = Vec::new();
        let mut queue: VecDeque<u32> = (0..n as u32).filter(|&v| degree[v as usize] == 1).collect();
        while let Some(v) = queue.pop_front() {
            if peeled[v as usize] {
                continue;
            }
            peeled[v as usize] = true;
            order.push(v);
            for &u in csr.neighbors(v) {
                if !peeled[u as usize] {
                    parent[v as usize] = u;
                    degree[u as usize] -= 1;
                    if degree[u as usize] == 1 {
                        queue.push_back(u);
                    }
                }
            }
        }
        // Canonical form of each peeled node's rooted subtree (children before parents in
        // peeling order): the sorted forms of its children, interned.
        let mut children: Vec<Vec<u32>> = vec![Vec::new(); n];
        for &v in &order {
            if parent[v as usize] != NO_CLASS && peeled[parent[v as usize] as usize] {
                children[parent[v as usize] as usize].push(v);
            }
        }
        let mut forms: HashMap<Vec<u32>, u32> = HashMap::new();
        let mut form = vec![0u32; n];
        for &v in &order {
            let mut key: Vec<u32> = children[v as usize]
                .iter()
                .map(|&c| form[c as usize])
                .collect();
            key.sort_unstable();
            let next = forms.len() as u32;
            form[v as usize] = *forms.entry(key).or_insert(next);
        }
        // Classes, parents first: (the parent's class, or the parent itself where it is an
        // attachment or a tree's root, and the node's form).
        let mut keys: HashMap<(bool, u32, u32), u32> = HashMap::new();
        let mut class = vec![NO_CLASS; n];
        let mut branch = vec![NO_CLASS; n];
        let mut up = vec![NO_CLASS; n];
        for &v in order.iter().rev() {
            let p = parent[v as usize];
            if p == NO_CLASS {
                continue; // a tree's root: no class, no branch
            }
            let p_is_node = !peeled[p as usize] || parent[p as usize] == NO_CLASS;
            let key = if p_is_node {
                branch[v as usize] = v;
                (true, p, form[v as usize])
            } else {
                branch[v as usize] = branch[p as usize];
                up[v as usize] = p;
                (false, class[p as usize], form[v as usize])
            };
            let next = keys.len() as u32;
            class[v as usize] = *keys.entry(key).or_insert(next);
        }
        // Twins in the 2-core, numbered after the tree classes.
        let offset = keys.len() as u32;
        let neighbourhood = |v: u32, closed: bool| {
            let mut set = csr.neighbors(v).to_vec();
            if closed {
                set.push(v);
            }
            set.sort_unstable();
            set
        };
        // Each 2-core node's two neighbourhoods, numbered by group as first seen.
        let mut groups: HashMap<(bool, Vec<u32>), u32> = HashMap::new();
        let mut size: Vec<u32> = Vec::new();
        let mut of: Vec<(u32, [u32; 2])> = Vec::new();
        for v in (0..n as u32).filter(|&v| !peeled[v as usize] && csr.degree(v) > 0) {
            let ids = [false, true].map(|closed| {
                let next = groups.len() as u32;
                let id = *groups
                    .entry((closed, neighbourhood(v, closed)))
                    .or_insert(next);
                if id == next {
                    size.push(0);
                }
                size[id as usize] += 1;
                id
            });
            of.push((v, ids));
        }
        // No node has twins of both kinds (an open twin `w` of `u` and a closed twin `x` of
        // `u` would make `w` both a neighbour of `x` and not one), so one class per node.
        for (v, ids) in of {
            for id in ids {
                if size[id as usize] > 1 {
                    class[v as usize] = offset + id;
                }
            }
        }
        // Tree classes with one member name nothing.
        let mut members: HashMap<u32, u32> = HashMap::new();
        for &c in &class {
            if c != NO_CLASS {
                *members.entry(c).or_insert(0) += 1;
            }
        }
        for c in &mut class {
            if *c != NO_CLASS && members[c] < 2 {
                *c = NO_CLASS;
            }
        }
        Symmetry { class, branch, up }
    }
}

impl PprFactor {
    /// Orders and factors the graph (once per graph and damping; about half a second on the
    /// MuSiQue-sized graph, symmetry classes included).
    pub fn build(csr: &Csr, damping: f64) -> Result<PprFactor, PprError> {
        check_damping(damping)?;
        let n = csr.node_count();
        // Elimination graph: off-diagonal entries of the current Schur complement.
        let mut adj: Vec<HashMap<u32, f64>> = (0..n as u32)
            .map(|v| csr.neighbors(v).iter().map(|&u| (u, -damping)).collect())
            .collect();
        let mut pivot: Vec<f64> = (0..n as u32).map(|v| csr.degree(v) as f64).collect();
        let mut alive: Vec<bool> = (0..n as u32).map(|v| csr.degree(v) > 0).collect();
        let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); ELIMINATION_MAX_DEGREE + 1];
        for v in 0..n {
            if alive[v] && adj[v].len() <= ELIMINATION_MAX_DEGREE {
                buckets[adj[v].len()].push(v as u32);
            }
        }
        let mut eliminated: Vec<EliminatedRow> = Vec::new();
        let mut current = 0;
        loop {
            while current <= ELIMINATION_MAX_DEGREE && buckets[current].is_empty() {
                current += 1;
            }
            if current > ELIMINATION_MAX_DEGREE {
                break;
            }
            let v = buckets[current].pop().expect("non-empty bucket") as usize;
            // Stale bucket entries (the node's degree changed since) are skipped.
            if !alive[v] || adj[v].len() != current {
                continue;
            }
            alive[v] = false;
            let mut row: Vec<(u32, f64)> = adj[v].drain().collect();
            // Sorted so that the fill's floating-point sums run in the same order every build.
            row.sort_unstable_by_key(|e| e.0);
            let pv = pivot[v];
            for &(a, _) in &row {
                adj[a as usize].remove(&(v as u32));
            }
            for &(a, wa) in &row {
                pivot[a as usize] -= wa * wa / pv;
                for &(b, wb) in &row {
                    if a != b {
                        *adj[a as usize].entry(b).or_insert(0.0) -= wa * wb / pv;
                    }
                }
            }
            for &(a, _) in &row {
                let d = adj[a as usize].len();
                if d <= ELIMINATION_MAX_DEGREE {
                    buckets[d].push(a);
                    current = current.min(d);
                }
            }
            eliminated.push((v as u32, pv, row));
        }
        // Core in breadth-first order from its lowest node id, component by component.
        let mut order: Vec<u32> = Vec::with_capacity(n);
        let mut seen = vec![false; n];
        for s in 0..n {
            if !alive[s] || seen[s] {
                continue;
            }
            seen[s] = true;
            let mut head = order.len();
            order.push(s as u32);
            while head < order.len() {
                let u = order[head] as usize;
                head += 1;
                let mut next: Vec<u32> = adj[u]
                    .keys()
                    .copied()
                    .filter(|&w| !seen[w as usize])
                    .collect();
                next.sort_unstable();
                for w in next {
                    seen[w as usize] = true;
                    order.push(w);
                }
            }
        }
        let core = order.len();
        let mut position = vec![u32::MAX; n];
        for (i, &v) in order.iter().enumerate() {
            position[v as usize] = i as u32;
        }
        // Elimination tree: a node's parent is the first of its row's nodes to be eliminated
        // after it; every other node of its row is an ancestor (the row was a clique when it
        // went), so parents-first order puts each row above its node. Rows that name only
        // core nodes hang from the core, ordered by their first core node.
        let mut step = vec![u32::MAX; n];
        for (i, e) in eliminated.iter().enumerate() {
            step[e.0 as usize] = i as u32;
        }
        let mut children: Vec<Vec<u32>> = vec![Vec::new(); eliminated.len()];
        let mut roots: Vec<(u32, u32)> = Vec::new();
        for (i, (_, _, row)) in eliminated.iter().enumerate() {
            match row.iter().map(|&(a, _)| step[a as usize]).min() {
                Some(p) if p != u32::MAX => children[p as usize].push(i as u32),
                _ => {
                    let anchor = row.iter().map(|&(a, _)| position[a as usize]).min();
                    roots.push((anchor.unwrap_or(u32::MAX), i as u32));
                }
            }
        }
        roots.sort_unstable();
        let mut tree_order: Vec<u32> = roots.iter().map(|r| r.1).collect();
        let mut level = vec![0u32; eliminated.len()];
        let mut head = 0;
        while head < tree_order.len() {
            let i = tree_order[head] as usize;
            head += 1;
            for &ch in &children[i] {
                level[ch as usize] = level[i] + 1;
            }
            tree_order.extend_from_slice(&children[i]);
        }
        debug_assert_eq!(tree_order.len(), eliminated.len());
        // Nodes of one level never depend on each other, so within a level rows go by length
        // (the substitution's inner loop then runs the same count many times in a row, which
        // branch prediction rewards), then in breadth-first order.
        let rank: Vec<u32> = {
            let mut r = vec![0u32; eliminated.len()];
            for (k, &i) in tree_order.iter().enumerate() {
                r[i as usize] = k as u32;
            }
            r
        };
        // Pristine nodes: eliminated with their graph row intact (every neighbour still there,
        // no fill, pivot = degree), so their substitution reads their graph row with weights
        // that depend on its length only (see `residual_sweep`). Every ancestor in the
        // elimination tree lost a neighbour to an earlier elimination, so pristine nodes are
        // leaves of the tree and may all go last.
        let pristine = |i: usize| {
            let (v, pv, row) = &eliminated[i];
            let mut graph_row = csr.neighbors(*v).to_vec();
            graph_row.sort_unstable();
            graph_row.dedup();
            *pv == graph_row.len() as f64
                && row.len() == graph_row.len()
                && row
                    .iter()
                    .zip(&graph_row)
                    .all(|(e, &u)| e.0 == u && e.1 == -damping)
        };
        let (mut last, mut first): (Vec<u32>, Vec<u32>) =
            tree_order.iter().partition(|&&i| pristine(i as usize));
        first.sort_by_key(|&i| {
            let i = i as usize;
            (level[i], eliminated[i].2.len(), rank[i])
        });
        for &i in &first {
            let v = eliminated[i as usize].0;
            position[v as usize] = order.len() as u32;
            order.push(v);
        }
        let pristine_start = order.len();
        // By row length (runs of equal inner-loop counts), then by their first neighbour.
        last.sort_by_key(|&i| {
            let row = &eliminated[i as usize].2;
            let anchor = row.iter().map(|&(a, _)| position[a as usize]).min();
            (row.len(), anchor, i)
        });
        for &i in &last {
            let v = eliminated[i as usize].0;
            position[v as usize] = order.len() as u32;
            order.push(v);
        }
        let tree_order: Vec<u32> = first.into_iter().chain(last).collect();
        for v in (0..n as u32).filter(|&v| csr.degree(v) == 0) {
            position[v as usize] = order.len() as u32;
            order.push(v);
        }
        let mut elimination = Rows::default();
        let mut inv_pivot = Vec::with_capacity(eliminated.len());
        let mut pivots = Vec::with_capacity(eliminated.len());
        for &i in &tree_order {
            let (v, pv, row) = &eliminated[i as usize];
            pivots.push(*pv);
            let mut entries: Vec<(u32, f64)> = row
                .iter()
                .map(|&(a, w)| (position[a as usize], w))
                .collect();
            entries.sort_unstable_by_key(|e| e.0);
            debug_assert!(entries.iter().all(|e| e.0 < position[*v as usize]));
            // Over the pivot: the substitutions then need the pivot only where there is mass.
            elimination.push_row(entries.into_iter().map(|(a, w)| (a, w / pv)));
            inv_pivot.push(1.0 / pv);
        }
        // The core's Schur complement S, symmetrically scaled to unit diagonal
        // (`D^-1/2 S D^-1/2 = I + L + L^T`): its strict lower triangle `L` serves both sweeps
        // of the symmetric Gauss-Seidel preconditioner.
        let s_scale: Vec<f64> = order[..core]
            .iter()
            .map(|&v| 1.0 / pivot[v as usize].sqrt())
            .collect();
        let lower = Triangle::new(
            core,
            order[..core].iter().enumerate().map(|(me, &v)| {
                let mut row: Vec<(u32, f64)> = adj[v as usize]
                    .iter()
                    .map(|(&a, &w)| {
                        let a = position[a as usize];
                        (a, w * s_scale[me] * s_scale[a as usize])
                    })
                    .filter(|e| (e.0 as usize) < me)
                    .collect();
                row.sort_unstable_by_key(|e| e.0);
                row
            }),
        );
        let mut graph = Rows::default();
        for &v in &order {
            let mut row: Vec<u32> = csr
                .neighbors(v)
                .iter()
                .map(|&u| position[u as usize])
                .collect();
            row.sort_unstable();
            graph.push_row(row.into_iter().map(|u| (u, ())));
        }
        let mut short = vec![n as u32; SHORT * n];
        for (p, row) in short.chunks_exact_mut(SHORT).enumerate() {
            let r = graph.row(p);
            if r.len() <= SHORT {
                row[..r.len()].copy_from_slice(&graph.cols[r]);
            }
        }
        let pristine_weights: [(f64, f64); ELIMINATION_MAX_DEGREE + 1] =
            std::array::from_fn(|d| (1.0 / d as f64, -damping / d as f64));
        for p in pristine_start..core + eliminated.len() {
            let r = elimination.row(p - core);
            let (inv, w) = pristine_weights[r.len()];
            assert!(
                inv_pivot[p - core] == inv && elimination.vals[r].iter().all(|&x| x == w),
                "a pristine row whose weights are not -damping / degree"
            );
        }
        let end = core + eliminated.len();
        // Runs of equal row lengths: (first position, length).
        let runs = |from: usize, to: usize| {
            let mut runs: Vec<(u32, u32)> = Vec::new();
            for p in from..to {
                let d = elimination.row(p - core).len() as u32;
                if runs.last().is_none_or(|r| r.1 != d) {
                    runs.push((p as u32, d));
                }
            }
            runs
        };
        let elimination_runs = runs(core, pristine_start);
        let pristine_runs = runs(pristine_start, end);
        assert!(
            pristine_runs.windows(2).all(|w| w[0].1 < w[1].1),
            "pristine rows out of length order"
        );
        let solved = Solved::build(core, end, &elimination, &pivots, &graph, damping);
        // The solved rows before the pristine ones are only scored in the sweep's second phase.
        let weight = |p: usize| SWEEP_NODE_COST + graph.row(p).len();
        let pieces = (
            cut(pristine_start, end, weight),
            cut(0, pristine_start, |p| if p < core { weight(p) } else { 1 }),
        );
        let symmetry = Symmetry::build(csr);
        let class = order.iter().map(|&v| symmetry.class[v as usize]).collect();
        let at = |v: u32| {
            if v == NO_CLASS {
                NO_CLASS
            } else {
                position[v as usize]
            }
        };
        let branch = order
            .iter()
            .map(|&v| at(symmetry.branch[v as usize]))
            .collect();
        let up = order.iter().map(|&v| at(symmetry.up[v as usize])).collect();
        Ok(PprFactor {
            damping,
            key: (n, csr.neighbors.len(), csr_checksum(csr)),
            position,
            order,
            core,
            eliminated: eliminated.len(),
            pristine: pristine_start,
            solved,
            pristine_weights,
            pristine_runs,
            elimination_runs,
            max_degree: (0..n as u32).map(|v| csr.degree(v)).max().unwrap_or(0),
            graph,
            short,
            inv_pivot,
            elimination,
            s_scale,
            lower,
            pieces,
            class,
            branch,
            up,
        })
    }

    /// Nodes solved by elimination and nodes left to the iterative core solve.
    pub fn sizes(&self) -> (usize, usize) {
        (self.eliminated, self.core)
    }

    /// Stored entries: (elimination factor, one strict triangle of the core's Schur complement).
    pub fn entries(&self) -> (usize, usize) {
        (self.elimination.cols.len(), self.lower.entries())
    }

    /// Whether this factor was built from `csr` with `damping` (checks the full checksum:
    /// O(edges), about what one sweep of the solve costs).
    pub fn fits(&self, csr: &Csr, damping: f64) -> bool {
        self.damping == damping
            && self.key == (csr.node_count(), csr.neighbors.len(), csr_checksum(csr))
    }
}

/// Dense buffers of [`certified_ppr`], reused across queries; they also keep the last query's
/// solution, from which [`CertifiedWorkspace::score`] reads any node's score.
#[derive(Debug, Clone, Default)]
pub struct CertifiedWorkspace {
    /// Right-hand side by position; all zero between queries.
    rhs: Vec<f64>,
    /// Eliminated positions the forward elimination reached, with their right-hand side over
    /// the pivot (descending while built, then ascending).
    reached: Vec<(u32, f64)>,
    mark: Vec<bool>,
    heap: BinaryHeap<u32>,
    /// The solution `y` by position (`pi = scale D y` off the isolated nodes).
    y: Vec<f64>,
    /// `1 / (1 - damping q)`, `q` the isolated seeds' share (0 before any query).
    scale: f64,
    /// Seeds by position, with their teleport mass `(1 - damping) p(v)`.
    seeds: Vec<(u32, f64)>,
    /// Nodes whose score may reach the floor: (position, score, padded |residual|).
    candidates: Vec<(u32, f64, f64)>,
    /// The largest `|b|`, `|z|`, `|q|` of the last forward elimination ([`Solved`]).
    known: [f64; 3],
    cg: [Vec<f64>; 5],
    /// Threads of the certificate's sweep (0 and 1: the caller's alone).
    threads: usize,
}

impl CertifiedWorkspace {
    /// A workspace whose certificate sweeps run on `threads` threads (the caller's and, for 2,
    /// one more per sweep; more than 2 count as 2). Results are bit for bit the same for every
    /// count: the sweep's pieces are merged in a fixed order.
    pub fn with_threads(threads: usize) -> Self {
        CertifiedWorkspace {
            threads: threads.clamp(1, 2),
            ..Self::default()
        }
    }

    /// The last query's score of node `v` (0 before any query), from its solution: `scale d(v)
    /// y(v)`, or the closed form of an isolated node.
    pub fn score(&self, factor: &PprFactor, v: u32) -> f64 {
        let Some(&p) = factor.position.get(v as usize) else {
            return 0.0;
        };
        let p = p as usize;
        match factor.graph.row(p).len() {
            0 => match self.seeds.binary_search_by_key(&(p as u32), |s| s.0) {
                Ok(i) => self.scale * self.seeds[i].1,
                Err(_) => 0.0,
            },
            d => self.y.get(p).map_or(0.0, |&y| self.scale * d as f64 * y),
        }
    }

    /// The last query's scores by node id.
    pub fn scores(&self, factor: &PprFactor) -> Vec<f64> {
        (0..factor.position.len() as u32)
            .map(|v| self.score(factor, v))
            .collect()
    }
}

/// The result of [`certified_ppr`] (every node's score stays readable in the workspace).
#[derive(Debug, Clone, PartialEq)]
pub struct CertifiedPpr {
    /// The `k` best nodes scoring at least `min_score`, best first, ties by node id.
    pub top: Vec<(u32, f64)>,
    /// Whether the certificate proved `top` equal to the exact top-k up to `tie` (see
    /// [`certified_ppr`]).
    pub certified: bool,
    /// The largest certified error bound `|pi(v) - score(v)|` over the nodes of `top`.
    pub top_error: f64,
    /// An upper bound on the certified error bound of every node.
    pub max_error: f64,
    /// Conjugate-gradient iterations on the core.
    pub iterations: usize,
    /// Certificate checks (each one a back-substitution and a residual sweep).
    pub checks: usize,
}

/// First CG tolerance (preconditioned residual norm relative to its start). A check costs
/// about four iterations; with the symmetry classes taking the exact ties off the table, 1e-7
/// certifies 95% of the MuSiQue-sized graph's queries at the first check in ~5 iterations
/// (1e-6: 5.1 iterations, 1.07 checks; 1e-8: 6.0, 1.00; `examples/perf_ppr.rs`). A failed check
/// tightens it by a quarter of its own estimate of the narrowing its bounds need, between 10x
/// and 10x [`TIGHTEN`]'s.
const FIRST_TOLERANCE: f64 = 1e-7;
/// The narrowing assumed where a failed check cannot estimate it.
const TIGHTEN: f64 = 1e-3;

/// `sum a[i] * b[i]` in four interleaved partial sums (a fixed order: the same result on
/// every run).
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut acc = [0.0; 4];
    let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for j in 0..4 {
            acc[j] += x[j] * y[j];
        }
    }
    let tail: f64 = ra.iter().zip(rb).map(|(x, y)| x * y).sum();
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// Personalized PageRank by partial elimination plus conjugate gradients, with a certificate
/// that its top-k is the exact one.
///
/// Solves `M y = (1 - damping) p` (see [`PprFactor`]): forward elimination along the seeds'
/// paths up the elimination tree, CG on the core's Schur complement (preconditioned by
/// symmetric Gauss-Seidel, applied by Eisenstat's trick at the cost of one product per
/// iteration; M is SPD and its diagonally scaled form has condition number at most `(1 +
/// damping) / (1 - damping)`), back-substitution, `pi = D y`. Isolated seeds are exact in
/// closed form: with `q` their share of `p`, networkx's dangling rule gives them `(1 - damping)
/// p(v) / (1 - damping q)` and scales every other score by `1 / (1 - damping q)`. Every node's
/// score stays readable through [`CertifiedWorkspace::score`].
///
/// Certificate: the residual `r = (1 - damping) p - pi~ + damping A D^-1 pi~` is evaluated on
/// the factor's copy of the graph at the core's nodes, whatever computed their scores (it is
/// zero at the isolated ones); at the eliminated nodes, whose equations back-substitution
/// solves exactly but for rounding, it is bounded a priori from the factor's measured backward
/// error and the substitutions' rounding ([`Solved`]). The error `e = pi - pi~` solves
/// `e = r + damping A D^-1 e`. On an undirected
/// graph the PPR of any vector `x` at `t` is `d(t) sum_v (x(v)/d(v)) pi_t(v)`, so
/// `|e(t)| <= d(t) B` with `B = max_v |r(v)|/d(v) / (1 - damping)`; `A D^-1` is
/// column-stochastic, so also `||e||_1 <= ||r||_1 / (1 - damping)`; one step of the equation
/// gives `|e(t)| <= |r(t)| + damping min(d(t) B, ||e||_1)`. Every `|r(v)|` is padded by a
/// bound on the rounding of its own evaluation. Nodes of a [`Symmetry`] class have equal exact
/// scores unless a seed voids the class, so each node's interval `[lo, hi]` (score minus and
/// plus its bound) narrows to the intersection of its class's, and such ties need no
/// separating. The
/// ranking is certified when (i) each listed node's `lo` is at least `hi - tie` of every later
/// listed node of another class, (ii) each listed node has `lo >= min_score - tie`, and (iii)
/// every other node has `hi < min_score + tie` or, when `k` nodes are listed, `hi <= lo + tie`
/// for every listed node (of another class, if one of its class is listed). Then, position by
/// position, the listed node is the exact ranking's node or has an exact score within `tie` of
/// it. CG is tightened until certified or until its relative residual reaches 1e-16;
/// `certified` says which.
pub fn certified_ppr(
    factor: &PprFactor,
    csr: &Csr,
    seeds: &[(u32, f64)],
    k: usize,
    min_score: f64,
    tie: f64,
    ws: &mut CertifiedWorkspace,
) -> Result<CertifiedPpr, PprError> {
    let damping = factor.damping;
    check_damping(damping)?;
    let seeds = normalise_seeds(csr, seeds)?;
    let n = csr.node_count();
    if factor.key.0 != n || factor.key.1 != csr.neighbors.len() {
        return Err(PprError::FactorMismatch);
    }
    debug_assert!(
        factor.fits(csr, damping),
        "a PPR factor applied to another graph"
    );
    let mut result = CertifiedPpr {
        top: Vec::new(),
        certified: true,
        top_error: 0.0,
        max_error: 0.0,
        iterations: 0,
        checks: 0,
    };
    ws.seeds.clear();
    ws.scale = 0.0;
    if seeds.is_empty() {
        return Ok(result);
    }
    let isolated: f64 = seeds
        .iter()
        .filter(|&&(s, _)| csr.degree(s) == 0)
        .map(|&(_, w)| w)
        .sum();
    ws.scale = 1.0 / (1.0 - damping * isolated);
    let (c, e) = (factor.core, factor.eliminated);
    ws.rhs.resize(n, 0.0);
    ws.mark.resize(n, false);
    ws.y.resize(n + 1, 0.0);
    ws.seeds.extend(
        seeds
            .iter()
            .map(|&(v, w)| (factor.position[v as usize], (1.0 - damping) * w)),
    );
    ws.seeds.sort_unstable_by_key(|s| s.0);
    factor.forward(ws);
    // Taken out of the workspace while `certify` borrows the rest of it.
    let mut cg = std::mem::take(&mut ws.cg);
    let [x, r, z, p, q] = &mut cg;
    for v in [&mut *x, &mut *r, &mut *z, &mut *p, &mut *q] {
        v.clear();
        v.resize(c, 0.0);
    }
    // CG on the split-preconditioned system `(I + L)^-1 A (I + L^T)^-1 u = (I + L)^-1 b'`
    // (symmetric Gauss-Seidel on the scaled core `A = I + L + L^T`, `b' = D^-1/2 b`), its
    // product by Eisenstat's trick: with `t = (I + L^T)^-1 p`, it is `t + (I + L)^-1 (p - t)`,
    // one sweep of each triangle, as many entries as one product by `A`. The iterate is kept
    // as `x = (I + L^T)^-1 u`, updated by `a t`, so the solution needs no further sweep.
    for ((ri, &b), &f) in r.iter_mut().zip(&ws.rhs[..c]).zip(&factor.s_scale) {
        *ri = b * f;
    }
    factor.lower.solve_lower(r);
    p.copy_from_slice(r);
    let mut rz = dot(r, r);
    let rz0 = rz;
    let mut tau = FIRST_TOLERANCE;
    loop {
        // CG until the preconditioned residual norm drops below tau relative to the start.
        while rz > 0.0 && rz > tau * tau * rz0 && result.iterations < 1000 {
            result.iterations += 1;
            q.copy_from_slice(p);
            factor.lower.solve_upper(q);
            for ((zi, &pi), &qi) in z.iter_mut().zip(p.iter()).zip(q.iter()) {
                *zi = pi - qi;
            }
            factor.lower.solve_lower(z);
            // The product is `q + z`.
            for (zi, &qi) in z.iter_mut().zip(q.iter()) {
                *zi += qi;
            }
            let a = rz / dot(p, z);
            for (xi, &qi) in x.iter_mut().zip(q.iter()) {
                *xi += a * qi;
            }
            for (ri, &zi) in r.iter_mut().zip(z.iter()) {
                *ri -= a * zi;
            }
            let rz_next = dot(r, r);
            let beta = rz_next / rz;
            rz = rz_next;
            for (pi, &ri) in p.iter_mut().zip(r.iter()) {
                *pi = ri + beta * *pi;
            }
        }
        // Core solution `D^-1/2 x`, then back-substitution, all by position.
        for ((yi, &xi), &f) in ws.y[..c].iter_mut().zip(x.iter()).zip(&factor.s_scale) {
            *yi = xi * f;
        }
        factor.back_substitute(&ws.reached, &mut ws.y[..c + e]);
        // Isolated nodes, and the zero that pads `short`.
        for yi in &mut ws.y[c + e..] {
            *yi = 0.0;
        }
        result.checks += 1;
        let last = rz <= 0.0 || tau <= 1e-16 || result.iterations >= 1000;
        let mut shrink = 1.0;
        if certify(
            factor,
            k,
            min_score,
            tie,
            last,
            ws,
            &mut result,
            &mut shrink,
        ) || last
        {
            break;
        }
        // The bounds scale with the residual: aim a few times below the estimate.
        tau *= (shrink / 4.0).clamp(TIGHTEN * 0.1, 0.1);
    }
    ws.cg = cg;
    // Leave the right-hand side all zero for the next query.
    for v in &mut ws.rhs[..c] {
        *v = 0.0;
    }
    for &(p, _) in &ws.reached {
        ws.rhs[p as usize] = 0.0;
        ws.mark[p as usize] = false;
    }
    ws.reached.clear();
    for &(p, _) in &ws.seeds {
        ws.rhs[p as usize] = 0.0;
    }
    Ok(result)
}

impl PprFactor {
    /// Forward elimination of the query's seeds (`ws.seeds`, by position, sorted), children
    /// before parents: only the seeds' ancestors get mass. Leaves the core's right-hand side in
    /// `ws.rhs`, the eliminated positions reached in `ws.reached` (ascending), and the largest
    /// values met in `ws.known`.
    fn forward(&self, ws: &mut CertifiedWorkspace) {
        let (c, e) = (self.core, self.eliminated);
        for &(p, t) in &ws.seeds {
            let p = p as usize;
            if p < c + e {
                ws.rhs[p] += t;
            }
            if (c..c + e).contains(&p) && !ws.mark[p] {
                ws.mark[p] = true;
                ws.heap.push(p as u32);
            }
        }
        let b_max = ws.seeds.iter().fold(0.0, |m: f64, s| m.max(s.1));
        let (mut z_max, mut q_max): (f64, f64) = (0.0, 0.0);
        while let Some(p) = ws.heap.pop() {
            let p = p as usize;
            let b = ws.rhs[p];
            let q = b * self.inv_pivot[p - c];
            (z_max, q_max) = (z_max.max(b.abs()), q_max.max(q.abs()));
            ws.reached.push((p as u32, q));
            let row = self.elimination.row(p - c);
            for (&a, &w) in self.elimination.cols[row.clone()]
                .iter()
                .zip(&self.elimination.vals[row])
            {
                let a = a as usize;
                ws.rhs[a] -= w * b;
                if a >= c && !ws.mark[a] {
                    ws.mark[a] = true;
                    ws.heap.push(a as u32);
                }
            }
        }
        ws.reached.reverse();
        ws.known = [b_max, z_max, q_max];
    }

    /// Back-substitution, parents first: `y` holds the core's solution on entry and every
    /// eliminated node's but the pristine ones' on return (those are substituted in
    /// [`residual_sweep`]); `reached` lists the eliminated positions with a right-hand side
    /// (over the pivot), ascending.
    #[inline(never)]
    fn back_substitute(&self, reached: &[(u32, f64)], y: &mut [f64]) {
        let c = self.core;
        let mut next = reached.iter().peekable();
        let Some(last) = y.len().checked_sub(1) else {
            return;
        };
        // Runs of one row length ([`PprFactor::build`] sorts a level's rows by length): no
        // row offsets to read, and a fixed inner count the compiler unrolls for short rows.
        for (k, &(start, d)) in self.elimination_runs.iter().enumerate() {
            let (start, d) = (start as usize, d as usize);
            let stop = self
                .elimination_runs
                .get(k + 1)
                .map_or(self.pristine, |r| r.0 as usize);
            let a = self.elimination.offsets[start - c] as usize;
            let z = a + d * (stop - start);
            let (cols, vals) = (&self.elimination.cols[a..z], &self.elimination.vals[a..z]);
            let mut rows = |d: usize| {
                for v in start..stop {
                    let mut s = 0.0;
                    if let Some(&&(p, b)) = next.peek() {
                        if p as usize == v {
                            s = b;
                            next.next();
                        }
                    }
                    let i = (v - start) * d;
                    for (&col, &w) in cols[i..i + d].iter().zip(&vals[i..i + d]) {
                        s -= w * y[clamp(col, last)];
                    }
                    y[v] = s;
                }
            };
            // Rows left without entries (a component's last node) take the `_` arm.
            match d {
                1 => rows(1),
                2 => rows(2),
                3 => rows(3),
                4 => rows(4),
                _ => rows(d),
            }
        }
    }
}

/// What [`residual_sweep`] found besides the candidates.
#[derive(Debug, Default)]
struct Sweep {
    /// `max |r(v)| / d(v)` over every node, `|r(v)|` padded for rounding.
    b_max: f64,
    /// Over the nodes not collected: the largest `|score|` and the largest padded `|r(v)|`.
    rest_score: f64,
    rest_slack: f64,
    /// Sum of every padded `|r(v)|` (not finite when some score is not: its residual is then
    /// not finite either).
    slack_sum: f64,
    /// The largest `|y(v)|` seen (for the bound of the solved rows, [`Solved`]).
    y_max: f64,
    /// The sum of the solved rows' `y(v)`: not finite when one is not (their residual is
    /// bounded, not evaluated, so nothing else would notice).
    check: f64,
}

impl Sweep {
    /// Adds another part of the sweep's findings (in a fixed order: the sum's rounding then
    /// does not depend on how the parts were scheduled).
    fn merge(&mut self, other: &Sweep) {
        self.b_max = self.b_max.max(other.b_max);
        self.rest_score = self.rest_score.max(other.rest_score);
        self.rest_slack = self.rest_slack.max(other.rest_slack);
        self.slack_sum += other.slack_sum;
        self.y_max = self.y_max.max(other.y_max);
        self.check += other.check;
    }

    /// Takes a solved row's node (position `v`, solution `y`) into account; its residual bound
    /// comes later ([`residual_sweep`]), so a candidate's is left not a number until then.
    #[inline(always)]
    fn solved(
        &mut self,
        v: usize,
        y: f64,
        score: f64,
        pre_cut: f64,
        candidates: &mut Vec<(u32, f64, f64)>,
    ) {
        self.check += y;
        self.y_max = self.y_max.max(y.abs());
        if score >= pre_cut {
            push(candidates, (v as u32, score, f64::NAN));
        } else {
            self.rest_score = self.rest_score.max(score.abs());
        }
    }

    /// Takes one node (position `v`, degree `d`) into account.
    #[inline(always)]
    fn take(
        &mut self,
        v: usize,
        d: f64,
        score: f64,
        slack: f64,
        pre_cut: f64,
        candidates: &mut Vec<(u32, f64, f64)>,
    ) {
        // `max(slack / d)` without a division per node (b_max never decreases, so a skipped
        // node has `slack / d <= b_max (1 + u)`); `certify`'s factor on `b_max` covers that and
        // the division's rounding. Isolated nodes (d = 0) have no residual.
        if slack > self.b_max * d {
            self.b_max = self.b_max.max(slack / d);
        }
        self.slack_sum += slack;
        if score >= pre_cut {
            push(candidates, (v as u32, score, slack));
        } else {
            self.rest_score = self.rest_score.max(score.abs());
            self.rest_slack = self.rest_slack.max(slack);
        }
    }
}

/// Out of the sweep's loops: taken for a few nodes only.
#[inline(never)]
#[cold]
fn push(candidates: &mut Vec<(u32, f64, f64)>, c: (u32, f64, f64)) {
    candidates.push(c);
}

/// `d y(v)` and the padded residual `|t - d y(v) + damping sum y(u)|` of a node's equation
/// (`t` its teleport mass, the sums over its neighbours).
#[inline(always)]
fn residual(t: f64, d: f64, y: f64, pulled: f64, pulled_abs: f64, damping: f64) -> (f64, f64) {
    let own = d * y;
    let r = t - own + damping * pulled;
    let magnitude = t + own.abs() + damping * pulled_abs;
    (own, r.abs() + (d + 4.0) * ROUND * magnitude)
}

/// Teleport mass of position `v` from seeds sorted by position (advanced as `v` grows; seeds
/// of positions skipped over are passed).
#[inline(always)]
fn teleport(next: &mut std::iter::Peekable<std::slice::Iter<'_, (u32, f64)>>, v: usize) -> f64 {
    while let Some(&&(s, t)) = next.peek() {
        if s as usize > v {
            break;
        }
        next.next();
        if s as usize == v {
            return t;
        }
    }
    0.0
}

/// One pass over the nodes: each node's score and padded residual (for the solved rows, every
/// eliminated node, their a priori bound, [`Solved`]); nodes scoring at least `pre_cut` go to
/// `candidates` as (position, score, padded |r|). `y` has one more entry than the graph has
/// nodes, a zero (the padding of `short`, the neighbours of nodes of degree at most [`SHORT`]).
/// Pristine nodes are substituted here, from their row, which is their graph row (see
/// [`PprFactor::build`]); the core's nodes are checked against the graph's rows.
///
/// The pass goes in two phases, each over fixed pieces ([`PprFactor::pieces`]): the pristine
/// nodes (they read only positions before them), then the core's graph rows, the other solved
/// rows and the isolated nodes (they read every position). Pieces are shared between `threads`
/// threads (1 or 2) and merged in piece order, so the result does not depend on the thread
/// count.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn residual_sweep(
    factor: &PprFactor,
    y: &mut [f64],
    seeds: &[(u32, f64)],
    scale: f64,
    pre_cut: f64,
    known: [f64; 3],
    threads: usize,
    candidates: &mut Vec<(u32, f64, f64)>,
) -> Sweep {
    let pass = Pass {
        seeds,
        scale,
        pre_cut,
        known,
    };
    let (pristine, end) = (factor.pristine, factor.core + factor.eliminated);
    let (known, rest) = y.split_at_mut(pristine);
    let mut rest = &mut rest[..end - pristine];
    let mut items = Vec::with_capacity(factor.pieces.0.len());
    for w in factor.pieces.0.windows(2) {
        let (piece, tail) = std::mem::take(&mut rest).split_at_mut((w[1] - w[0]) as usize);
        items.push((w[0] as usize, piece));
        rest = tail;
    }
    let known = &*known;
    let first = share(threads, items, |(lo, out)| {
        let mut found = Vec::new();
        let sweep = sweep_pristine(factor, known, lo, out, pass, &mut found);
        (sweep, found)
    });
    let y = &*y;
    let n = y.len() - 1;
    // The isolated nodes, if any, are one more piece.
    let ranges: Vec<(usize, usize)> = factor
        .pieces
        .1
        .windows(2)
        .map(|w| (w[0] as usize, w[1] as usize))
        .chain((end < n).then_some((end, n)))
        .collect();
    let second = share(threads, ranges, |(lo, hi)| {
        let mut found = Vec::new();
        let (core, solved) = (factor.core, factor.pristine);
        let mut sweep = if lo >= end {
            sweep_isolated(lo, hi, pass, &mut found)
        } else if lo < core {
            sweep_rows(factor, y, lo, hi.min(core), pass, &mut found)
        } else {
            Sweep::default()
        };
        if hi > core && lo < solved {
            sweep.merge(&sweep_solved(factor, y, lo.max(core), hi, pass, &mut found));
        }
        (sweep, found)
    });
    candidates.clear();
    let mut out = Sweep::default();
    for (sweep, found) in first.into_iter().chain(second) {
        out.merge(&sweep);
        candidates.extend(found);
    }
    // The solved rows' bound, now that the largest |y| is known (0 x inf and 0 x NaN are NaN).
    out.slack_sum += 0.0 * out.check;
    let solved = factor.core..end;
    if !solved.is_empty() {
        let [b, z, q] = pass.known;
        let x = [b, z, q, out.y_max];
        let bounds = &factor.solved;
        let slack = Solved::bound(bounds.max, x);
        for c in candidates.iter_mut() {
            if solved.contains(&(c.0 as usize)) {
                c.2 = slack;
            }
        }
        out.rest_slack = out.rest_slack.max(slack);
        out.b_max = out.b_max.max(Solved::bound(bounds.per_degree, x));
        out.slack_sum += Solved::bound(bounds.sum, x);
    }
    out
}

/// Runs `work` on every item, `threads` threads (1 or 2) taking the next item in turn, and
/// returns the results in item order.
fn share<I: Send, T: Send>(threads: usize, items: Vec<I>, work: impl Fn(I) -> T + Sync) -> Vec<T> {
    let queue = std::sync::Mutex::new(items.into_iter().enumerate());
    let run = || {
        let mut done = Vec::new();
        loop {
            // A panic in `work` never happens under the lock, so it cannot be poisoned.
            let next = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
            let Some((i, item)) = next else {
                return done;
            };
            done.push((i, work(item)));
        }
    };
    let mut done = if threads > 1 {
        std::thread::scope(|s| {
            let helper = s.spawn(run);
            let mut done = run();
            done.extend(
                helper
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e)),
            );
            done
        })
    } else {
        run()
    };
    done.sort_unstable_by_key(|d| d.0);
    done.into_iter().map(|d| d.1).collect()
}

/// Pristine positions `lo..lo + out.len()`: substituted into `out` from the positions before
/// `factor.pristine` (`known`), and scored. They go by runs of one row length
/// ([`PprFactor::build`] sorts them so), each run's rows back to back: no row offsets to
/// read, and a row loop of a fixed count the compiler unrolls for the common lengths.
fn sweep_pristine(
    factor: &PprFactor,
    known: &[f64],
    lo: usize,
    mut out: &mut [f64],
    pass: Pass<'_>,
    candidates: &mut Vec<(u32, f64, f64)>,
) -> Sweep {
    // Pristine rows name earlier positions only: none without any.
    assert!(
        !known.is_empty() || out.is_empty(),
        "pristine rows with nothing before them"
    );
    let Some(last) = known.len().checked_sub(1) else {
        return Sweep::default();
    };
    let mut run = Run {
        known,
        last,
        next: seeds_from(pass.seeds, lo),
        scale: pass.scale,
        pre_cut: pass.pre_cut,
        sweep: Sweep::default(),
        candidates,
    };
    let runs = &factor.pristine_runs;
    let end = factor.core + factor.eliminated;
    let mut v = lo;
    let mut k = runs
        .partition_point(|r| r.0 as usize <= v)
        .saturating_sub(1);
    while !out.is_empty() {
        let d = runs[k].1 as usize;
        let stop = runs.get(k + 1).map_or(end, |r| r.0 as usize);
        let count = (stop - v).min(out.len());
        let (piece, rest) = std::mem::take(&mut out).split_at_mut(count);
        let a = factor.elimination.offsets[v - factor.core] as usize;
        let cols = &factor.elimination.cols[a..a + d * piece.len()];
        let weights = factor.pristine_weights[d.min(ELIMINATION_MAX_DEGREE)];
        // Literal lengths, so each inlined copy of `rows` has a fixed inner count.
        match d {
            1 => run.rows(v, piece, cols, 1, weights),
            2 => run.rows(v, piece, cols, 2, weights),
            3 => run.rows(v, piece, cols, 3, weights),
            4 => run.rows(v, piece, cols, 4, weights),
            _ => run.rows(v, piece, cols, d, weights),
        }
        v += piece.len();
        out = rest;
        k += 1;
    }
    run.sweep
}

/// [`sweep_pristine`]'s state across its runs.
struct Run<'a, 'b> {
    known: &'a [f64],
    last: usize,
    next: std::iter::Peekable<std::slice::Iter<'a, (u32, f64)>>,
    scale: f64,
    pre_cut: f64,
    sweep: Sweep,
    candidates: &'b mut Vec<(u32, f64, f64)>,
}

impl Run<'_, '_> {
    /// Rows of length `d` for positions `v0..v0 + out.len()`, their columns back to back;
    /// `(1 / pivot, weight)` of that length. Stretches without a seed go through
    /// [`Run::quiet`]; seeds one by one.
    #[inline(always)]
    fn rows(&mut self, v0: usize, out: &mut [f64], cols: &[u32], d: usize, (inv, w): (f64, f64)) {
        let end = v0 + out.len();
        let mut v = v0;
        while v < end {
            let seed = self
                .next
                .peek()
                .map_or(end, |s| (s.0 as usize).clamp(v, end));
            if seed > v {
                let (a, z) = (v - v0, seed - v0);
                self.quiet(v, &mut out[a..z], &cols[a * d..z * d], d, inv, w);
                v = seed;
            }
            if v < end {
                let t = teleport(&mut self.next, v);
                let i = v - v0;
                let y = self.row(&cols[i * d..(i + 1) * d], t * inv, w);
                out[i] = y;
                let score = self.scale * (d as f64 * y);
                self.sweep
                    .solved(v, y, score, self.pre_cut, self.candidates);
                v += 1;
            }
        }
    }

    /// Rows without teleport mass.
    #[inline(always)]
    fn quiet(&mut self, v0: usize, out: &mut [f64], cols: &[u32], d: usize, inv: f64, w: f64) {
        // `0 * inv`, as a seeded row starts from `t * inv`.
        let start = 0.0 * inv;
        for ((v, yv), row) in (v0..).zip(out.iter_mut()).zip(cols.chunks_exact(d)) {
            let y = self.row(row, start, w);
            *yv = y;
            let score = self.scale * (d as f64 * y);
            self.sweep
                .solved(v, y, score, self.pre_cut, self.candidates);
        }
    }

    /// One row's solution: `start` (its teleport mass over the pivot) minus the weighted
    /// neighbours, in the back-substitution's order.
    #[inline(always)]
    fn row(&self, row: &[u32], start: f64, w: f64) -> f64 {
        let mut s = start;
        for &col in row {
            s -= w * self.known[clamp(col, self.last)];
        }
        s
    }
}

/// What every piece of [`residual_sweep`] needs of the query: the seeds by position with their
/// teleport mass, the scale of scores, the candidates' cut, and the forward elimination's
/// largest values.
#[derive(Debug, Clone, Copy)]
struct Pass<'a> {
    seeds: &'a [(u32, f64)],
    scale: f64,
    pre_cut: f64,
    /// The largest `|b|`, `|z|` and `|q|` of the forward elimination ([`Solved`]).
    known: [f64; 3],
}

/// The seeds (by position) from position `lo` on, for [`teleport`].
fn seeds_from(
    seeds: &[(u32, f64)],
    lo: usize,
) -> std::iter::Peekable<std::slice::Iter<'_, (u32, f64)>> {
    seeds[seeds.partition_point(|s| (s.0 as usize) < lo)..]
        .iter()
        .peekable()
}

/// Isolated positions `lo..hi`: exact closed form, up to the rounding of one product.
fn sweep_isolated(
    lo: usize,
    hi: usize,
    pass: Pass<'_>,
    candidates: &mut Vec<(u32, f64, f64)>,
) -> Sweep {
    let mut sweep = Sweep::default();
    let mut next = seeds_from(pass.seeds, lo);
    for v in lo..hi {
        let t = teleport(&mut next, v);
        sweep.take(v, 0.0, pass.scale * t, 0.0, pass.pre_cut, candidates);
    }
    sweep
}

/// Core positions `lo..hi`, checked against their graph rows.
fn sweep_rows(
    factor: &PprFactor,
    y: &[f64],
    lo: usize,
    hi: usize,
    pass: Pass<'_>,
    candidates: &mut Vec<(u32, f64, f64)>,
) -> Sweep {
    let (scale, pre_cut) = (pass.scale, pass.pre_cut);
    let (graph, short, damping) = (&factor.graph, &factor.short[..], factor.damping);
    let cols = &graph.cols[..];
    let last = y.len() - 1;
    let mut sweep = Sweep::default();
    let mut next = seeds_from(pass.seeds, lo);
    for (v, w) in (lo..).zip(graph.offsets[lo..=hi].windows(2)) {
        let t = teleport(&mut next, v);
        let (start, stop) = (w[0] as usize, w[1] as usize);
        let (pulled, pulled_abs) = if stop - start <= SHORT {
            // Fixed width, padded with the zero at `y[n]`: no loop whose length varies from
            // node to node (branch mispredictions cost more than the padding).
            let e = &short[SHORT * v..SHORT * v + SHORT];
            let (a, b, c, d) = (
                y[clamp(e[0], last)],
                y[clamp(e[1], last)],
                y[clamp(e[2], last)],
                y[clamp(e[3], last)],
            );
            ((a + b) + (c + d), (a.abs() + b.abs()) + (c.abs() + d.abs()))
        } else {
            let (mut pulled, mut pulled_abs) = (0.0, 0.0);
            for &u in &cols[start..stop] {
                let yu = y[clamp(u, last)];
                pulled += yu;
                pulled_abs += yu.abs();
            }
            (pulled, pulled_abs)
        };
        let d = (stop - start) as f64;
        let (own, slack) = residual(t, d, y[v], pulled, pulled_abs, damping);
        sweep.y_max = sweep.y_max.max(y[v].abs());
        sweep.take(v, d, scale * own, slack, pre_cut, candidates);
    }
    sweep
}

/// Solved positions `lo..hi` (before the pristine ones, see [`Solved`]): scores only, their
/// residual bound comes from the factor once [`residual_sweep`] knows the largest `|y|`; their
/// candidates get it then.
fn sweep_solved(
    factor: &PprFactor,
    y: &[f64],
    lo: usize,
    hi: usize,
    pass: Pass<'_>,
    candidates: &mut Vec<(u32, f64, f64)>,
) -> Sweep {
    let (scale, pre_cut) = (pass.scale, pass.pre_cut);
    let mut sweep = Sweep::default();
    for ((v, w), &yv) in (lo..)
        .zip(factor.graph.offsets[lo..=hi].windows(2))
        .zip(&y[lo..hi])
    {
        let score = scale * (f64::from(w[1] - w[0]) * yv);
        sweep.solved(v, yv, score, pre_cut, candidates);
    }
    sweep
}

/// The certified bounds, the top-k and whether the certificate holds, from `ws.y`. Unless
/// `thorough`, a check whose bounds are too loose to set the nodes below the candidates' cut
/// aside fails at once (the caller tightens and checks again). A failed check lowers `shrink`
/// to an estimate of how much narrower the bounds must get.
#[allow(clippy::too_many_arguments)]
fn certify(
    factor: &PprFactor,
    k: usize,
    min_score: f64,
    tie: f64,
    thorough: bool,
    ws: &mut CertifiedWorkspace,
    out: &mut CertifiedPpr,
    shrink: &mut f64,
) -> bool {
    let damping = factor.damping;
    let (g, scale) = (&factor.graph, ws.scale);
    let n = factor.order.len();
    let cut = min_score - tie;
    // Nodes under half the floor are set aside in bulk when their bounds allow it.
    let mut pre_cut = if cut > 0.0 {
        cut / 2.0
    } else {
        f64::NEG_INFINITY
    };
    let needed_rest = |room: f64, error: f64| (room / error).min(TIGHTEN);
    let (sweep, b, l1, rest_error) = loop {
        let sweep = residual_sweep(
            factor,
            &mut ws.y[..=n],
            &ws.seeds,
            scale,
            pre_cut,
            ws.known,
            ws.threads,
            &mut ws.candidates,
        );
        let b = sweep.b_max * (1.0 + 2.0 * ROUND) / (1.0 - damping);
        // `||e||_1 <= ||r||_1 / (1 - damping)` (W is column-stochastic), padded for the
        // rounding of the sum.
        let l1 = sweep.slack_sum * (1.0 + n as f64 * ROUND) / (1.0 - damping);
        let rest_error = scale
            * (sweep.rest_slack + damping * (factor.max_degree as f64 * b).min(l1))
            * (1.0 + 4.0 * ROUND)
            + 4.0 * ROUND * sweep.rest_score;
        if pre_cut + rest_error < cut || pre_cut == f64::NEG_INFINITY {
            break (sweep, b, l1, rest_error);
        }
        if !thorough {
            out.certified = false;
            out.top.clear();
            *shrink = shrink.min(needed_rest(cut - pre_cut, rest_error));
            return false;
        }
        pre_cut = f64::NEG_INFINITY;
    };
    // Error bound of a node: the unscaled solution's, scaled, plus the rounding of the products.
    let bound = |v: usize, score: f64, slack: f64| {
        let d = f64::from(g.offsets[v + 1] - g.offsets[v]);
        scale * (slack + damping * (d * b).min(l1)) * (1.0 + 4.0 * ROUND)
            + 4.0 * ROUND * score.abs()
    };
    // (position, lo, hi, score) of the nodes whose upper bound reaches the cut; every other node is
    // below every threshold used below.
    let mut near: Vec<(u32, f64, f64, f64)> = Vec::with_capacity(ws.candidates.len());
    let mut max_error = rest_error;
    for &(v, s, slack) in &ws.candidates {
        let e = bound(v as usize, s, slack);
        max_error = max_error.max(e);
        if s + e >= cut {
            near.push((v, s - e, s + e, s));
        }
    }
    out.max_error = max_error;
    out.top = top_k(
        near.iter()
            .map(|&(v, _, _, s)| (factor.order[v as usize], s)),
        k,
        min_score,
    );
    // Nodes of a class have equal exact scores unless seeds split it (see `Symmetry`), so
    // each interval narrows to its class's intersection. `seeded`: pendant nodes whose subtree
    // holds a seed (the seeds' ancestors-or-self up to their branch's top).
    let seeds = &ws.seeds;
    let mut seeded: Vec<u32> = Vec::new();
    for &(s, _) in seeds.iter() {
        let mut x = s;
        if factor.branch[x as usize] == NO_CLASS {
            continue;
        }
        while x != NO_CLASS {
            seeded.push(x);
            x = factor.up[x as usize];
        }
    }
    seeded.sort_unstable();
    seeded.dedup();
    let class = |v: u32| -> u64 {
        let own = (1 << 63) | u64::from(v);
        let (c, b) = (factor.class[v as usize], factor.branch[v as usize]);
        if c == NO_CLASS || seeds.binary_search_by_key(&v, |s| s.0).is_ok() {
            return own;
        }
        if b == NO_CLASS || seeded.binary_search(&b).is_err() {
            return u64::from(c) << 32 | u64::from(NO_CLASS);
        }
        // The lowest ancestor-or-self whose subtree holds a seed (the branch's top at most).
        let mut z = v;
        while seeded.binary_search(&z).is_err() {
            z = factor.up[z as usize];
        }
        if z == v {
            own
        } else {
            u64::from(c) << 32 | u64::from(z)
        }
    };
    // Only the listed nodes and the unlisted ones that (iii) does not pass on their own
    // intervals need their class's: narrowing only raises a listed `lo` and lowers an
    // unlisted `hi` (an intersection over fewer members is still a valid interval).
    near.sort_unstable_by_key(|e| e.0);
    // Every listed node is near, unless its bound is not a number: then an interval that
    // fails every test.
    let own = |v: u32| match near.binary_search_by_key(&v, |e| e.0) {
        Ok(i) => (near[i].1, near[i].2),
        Err(_) => (f64::NEG_INFINITY, f64::INFINITY),
    };
    let listed: Vec<u32> = out
        .top
        .iter()
        .map(|&(v, _)| factor.position[v as usize])
        .collect();
    let full = out.top.len() == k;
    let own_min_lo = listed
        .iter()
        .map(|&v| own(v).0)
        .fold(f64::INFINITY, f64::min);
    let mut sorted = listed.clone();
    sorted.sort_unstable();
    let doubtful: Vec<u32> = near
        .iter()
        .filter(|e| {
            let hi = e.2;
            sorted.binary_search(&e.0).is_err()
                && !(hi < min_score + tie || (full && hi <= own_min_lo + tie))
        })
        .map(|e| e.0)
        .collect();
    // Class -> (lo, hi, has a listed member).
    let mut intervals: HashMap<u64, (f64, f64, bool)> = HashMap::new();
    for (&v, is_listed) in listed
        .iter()
        .map(|v| (v, true))
        .chain(doubtful.iter().map(|v| (v, false)))
    {
        let (lo, hi) = own(v);
        let i = intervals.entry(class(v)).or_insert((lo, hi, false));
        i.0 = i.0.max(lo);
        i.1 = i.1.min(hi);
        i.2 |= is_listed;
    }
    // A NaN would pass every comparison below; an empty intersection would mean a wrong bound.
    let mut ok = sweep.slack_sum.is_finite() && intervals.values().all(|i| i.0 <= i.1);
    // (i) and (ii), from the end of the list: the largest `hi` of a later node, and the largest
    // of a later node of another class than that one's; likewise the smallest `lo` on the list.
    // (hi, lo) of those two.
    let none = (f64::NEG_INFINITY, f64::NEG_INFINITY);
    let (mut best, mut best_class, mut second) = (none, u64::MAX, none);
    let (mut min_lo, mut min_class, mut min_lo_2) = (f64::INFINITY, u64::MAX, f64::INFINITY);
    out.top_error = 0.0;
    // How much narrower the intervals must get for a failed comparison to pass (as the
    // intervals shrink about their midpoints).
    let needed = |gap: f64, width: f64| if gap > 0.0 { gap / width } else { TIGHTEN };
    for (&v, &(_, s)) in listed.iter().zip(&out.top).rev() {
        let c = class(v);
        let (lo, hi, _) = intervals[&c];
        out.top_error = out.top_error.max((s - lo).max(hi - s));
        let (later_hi, later_lo) = if c == best_class { second } else { best };
        if lo < later_hi - tie {
            ok = false;
            let gap = (lo + hi) / 2.0 - (later_lo + later_hi) / 2.0 + tie;
            *shrink = shrink.min(needed(gap, (hi - lo + later_hi - later_lo) / 2.0));
        }
        if lo < min_score - tie {
            ok = false;
            *shrink = shrink.min(needed((lo + hi) / 2.0 - min_score + tie, (hi - lo) / 2.0));
        }
        if c == best_class {
            if hi > best.0 {
                best = (hi, lo);
            }
        } else if hi > best.0 {
            (second, best, best_class) = (best, (hi, lo), c);
        } else if hi > second.0 {
            second = (hi, lo);
        }
        if c == min_class {
            min_lo = min_lo.min(lo);
        } else if lo < min_lo {
            (min_lo_2, min_lo, min_class) = (min_lo, lo, c);
        } else {
            min_lo_2 = min_lo_2.min(lo);
        }
    }
    // (iii)
    for &v in &doubtful {
        let c = class(v);
        let (_, hi, twin_listed) = intervals[&c];
        let other = if c == min_class { min_lo_2 } else { min_lo };
        let fine = hi < min_score + tie
            || (full && hi <= min_lo + tie)
            || (full && twin_listed && hi <= other + tie);
        if !fine {
            ok = false;
            *shrink = shrink.min(TIGHTEN);
        }
    }
    out.certified = ok;
    ok
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

    /// A networkx fixture case: its graph (node names by first appearance) and seeds.
    fn fixture(case: usize) -> (Vec<String>, Csr, Vec<(u32, f64)>, serde_json::Value) {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/metric-fixtures");
        let exp: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(format!("{dir}/ppr/expected_ppr.json")).unwrap(),
        )
        .unwrap();
        let case = exp["cases"][case].clone();
        let text =
            std::fs::read_to_string(format!("{dir}/{}", case["edges"].as_str().unwrap())).unwrap();
        let mut ids: HashMap<String, u32> = HashMap::new();
        let mut names = Vec::new();
        let mut edges = Vec::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let parts: Vec<&str> = line.split('\t').collect();
            assert_eq!(parts.len(), 3, "bad fixture line {line:?}");
            let mut id = |name: &str| {
                *ids.entry(name.to_string()).or_insert_with(|| {
                    names.push(name.to_string());
                    (names.len() - 1) as u32
                })
            };
            let (h, t) = (id(parts[0]), id(parts[2]));
            edges.push((h, t));
        }
        let csr = Csr::from_edges(names.len(), edges);
        let seeds = case["seeds"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (ids[k], v.as_f64().unwrap()))
            .collect();
        (names, csr, seeds, case)
    }

    #[test]
    fn certified_matches_networkx_on_every_score_of_the_small_graph() {
        let (names, csr, seeds, case) = fixture(0);
        let f = PprFactor::build(&csr, 0.85).unwrap();
        let mut ws = CertifiedWorkspace::default();
        let n = names.len();
        let r = certified_ppr(&f, &csr, &seeds, n, 0.0, DEFAULT_TIE, &mut ws).unwrap();
        assert!(r.certified);
        let want = case["scores"].as_object().unwrap();
        assert_eq!(want.len(), n);
        let scores = ws.scores(&f);
        for (i, name) in names.iter().enumerate() {
            let v = want[name].as_f64().unwrap();
            assert!((scores[i] - v).abs() < 1e-9, "{name}: {} vs {v}", scores[i]);
        }
        assert!((scores.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn certified_matches_the_networkx_top100_order_on_2000_nodes() {
        let (names, csr, seeds, case) = fixture(1);
        let f = PprFactor::build(&csr, 0.85).unwrap();
        let mut ws = CertifiedWorkspace::default();
        let r = certified_ppr(&f, &csr, &seeds, 100, 0.0, DEFAULT_TIE, &mut ws).unwrap();
        assert!(r.certified, "top error {}", r.top_error);
        let want = case["top100"].as_array().unwrap();
        assert_eq!(r.top.len(), want.len());
        for (&(v, got), w) in r.top.iter().zip(want) {
            assert_eq!(names[v as usize], w[0].as_str().unwrap());
            assert!((got - w[1].as_f64().unwrap()).abs() < 1e-9);
        }
        // The same query again through the engine enum and a cached factor: same list.
        let mut pws = PushWorkspace::new();
        for _ in 0..2 {
            let run = ppr_top_k(
                PprEngine::certified(),
                &csr,
                &seeds,
                0.85,
                100,
                0.0,
                &mut pws,
            )
            .unwrap();
            assert_eq!(run.top, r.top);
            assert_eq!(run.certified, Some(true));
        }
        // The certificate's sweep on two threads: the same result and scores, bit for bit.
        let mut ws2 = CertifiedWorkspace::with_threads(2);
        let r2 = certified_ppr(&f, &csr, &seeds, 100, 0.0, DEFAULT_TIE, &mut ws2).unwrap();
        check_same_bits(&r, &ws, &r2, &ws2, &f);
    }

    /// `t - d y + damping sum y(u)` in double-double arithmetic (error-free sums and products):
    /// the residual itself, not a rounded evaluation of it.
    fn exact_residual(
        t: f64,
        d: usize,
        y: f64,
        damping: f64,
        ys: impl Iterator<Item = f64>,
    ) -> f64 {
        let (mut hi, mut lo) = (0.0f64, 0.0f64);
        let mut add = |x: f64| {
            let s = hi + x;
            let b = s - hi;
            lo += (hi - (s - b)) + (x - b);
            hi = s;
        };
        let mut product = |a: f64, b: f64| {
            let p = a * b;
            add(p);
            add(a.mul_add(b, -p));
        };
        product(1.0, t);
        product(-(d as f64), y);
        for yu in ys {
            product(damping, yu);
        }
        hi + lo
    }

    /// The last query's solved rows ([`Solved`]) against their a priori bound, each residual
    /// computed exactly; returns how many rows and the largest residual of a core row.
    fn check_solved_bound(f: &PprFactor, ws: &CertifiedWorkspace) -> (usize, f64) {
        let end = f.core + f.eliminated;
        let y_max = ws.y[..end].iter().fold(0.0f64, |m, y| m.max(y.abs()));
        let [b, z, q] = ws.known;
        let x = [b, z, q, y_max];
        let residual = |v: usize| {
            let t = ws
                .seeds
                .binary_search_by_key(&(v as u32), |s| s.0)
                .map_or(0.0, |i| ws.seeds[i].1);
            let row = &f.graph.cols[f.graph.row(v)];
            let ys = row.iter().map(|&u| ws.y[u as usize]);
            (
                exact_residual(t, row.len(), ws.y[v], f.damping, ys).abs(),
                row.len(),
            )
        };
        let bound = |c| Solved::bound(c, x);
        let mut sum = 0.0;
        for v in f.core..end {
            let (r, d) = residual(v);
            assert!(
                r <= bound(f.solved.max),
                "row {v}: |r| {r:e} > {:e}",
                bound(f.solved.max)
            );
            assert!(
                r / d as f64 <= bound(f.solved.per_degree),
                "row {v}: |r| / d"
            );
            sum += r;
        }
        assert!(
            sum <= bound(f.solved.sum),
            "sum {sum:e} > {:e}",
            bound(f.solved.sum)
        );
        let other = (0..f.core).map(|v| residual(v).0);
        (f.eliminated, other.fold(0.0, f64::max))
    }

    #[test]
    fn solved_rows_stay_within_their_a_priori_bound_whatever_the_core_holds() {
        let (_, csr, seeds, _) = fixture(1);
        let f = PprFactor::build(&csr, 0.85).unwrap();
        let mut ws = CertifiedWorkspace::default();
        let r = certified_ppr(&f, &csr, &seeds, 100, 0.0, DEFAULT_TIE, &mut ws).unwrap();
        assert!(r.certified);
        let (rows, _) = check_solved_bound(&f, &ws);
        assert!(rows > 50, "only {rows} solved rows");
        // The same seeds over a core that holds anything (seeded noise up to 1, 10, 100): the solved
        // rows' equations still hold up to rounding, while the core's are far off.
        let (c, n) = (f.core, csr.node_count());
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for round in 0..3 {
            f.forward(&mut ws);
            for y in &mut ws.y[..c] {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                *y = ((state >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 2.0 * 10f64.powi(round);
            }
            f.back_substitute(&ws.reached, &mut ws.y[..c + f.eliminated]);
            let mut found = Vec::new();
            let (seeds, known) = (ws.seeds.clone(), ws.known);
            residual_sweep(
                &f,
                &mut ws.y[..=n],
                &seeds,
                ws.scale,
                0.0,
                known,
                1,
                &mut found,
            );
            let (_, other) = check_solved_bound(&f, &ws);
            assert!(other > 1e-3 * 10f64.powi(round), "core residuals {other}");
            // Leave the right-hand side all zero, as certified_ppr does.
            for v in &mut ws.rhs {
                *v = 0.0;
            }
            for &(p, _) in &ws.reached {
                ws.mark[p as usize] = false;
            }
            ws.reached.clear();
        }
    }

    #[test]
    fn the_solved_rows_bound_follows_the_factor_it_was_measured_on() {
        // A factor whose stored rows are off by a relative 1e-6 (as if computed carelessly):
        // back-substitution no longer solves the graph's equations, and the bound, measured
        // again on that factor, must grow to cover what it leaves.
        let (_, csr, seeds, _) = fixture(1);
        let mut f = PprFactor::build(&csr, 0.85).unwrap();
        let before = f.solved;
        for v in f.core..f.pristine {
            let r = f.elimination.row(v - f.core);
            for x in &mut f.elimination.vals[r] {
                *x *= 1.0 + 1e-6;
            }
        }
        let pivots: Vec<f64> = f.inv_pivot.iter().map(|&i| 1.0 / i).collect();
        let end = f.core + f.eliminated;
        f.solved = Solved::build(f.core, end, &f.elimination, &pivots, &f.graph, f.damping);
        assert!(
            f.solved.sum[3] > 1e6 * before.sum[3],
            "{:e} vs {:e}",
            f.solved.sum[3],
            before.sum[3]
        );
        let mut ws = CertifiedWorkspace::default();
        certified_ppr(&f, &csr, &seeds, 100, 0.0, DEFAULT_TIE, &mut ws).unwrap();
        check_solved_bound(&f, &ws);
    }

    /// Two runs of [`certified_ppr`] agree bit for bit: result and every score.
    fn check_same_bits(
        a: &CertifiedPpr,
        wa: &CertifiedWorkspace,
        b: &CertifiedPpr,
        wb: &CertifiedWorkspace,
        f: &PprFactor,
    ) {
        let bits = |r: &CertifiedPpr| {
            let top: Vec<(u32, u64)> = r.top.iter().map(|&(v, s)| (v, s.to_bits())).collect();
            (
                top,
                r.certified,
                r.top_error.to_bits(),
                r.max_error.to_bits(),
                r.iterations,
                r.checks,
            )
        };
        assert_eq!(bits(a), bits(b));
        let scores = |w: &CertifiedWorkspace| -> Vec<u64> {
            w.scores(f).iter().map(|s| s.to_bits()).collect()
        };
        assert_eq!(scores(wa), scores(wb));
    }

    /// `solve_lower` and `solve_upper` against dense substitution, on triangles with empty
    /// rows, rows of exactly one block and rows of several.
    #[test]
    fn blocked_sweeps_solve_both_triangles() {
        let mut seed = 7u64;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as f64 / (1u64 << 31) as f64
        };
        let n = 60;
        let mut dense = vec![vec![0.0; n]; n];
        let mut rows = Vec::new();
        for (i, row) in dense.iter_mut().enumerate() {
            // Row lengths 0..i, with runs of BLOCK and BLOCK + 1 entries among them.
            let want = match i % 5 {
                0 => 0,
                1 => BLOCK.min(i),
                2 => (BLOCK + 1).min(i),
                _ => (next() * i as f64) as usize,
            };
            let mut entries: Vec<(u32, f64)> = Vec::new();
            for (c, x) in row[..i].iter_mut().enumerate() {
                if entries.len() < want && next() < (want - entries.len()) as f64 / (i - c) as f64 {
                    *x = next() * 0.2 - 0.1;
                    entries.push((c as u32, *x));
                }
            }
            rows.push(entries);
        }
        let rhs: Vec<f64> = (0..n).map(|_| next() - 0.5).collect();
        let mut lower = rhs.clone();
        for i in 0..n {
            lower[i] -= (0..i).map(|c| dense[i][c] * lower[c]).sum::<f64>();
        }
        let mut upper = rhs.clone();
        for i in (0..n).rev() {
            upper[i] -= (i + 1..n).map(|r| dense[r][i] * upper[r]).sum::<f64>();
        }
        let narrow = Blocks::<u16>::from_rows(rows.iter().cloned());
        assert!(narrow.rows.len() > n / 2, "several rows of several blocks");
        for t in [
            Triangle::Narrow(narrow),
            Triangle::Wide(Blocks::from_rows(rows.iter().cloned())),
        ] {
            for (solve, want) in [
                (Triangle::solve_lower as fn(&Triangle, &mut [f64]), &lower),
                (Triangle::solve_upper, &upper),
            ] {
                let mut v = rhs.clone();
                solve(&t, &mut v);
                for (i, (&got, &w)) in v.iter().zip(want).enumerate() {
                    assert!(
                        (got - w).abs() <= 1e-12 * (1.0 + w.abs()),
                        "row {i}: {got} vs {w}"
                    );
                }
            }
        }
    }

    #[test]
    fn sweep_pieces_cover_their_range_in_order_and_share_its_weight() {
        let weight = |p: usize| 1 + p % 7;
        let b = cut(10, 1000, weight);
        assert_eq!((b[0], *b.last().unwrap()), (10, 1000));
        assert!(b.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(b.len(), SWEEP_PIECES + 1);
        let total: usize = (10..1000).map(weight).sum();
        for w in b.windows(2) {
            let piece: usize = (w[0] as usize..w[1] as usize).map(weight).sum();
            assert!(
                piece <= total / SWEEP_PIECES + 7,
                "piece {piece} of {total}"
            );
        }
        assert_eq!(cut(5, 5, weight), vec![5]);
        assert_eq!(cut(5, 8, weight), vec![5, 6, 7, 8]);
    }

    #[test]
    fn a_factor_for_another_graph_is_refused_and_the_engine_cache_follows_the_graph() {
        let g = Csr::from_edges(4, [(0, 1), (1, 2), (2, 3)]);
        let h = Csr::from_edges(4, [(0, 2), (1, 2), (1, 3)]);
        let f = PprFactor::build(&g, 0.85).unwrap();
        assert!(f.fits(&g, 0.85) && !f.fits(&h, 0.85) && !f.fits(&g, 0.5));
        let mut ws = CertifiedWorkspace::default();
        let bigger = Csr::from_edges(5, [(0, 1)]);
        assert_eq!(
            certified_ppr(&f, &bigger, &[(0, 1.0)], 3, 0.0, 1e-12, &mut ws),
            Err(PprError::FactorMismatch)
        );
        // One workspace, two graphs of the same size: each gets its own factor.
        let mut pws = PushWorkspace::new();
        for csr in [&g, &h, &g] {
            let run = ppr_top_k(
                PprEngine::certified(),
                csr,
                &[(0, 1.0)],
                0.85,
                4,
                0.0,
                &mut pws,
            )
            .unwrap();
            let exact = exact_ppr(csr, &[(0, 1.0)], 0.85, 1e-15, 10_000).unwrap();
            let want = top_k(
                exact.scores.iter().enumerate().map(|(i, &x)| (i as u32, x)),
                4,
                0.0,
            );
            assert_eq!(run.certified, Some(true));
            assert_eq!(
                run.top.iter().map(|p| p.0).collect::<Vec<_>>(),
                want.iter().map(|p| p.0).collect::<Vec<_>>()
            );
        }
        // No seed with weight: nothing, trivially certified.
        let r = certified_ppr(&f, &g, &[(0, 0.0)], 3, 0.0, 1e-12, &mut ws).unwrap();
        assert!(r.certified && r.top.is_empty() && ws.scores(&f).iter().all(|&x| x == 0.0));
    }

    #[test]
    fn twins_are_tied_exactly_so_even_a_zero_tie_certifies() {
        // A hub (0) with five leaves, seeded at the hub: the leaves are open twins with equal
        // exact scores that no error bound can separate; 1 and 2 are closed twins (adjacent,
        // same other neighbour 3) on a triangle hanging off node 3.
        let g = Csr::from_edges(
            9,
            [
                (0, 3),
                (0, 4),
                (0, 5),
                (0, 6),
                (0, 7),
                (3, 1),
                (3, 2),
                (1, 2),
                (3, 8),
            ],
        );
        let f = PprFactor::build(&g, 0.85).unwrap();
        let mut ws = CertifiedWorkspace::default();
        let r = certified_ppr(&f, &g, &[(0, 1.0)], 4, 0.0, 0.0, &mut ws).unwrap();
        assert!(r.certified, "top error {}", r.top_error);
        // The hub, then 3 (the hub's share plus what its triangle returns), then the leaves,
        // tied, by node id.
        assert_eq!(
            r.top.iter().map(|p| p.0).collect::<Vec<_>>(),
            vec![0, 3, 4, 5]
        );
        let scores = ws.scores(&f);
        assert_eq!(scores[4], scores[7]);
        let ids = |r: &CertifiedPpr| r.top.iter().map(|p| p.0).collect::<Vec<u32>>();
        let at = |top: &[u32], v: u32| top.iter().position(|&x| x == v).unwrap();
        // Seeding one leaf makes it its own class: it is separated from the other leaves (by
        // its bounds), which stay tied and in node-id order.
        let r = certified_ppr(&f, &g, &[(0, 1.0), (5, 0.5)], 6, 0.0, 0.0, &mut ws).unwrap();
        assert!(r.certified);
        let top = ids(&r);
        assert!(at(&top, 5) < at(&top, 4));
        assert_eq!(at(&top, 4) + 1, at(&top, 6));
        assert_eq!(at(&top, 6) + 1, at(&top, 7));
        // Closed twins 1 and 2 (adjacent, the same other neighbour) tie exactly too (their
        // computed scores may differ in the last bit, so either may come first).
        let r = certified_ppr(&f, &g, &[(8, 1.0)], 9, 0.0, 0.0, &mut ws).unwrap();
        assert!(r.certified);
        let top = ids(&r);
        assert_eq!(at(&top, 1).abs_diff(at(&top, 2)), 1);
        let scores = ws.scores(&f);
        assert!((scores[1] - scores[2]).abs() <= 1e-15);
        // The same graph without the twin rule could not certify a zero tie: two leaves' bounds
        // overlap. A tie of 1e-12 certifies both ways (checked by the property test below).
    }

    /// Node count, edge list (repeats and self-loops allowed), seeds.
    type SmallCase = (usize, Vec<(u32, u32)>, Vec<(u32, f64)>);

    /// A random small graph with isolated nodes and dense spots (so that some nodes stay in the
    /// core), seeds anywhere.
    fn small_graph() -> impl proptest::strategy::Strategy<Value = SmallCase> {
        use proptest::prelude::*;
        (2usize..40).prop_flat_map(|n| {
            let node = 0..n as u32;
            (
                Just(n),
                prop::collection::vec((node.clone(), node.clone()), 0..150),
                prop::collection::vec((node, 0.05f64..1.0), 1..6),
            )
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

        #[test]
        fn certified_top_k_equals_the_exact_one(
            (n, edges, seeds) in small_graph(),
            k in 1usize..12,
            floor in proptest::prop_oneof![proptest::strategy::Just(0.0), 0.0f64..0.05],
        ) {
            let g = Csr::from_edges(n, edges);
            let exact = exact_ppr(&g, &seeds, 0.85, 1e-15, 100_000).unwrap();
            // Exact's own per-node error: its last L1 change x damping / (1 - damping).
            let exact_err = exact.l1_change * 0.85 / 0.15 + 1e-15;
            let f = PprFactor::build(&g, 0.85).unwrap();
            let mut ws = CertifiedWorkspace::default();
            let mut ws2 = CertifiedWorkspace::with_threads(2);
            // The default tie must certify; a zero tie certifies only where twins and bounds
            // allow, and whatever it certifies must be exactly right.
            for tie in [DEFAULT_TIE, 0.0] {
                let r = certified_ppr(&f, &g, &seeds, k, floor, tie, &mut ws).unwrap();
                let r2 = certified_ppr(&f, &g, &seeds, k, floor, tie, &mut ws2).unwrap();
                check_same_bits(&r, &ws, &r2, &ws2, &f);
                check_solved_bound(&f, &ws);
                if tie > 0.0 {
                    proptest::prop_assert!(r.certified, "not certified: top error {}", r.top_error);
                } else if !r.certified {
                    continue;
                }
                for (v, (&x, &y)) in exact.scores.iter().zip(&ws.scores(&f)).enumerate() {
                    proptest::prop_assert!(
                        (x - y).abs() <= r.max_error + exact_err,
                        "node {v}: exact {x}, certified {y}, bound {}", r.max_error
                    );
                }
                let want = top_k(exact.scores.iter().enumerate().map(|(i, &x)| (i as u32, x)), k, floor);
                let tol = tie + 2.0 * exact_err;
                let score = |v: u32| exact.scores[v as usize];
                // Lengths may differ only by nodes tied with the floor.
                let (long, short) = if want.len() >= r.top.len() { (&want, &r.top) } else { (&r.top, &want) };
                for &(v, _) in &long[short.len()..] {
                    proptest::prop_assert!((score(v) - floor).abs() <= tol);
                }
                for (&(a, _), &(b, _)) in r.top.iter().zip(&want) {
                    proptest::prop_assert!(
                        a == b || (score(a) - score(b)).abs() <= tol,
                        "tie {tie}: certified {a} ({}) vs exact {b} ({})", score(a), score(b)
                    );
                }
            }
        }
    }

    #[test]
    fn top_k_breaks_ties_by_node_and_applies_the_floor() {
        let t = top_k([(3, 0.5), (1, 0.5), (2, 0.9), (0, 1e-6)], 3, 1e-5);
        assert_eq!(t, vec![(2, 0.9), (1, 0.5), (3, 0.5)]);
        assert_eq!(top_k([(3, 0.5), (1, 0.5)], 1, 0.0), vec![(1, 0.5)]);
    }
}
