//! The certified engine's per-graph factor: minimum-degree elimination, the core's Schur complement and the a priori bound on the eliminated rows.

use super::*;

/// Elimination stops once every remaining node has more neighbours than this in the elimination
/// graph (leaves and chains add no fill). The measured optimum on the synthetic MuSiQue-sized
/// graph: a lower bound leaves a larger core to CG, a higher one densifies it
/// (`examples/perf_ppr.rs`).
pub const ELIMINATION_MAX_DEGREE: usize = 10;

/// The certified engine's default tie tolerance: rankings may differ only between nodes whose
/// exact scores are within this of each other.
pub const DEFAULT_TIE: f64 = 1e-12;

/// Unit roundoff of f64, doubled: the rounding allowance per floating-point operation.
pub(super) const ROUND: f64 = f64::EPSILON;

/// Width of [`PprFactor`]'s fixed-width neighbour rows.
pub(super) const SHORT: usize = 4;

/// Pieces per phase of the certificate's sweep: enough that two threads taking them in turn
/// finish close together, few enough that taking one costs nothing next to its work.
pub(super) const SWEEP_PIECES: usize = 16;
/// A node's cost in the sweep, in arcs (a rough fit of the sweep's section times on the
/// MuSiQue-sized graph: ~6 ns per node plus ~1 ns per arc).
pub(super) const SWEEP_NODE_COST: usize = 6;

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
/// and split into its two strict triangles, for the Gauss-Seidel sweeps. `Symmetry` classes
/// (nodes with provably equal scores) are computed once here too.
///
/// The factor holds its own copy of the graph, and [`certified_ppr`]'s certificate is about
/// that copy: apply a factor only to the graph it was built from ([`PprFactor::fits`] checks).
#[derive(Debug, Clone)]
pub struct PprFactor {
    pub(super) damping: f64,
    /// Identity of the graph it was built from: node count, arc count, a checksum.
    pub(super) key: (usize, usize, u64),
    /// Node id -> position.
    pub(super) position: Vec<u32>,
    /// Position -> node id.
    pub(super) order: Vec<u32>,
    /// Positions `0..core` are the core, `core..core + eliminated` the eliminated nodes, of
    /// which those from `pristine` on kept their graph row until eliminated.
    pub(super) core: usize,
    pub(super) eliminated: usize,
    pub(super) pristine: usize,
    /// The a priori residual bound of the eliminated rows.
    pub(super) solved: SolvedRowBound,
    /// `(1 / pivot, weight)` of a pristine row of each length `d`: `(1 / d, -damping / d)`,
    /// equal bit for bit to its `inv_pivot` and `elimination` entries.
    pub(super) pristine_weights: [(f64, f64); ELIMINATION_MAX_DEGREE + 1],
    /// Runs of pristine rows of one length: (first position, row length), by position.
    pub(super) pristine_runs: Vec<(u32, u32)>,
    /// The same for the other eliminated rows (positions `core..pristine`).
    pub(super) elimination_runs: Vec<(u32, u32)>,
    /// The graph by position: each position's neighbours' positions, ascending.
    pub(super) graph: SparseRows<()>,
    /// The same rows at a fixed width of [`SHORT`] for nodes of degree at most that, padded
    /// with the node count (the certificate's sweep).
    pub(super) short: Vec<u32>,
    pub(super) max_degree: usize,
    /// `1 / pivot` of each eliminated node (index: position - core).
    pub(super) inv_pivot: Vec<f64>,
    /// Each eliminated node's off-diagonal entries of M (after earlier eliminations) at its
    /// elimination over its pivot, by position, all above its own (index: position - core).
    pub(super) elimination: SparseRows<f64>,
    /// `1 / sqrt(diagonal)` of the core's Schur complement `S`.
    pub(super) s_scale: Vec<f64>,
    /// Strict lower triangle of the unit-diagonal scaled `S` (the upper one is its transpose).
    pub(super) lower: Triangle,
    /// Bounds of the certificate sweep's pieces ([`residual_sweep`]): of the pristine positions,
    /// and of the positions before them (checked on their graph rows).
    pub(super) pieces: (Vec<u32>, Vec<u32>),
    /// [`Symmetry`] classes, branch tops and pendant parents, by position.
    pub(super) class: Vec<u32>,
    pub(super) branch: Vec<u32>,
    pub(super) up: Vec<u32>,
    /// Connected component of each position ([`corpora::component_ids`]): PPR is
    /// exactly zero on a component without a seed, which the certificate uses.
    pub(super) component: Vec<u32>,
}

/// `gamma_k = k u / (1 - k u)` (`u` the unit roundoff): the classic bound on the relative
/// rounding of `k` floating-point operations in a row.
pub(super) fn gamma(k: usize) -> f64 {
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
pub(super) struct SolvedRowBound {
    pub(super) max: [f64; 4],
    pub(super) per_degree: [f64; 4],
    pub(super) sum: [f64; 4],
}

impl SolvedRowBound {
    /// The coefficients of rows `core..stop` (positions; every eliminated row when `stop` is
    /// their end), from the factor's rows by position (`elimination`, `pivots` from position
    /// `core` on) and the graph by position.
    pub(super) fn build(
        core: usize,
        stop: usize,
        elimination: &SparseRows<f64>,
        pivots: &[f64],
        graph: &SparseRows<()>,
        damping: f64,
    ) -> SolvedRowBound {
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
        let mut out = SolvedRowBound::default();
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
    pub(super) fn bound(c: [f64; 4], x: [f64; 4]) -> f64 {
        (c[0] * x[0] + c[1] * x[1] + c[2] * x[2] + c[3] * x[3]) * (1.0 + 1e-9)
    }
}

/// Checksum of a graph's CSR (FNV-1a over every offset and neighbour), so a cached factor is
/// never applied to another graph.
pub(super) fn csr_checksum(csr: &Csr) -> u64 {
    fnv1a(csr.offsets.iter().chain(&csr.neighbors).copied())
}

/// FNV-1a over 32-bit words.
pub(super) fn fnv1a(words: impl Iterator<Item = u32>) -> u64 {
    words.fold(0xcbf2_9ce4_8422_2325, |h, x| {
        (h ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl PprFactor {
    /// Orders and factors the graph (once per graph and damping; about half a second on the
    /// MuSiQue-sized graph, symmetry classes included).
    pub fn build(csr: &Csr, damping: f64) -> Result<PprFactor, PprError> {
        check_damping(damping)?;
        let n = csr.node_count();
        let elim = eliminate(csr, damping);
        let mut order = core_order(&elim);
        let core = order.len();
        let mut position = vec![u32::MAX; n];
        for (i, &v) in order.iter().enumerate() {
            position[v as usize] = i as u32;
        }
        let (tree_order, level) = elimination_tree(&elim.rows, &position);
        let (pristine_start, tree_order) = place_eliminated(
            csr,
            damping,
            &elim.rows,
            (&tree_order, &level),
            &mut order,
            &mut position,
        );
        for v in (0..n as u32).filter(|&v| csr.degree(v) == 0) {
            position[v as usize] = order.len() as u32;
            order.push(v);
        }
        let (elimination, inv_pivot, pivots) = factor_rows(&elim.rows, &tree_order, &position);
        let (s_scale, lower) = scaled_core(&elim, &order[..core], &position);
        let graph = graph_by_position(csr, &order, &position);
        let short = short_rows(&graph, n);
        let pristine_weights: [(f64, f64); ELIMINATION_MAX_DEGREE + 1] =
            std::array::from_fn(|d| (1.0 / d as f64, -damping / d as f64));
        let end = core + elim.rows.len();
        check_pristine_rows(
            &elimination,
            &inv_pivot,
            &pristine_weights,
            core,
            pristine_start..end,
        );
        let elimination_runs = length_runs(&elimination, core, core, pristine_start);
        let pristine_runs = length_runs(&elimination, core, pristine_start, end);
        assert!(
            pristine_runs.windows(2).all(|w| w[0].1 < w[1].1),
            "pristine rows out of length order"
        );
        let solved = SolvedRowBound::build(core, end, &elimination, &pivots, &graph, damping);
        let pieces = sweep_pieces(&graph, core, pristine_start, end);
        let (class, branch, up) = symmetry_by_position(csr, &order, &position);
        let ids = corpora::component_ids(csr);
        let component = order.iter().map(|&v| ids[v as usize]).collect();
        Ok(PprFactor {
            damping,
            key: (n, csr.neighbors.len(), csr_checksum(csr)),
            position,
            order,
            core,
            eliminated: elim.rows.len(),
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
            component,
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

/// What [`eliminate`] leaves: the elimination graph (off-diagonal entries of the current Schur
/// complement, by node id) and the pivots, which are the core's Schur complement where a node
/// is still `alive`, and the eliminated rows in elimination order.
struct Elimination {
    adj: Vec<HashMap<u32, f64>>,
    pivot: Vec<f64>,
    alive: Vec<bool>,
    rows: Vec<EliminatedRow>,
}

/// Minimum-degree elimination of `M = D - damping * A` while some node has at most
/// [`ELIMINATION_MAX_DEGREE`] neighbours in the elimination graph: each eliminated node's row
/// (sorted by node id, so the fill's floating-point sums run in the same order every build)
/// updates its neighbours' pivots and entries, and the nodes left are the core.
fn eliminate(csr: &Csr, damping: f64) -> Elimination {
    let n = csr.node_count();
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
    Elimination {
        adj,
        pivot,
        alive,
        rows: eliminated,
    }
}

/// The core's nodes in breadth-first order from its lowest node id, component by component,
/// over the elimination graph: the CG sweeps then read neighbours close in memory.
fn core_order(elim: &Elimination) -> Vec<u32> {
    let (adj, alive) = (&elim.adj, &elim.alive);
    let n = alive.len();
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
    order
}

/// The elimination tree, breadth first from the core down: the eliminated rows' indices in that
/// order, and each row's level (depth below the core). A node's parent is the first of its
/// row's nodes to be eliminated after it; every other node of its row is an ancestor (the row
/// was a clique when it went), so parents-first order puts each row above its node. Rows that
/// name only core nodes hang from the core, ordered by their first core node (`position`).
fn elimination_tree(eliminated: &[EliminatedRow], position: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let mut step = vec![u32::MAX; position.len()];
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
    (tree_order, level)
}

/// Whether an eliminated row is pristine: eliminated with its graph row intact (every
/// neighbour still there, no fill, pivot = degree), so its substitution reads its graph row
/// with weights that depend on its length only (see `residual_sweep`).
fn is_pristine(csr: &Csr, damping: f64, (v, pv, row): &EliminatedRow) -> bool {
    let mut graph_row = csr.neighbors(*v).to_vec();
    graph_row.sort_unstable();
    graph_row.dedup();
    *pv == graph_row.len() as f64
        && row.len() == graph_row.len()
        && row
            .iter()
            .zip(&graph_row)
            .all(|(e, &u)| e.0 == u && e.1 == -damping)
}

/// Gives the eliminated nodes their positions after the core's (appended to `order`): the
/// other rows by tree level, row length and breadth-first rank (nodes of one level never
/// depend on each other, and equal lengths in a row let the substitution's inner loop run the
/// same count many times, which branch prediction rewards); then the pristine rows, by row
/// length and first neighbour. Every ancestor in the elimination tree lost a neighbour to an
/// earlier elimination, so pristine nodes are leaves of the tree and may all go last.
/// Returns the first pristine position and the rows' indices in position order.
fn place_eliminated(
    csr: &Csr,
    damping: f64,
    eliminated: &[EliminatedRow],
    (tree_order, level): (&[u32], &[u32]),
    order: &mut Vec<u32>,
    position: &mut [u32],
) -> (usize, Vec<u32>) {
    let rank: Vec<u32> = {
        let mut r = vec![0u32; eliminated.len()];
        for (k, &i) in tree_order.iter().enumerate() {
            r[i as usize] = k as u32;
        }
        r
    };
    let (mut last, mut first): (Vec<u32>, Vec<u32>) = tree_order
        .iter()
        .partition(|&&i| is_pristine(csr, damping, &eliminated[i as usize]));
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
    (pristine_start, first.into_iter().chain(last).collect())
}

/// The eliminated rows by position (`tree_order`): each row's entries over its pivot (the
/// substitutions then need the pivot only where there is mass), `1 / pivot`, and the pivots.
fn factor_rows(
    eliminated: &[EliminatedRow],
    tree_order: &[u32],
    position: &[u32],
) -> (SparseRows<f64>, Vec<f64>, Vec<f64>) {
    let mut elimination = SparseRows::default();
    let mut inv_pivot = Vec::with_capacity(eliminated.len());
    let mut pivots = Vec::with_capacity(eliminated.len());
    for &i in tree_order {
        let (v, pv, row) = &eliminated[i as usize];
        pivots.push(*pv);
        let mut entries: Vec<(u32, f64)> = row
            .iter()
            .map(|&(a, w)| (position[a as usize], w))
            .collect();
        entries.sort_unstable_by_key(|e| e.0);
        debug_assert!(entries.iter().all(|e| e.0 < position[*v as usize]));
        elimination.push_row(entries.into_iter().map(|(a, w)| (a, w / pv)));
        inv_pivot.push(1.0 / pv);
    }
    (elimination, inv_pivot, pivots)
}

/// The core's Schur complement S (the elimination graph on `core`, the core's nodes by
/// position), symmetrically scaled to unit diagonal (`D^-1/2 S D^-1/2 = I + L + L^T`): the
/// scale `1 / sqrt(diagonal)` and the strict lower triangle `L`, which serves both sweeps of
/// the symmetric Gauss-Seidel preconditioner.
fn scaled_core(elim: &Elimination, core: &[u32], position: &[u32]) -> (Vec<f64>, Triangle) {
    let s_scale: Vec<f64> = core
        .iter()
        .map(|&v| 1.0 / elim.pivot[v as usize].sqrt())
        .collect();
    let lower = Triangle::new(
        core.len(),
        core.iter().enumerate().map(|(me, &v)| {
            let mut row: Vec<(u32, f64)> = elim.adj[v as usize]
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
    (s_scale, lower)
}

/// The graph renumbered by position: each position's neighbours' positions, ascending.
fn graph_by_position(csr: &Csr, order: &[u32], position: &[u32]) -> SparseRows<()> {
    let mut graph = SparseRows::default();
    for &v in order {
        let mut row: Vec<u32> = csr
            .neighbors(v)
            .iter()
            .map(|&u| position[u as usize])
            .collect();
        row.sort_unstable();
        graph.push_row(row.into_iter().map(|u| (u, ())));
    }
    graph
}

/// The rows of degree at most [`SHORT`] at that fixed width, padded with the node count `n`
/// (the certificate's sweep reads them without a loop of varying length).
fn short_rows(graph: &SparseRows<()>, n: usize) -> Vec<u32> {
    let mut short = vec![n as u32; SHORT * n];
    for (p, row) in short.chunks_exact_mut(SHORT).enumerate() {
        let r = graph.row(p);
        if r.len() <= SHORT {
            row[..r.len()].copy_from_slice(&graph.cols[r]);
        }
    }
    short
}

/// Checks that every pristine row (positions `pristine`) holds exactly the weights of its
/// length, `pristine_weights`, which the certificate's sweep uses in place of the stored ones.
fn check_pristine_rows(
    elimination: &SparseRows<f64>,
    inv_pivot: &[f64],
    pristine_weights: &[(f64, f64); ELIMINATION_MAX_DEGREE + 1],
    core: usize,
    pristine: std::ops::Range<usize>,
) {
    for p in pristine {
        let r = elimination.row(p - core);
        let (inv, w) = pristine_weights[r.len()];
        assert!(
            inv_pivot[p - core] == inv && elimination.vals[r].iter().all(|&x| x == w),
            "a pristine row whose weights are not -damping / degree"
        );
    }
}

/// Runs of equal row lengths among positions `from..to` of the eliminated rows (stored from
/// position `core` on): (first position, length).
fn length_runs(
    elimination: &SparseRows<f64>,
    core: usize,
    from: usize,
    to: usize,
) -> Vec<(u32, u32)> {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for p in from..to {
        let d = elimination.row(p - core).len() as u32;
        if runs.last().is_none_or(|r| r.1 != d) {
            runs.push((p as u32, d));
        }
    }
    runs
}

/// [`PprFactor::pieces`]: the certificate sweep's pieces of the pristine positions, and of
/// the positions before them, balanced by their cost. The solved rows before the pristine
/// ones are only scored in the sweep's second phase, so they weigh one.
fn sweep_pieces(
    graph: &SparseRows<()>,
    core: usize,
    pristine_start: usize,
    end: usize,
) -> (Vec<u32>, Vec<u32>) {
    let weight = |p: usize| SWEEP_NODE_COST + graph.row(p).len();
    (
        balanced_pieces(pristine_start, end, weight),
        balanced_pieces(0, pristine_start, |p| if p < core { weight(p) } else { 1 }),
    )
}

/// The graph's [`Symmetry`] classes, branch tops and pendant parents, by position.
fn symmetry_by_position(
    csr: &Csr,
    order: &[u32],
    position: &[u32],
) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
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
    (class, branch, up)
}
