//! PPR against networkx's values (metric fixtures), push against exact, and invariance properties.

use std::collections::HashMap;

use corpora::Csr;
use paradigms::ppr::{exact_ppr, push_ppr, sweep_ppr, top_k, PushWorkspace, DEFAULT_PUSH_EPSILON};
use proptest::prelude::*;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/metric-fixtures");

/// A fixture graph: node names in order of first appearance, and its CSR.
struct Graph {
    names: Vec<String>,
    ids: HashMap<String, u32>,
    csr: Csr,
}

/// Parses `head<TAB>relation<TAB>tail` lines; a self-loop adds its node but no edge.
fn load(rel: &str) -> Graph {
    let text = std::fs::read_to_string(format!("{FIXTURES}/{rel}")).unwrap();
    let mut names = Vec::new();
    let mut ids = HashMap::new();
    let mut edges = Vec::new();
    let mut id = |name: &str, names: &mut Vec<String>| {
        *ids.entry(name.to_string()).or_insert_with(|| {
            names.push(name.to_string());
            (names.len() - 1) as u32
        })
    };
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let parts: Vec<&str> = line.split('\t').collect();
        assert_eq!(parts.len(), 3, "bad line {line:?}");
        let (h, t) = (id(parts[0], &mut names), id(parts[2], &mut names));
        edges.push((h, t));
    }
    let csr = Csr::from_edges(names.len(), edges);
    let ids = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.clone(), i as u32))
        .collect();
    Graph { names, ids, csr }
}

fn expected() -> serde_json::Value {
    let text = std::fs::read_to_string(format!("{FIXTURES}/ppr/expected_ppr.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn seeds(g: &Graph, case: &serde_json::Value) -> Vec<(u32, f64)> {
    case["seeds"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (g.ids[k], v.as_f64().unwrap()))
        .collect()
}

#[test]
fn exact_matches_networkx_on_every_score_of_the_small_graph() {
    let exp = expected();
    let case = &exp["cases"][0];
    let g = load(case["edges"].as_str().unwrap());
    let r = exact_ppr(&g.csr, &seeds(&g, case), 0.85, 1e-15, 10_000).unwrap();
    let want = case["scores"].as_object().unwrap();
    assert_eq!(want.len(), g.names.len());
    for (name, v) in want {
        let got = r.scores[g.ids[name] as usize];
        let v = v.as_f64().unwrap();
        assert!((got - v).abs() < 1e-9, "{name}: {got} vs {v}");
    }
    assert!((r.scores.iter().sum::<f64>() - 1.0).abs() < 1e-12);
}

#[test]
fn exact_matches_the_networkx_top100_order_on_2000_nodes_and_push_agrees() {
    let exp = expected();
    let case = &exp["cases"][1];
    let g = load(case["edges"].as_str().unwrap());
    let s = seeds(&g, case);
    let exact = exact_ppr(&g.csr, &s, 0.85, 1e-13, 10_000).unwrap();
    assert!((exact.scores.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    let want: Vec<(String, f64)> = case["top100"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p[0].as_str().unwrap().to_string(), p[1].as_f64().unwrap()))
        .collect();
    let top = top_k(
        exact.scores.iter().enumerate().map(|(i, &x)| (i as u32, x)),
        100,
        0.0,
    );
    let names: Vec<&str> = top
        .iter()
        .map(|&(v, _)| g.names[v as usize].as_str())
        .collect();
    let want_names: Vec<&str> = want.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, want_names);
    for ((_, got), (name, v)) in top.iter().zip(&want) {
        assert!((got - v).abs() < 1e-9, "{name}: {got} vs {v}");
    }

    let mut ws = PushWorkspace::new();
    let push = push_ppr(&g.csr, &s, 0.85, DEFAULT_PUSH_EPSILON, &mut ws).unwrap();
    let ptop = top_k(push.scores.iter().copied(), 100, 0.0);
    let set = |t: &[(u32, f64)]| {
        let mut v: Vec<u32> = t.iter().map(|p| p.0).collect();
        v.sort_unstable();
        v
    };
    assert_eq!(set(&ptop), set(&top), "same top-100 set");
    for (i, (&(a, _), &(b, _))) in ptop.iter().zip(&top).enumerate() {
        if a != b {
            // A swap is allowed only between near-ties of the exact scores.
            let gap = (exact.scores[a as usize] - exact.scores[b as usize]).abs();
            assert!(gap <= 1e-9, "rank {i}: push {a} vs exact {b}, gap {gap}");
        }
    }
    for &(v, x) in &push.scores {
        assert!(
            x <= exact.scores[v as usize] + 1e-12,
            "push is a lower bound"
        );
    }
}

#[test]
fn sweep_matches_the_networkx_top100_order_on_2000_nodes_within_its_certified_error() {
    let exp = expected();
    let case = &exp["cases"][1];
    let g = load(case["edges"].as_str().unwrap());
    let s = seeds(&g, case);
    let want: Vec<(String, f64)> = case["top100"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p[0].as_str().unwrap().to_string(), p[1].as_f64().unwrap()))
        .collect();
    let mut ws = PushWorkspace::new();
    let r = sweep_ppr(&g.csr, &s, 0.85, 1e-10, &mut ws).unwrap();
    assert!(r.residual <= 1e-10, "certified L1 error {}", r.residual);
    let mass: f64 = r.scores.iter().map(|p| p.1).sum();
    assert!((mass + r.residual - 1.0).abs() < 1e-12, "mass {mass}");
    let top = top_k(r.scores.iter().copied(), 100, 0.0);
    let names: Vec<&str> = top
        .iter()
        .map(|&(v, _)| g.names[v as usize].as_str())
        .collect();
    let want_names: Vec<&str> = want.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, want_names);
    for ((_, got), (name, v)) in top.iter().zip(&want) {
        // A lower bound within the residual mass left.
        assert!(
            *got <= v + 1e-12 && v - got <= 1e-10,
            "{name}: {got} vs {v}"
        );
    }
    // The workspace is clean for the next query: the same run gives the same result.
    assert_eq!(sweep_ppr(&g.csr, &s, 0.85, 1e-10, &mut ws).unwrap(), r);
}

/// A random small graph: n nodes, an edge list (repeats and self-loops allowed), seeds.
type Case = (usize, Vec<(u32, u32)>, Vec<(u32, f64)>);

fn graph_strategy() -> impl Strategy<Value = Case> {
    (2usize..24).prop_flat_map(|n| {
        let node = 0..n as u32;
        (
            Just(n),
            prop::collection::vec((node.clone(), node.clone()), 0..60),
            prop::collection::vec((node, 0.05f64..1.0), 1..5),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn relabelling_nodes_permutes_scores(
        (n, edges, seeds) in graph_strategy(),
        shuffle in any::<u64>(),
    ) {
        // A permutation from the seed: sort node ids by a hash of (id, shuffle).
        let mut perm: Vec<u32> = (0..n as u32).collect();
        perm.sort_by_key(|&v| (u64::from(v) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ shuffle);
        let g = Csr::from_edges(n, edges.iter().copied());
        let h = Csr::from_edges(n, edges.iter().map(|&(a, b)| (perm[a as usize], perm[b as usize])));
        let hs: Vec<(u32, f64)> = seeds.iter().map(|&(v, w)| (perm[v as usize], w)).collect();
        let a = exact_ppr(&g, &seeds, 0.85, 1e-14, 100_000).unwrap();
        let b = exact_ppr(&h, &hs, 0.85, 1e-14, 100_000).unwrap();
        prop_assert!((a.scores.iter().sum::<f64>() - 1.0).abs() < 1e-10);
        for (&x, &pv) in a.scores.iter().zip(&perm) {
            prop_assert!((x - b.scores[pv as usize]).abs() < 1e-10);
        }
        // Push converges to the same scores when epsilon is tiny.
        let mut ws = PushWorkspace::new();
        let p = push_ppr(&h, &hs, 0.85, 1e-14, &mut ws).unwrap();
        let mut dense = vec![0.0; n];
        for (v, x) in p.scores { dense[v as usize] = x; }
        for (&x, &pv) in a.scores.iter().zip(&perm) {
            prop_assert!((x - dense[pv as usize]).abs() < 1e-9);
        }
    }

    #[test]
    fn sweep_agrees_with_exact_within_its_residual((n, edges, seeds) in graph_strategy()) {
        let g = Csr::from_edges(n, edges);
        let a = exact_ppr(&g, &seeds, 0.85, 1e-14, 100_000).unwrap();
        let mut ws = PushWorkspace::new();
        let r = sweep_ppr(&g, &seeds, 0.85, 1e-9, &mut ws).unwrap();
        prop_assert!(r.residual <= 1e-9);
        let mut dense = vec![0.0; n];
        for &(v, x) in &r.scores { dense[v as usize] = x; }
        let mut l1 = 0.0;
        for (&x, &y) in a.scores.iter().zip(&dense) {
            prop_assert!(y <= x + 1e-12, "a lower bound");
            l1 += x - y;
        }
        prop_assert!(l1 <= r.residual + 1e-12, "L1 error {l1} above the residual {}", r.residual);
        // Same top-10 up to near-ties of the exact scores.
        let ta = top_k(a.scores.iter().enumerate().map(|(i, &x)| (i as u32, x)), 10, 0.0);
        let tb = top_k(r.scores.iter().copied(), 10, 0.0);
        for (&(u, _), &(v, _)) in ta.iter().zip(&tb) {
            prop_assert!(u == v || (a.scores[u as usize] - a.scores[v as usize]).abs() <= 1e-8);
        }
    }

    #[test]
    fn scaling_seed_weights_changes_nothing((n, edges, seeds) in graph_strategy(), k in 0.1f64..50.0) {
        let g = Csr::from_edges(n, edges);
        let scaled: Vec<(u32, f64)> = seeds.iter().map(|&(v, w)| (v, w * k)).collect();
        let a = exact_ppr(&g, &seeds, 0.85, 1e-14, 100_000).unwrap();
        let b = exact_ppr(&g, &scaled, 0.85, 1e-14, 100_000).unwrap();
        for (x, y) in a.scores.iter().zip(&b.scores) {
            prop_assert!((x - y).abs() < 1e-12);
        }
    }
}
