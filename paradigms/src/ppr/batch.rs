//! Many certified PPR queries at once: their CG shares each pass over the core's triangle (lanes of one sweep), bit for bit each query's own result.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;

/// Queries whose CG shares one pass over the core's triangle in [`certified_ppr_many`]. On the
/// 2M-node graph of `examples/perf_ppr_scale.rs` a sweep of 4 interleaved vectors cost 1.06 ms
/// per vector against 2.44 ms for one (8: 0.72, but a sweep then waits on the slowest of more
/// queries and the vectors take twice the cache); docs/performance.md has the table.
pub const PPR_LANES: usize = 4;

/// [`certified_ppr`] on every query, [`PPR_LANES`] at a time sharing the core's sweeps, the
/// groups spread over `threads` threads (at least 1). Each result, error included, is bit for
/// bit what [`certified_ppr`] returns for that query alone: per lane the sweeps, dot products
/// and updates are the one-query operations in the same order, and a lane whose CG has stopped
/// (for a certificate check, or for good) keeps its iterate while the others go on. It serves
/// throughput, not one query's latency: a query waits for the slowest of its group.
pub fn certified_ppr_many<Q: AsRef<[(u32, f64)]> + Sync>(
    factor: &PprFactor,
    csr: &Csr,
    queries: &[Q],
    k: usize,
    min_score: f64,
    tie: f64,
    threads: usize,
) -> Vec<Result<CertifiedPpr, PprError>> {
    let groups: Vec<&[Q]> = queries.chunks(PPR_LANES).collect();
    let next = AtomicUsize::new(0);
    let work = || {
        let mut lw = LaneWorkspace::<PPR_LANES>::default();
        let mut done = Vec::new();
        loop {
            let g = next.fetch_add(1, Ordering::Relaxed);
            let Some(group) = groups.get(g) else {
                return done;
            };
            done.push((
                g,
                solve_group(factor, csr, group, k, min_score, tie, &mut lw),
            ));
        }
    };
    let threads = threads.clamp(1, groups.len().max(1));
    let mut parts = if threads > 1 {
        std::thread::scope(|s| {
            let helpers: Vec<_> = (1..threads).map(|_| s.spawn(work)).collect();
            let mut parts = work();
            for h in helpers {
                parts.extend(h.join().expect("a PPR thread panicked"));
            }
            parts
        })
    } else {
        work()
    };
    parts.sort_unstable_by_key(|p| p.0);
    parts.into_iter().flat_map(|p| p.1).collect()
}

/// One thread's buffers: the scalar workspace (forward elimination, back-substitution,
/// certificate) and CG's five vectors, interleaved by lane.
#[derive(Default)]
struct LaneWorkspace<const B: usize> {
    ws: CertifiedWorkspace,
    cg: [Vec<[f64; B]>; 5],
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

/// Up to `B` queries, each in its own lane of one CG.
fn solve_group<const B: usize, Q: AsRef<[(u32, f64)]>>(
    factor: &PprFactor,
    csr: &Csr,
    queries: &[Q],
    k: usize,
    min_score: f64,
    tie: f64,
    lw: &mut LaneWorkspace<B>,
) -> Vec<Result<CertifiedPpr, PprError>> {
    debug_assert!(queries.len() <= B);
    let (ws, [x, r, z, p, q]) = (&mut lw.ws, &mut lw.cg);
    let c = factor.core;
    for v in [&mut *x, &mut *r, &mut *z, &mut *p, &mut *q] {
        v.clear();
        v.resize(c, [0.0; B]);
    }
    let mut errors: Vec<Option<PprError>> = Vec::with_capacity(queries.len());
    let mut lanes: Vec<Option<Lane>> = Vec::with_capacity(B);
    for (l, query) in queries.iter().enumerate() {
        match factor.start(csr, query.as_ref(), ws) {
            Err(e) => {
                errors.push(Some(e));
                lanes.push(None);
            }
            Ok(live) => {
                errors.push(None);
                if live {
                    for (ri, b) in r.iter_mut().zip(factor.scaled_rhs(ws)) {
                        ri[l] = b;
                    }
                }
                lanes.push(Some(Lane {
                    result: CertifiedPpr::nothing_yet(),
                    seeds: ws.seeds.clone(),
                    reached: ws.reached.clone(),
                    known: ws.known,
                    scale: ws.scale,
                    rz: 0.0,
                    rz0: 0.0,
                    tau: FIRST_TOLERANCE,
                    live,
                }));
                if live {
                    factor.clear_rhs(ws);
                }
            }
        }
    }
    factor.lower.solve_lower_lanes(r);
    p.copy_from_slice(r);
    let rz = dot_lanes(r, r);
    for (l, lane) in lanes.iter_mut().enumerate() {
        if let Some(lane) = lane {
            (lane.rz, lane.rz0) = (rz[l], rz[l]);
        }
    }
    loop {
        // Each lane checks (maybe more than once) where its CG would stop; the rest iterate.
        let mut act = [false; B];
        for (l, slot) in lanes.iter_mut().enumerate() {
            let Some(lane) = slot else { continue };
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
            if let Some(lane) = lane.as_mut().filter(|_| act[l]) {
                lane.result.iterations += 1;
                rz[l] = lane.rz;
            }
        }
        // The one-query iteration of `certified_ppr`, lane by lane; stopped lanes keep x, r, p.
        q.copy_from_slice(p);
        factor.lower.solve_upper_lanes(q);
        for ((zi, pi), qi) in z.iter_mut().zip(p.iter()).zip(q.iter()) {
            for l in 0..B {
                zi[l] = pi[l] - qi[l];
            }
        }
        factor.lower.solve_lower_lanes(z);
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
            if let Some(lane) = lane.as_mut().filter(|_| act[l]) {
                lane.rz = rz_next[l];
            }
        }
    }
    lanes
        .into_iter()
        .zip(errors)
        .map(|(lane, error)| match (lane, error) {
            (_, Some(e)) => Err(e),
            (Some(lane), None) => Ok(lane.result),
            (None, None) => unreachable!("a lane without an error"),
        })
        .collect()
}

/// [`dot`] of every lane, each in the same order as the one-vector `dot`.
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
