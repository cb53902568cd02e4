//! Property tests: relabelling/permuting changes nothing; isolated nodes and duplicate rows count as they should.

use metrics::corpus::embedding::{dispersion, embedding_metrics, unit_rows, HUBNESS_K};
use metrics::corpus::graph::{graph_metrics, EdgeList, GraphMetrics};
use metrics::corpus::knn::{knn_exact, knn_pass};
use metrics::corpus::EmbeddingMetrics;
use proptest::prelude::*;

/// The shared SplitMix64 stream, seeded per case, so generated vectors are continuous (no
/// accidental ties); drawn as these tests always have.
struct SplitMix(bench_core::rng::SplitMix64);

impl SplitMix {
    fn new(seed: u64) -> Self {
        SplitMix(bench_core::rng::SplitMix64::new(seed))
    }
    fn unit(&mut self) -> f64 {
        self.0.next_f64()
    }
    fn below(&mut self, n: usize) -> usize {
        (self.unit() * n as f64) as usize
    }
    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, self.below(i + 1));
        }
    }
}

fn random_rows(seed: u64, rows: usize, dim: usize) -> Vec<f32> {
    let mut rng = SplitMix::new(seed);
    // Shifted away from the origin so no row is (near) zero.
    (0..rows * dim)
        .map(|i| (rng.unit() * 2.0 - 1.0 + if i % dim == 0 { 0.5 } else { 0.0 }) as f32)
        .collect()
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a.is_nan() && b.is_nan()) || (a - b).abs() <= rel * a.abs().max(b.abs()).max(1e-300)
}

fn assert_graph_eq(a: &GraphMetrics, b: &GraphMetrics) {
    let (ja, jb) = (
        serde_json::to_value(a).unwrap(),
        serde_json::to_value(b).unwrap(),
    );
    for (k, va) in ja.as_object().unwrap() {
        let vb = &jb[k];
        if va.is_u64() {
            assert_eq!(va, vb, "{k}");
        } else {
            let (x, y) = (va.as_f64().unwrap(), vb.as_f64().unwrap());
            assert!(close(x, y, 1e-12), "{k}: {x} vs {y}");
        }
    }
}

fn assert_embeddings_eq(a: &EmbeddingMetrics, b: &EmbeddingMetrics) {
    let mut fa = serde_json::Map::new();
    let mut fb = serde_json::Map::new();
    metrics::corpus::flatten("", &serde_json::to_value(a).unwrap(), &mut fa);
    metrics::corpus::flatten("", &serde_json::to_value(b).unwrap(), &mut fb);
    for (k, va) in &fa {
        let vb = &fb[k];
        if va.is_u64() {
            assert_eq!(va, vb, "{k}");
        } else {
            let (x, y) = (
                va.as_f64().unwrap_or(f64::NAN),
                vb.as_f64().unwrap_or(f64::NAN),
            );
            assert!(
                close(x, y, 1e-10) || (x - y).abs() < 1e-12,
                "{k}: {x} vs {y}"
            );
        }
    }
}

fn triples_strategy() -> impl Strategy<Value = Vec<(u8, u8, u8)>> {
    prop::collection::vec((0u8..25, 0u8..6, 0u8..25), 0..90)
}

fn edge_list(triples: &[(u8, u8, u8)], name: impl Fn(u8) -> String) -> EdgeList {
    EdgeList::from_triples(
        triples
            .iter()
            .map(|&(h, r, t)| (name(h), format!("rel{r}"), name(t))),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn relabelling_nodes_and_reordering_lines_changes_nothing(
        triples in triples_strategy(),
        seed in any::<u64>(),
    ) {
        let base = graph_metrics(&edge_list(&triples, |v| format!("n{v}")));
        let mut rng = SplitMix::new(seed);
        let mut perm: Vec<u8> = (0..25).collect();
        rng.shuffle(&mut perm);
        let mut lines = triples.clone();
        rng.shuffle(&mut lines);
        // Writing some triples backwards is the same undirected edge.
        for l in lines.iter_mut() {
            if rng.unit() < 0.3 {
                *l = (l.2, l.1, l.0);
            }
        }
        let relabelled = graph_metrics(&edge_list(&lines, |v| format!("m{}", perm[v as usize])));
        assert_graph_eq(&base, &relabelled);
    }

    #[test]
    fn an_isolated_node_changes_only_what_it_should(triples in triples_strategy()) {
        let list = edge_list(&triples, |v| format!("n{v}"));
        let old = graph_metrics(&list);
        let mut with = list.clone();
        with.add_node("isolated");
        let new = graph_metrics(&with);
        prop_assert_eq!(new.nodes, old.nodes + 1);
        prop_assert_eq!(new.connected_components, old.connected_components + 1);
        prop_assert_eq!(new.lcc_nodes, old.lcc_nodes.max(1));
        for (a, b) in [
            (new.edges, old.edges), (new.triples, old.triples),
            (new.relation_types, old.relation_types), (new.self_loop_triples, old.self_loop_triples),
            (new.max_degree, old.max_degree), (new.malformed_lines, old.malformed_lines),
        ] {
            prop_assert_eq!(a, b);
        }
        let n = old.nodes as f64;
        if old.nodes >= 2 {
            prop_assert!(close(new.density, old.density * (n - 1.0) / (n + 1.0), 1e-12));
            prop_assert!(close(new.max_degree_centrality, old.max_degree_centrality * (n - 1.0) / n, 1e-12));
        }
        if old.nodes >= 1 {
            // The new node has clustering 0 and degree 0: only the divisor of the means grows.
            let shrink = n / (n + 1.0);
            prop_assert!(close(new.average_degree, old.average_degree * shrink, 1e-12));
            prop_assert!(close(new.lcc_ratio, old.lcc_ratio * shrink, 1e-12));
            prop_assert!(close(new.average_clustering, old.average_clustering * shrink, 1e-12));
        }
    }

    #[test]
    fn permuting_rows_changes_nothing(
        seed in any::<u64>(),
        rows in 3usize..40,
        dim in 2usize..8,
    ) {
        let data = random_rows(seed, rows, dim);
        let mut order: Vec<usize> = (0..rows).collect();
        SplitMix::new(seed ^ 0xABCD).shuffle(&mut order);
        let permuted: Vec<f32> = order
            .iter()
            .flat_map(|&r| data[r * dim..(r + 1) * dim].iter().copied())
            .collect();
        let a = embedding_metrics(&data, dim).unwrap();
        let b = embedding_metrics(&permuted, dim).unwrap();
        assert_embeddings_eq(&a, &b);
    }

    #[test]
    fn a_duplicated_row_is_dropped_from_twonn_and_counted(
        seed in any::<u64>(),
        rows in 3usize..40,
        dim in 2usize..8,
        pick in any::<prop::sample::Index>(),
        at in any::<prop::sample::Index>(),
    ) {
        let data = random_rows(seed, rows, dim);
        let before = embedding_metrics(&data, dim).unwrap();
        prop_assert_eq!(before.twonn_points_dropped_r1_zero, 0);
        let src = pick.index(rows);
        let pos = at.index(rows + 1);
        let mut dup = data.clone();
        let row: Vec<f32> = data[src * dim..(src + 1) * dim].to_vec();
        dup.splice(pos * dim..pos * dim, row);
        let after = embedding_metrics(&dup, dim).unwrap();
        prop_assert_eq!(after.rows, rows as u64 + 1);
        // Both copies have r1 == 0; every other row stays in the estimate.
        prop_assert_eq!(after.twonn_points_dropped_r1_zero, 2);
        prop_assert_eq!(after.twonn_points_used, rows as u64 - 1);
        let unit = unit_rows(&dup, dim).unwrap();
        let knn = knn_pass(&unit, HUBNESS_K);
        let copies = [if pos <= src { src + 1 } else { src }, pos];
        for c in copies {
            prop_assert_eq!(knn.r1[c], 0.0);
        }
    }

    #[test]
    fn blocked_knn_equals_brute_force_float64(
        seed in any::<u64>(),
        rows in 2usize..60,
        dim in 1usize..10,
        dups in 0usize..6,
    ) {
        let mut data = random_rows(seed, rows, dim);
        let mut rng = SplitMix::new(seed.rotate_left(17));
        for _ in 0..dups {
            let src = rng.below(rows);
            let row: Vec<f32> = data[src * dim..(src + 1) * dim].to_vec();
            data.extend(row);
        }
        let unit = unit_rows(&data, dim).unwrap();
        let fast = knn_pass(&unit, HUBNESS_K);
        let slow = knn_exact(&unit, HUBNESS_K);
        prop_assert_eq!(&fast.neighbours, &slow.neighbours);
        for i in 0..unit.rows {
            prop_assert!(close(fast.r1[i], slow.r1[i], 0.0), "r1 row {}", i);
            prop_assert!(close(fast.r2[i], slow.r2[i], 0.0), "r2 row {}", i);
        }
    }

    /// Float32 rows and the same rows widened give the same dispersion bit for bit (the
    /// whole pass no longer widens a copy), and its mean matches a plain column-wise centroid.
    #[test]
    fn dispersion_of_float32_rows_equals_the_widened_ones(
        seed in any::<u64>(),
        rows in 1usize..80,
        dim in 1usize..12,
    ) {
        let data = random_rows(seed, rows, dim);
        let wide: Vec<f64> = data.iter().map(|&x| f64::from(x)).collect();
        let a = dispersion(&data, dim);
        let b = dispersion(&wide, dim);
        prop_assert_eq!(a.mean.to_bits(), b.mean.to_bits());
        prop_assert_eq!(a.std.to_bits(), b.std.to_bits());
        prop_assert_eq!(a.min.to_bits(), b.min.to_bits());
        prop_assert_eq!(a.max.to_bits(), b.max.to_bits());
        let centroid: Vec<f64> = (0..dim)
            .map(|c| (0..rows).map(|r| wide[r * dim + c]).sum::<f64>() / rows as f64)
            .collect();
        let c_norm = centroid.iter().map(|x| x * x).sum::<f64>().sqrt();
        let mean = wide
            .chunks_exact(dim)
            .map(|x| {
                let dot: f64 = x.iter().zip(&centroid).map(|(a, b)| a * b).sum();
                1.0 - dot / (x.iter().map(|a| a * a).sum::<f64>().sqrt() * c_norm)
            })
            .sum::<f64>()
            / rows as f64;
        prop_assert!((a.mean - mean).abs() <= 1e-9, "{} vs {}", a.mean, mean);
    }
}

/// Rows spanning several Gram blocks (block size 512), so the cross-block symmetric updates
/// and the per-thread list merge are exercised; duplicates included.
#[test]
fn blocked_knn_equals_brute_force_across_blocks() {
    let (rows, dim) = (1300, 12);
    let mut data = random_rows(7, rows, dim);
    for src in [3usize, 600, 1299, 3] {
        let row: Vec<f32> = data[src * dim..(src + 1) * dim].to_vec();
        data.extend(row);
    }
    let unit = unit_rows(&data, dim).unwrap();
    let fast = knn_pass(&unit, HUBNESS_K);
    let slow = knn_exact(&unit, HUBNESS_K);
    assert_eq!(fast.neighbours, slow.neighbours);
    assert_eq!(fast.r1, slow.r1);
    assert_eq!(fast.r2, slow.r2);
    assert_eq!(fast.r1.iter().filter(|&&r| r == 0.0).count(), 7);
}
