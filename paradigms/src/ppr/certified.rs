//! The certified engine per query: conjugate gradients on the core, back-substitution, and the loop that tightens until the certificate holds.

use super::*;

/// Dense buffers of [`certified_ppr`], reused across queries; they also keep the last query's
/// solution, from which [`CertifiedWorkspace::score`] reads any node's score.
#[derive(Debug, Clone, Default)]
pub struct CertifiedWorkspace {
    /// Right-hand side by position; all zero between queries.
    pub(super) rhs: Vec<f64>,
    /// Eliminated positions the forward elimination reached, with their right-hand side over
    /// the pivot (descending while built, then ascending).
    pub(super) reached: Vec<(u32, f64)>,
    pub(super) mark: Vec<bool>,
    pub(super) heap: BinaryHeap<u32>,
    /// The solution `y` by position (`pi = scale D y` off the isolated nodes).
    pub(super) y: Vec<f64>,
    /// `1 / (1 - damping q)`, `q` the isolated seeds' share (0 before any query).
    pub(super) scale: f64,
    /// Seeds by position, with their teleport mass `(1 - damping) p(v)`.
    pub(super) seeds: Vec<(u32, f64)>,
    /// Nodes whose score may reach the floor: (position, score, padded |residual|).
    pub(super) candidates: Vec<(u32, f64, f64)>,
    /// The largest `|b|`, `|z|`, `|q|` of the last forward elimination ([`SolvedRowBound`]).
    pub(super) known: [f64; 3],
    /// CG's five vectors, one lane ([`solve_lanes`]).
    pub(super) cg: [Vec<[f64; 1]>; 5],
    /// Threads of the certificate's sweep (0 and 1: the caller's alone).
    pub(super) threads: usize,
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

impl CertifiedPpr {
    /// Before any work: empty, certified (so it is a query without seed mass's answer).
    pub(super) fn nothing_yet() -> Self {
        CertifiedPpr {
            top: Vec::new(),
            certified: true,
            top_error: 0.0,
            max_error: 0.0,
            iterations: 0,
            checks: 0,
        }
    }
}

/// First CG tolerance (preconditioned residual norm relative to its start). A check costs
/// about four iterations; with the symmetry classes taking the exact ties off the table, 1e-7
/// certifies 95% of the MuSiQue-sized graph's queries at the first check in ~5 iterations
/// (1e-6: 5.1 iterations, 1.07 checks; 1e-8: 6.0, 1.00; `examples/perf_ppr.rs`). A failed check
/// tightens it by a quarter of its own estimate of the narrowing its bounds need, between 10x
/// and 10x [`TIGHTEN`]'s.
pub(super) const FIRST_TOLERANCE: f64 = 1e-7;
/// The narrowing assumed where a failed check cannot estimate it.
pub(super) const TIGHTEN: f64 = 1e-3;

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
/// error and the substitutions' rounding (`SolvedRowBound`). The error `e = pi - pi~` solves
/// `e = r + damping A D^-1 e`. On an undirected
/// graph the PPR of any vector `x` at `t` is `d(t) sum_v (x(v)/d(v)) pi_t(v)`, so
/// `|e(t)| <= d(t) B` with `B = max_v |r(v)|/d(v) / (1 - damping)`; `A D^-1` is
/// column-stochastic, so also `||e||_1 <= ||r||_1 / (1 - damping)`; one step of the equation
/// gives `|e(t)| <= |r(t)| + damping min(d(t) B, ||e||_1)`. Every `|r(v)|` is padded by a
/// bound on the rounding of its own evaluation. On a connected component without a seed the
/// exact score is 0, so a node there is bounded by its computed score's own size. Nodes of a `Symmetry` class have equal exact
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
    let mut cg = std::mem::take(&mut ws.cg);
    let out = solve_lanes(factor, csr, &[seeds], k, min_score, tie, ws, &mut cg);
    ws.cg = cg;
    out.into_iter().next().expect("one query, one result")
}

/// One certificate check of the solution in `ws.y` (counted in `result`): `None` when the query
/// is done (certified, or CG can go no further), else the tightened tolerance.
#[allow(clippy::too_many_arguments)]
pub(super) fn check(
    factor: &PprFactor,
    k: usize,
    min_score: f64,
    tie: f64,
    rz: f64,
    tau: f64,
    ws: &mut CertifiedWorkspace,
    result: &mut CertifiedPpr,
) -> Option<f64> {
    result.checks += 1;
    let last = rz <= 0.0 || tau <= 1e-16 || result.iterations >= 1000;
    let mut shrink = 1.0;
    if certify(factor, k, min_score, tie, last, ws, result, &mut shrink) || last {
        return None;
    }
    // The bounds scale with the residual: aim a few times below the estimate.
    Some(tau * (shrink / 4.0).clamp(TIGHTEN * 0.1, 0.1))
}

/// Whether CG goes on: the preconditioned residual norm `sqrt(rz)` is above `tau` relative to
/// its start.
pub(super) fn cg_goes_on(rz: f64, rz0: f64, tau: f64, iterations: usize) -> bool {
    rz > 0.0 && rz > tau * tau * rz0 && iterations < 1000
}

impl PprFactor {
    /// A query's set-up: its seeds checked and normalised into `ws.seeds` (by position, with
    /// their teleport mass), the isolated seeds' `ws.scale`, and the forward elimination
    /// ([`PprFactor::forward`]). `false` when there is no seed mass (nothing to solve).
    pub(super) fn start(
        &self,
        csr: &Csr,
        seeds: &[(u32, f64)],
        ws: &mut CertifiedWorkspace,
    ) -> Result<bool, PprError> {
        let damping = self.damping;
        check_damping(damping)?;
        let seeds = normalise_seeds(csr, seeds)?;
        let n = csr.node_count();
        if self.key.0 != n || self.key.1 != csr.neighbors.len() {
            return Err(PprError::FactorMismatch);
        }
        debug_assert!(
            self.fits(csr, damping),
            "a PPR factor applied to another graph"
        );
        ws.seeds.clear();
        ws.scale = 0.0;
        if seeds.is_empty() {
            return Ok(false);
        }
        let isolated: f64 = seeds
            .iter()
            .filter(|&&(s, _)| csr.degree(s) == 0)
            .map(|&(_, w)| w)
            .sum();
        ws.scale = 1.0 / (1.0 - damping * isolated);
        ws.rhs.resize(n, 0.0);
        ws.mark.resize(n, false);
        ws.y.resize(n + 1, 0.0);
        ws.seeds.extend(
            seeds
                .iter()
                .map(|&(v, w)| (self.position[v as usize], (1.0 - damping) * w)),
        );
        ws.seeds.sort_unstable_by_key(|s| s.0);
        self.forward(ws);
        Ok(true)
    }

    /// The core's right-hand side `D^-1/2 b` (by position) from the forward elimination.
    pub(super) fn scaled_rhs<'a>(
        &'a self,
        ws: &'a CertifiedWorkspace,
    ) -> impl Iterator<Item = f64> + 'a {
        ws.rhs[..self.core]
            .iter()
            .zip(&self.s_scale)
            .map(|(&b, &f)| b * f)
    }

    /// Leaves the right-hand side all zero for the next query (and `ws.reached` empty).
    pub(super) fn clear_rhs(&self, ws: &mut CertifiedWorkspace) {
        for v in &mut ws.rhs[..self.core] {
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
    }

    /// Every node's `y` from the core's CG iterate `x` (`y = D^-1/2 x` on the core, then
    /// back-substitution), all by position; the isolated nodes' and the pad's are 0.
    pub(super) fn substitute(
        &self,
        reached: &[(u32, f64)],
        y: &mut [f64],
        x: impl Iterator<Item = f64>,
    ) {
        let (c, e) = (self.core, self.eliminated);
        for ((yi, xi), &f) in y[..c].iter_mut().zip(x).zip(&self.s_scale) {
            *yi = xi * f;
        }
        self.back_substitute(reached, &mut y[..c + e]);
        for yi in &mut y[c + e..] {
            *yi = 0.0;
        }
    }

    /// Forward elimination of the query's seeds (`ws.seeds`, by position, sorted), children
    /// before parents: only the seeds' ancestors get mass. Leaves the core's right-hand side in
    /// `ws.rhs`, the eliminated positions reached in `ws.reached` (ascending), and the largest
    /// values met in `ws.known`.
    pub(super) fn forward(&self, ws: &mut CertifiedWorkspace) {
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
    pub(super) fn back_substitute(&self, reached: &[(u32, f64)], y: &mut [f64]) {
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

/// A query's state while its lane runs.
struct Lane {
    result: CertifiedPpr,
    /// What [`PprFactor::start`] left in the workspace for this query, restored at each check.
    seeds: Vec<(u32, f64)>,
    reached: Vec<(u32, f64)>,
    known: [f64; 3],
    scale: f64,
    rz: f64,
    rz0: f64,
    tau: f64,
    /// CG or a check still to come.
    live: bool,
}

/// Up to `B` queries, each in its own lane of one CG ([`certified_ppr`] is the one-lane case,
/// [`certified_ppr_many`] runs [`PPR_LANES`]). Per lane every sweep, dot product and update is
/// the one-lane operation in the same order, so a query's result does not depend on its
/// companions; a lane whose CG stops (for a check, or for good) keeps `x`, `r` and `p` while
/// the others iterate. The workspace ends holding the last query checked (for
/// [`CertifiedWorkspace::score`] after a one-lane run).
#[allow(clippy::too_many_arguments)]
pub(super) fn solve_lanes<const B: usize, Q: AsRef<[(u32, f64)]>>(
    factor: &PprFactor,
    csr: &Csr,
    queries: &[Q],
    k: usize,
    min_score: f64,
    tie: f64,
    ws: &mut CertifiedWorkspace,
    [x, r, z, p, q]: &mut [Vec<[f64; B]>; 5],
) -> Vec<Result<CertifiedPpr, PprError>> {
    assert!(queries.len() <= B, "more queries than lanes");
    let c = factor.core;
    for v in [&mut *x, &mut *r, &mut *z, &mut *p, &mut *q] {
        v.clear();
        v.resize(c, [0.0; B]);
    }
    let mut lanes: Vec<Result<Lane, PprError>> = Vec::with_capacity(B);
    for (l, query) in queries.iter().enumerate() {
        let lane = factor.start(csr, query.as_ref(), ws).map(|live| {
            if live {
                for (ri, b) in r.iter_mut().zip(factor.scaled_rhs(ws)) {
                    ri[l] = b;
                }
            }
            let lane = Lane {
                result: CertifiedPpr::nothing_yet(),
                seeds: ws.seeds.clone(),
                reached: ws.reached.clone(),
                known: ws.known,
                scale: ws.scale,
                rz: 0.0,
                rz0: 0.0,
                tau: FIRST_TOLERANCE,
                live,
            };
            if live {
                factor.clear_rhs(ws);
            }
            lane
        });
        lanes.push(lane);
    }
    let finish = |lanes: Vec<Result<Lane, PprError>>| {
        lanes
            .into_iter()
            .map(|lane| lane.map(|lane| lane.result))
            .collect()
    };
    if !lanes.iter().flatten().any(|l| l.live) {
        return finish(lanes);
    }
    // CG on the split-preconditioned system `(I + L)^-1 A (I + L^T)^-1 u = (I + L)^-1 b'`
    // (symmetric Gauss-Seidel on the scaled core `A = I + L + L^T`, `b' = D^-1/2 b`), its
    // product by Eisenstat's trick: with `t = (I + L^T)^-1 p`, it is `t + (I + L)^-1 (p - t)`,
    // one sweep of each triangle, as many entries as one product by `A`. The iterate is kept
    // as `x = (I + L^T)^-1 u`, updated by `a t`, so the solution needs no further sweep.
    factor.lower.solve_lower_lanes(r);
    p.copy_from_slice(r);
    let rz = dot_lanes(r, r);
    for (l, lane) in lanes.iter_mut().enumerate() {
        if let Ok(lane) = lane {
            (lane.rz, lane.rz0) = (rz[l], rz[l]);
        }
    }
    loop {
        // Each lane checks (maybe more than once) where its CG stops: the preconditioned
        // residual norm below its tolerance relative to the start. The rest iterate.
        let mut act = [false; B];
        for (l, slot) in lanes.iter_mut().enumerate() {
            let Ok(lane) = slot else { continue };
            while lane.live && !cg_goes_on(lane.rz, lane.rz0, lane.tau, lane.result.iterations) {
                ws.seeds.clone_from(&lane.seeds);
                (ws.known, ws.scale) = (lane.known, lane.scale);
                factor.substitute(&lane.reached, &mut ws.y, x.iter().map(|v| v[l]));
                match check(
                    factor,
                    k,
                    min_score,
                    tie,
                    lane.rz,
                    lane.tau,
                    ws,
                    &mut lane.result,
                ) {
                    Some(next) => lane.tau = next,
                    None => lane.live = false,
                }
            }
            act[l] = lane.live;
        }
        if !act.contains(&true) {
            break;
        }
        let mut rz = [0.0; B];
        for (l, lane) in lanes.iter_mut().enumerate() {
            if let Some(lane) = lane.as_mut().ok().filter(|_| act[l]) {
                lane.result.iterations += 1;
                rz[l] = lane.rz;
            }
        }
        q.copy_from_slice(p);
        factor.lower.solve_upper_lanes(q);
        for ((zi, pi), qi) in z.iter_mut().zip(p.iter()).zip(q.iter()) {
            for l in 0..B {
                zi[l] = pi[l] - qi[l];
            }
        }
        factor.lower.solve_lower_lanes(z);
        // The product is `q + z`.
        for (zi, qi) in z.iter_mut().zip(q.iter()) {
            for l in 0..B {
                zi[l] += qi[l];
            }
        }
        let pz = dot_lanes(p, z);
        let a: [f64; B] = std::array::from_fn(|l| rz[l] / pz[l]);
        for (xi, qi) in x.iter_mut().zip(q.iter()) {
            for l in 0..B {
                let next = xi[l] + a[l] * qi[l];
                xi[l] = if act[l] { next } else { xi[l] };
            }
        }
        for (ri, zi) in r.iter_mut().zip(z.iter()) {
            for l in 0..B {
                let next = ri[l] - a[l] * zi[l];
                ri[l] = if act[l] { next } else { ri[l] };
            }
        }
        let rz_next = dot_lanes(r, r);
        let beta: [f64; B] = std::array::from_fn(|l| rz_next[l] / rz[l]);
        for (pi, ri) in p.iter_mut().zip(r.iter()) {
            for l in 0..B {
                let next = ri[l] + beta[l] * pi[l];
                pi[l] = if act[l] { next } else { pi[l] };
            }
        }
        for (l, lane) in lanes.iter_mut().enumerate() {
            if let Some(lane) = lane.as_mut().ok().filter(|_| act[l]) {
                lane.rz = rz_next[l];
            }
        }
    }
    finish(lanes)
}

/// `sum a[i] * b[i]` of every lane, each in four interleaved partial sums (a fixed order: the
/// same result on every run, whatever the other lanes hold).
fn dot_lanes<const B: usize>(a: &[[f64; B]], b: &[[f64; B]]) -> [f64; B] {
    let mut acc = [[0.0; 4]; B];
    let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for j in 0..4 {
            for l in 0..B {
                acc[l][j] += x[j][l] * y[j][l];
            }
        }
    }
    std::array::from_fn(|l| {
        let tail: f64 = ra.iter().zip(rb).map(|(x, y)| x[l] * y[l]).sum();
        (acc[l][0] + acc[l][1]) + (acc[l][2] + acc[l][3]) + tail
    })
}
