//! A seeded synthetic knowledge graph of any size, shaped like MuSiQue's, for PPR at scale.
//!
//! The construction is `examples/perf_ppr.rs`'s MuSiQue-sized graph with its counts scaled: for
//! `nodes` nodes it has `nodes x 276,898 / 206,738` edges (MuSiQue's edges per node, the
//! paper's Table 8) and a giant component of `nodes x 0.882` nodes (Table 8's LCC ratio): a
//! preferential-attachment tree (power-law degrees, hubs) plus extra edges from a uniform to a
//! preferential end (cycles), and the remaining nodes in small random trees of 2 + Geometric(1/2)
//! nodes. Every node has at least one edge.

use std::collections::HashSet;

use corpora::Csr;

/// MuSiQue's knowledge graph: 206,738 nodes and 276,898 edges (the paper's Table 8).
const MUSIQUE_NODES: u64 = 206_738;
const MUSIQUE_EDGES: u64 = 276_898;
/// Table 8's LCC ratio, in thousandths.
const LCC_PER_MILLE: u64 = 882;

/// Edges the graph of `nodes` nodes gets: MuSiQue's ratio, rounded down.
pub fn synthetic_edge_count(nodes: usize) -> usize {
    (nodes as u64 * MUSIQUE_EDGES / MUSIQUE_NODES) as usize
}

/// The graph for `nodes` (at least 100) and `seed`: the same seed and size give the same graph.
pub fn synthetic_kg(nodes: usize, seed: u64) -> Csr {
    assert!(nodes >= 100, "a synthetic KG needs at least 100 nodes");
    assert!(u32::try_from(nodes).is_ok(), "node ids are u32");
    let target = synthetic_edge_count(nodes);
    let core = (nodes as u64 * LCC_PER_MILLE / 1000) as usize;
    let mut rng = bench_core::rng::SplitMix64::new(seed);
    let mut below = |n: usize| (rng.next_u64() % n as u64) as usize;
    let mut edges: HashSet<(u32, u32)> = HashSet::with_capacity(target);
    let mut ends: Vec<u32> = Vec::with_capacity(2 * target);
    let mut add = |a: usize, b: usize, ends: &mut Vec<u32>| {
        let (a, b) = (a.min(b) as u32, a.max(b) as u32);
        if a != b && edges.insert((a, b)) {
            ends.push(a);
            ends.push(b);
        }
    };
    // Giant component: a new node links to the end of a random edge (preferential attachment).
    add(0, 1, &mut ends);
    for i in 2..core {
        let t = ends[below(ends.len())] as usize;
        add(i, t, &mut ends);
    }
    let core_ends = ends.len();
    // Small components: random trees of 2 + Geometric(1/2) nodes (capped at 40); a last single
    // node joins the previous tree so that no node is isolated.
    let mut comps: Vec<(usize, usize)> = Vec::new();
    let mut i = core;
    while i < nodes {
        let mut size = 2;
        while size < 40 && below(2) == 0 {
            size += 1;
        }
        let mut size = size.min(nodes - i);
        if size < 2 {
            size = 1;
        }
        let start = if size == 1 { i - 1 } else { i };
        let span = i + size - start;
        for j in (i - start).max(1)..span {
            let to = start + below(j);
            add(start + j, to, &mut ends);
        }
        comps.push((start, span));
        i += size;
    }
    // Extra edges up to the target: 19 in 20 in the giant component, the rest inside a small one.
    let mut stalled = 0usize;
    let mut count = ends.len() / 2;
    while count < target && stalled < 1_000_000 {
        let before = ends.len();
        if below(20) > 0 || comps.is_empty() {
            let a = below(core);
            let b = ends[below(core_ends)] as usize;
            add(a, b, &mut ends);
        } else {
            let (start, size) = comps[below(comps.len())];
            let (a, b) = (start + below(size), start + below(size));
            add(a, b, &mut ends);
        }
        if ends.len() == before {
            stalled += 1;
        } else {
            count += 1;
            stalled = 0;
        }
    }
    let mut list: Vec<(u32, u32)> = Vec::with_capacity(ends.len() / 2);
    list.extend(ends.chunks_exact(2).map(|p| (p[0], p[1])));
    list.sort_unstable();
    Csr::from_edges(nodes, list)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_components_and_determinism() {
        for nodes in [1_000usize, 20_000] {
            let g = synthetic_kg(nodes, 7);
            assert_eq!(g.node_count(), nodes);
            assert_eq!(g.edge_count(), synthetic_edge_count(nodes));
            assert!(
                (0..nodes as u32).all(|v| g.degree(v) > 0),
                "no isolated node"
            );
            let (_, largest) = corpora::components(&g);
            let lcc = largest as f64 / nodes as f64;
            // The giant component is the core plus whatever small trees extra edges never touch.
            assert!((0.88..0.90).contains(&lcc), "LCC ratio {lcc} at {nodes}");
            let again = synthetic_kg(nodes, 7);
            assert_eq!(g.neighbors, again.neighbors);
            assert_ne!(g.neighbors, synthetic_kg(nodes, 8).neighbors);
        }
    }

    #[test]
    fn degrees_are_heavy_tailed() {
        let g = synthetic_kg(50_000, 3);
        let max = (0..50_000u32).map(|v| g.degree(v)).max().unwrap();
        let leaves = (0..50_000u32).filter(|&v| g.degree(v) == 1).count();
        // Preferential attachment: hubs far above the mean degree (~2.7), many leaves.
        assert!(max > 100, "max degree {max}");
        assert!(leaves > 10_000, "{leaves} leaves");
    }
}
