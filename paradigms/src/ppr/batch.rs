//! Many certified PPR queries at once: their CG shares each pass over the core's triangle (lanes of one sweep), bit for bit each query's own result.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;

/// Queries whose CG shares one pass over the core's triangle in [`certified_ppr_many`]. On the
/// 2M-node graph of `examples/perf_ppr_scale.rs` a sweep of 4 interleaved vectors cost 1.06 ms
/// per vector against 2.44 ms for one (8: 0.72, but a sweep then waits on the slowest of more
/// queries and the vectors take twice the cache); docs/performance.md has the table.
pub const PPR_LANES: usize = 4;

/// [`certified_ppr`] on every query, [`PPR_LANES`] at a time sharing the core's sweeps, the
/// groups spread over `threads` threads (at least 1; each takes the next group in turn and
/// keeps its own buffers). Each result, error included, is bit for
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
                solve_lanes(
                    factor, csr, group, k, min_score, tie, &mut lw.ws, &mut lw.cg,
                ),
            ));
        }
    };
    let threads = threads.clamp(1, groups.len().max(1));
    let mut parts = if threads > 1 {
        std::thread::scope(|s| {
            let helpers: Vec<_> = (1..threads).map(|_| s.spawn(work)).collect();
            let mut parts = work();
            for h in helpers {
                parts.extend(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
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
