//! The engines against each other and against hand-computed cases.

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

/// With a floor of 0 the top-k runs past the seeds' component into nodes whose exact score is
/// 0. Their bound is their score's own size, not the residual's global one: the case proptest
/// found (the seed's component two nodes, a hub of degree 6 elsewhere) failed to certify
/// before (two bounds of ~6e-13 against the 1e-12 tie), about once in 8,000 cases.
#[test]
fn zeros_outside_the_seeds_component_certify_as_ties() {
    let edges = [
        (10, 1),
        (3, 0),
        (3, 12),
        (1, 2),
        (0, 1),
        (10, 2),
        (12, 1),
        (9, 1),
        (0, 0),
        (4, 5),
        (3, 9),
    ];
    let g = Csr::from_edges(13, edges);
    let f = PprFactor::build(&g, 0.85).unwrap();
    let mut ws = CertifiedWorkspace::default();
    let r = certified_ppr(&f, &g, &[(4, 0.05)], 6, 0.0, DEFAULT_TIE, &mut ws).unwrap();
    assert!(r.certified, "top error {}", r.top_error);
    let nodes: Vec<u32> = r.top.iter().map(|t| t.0).collect();
    assert_eq!(nodes, [4, 5, 0, 1, 2, 3]);
    // The seed and its one neighbour: pi(4) = 1 / (1 + damping), pi(5) = damping / (1 + damping).
    assert!((r.top[0].1 - 1.0 / 1.85).abs() < 1e-14, "{}", r.top[0].1);
    assert!((r.top[1].1 - 0.85 / 1.85).abs() < 1e-14, "{}", r.top[1].1);
    assert!(r.top[2..].iter().all(|t| t.1 == 0.0));
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
fn exact_residual(t: f64, d: usize, y: f64, damping: f64, ys: impl Iterator<Item = f64>) -> f64 {
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

/// The last query's solved rows ([`SolvedRowBound`]) against their a priori bound, each residual
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
    let bound = |c| SolvedRowBound::bound(c, x);
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
    f.solved = SolvedRowBound::build(f.core, end, &f.elimination, &pivots, &f.graph, f.damping);
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

/// A result with its floats as bits, so that equality is bit for bit.
type ResultBits = (Vec<(u32, u64)>, bool, u64, u64, usize, usize);

fn result_bits(r: &CertifiedPpr) -> ResultBits {
    let top = r.top.iter().map(|&(v, s)| (v, s.to_bits())).collect();
    (
        top,
        r.certified,
        r.top_error.to_bits(),
        r.max_error.to_bits(),
        r.iterations,
        r.checks,
    )
}

/// Two runs of [`certified_ppr`] agree bit for bit: result and every score.
fn check_same_bits(
    a: &CertifiedPpr,
    wa: &CertifiedWorkspace,
    b: &CertifiedPpr,
    wb: &CertifiedWorkspace,
    f: &PprFactor,
) {
    assert_eq!(result_bits(a), result_bits(b));
    let scores =
        |w: &CertifiedWorkspace| -> Vec<u64> { w.scores(f).iter().map(|s| s.to_bits()).collect() };
    assert_eq!(scores(wa), scores(wb));
}

/// [`certified_ppr_many`] on `queries` with `threads` threads returns, query by query, what
/// [`certified_ppr`] returns alone, bit for bit (errors included).
fn check_many(
    f: &PprFactor,
    g: &Csr,
    queries: &[Vec<(u32, f64)>],
    k: usize,
    tie: f64,
    threads: usize,
) {
    let bits =
        |r: &Result<CertifiedPpr, PprError>| r.as_ref().map(result_bits).map_err(Clone::clone);
    let many = certified_ppr_many(f, g, queries, k, 1e-6, tie, threads);
    assert_eq!(many.len(), queries.len());
    let mut ws = CertifiedWorkspace::default();
    for (i, (q, m)) in queries.iter().zip(&many).enumerate() {
        let one = certified_ppr(f, g, q, k, 1e-6, tie, &mut ws);
        assert_eq!(
            bits(m),
            bits(&one),
            "query {i} of {}, {threads} threads",
            queries.len()
        );
    }
}

/// Lanes sharing sweeps change no bit: groups cut short, lanes without seeds or with an
/// error, queries that check more than once.
#[test]
fn many_queries_at_once_are_bit_for_bit_one_at_a_time() {
    let g = synthetic_kg(20_000, 11);
    let f = PprFactor::build(&g, 0.85).unwrap();
    assert!(f.sizes().1 > 1_000, "a core to iterate on");
    let mut rng = bench_core::rng::SplitMix64::new(5);
    let mut queries: Vec<Vec<(u32, f64)>> = (0..13)
        .map(|_| {
            (0..1 + rng.below(8))
                .map(|_| (rng.below(20_000) as u32, 0.1 + rng.next_f64()))
                .collect()
        })
        .collect();
    queries.insert(2, Vec::new());
    queries.insert(5, vec![(20_000, 1.0)]);
    queries.insert(6, vec![(3, 0.0)]);
    for threads in [1, 2, 3] {
        check_many(&f, &g, &queries, 50, DEFAULT_TIE, threads);
    }
    let mut ws = CertifiedWorkspace::default();
    // A top-1000 makes lanes check once, twice or three times, so lanes stop and resume
    // while others go on.
    let checks: Vec<usize> = queries
        .iter()
        .filter_map(|q| certified_ppr(&f, &g, q, 1000, 1e-6, DEFAULT_TIE, &mut ws).ok())
        .map(|r| r.checks)
        .collect();
    assert!(
        checks.contains(&1) && checks.iter().any(|&c| c > 1),
        "{checks:?}"
    );
    for threads in [1, 2] {
        check_many(&f, &g, &queries, 1000, DEFAULT_TIE, threads);
    }
    check_many(&f, &g, &queries, 1000, 0.0, 2);
    check_many(&f, &g, &[], 50, DEFAULT_TIE, 2);
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
    let narrow = BlockedTriangle::<u16>::from_rows(rows.iter().cloned());
    assert!(narrow.rows.len() > n / 2, "several rows of several blocks");
    for t in [
        Triangle::Narrow(narrow),
        Triangle::Wide(BlockedTriangle::from_rows(rows.iter().cloned())),
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
    let b = balanced_pieces(10, 1000, weight);
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
    assert_eq!(balanced_pieces(5, 5, weight), vec![5]);
    assert_eq!(balanced_pieces(5, 8, weight), vec![5, 6, 7, 8]);
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

    #[test]
    fn many_small_queries_at_once_are_bit_for_bit_one_at_a_time(
        (n, edges, seeds) in small_graph(),
        more in proptest::collection::vec(proptest::collection::vec((0u32..40, 0.05f64..1.0), 0..4), 0..9),
        k in 1usize..12,
    ) {
        let g = Csr::from_edges(n, edges);
        let f = PprFactor::build(&g, 0.85).unwrap();
        // Seeds past `n` are errors, in their lanes only.
        let mut queries = vec![seeds];
        queries.extend(more);
        for tie in [DEFAULT_TIE, 0.0] {
            check_many(&f, &g, &queries, k, tie, 2);
        }
    }
}

#[test]
fn top_k_breaks_ties_by_node_and_applies_the_floor() {
    let t = top_k([(3, 0.5), (1, 0.5), (2, 0.9), (0, 1e-6)], 3, 1e-5);
    assert_eq!(t, vec![(2, 0.9), (1, 0.5), (3, 0.5)]);
    assert_eq!(top_k([(3, 0.5), (1, 0.5)], 1, 0.0), vec![(1, 0.5)]);
}
