//! The probe step's zero-token signals against values computed by hand: dense scores, BM25 over
//! a three-chunk corpus, overlaps, components, the PPR shape and entity linking on a small graph.

use std::collections::HashMap;
use std::sync::Arc;

use bench_core::{Embedder, Embeddings};
use corpora::{Csr, FlatIndex, GraphTriplet, KnowledgeGraph};
use fixtures::tiny_corpus;
use paradigms::retrieval_signals::{
    dense_signals, graph_signals, ppr_shape, top_overlap, Bm25Index, Components,
};
use paradigms::{ChunkTable, FnEntities, GraphParams, GraphRetriever, PushWorkspace};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

#[test]
fn dense_signals_of_a_hand_made_ranking() {
    // Drops: 0.2, 0.05, 0.35, 0.1, 0.1: the largest follows position 3.
    let d = dense_signals(&[0.9, 0.7, 0.65, 0.3, 0.2, 0.1]);
    assert!(close(d.top1.unwrap(), 0.9));
    assert!(close(d.margin.unwrap(), 0.2));
    assert!(close(d.mean5.unwrap(), 2.75 / 5.0));
    // Fewer than 10 scores: the mean of those there are.
    assert!(close(d.mean10.unwrap(), 2.85 / 6.0));
    assert_eq!(d.gap_position, Some(3.0));
    // Ties: the first largest drop.
    assert_eq!(dense_signals(&[1.0, 0.5, 0.0]).gap_position, Some(1.0));
    let one = dense_signals(&[0.4]);
    assert_eq!((one.margin, one.gap_position), (None, None));
    assert!(close(one.mean10.unwrap(), 0.4));
    assert_eq!(dense_signals(&[]).top1, None);
}

#[test]
fn bm25_scores_follow_okapi_by_hand() {
    // Lengths 2, 3, 1: avgdl 2, N 3, k1 1.2, b 0.75.
    let index = Bm25Index::new(&["Apple banana", "apple, apple cherry", "Durian"]);
    // "apple" is in 2 documents: idf = ln(1 + 1.5/2.5) = ln 1.6.
    // doc 0: tf 1, |d| 2: 2.2 / (1 + 1.2) = 1; doc 1: tf 2, |d| 3: 4.4 / (2 + 1.2*1.375) = 4.4/3.65.
    let hits = index.search("apple", 10);
    assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), [1, 0]);
    assert!(close(hits[0].1, 1.6f64.ln() * 4.4 / 3.65), "{hits:?}");
    assert!(close(hits[1].1, 1.6f64.ln()), "{hits:?}");
    // "durian": idf = ln(1 + 2.5/1.5); doc 2: tf 1, |d| 1: 2.2 / (1 + 1.2*0.625) = 2.2/1.75.
    let hits = index.search("DURIAN?", 10);
    assert_eq!(hits.len(), 1);
    assert!(close(hits[0].1, (1.0f64 + 2.5 / 1.5).ln() * 2.2 / 1.75));
    // No query term in the corpus: no hit; k cuts the list.
    assert!(index.search("zebra", 10).is_empty());
    assert_eq!(index.search("apple", 1).len(), 1);
}

#[test]
fn overlap_and_ppr_shape_by_hand() {
    assert_eq!(top_overlap(&[1, 2, 3, 4], &[4, 9, 2, 8], 4), Some(0.5));
    // Only the first k of each list count.
    assert_eq!(top_overlap(&[1, 2, 3], &[3, 1], 1), Some(0.0));
    assert_eq!(top_overlap(&[1], &[1], 0), None);
    let (top1, mass, entropy) = ppr_shape(&[(7, 0.5), (3, 0.3), (1, 0.2)]);
    assert_eq!(top1, Some(0.5));
    assert!(close(mass.unwrap(), 1.0));
    let h = -(0.5f64 * 0.5f64.ln() + 0.3 * 0.3f64.ln() + 0.2 * 0.2f64.ln());
    assert!(close(entropy.unwrap(), h));
    // Mass of the best 10 of 12 equal scores 0.05, entropy over the 12 normalised: ln 12.
    let flat: Vec<(u32, f64)> = (0..12).map(|i| (i, 0.05)).collect();
    let (_, mass, entropy) = ppr_shape(&flat);
    assert!(close(mass.unwrap(), 0.5));
    assert!(close(entropy.unwrap(), 12f64.ln()));
    assert_eq!(ppr_shape(&[]), (None, None, None));
}

#[test]
fn components_count_nodes_per_connected_part() {
    let c = Components::new(&Csr::from_edges(6, [(0, 1), (1, 2), (3, 4)]));
    assert_eq!(
        (0..6).map(|v| c.size_of(v)).collect::<Vec<_>>(),
        [3, 3, 3, 2, 2, 1]
    );
}

/// One axis per keyword, so every similarity is known by hand.
struct AxisEmbedder;

const AXES: [&str; 4] = ["ada", "bridge", "river", "tom"];

impl Embedder for AxisEmbedder {
    fn name(&self) -> &str {
        "axis-test-encoder"
    }
    fn dim(&self) -> usize {
        4
    }
    fn embed(&self, texts: &[&str]) -> bench_core::Result<Embeddings> {
        let mut data = Vec::new();
        for t in texts {
            let t = t.to_lowercase();
            let v = AXES.map(|a| f32::from(u8::from(t.contains(a))));
            let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
            data.extend(v.iter().map(|x| x / n));
        }
        Ok(Embeddings::new(4, data))
    }
}

/// Nodes 0 Ada Brook, 1 Old Bridge, 2 River Alder, 3 Tom Vale, 4 Town Hall, 5 Ada Statue;
/// edges 0-1, 1-2, 2-3; 4-5 apart.
fn retriever(entities: &'static [&'static str]) -> GraphRetriever {
    let nodes = [
        "Ada Brook",
        "Old Bridge",
        "River Alder",
        "Tom Vale",
        "Town Hall",
        "Ada Statue",
    ];
    let edges = [(0u32, 1u32), (1, 2), (2, 3), (4, 5)];
    let graph = KnowledgeGraph {
        nodes: nodes.iter().map(|s| s.to_string()).collect(),
        node_ids: nodes
            .iter()
            .enumerate()
            .map(|(i, s)| (s.to_string(), i as u32))
            .collect::<HashMap<_, _>>(),
        relations: vec!["r".into()],
        triplets: edges
            .iter()
            .map(|&(u, v)| GraphTriplet {
                u,
                v,
                relation: 0,
                chunk: 0,
            })
            .collect(),
        adjacency: Csr::from_edges(nodes.len(), edges),
    };
    let chunks = Arc::new(ChunkTable::new(
        tiny_corpus(&[("c0", "text")], vec![]).chunks,
    ));
    let embedder: Arc<dyn Embedder> = Arc::new(AxisEmbedder);
    let index = Arc::new(FlatIndex::new(embedder.embed(&nodes).unwrap()).unwrap());
    let list: Vec<String> = entities.iter().map(|s| s.to_string()).collect();
    GraphRetriever::new(
        Arc::new(graph),
        index,
        chunks,
        embedder,
        Arc::new(FnEntities::new("fixed", move |_: &str| list.clone())),
        GraphParams::default(),
    )
    .unwrap()
}

#[tokio::test]
async fn entity_linking_and_seed_shape_by_hand() {
    // "Ada" links to nodes 0 and 5 (similarity 1); "Zebra" has no axis (similarity 0 <= 0.4).
    let r = retriever(&["Ada", " Zebra ", "  "]);
    let c = Components::new(&r.graph.adjacency);
    let mut ws = PushWorkspace::default();
    let s = graph_signals(&r, &c, "who?", &[0.0, 0.0, 0.0, 1.0], &mut ws)
        .await
        .unwrap();
    assert_eq!((s.mentions, s.linked, s.hit_rate), (2.0, 1.0, Some(0.5)));
    assert_eq!(s.seeds, 2.0);
    // Degrees: node 0 has 1 neighbour, node 5 has 1: mean 1. Components: {0,1,2,3}, {4,5}.
    assert_eq!((s.seed_degree, s.seed_component), (Some(1.0), Some(4.0)));
    // PPR mass sums to at most 1 and the best score leads it.
    let (top1, mass) = (s.ppr_top1.unwrap(), s.ppr_top10_mass.unwrap());
    assert!(top1 > 0.0 && top1 <= mass && mass <= 1.0 + 1e-9, "{s:?}");
    assert!(s.ppr_entropy.unwrap() > 0.0);
    assert_eq!(s.tokens, 0);

    // No mention: the question's own vector (the "tom" axis) seeds node 3 alone, and the hit
    // rate is missing rather than 0.
    let r = retriever(&[]);
    let s = graph_signals(&r, &c, "who?", &[0.0, 0.0, 0.0, 1.0], &mut ws)
        .await
        .unwrap();
    assert_eq!((s.mentions, s.linked, s.hit_rate), (0.0, 0.0, None));
    assert_eq!(
        (s.seeds, s.seed_degree, s.seed_component),
        (1.0, Some(1.0), Some(4.0))
    );

    // Nothing above the threshold: no seed, every PPR signal missing.
    let r = retriever(&["Zebra"]);
    let s = graph_signals(&r, &c, "who?", &[0.0, 0.0, 0.0, 0.0], &mut ws)
        .await
        .unwrap();
    assert_eq!((s.mentions, s.linked, s.hit_rate), (1.0, 0.0, Some(0.0)));
    assert_eq!(
        (s.seeds, s.ppr_top1, s.ppr_entropy, s.seed_degree),
        (0.0, None, None, None)
    );
}
