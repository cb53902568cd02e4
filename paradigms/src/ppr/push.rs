//! Forward push and its Gauss-Seidel sweeps (a certified exact solver over the seeds' components).

use super::*;

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
    pub(super) estimate: Vec<f64>,
    pub(super) residual: Vec<f64>,
    /// Bit 0: touched (in `touched`), bit 1: queued.
    pub(super) flags: Vec<u8>,
    pub(super) touched: Vec<u32>,
    pub(super) queue: VecDeque<u32>,
    /// The certified engine's factor, with a cheap key of the graph it was built for (the
    /// factor holds its own copy of the graph, which the certificate is about; see
    /// [`PprFactor`]).
    pub(super) factor: Option<(FactorKey, Arc<PprFactor>)>,
    pub(super) certified: CertifiedWorkspace,
}

/// Address of the graph's neighbour array, node count, arc count, damping bits, a sample of
/// the arcs.
pub(super) type FactorKey = (usize, usize, usize, u64, u64);

/// One eliminated node: id, pivot, off-diagonal entries of its row at elimination.
pub(super) type EliminatedRow = (u32, f64, Vec<(u32, f64)>);

pub(super) const TOUCHED: u8 = 1;
pub(super) const QUEUED: u8 = 2;

impl PushWorkspace {
    /// An empty workspace (it grows to the graph on first use).
    pub fn new() -> Self {
        Self::default()
    }

    /// The cached factor for `csr` and `damping`, built when missing.
    pub(super) fn factor(&mut self, csr: &Csr, damping: f64) -> Result<Arc<PprFactor>, PprError> {
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
    pub(super) fn add(&mut self, v: u32, mass: f64, threshold: f64) {
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
    pub(super) fn finish(&mut self, pushes: usize) -> PushPpr {
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

    pub(super) fn prepare(&mut self, n: usize) {
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
