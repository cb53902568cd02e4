//! GraphRetriever on a hand-made knowledge graph: seeds, threshold, nodes, triplet order, chunks.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use bench_core::{Embedder, Embeddings, RetrievalQuery, Retriever};
use corpora::{Csr, FlatIndex, GraphTriplet, KnowledgeGraph};
use fixtures::tiny_corpus;
use paradigms::{
    ChunkTable, ExtractedEntities, FnEntities, GraphParams, GraphRetriever, PprEngine,
    QueryEntities,
};

/// A 4-d "encoder": one axis per keyword, so every similarity is known by hand.
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

const NODES: [&str; 7] = [
    "Ada Brook",          // 0: ada
    "Old Bridge",         // 1: bridge
    "River Alder",        // 2: river
    "Tom Vale",           // 3: tom
    "Town Hall",          // 4: no keyword (similarity 0 to everything)
    "Bridge River Ferry", // 5: bridge + river
    "Ada Statue",         // 6: ada, isolated
];

/// (u, relation, v, chunk row). Edges: 0-1, 1-2, 2-4, 4-3, 5-2; node 6 has none.
const TRIPLETS: [(u32, &str, u32, u32); 7] = [
    (0, "built", 1, 0),     // t0
    (1, "crosses", 2, 1),   // t1
    (2, "near", 4, 2),      // t2
    (4, "office of", 3, 3), // t3
    (5, "crosses", 2, 1),   // t4: same chunk as t1
    (0, "is", 0, 4),        // t5: a self-loop, never part of the induced subgraph
    (0, "designed", 1, 2),  // t6: a second triplet on edge 0-1
];

fn graph() -> KnowledgeGraph {
    let mut relations: Vec<String> = Vec::new();
    let mut triplets = Vec::new();
    for &(u, r, v, chunk) in &TRIPLETS {
        let relation = match relations.iter().position(|x| x == r) {
            Some(i) => i,
            None => {
                relations.push(r.to_string());
                relations.len() - 1
            }
        } as u32;
        triplets.push(GraphTriplet {
            u,
            v,
            relation,
            chunk,
        });
    }
    KnowledgeGraph {
        nodes: NODES.iter().map(|s| s.to_string()).collect(),
        node_ids: NODES
            .iter()
            .enumerate()
            .map(|(i, s)| (s.to_string(), i as u32))
            .collect::<HashMap<_, _>>(),
        relations,
        adjacency: Csr::from_edges(NODES.len(), TRIPLETS.iter().map(|t| (t.0, t.2))),
        triplets,
    }
}

fn retriever_with(entities: Arc<dyn QueryEntities>, params: GraphParams) -> GraphRetriever {
    let docs: Vec<(String, String)> = (0..5)
        .map(|i| (format!("c{i}"), format!("text {i}")))
        .collect();
    let docs: Vec<(&str, &str)> = docs.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let chunks = Arc::new(ChunkTable::new(tiny_corpus(&docs, vec![]).chunks));
    let embedder: Arc<dyn Embedder> = Arc::new(AxisEmbedder);
    let index = Arc::new(FlatIndex::new(embedder.embed(&NODES).unwrap()).unwrap());
    GraphRetriever::new(Arc::new(graph()), index, chunks, embedder, entities, params).unwrap()
}

/// An extractor that returns the given entities for any question.
fn fixed(entities: &[&str]) -> Arc<dyn QueryEntities> {
    let list: Vec<String> = entities.iter().map(|s| s.to_string()).collect();
    Arc::new(FnEntities::new("fixed", move |_: &str| list.clone()))
}

fn retriever(entities: &[&str]) -> GraphRetriever {
    retriever_with(fixed(entities), GraphParams::default())
}

async fn ask(r: &GraphRetriever, text: &str, vector: Option<&[f32]>) -> bench_core::Retrieval {
    r.retrieve(RetrievalQuery { text, vector }).await.unwrap()
}

fn ids(r: &bench_core::Retrieval) -> Vec<&str> {
    r.ranked.iter().map(|c| c.chunk_id.as_str()).collect()
}

fn seeds(r: &bench_core::Retrieval) -> Vec<(String, f64)> {
    r.trace["seeds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["node"].as_str().unwrap().to_string(),
                s["similarity"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[tokio::test]
async fn seeds_nodes_triplets_and_chunks_come_out_in_the_documented_order() {
    let r = retriever(&["Ada"]);
    let out = ask(&r, "Who built the bridge?", None).await;
    // "Ada" links to both ada nodes at similarity 1; the tie goes to the lower node id.
    assert_eq!(
        seeds(&out),
        [
            ("Ada Brook".to_string(), 1.0),
            ("Ada Statue".to_string(), 1.0)
        ]
    );
    // Every node of Ada Brook's component passes 1e-5, plus the isolated seed: 7 nodes.
    assert_eq!(out.trace["nodes"], 7);
    // t0 and t6 touch the seed (key 1.0; triplet index breaks their tie); the rest have key 0
    // and follow the PPR score of their better end: t1 (Old Bridge, next to the seed), then
    // t2 and t4 (River Alder; Town Hall outscores the ferry at the other end), then t3 (Town
    // Hall). The self-loop t5 is not an edge.
    let top: Vec<&str> = out.trace["top_triplets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(
        top,
        [
            "Ada Brook -[built]-> Old Bridge",
            "Ada Brook -[designed]-> Old Bridge",
            "Old Bridge -[crosses]-> River Alder",
            "River Alder -[near]-> Town Hall",
            "Bridge River Ferry -[crosses]-> River Alder",
            "Town Hall -[office of]-> Tom Vale",
        ]
    );
    assert_eq!(out.trace["triplets"], 6);
    // Chunks of t0, t6, t1, (t2 repeats c2, t4 repeats c1), t3.
    assert_eq!(ids(&out), ["c0#0", "c2#0", "c1#0", "c3#0"]);
    let scores: Vec<f32> = out.ranked.iter().map(|c| c.score).collect();
    assert_eq!(scores, [1.0, 1.0, 0.0, 0.0]);
    assert_eq!((out.tokens_in, out.tokens_out), (0, 0));
    assert_eq!(out.trace["ppr"]["engine"]["engine"], "certified");
    assert_eq!(out.trace["ppr"]["certified"], true);
    assert_eq!(out.trace["fallback_to_question"], false);
}

#[tokio::test]
async fn exact_and_push_engines_retrieve_the_same() {
    let exact = retriever(&["Ada", "river"]);
    let push = retriever_with(
        fixed(&["Ada", "river"]),
        GraphParams {
            engine: PprEngine::push(),
            ..GraphParams::default()
        },
    );
    let (a, b) = (ask(&push, "q", None).await, ask(&exact, "q", None).await);
    assert_eq!(ids(&a), ids(&b));
    assert_eq!(a.trace["top_triplets"], b.trace["top_triplets"]);
    assert_eq!(a.trace["ppr"]["engine"]["engine"], "push");
    // Only the certified engine proves its ranking.
    assert_eq!(a.trace["ppr"]["certified"], serde_json::Value::Null);
}

#[tokio::test]
async fn links_need_similarity_strictly_above_the_threshold_and_pool_by_max() {
    // (1,1,1,1)/2 has similarity 0.5 to every one-keyword node and 0.707 to the ferry;
    // "river" has 1.0 to River Alder and 0.707 to the ferry: the ferry keeps its best link.
    let r = retriever_with(
        fixed(&["Ada bridge river Tom", "river"]),
        GraphParams {
            min_similarity: 0.5,
            ..GraphParams::default()
        },
    );
    let out = ask(&r, "q", None).await;
    let s = seeds(&out);
    let names: Vec<&str> = s.iter().map(|p| p.0.as_str()).collect();
    assert_eq!(names, ["River Alder", "Bridge River Ferry"]);
    assert!((s[1].1 - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-6);
    // The best seeds' triplets first: t1 and t4 touch River Alder (1.0).
    assert_eq!(ids(&out)[0], "c1#0");

    // seed_k keeps the best ones only.
    let r = retriever_with(
        fixed(&["Ada bridge river Tom", "river"]),
        GraphParams {
            seed_k: 1,
            ..GraphParams::default()
        },
    );
    let out = ask(&r, "q", None).await;
    assert_eq!(seeds(&out), [("River Alder".to_string(), 1.0)]);
}

#[tokio::test]
async fn no_entities_fall_back_to_the_question_and_its_vector() {
    let none = || retriever(&[]);
    // Embedded by the retriever: "Tom" links Tom Vale.
    let out = ask(&none(), "Where does Tom work?", None).await;
    assert_eq!(out.trace["fallback_to_question"], true);
    assert_eq!(out.trace["entities"][0], "Where does Tom work?");
    assert_eq!(seeds(&out), [("Tom Vale".to_string(), 1.0)]);
    assert_eq!(ids(&out)[0], "c3#0");
    // With a vector given, the question's vector is used as is (here: the river axis).
    let v = AxisEmbedder.embed_one("river").unwrap();
    let out = ask(&none(), "Where does Tom work?", Some(&v)).await;
    let s = seeds(&out);
    assert_eq!((s[0].0.as_str(), s[0].1), ("River Alder", 1.0));
    assert_eq!(s[1].0, "Bridge River Ferry");
    // Blank entities count as none.
    let out = ask(&retriever(&["  "]), "Tom", None).await;
    assert_eq!(out.trace["fallback_to_question"], true);
}

#[tokio::test]
async fn no_seed_above_the_threshold_retrieves_nothing() {
    let out = ask(&retriever(&["Town Hall"]), "q", None).await;
    assert!(out.ranked.is_empty());
    assert_eq!(seeds(&out), []);
}

#[tokio::test]
async fn limits_cut_triplets_and_nodes() {
    let r = retriever_with(
        fixed(&["Ada"]),
        GraphParams {
            max_triplets: 2,
            ..GraphParams::default()
        },
    );
    assert_eq!(ids(&ask(&r, "q", None).await), ["c0#0", "c2#0"]);
    // One expanded node plus the two seeds. The top score is Old Bridge's, not the seed Ada
    // Brook's: a leaf hands all its mass to its one neighbour. Edge 0-1 survives, 1-2 does not.
    let r = retriever_with(
        fixed(&["Ada"]),
        GraphParams {
            top_nodes: 1,
            ..GraphParams::default()
        },
    );
    let out = ask(&r, "q", None).await;
    assert_eq!(out.trace["nodes"], 3);
    assert_eq!(out.trace["ppr"]["expanded"], 1);
    assert_eq!(ids(&out), ["c0#0", "c2#0"]);
}

/// An extractor that bills tokens, as an LLM one would.
struct Billing;

#[async_trait]
impl QueryEntities for Billing {
    fn name(&self) -> &str {
        "billing"
    }
    async fn extract(&self, _: &str) -> bench_core::Result<ExtractedEntities> {
        Ok(ExtractedEntities {
            entities: vec!["Tom".into()],
            tokens_in: 12,
            tokens_out: 3,
            unreadable: None,
        })
    }
}

/// An extractor whose reply is not an entity list (a small model's prose).
struct Garbled;

#[async_trait]
impl QueryEntities for Garbled {
    fn name(&self) -> &str {
        "garbled"
    }
    async fn extract(&self, _: &str) -> bench_core::Result<ExtractedEntities> {
        Ok(ExtractedEntities {
            tokens_in: 9,
            tokens_out: 4,
            unreadable: Some("unparseable entity list: The answer is".into()),
            ..ExtractedEntities::default()
        })
    }
}

#[tokio::test]
async fn an_unreadable_entity_list_falls_back_to_the_question_and_says_so() {
    let r = retriever_with(Arc::new(Garbled), GraphParams::default());
    let out = ask(&r, "Where does Tom work?", None).await;
    assert_eq!(out.trace["fallback_to_question"], true);
    assert_eq!(
        out.trace["entities_unreadable"],
        "unparseable entity list: The answer is"
    );
    assert_eq!(seeds(&out), [("Tom Vale".to_string(), 1.0)]);
    assert_eq!(
        (out.tokens_in, out.tokens_out),
        (9, 4),
        "the call is billed"
    );
    // A readable list leaves the field empty.
    let out = ask(&retriever(&["Tom"]), "q", None).await;
    assert_eq!(out.trace["entities_unreadable"], serde_json::Value::Null);
}

#[tokio::test]
async fn extraction_tokens_are_billed_to_retrieval() {
    let out = ask(
        &retriever_with(Arc::new(Billing), GraphParams::default()),
        "q",
        None,
    )
    .await;
    assert_eq!((out.tokens_in, out.tokens_out), (12, 3));
    assert_eq!(out.trace["entity_extractor"], "billing");
}

#[test]
fn mismatched_pieces_are_rejected() {
    let docs = [("c0", "x")];
    let chunks = Arc::new(ChunkTable::new(tiny_corpus(&docs, vec![]).chunks));
    let embedder: Arc<dyn Embedder> = Arc::new(AxisEmbedder);
    let index = Arc::new(FlatIndex::new(embedder.embed(&NODES).unwrap()).unwrap());
    // Triplets point at chunk rows up to 4, the table has one chunk.
    let err = GraphRetriever::new(
        Arc::new(graph()),
        index,
        chunks,
        embedder,
        fixed(&[]),
        GraphParams::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("chunk"), "{err}");
}
