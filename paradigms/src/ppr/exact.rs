//! The exact engine: dense power iteration over the whole graph.

use super::*;

/// Scores of the exact engine: one per node.
#[derive(Debug, Clone, PartialEq)]
pub struct ExactPpr {
    /// PPR score of every node.
    pub scores: Vec<f64>,
    /// Iterations run.
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
