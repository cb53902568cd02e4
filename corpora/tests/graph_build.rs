//! Graph construction end to end: resume after failures and interruptions, caching, the shape
//! of the assembled graph and the entity vectors.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bench_core::{Corpus, LlmErrorKind};
use corpora::{
    build_graph, load_corpus, load_or_build, BuildOptions, Extraction, ExtractorId, GraphBuild,
    HashEmbedder, KnowledgeGraph, LlmExtractor, LlmExtractorOptions, LoadOptions, OfflineExtractor,
    TripletExtractor, VectorCache,
};
use fixtures::{tiny_corpus, Scripted, ScriptedLlm};
use store::Store;

fn six_docs() -> Corpus {
    tiny_corpus(
        &[
            ("d0", "Marie Curie was born in Warsaw."),
            ("d1", "Pierre Curie married Marie Curie in Paris."),
            ("d2", "Warsaw is the capital of Poland."),
            ("d3", "Albert Einstein visited Paris in 1921."),
            ("d4", "Paris lies on the Seine."),
            ("d5", "Niels Bohr lived in Copenhagen."),
        ],
        vec![],
    )
}

fn ok(s: &str, r: &str, o: &str) -> Scripted {
    Scripted::Reply(format!(r#"[["{s}", "{r}", "{o}"]]"#), None)
}

fn fatal() -> Scripted {
    Scripted::Fail(LlmErrorKind::Fatal, "scripted failure".into())
}

fn llm_extractor(llm: Arc<ScriptedLlm>) -> Arc<dyn TripletExtractor> {
    Arc::new(LlmExtractor::with_options(
        llm,
        LlmExtractorOptions {
            max_attempts: 1,
            backoff: Duration::from_millis(1),
            ..Default::default()
        },
    ))
}

/// One at a time: the scripted replies then map to chunks in corpus order.
fn sequential() -> BuildOptions {
    BuildOptions {
        concurrency: Some(1),
        limit_chunks: None,
    }
}

async fn build(
    corpus: &Corpus,
    x: Arc<dyn TripletExtractor>,
    store: &Store,
    opts: &BuildOptions,
) -> GraphBuild {
    build_graph(corpus, x, store, opts, &|_, _| {})
        .await
        .unwrap()
}

fn same_graph(a: &KnowledgeGraph, b: &KnowledgeGraph) {
    assert_eq!(a.nodes, b.nodes);
    assert_eq!(a.relations, b.relations);
    assert_eq!(a.triplets, b.triplets);
    assert_eq!(a.adjacency, b.adjacency);
}

#[tokio::test]
async fn failed_chunks_are_reported_then_only_they_are_retried() {
    let corpus = six_docs();
    let store = Store::open_in_memory().await.unwrap();

    // First build: every second chunk fails.
    let llm = Arc::new(ScriptedLlm::new([
        ok("Marie Curie", "born in", "Warsaw"),
        fatal(),
        ok("Warsaw", "capital of", "Poland"),
        fatal(),
        ok("Paris", "lies on", "Seine"),
        fatal(),
    ]));
    let first = build(&corpus, llm_extractor(llm.clone()), &store, &sequential()).await;
    assert_eq!(llm.calls(), 6);
    assert_eq!(
        (first.stats.cached_chunks, first.stats.extracted_chunks),
        (0, 6)
    );
    let failed: Vec<&str> = first
        .stats
        .failures
        .iter()
        .map(|(c, _)| c.as_str())
        .collect();
    assert_eq!(failed, ["d1#0", "d3#0", "d5#0"]);
    assert!(first.stats.failures[0].1.contains("scripted failure"));
    assert_eq!(
        first.graph.nodes,
        ["marie curie", "paris", "poland", "seine", "warsaw"]
    );
    let key = first.stats.extractor.clone();
    assert_eq!(store.extraction_failures(&key).await.unwrap().len(), 3);

    // Second build: only the three failed chunks are sent again.
    let llm = Arc::new(ScriptedLlm::new([
        ok("Pierre Curie", "married", "Marie Curie"),
        ok("Albert Einstein", "visited", "Paris"),
        ok("Niels Bohr", "lived in", "Copenhagen"),
    ]));
    let second = build(&corpus, llm_extractor(llm.clone()), &store, &sequential()).await;
    assert_eq!(llm.calls(), 3);
    let sent: Vec<String> = llm
        .requests
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.messages[1].content.clone())
        .collect();
    assert!(sent[0].ends_with("Pierre Curie married Marie Curie in Paris."));
    assert!(sent[2].ends_with("Niels Bohr lived in Copenhagen."));
    assert_eq!(
        (second.stats.cached_chunks, second.stats.extracted_chunks),
        (3, 3)
    );
    assert!(second.stats.failures.is_empty());
    assert!(store.extraction_failures(&key).await.unwrap().is_empty());
    assert_eq!(second.graph.nodes.len(), 9);
    assert_eq!(second.graph.triplets.len(), 6);
    assert!(second.stats.tokens_in > first.stats.tokens_in);

    // Third build: nothing to extract, same graph, same construction tokens.
    let llm = Arc::new(ScriptedLlm::new([]));
    let third = build(&corpus, llm_extractor(llm.clone()), &store, &sequential()).await;
    assert_eq!(llm.calls(), 0);
    assert_eq!(
        (third.stats.cached_chunks, third.stats.extracted_chunks),
        (6, 0)
    );
    same_graph(&third.graph, &second.graph);
    assert_eq!(
        (third.stats.tokens_in, third.stats.tokens_out),
        (second.stats.tokens_in, second.stats.tokens_out)
    );
    assert_eq!(
        store
            .construction_tokens(&corpus.name, &corpus.content_hash, &key)
            .await
            .unwrap(),
        Some((third.stats.tokens_in, third.stats.tokens_out))
    );
}

/// The offline extractor, counting calls; after `hang_after` calls it never answers, like a
/// process killed mid-build.
struct Counting {
    inner: OfflineExtractor,
    calls: AtomicUsize,
    hang_after: usize,
}

impl Counting {
    fn new(hang_after: usize) -> Arc<Self> {
        Arc::new(Counting {
            inner: OfflineExtractor::new(),
            calls: AtomicUsize::new(0),
            hang_after,
        })
    }
    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl TripletExtractor for Counting {
    fn identity(&self) -> ExtractorId {
        self.inner.identity()
    }
    fn concurrency(&self) -> usize {
        1
    }
    async fn extract(&self, chunk_text: &str) -> corpora::Result<Extraction> {
        if self.calls.fetch_add(1, Ordering::SeqCst) >= self.hang_after {
            std::future::pending::<()>().await;
        }
        self.inner.extract(chunk_text).await
    }
}

fn demo() -> Corpus {
    load_corpus("demo", &LoadOptions::default()).unwrap()
}

#[tokio::test]
async fn an_interrupted_build_resumes_without_recomputing() {
    let corpus = demo();
    let n = corpus.chunks.len();
    assert!(n >= 10);
    let store = Store::open_in_memory().await.unwrap();

    // Killed after 5 chunks: the future is dropped mid-build.
    let x = Counting::new(5);
    let interrupted = tokio::time::timeout(
        Duration::from_millis(300),
        build_graph(&corpus, x.clone(), &store, &sequential(), &|_, _| {}),
    )
    .await;
    assert!(interrupted.is_err(), "the build should have hung");
    assert_eq!(x.calls(), 6);

    let x = Counting::new(usize::MAX);
    let resumed = build(&corpus, x.clone(), &store, &BuildOptions::default()).await;
    assert_eq!(
        x.calls(),
        n - 5,
        "the 5 finished chunks were extracted again"
    );
    assert_eq!(
        (resumed.stats.cached_chunks, resumed.stats.extracted_chunks),
        (5, n - 5)
    );

    let x = Counting::new(usize::MAX);
    let again = build(&corpus, x.clone(), &store, &BuildOptions::default()).await;
    assert_eq!(x.calls(), 0);
    same_graph(&again.graph, &resumed.graph);

    // The resumed graph is the one an uninterrupted build gives.
    let fresh_store = Store::open_in_memory().await.unwrap();
    let fresh = build(
        &corpus,
        Arc::new(OfflineExtractor::new()),
        &fresh_store,
        &BuildOptions::default(),
    )
    .await;
    same_graph(&fresh.graph, &resumed.graph);
    assert!(fresh.stats.graph.nodes > 20, "{:?}", fresh.stats.graph);
}

#[tokio::test]
async fn a_half_build_is_completed_by_the_full_one() {
    let corpus = demo();
    let n = corpus.chunks.len();
    let store = Store::open_in_memory().await.unwrap();
    let half = BuildOptions {
        concurrency: None,
        limit_chunks: Some(n / 2),
    };
    let x = Counting::new(usize::MAX);
    let first = build(&corpus, x.clone(), &store, &half).await;
    assert_eq!((x.calls(), first.stats.chunks), (n / 2, n / 2));
    assert!(first
        .graph
        .triplets
        .iter()
        .all(|t| (t.chunk as usize) < n / 2));

    let x = Counting::new(usize::MAX);
    let full = build(&corpus, x.clone(), &store, &BuildOptions::default()).await;
    assert_eq!(x.calls(), n - n / 2);
    assert_eq!(full.stats.cached_chunks, n / 2);
}

#[tokio::test]
async fn the_graph_is_undirected_simple_and_covers_its_triplets() {
    let corpus = demo();
    let store = Store::open_in_memory().await.unwrap();
    let g = build(
        &corpus,
        Arc::new(OfflineExtractor::new()),
        &store,
        &BuildOptions::default(),
    )
    .await
    .graph;
    let csr = &g.adjacency;
    assert_eq!(csr.node_count(), g.nodes.len());
    for u in 0..csr.node_count() as u32 {
        let nb = csr.neighbors(u);
        assert!(
            nb.windows(2).all(|w| w[0] < w[1]),
            "sorted, no parallel edges"
        );
        for &v in nb {
            assert_ne!(u, v, "self-loop");
            assert!(csr.neighbors(v).binary_search(&u).is_ok(), "asymmetric");
        }
    }
    for t in &g.triplets {
        assert!(csr.neighbors(t.u).binary_search(&t.v).is_ok());
        assert!((t.relation as usize) < g.relations.len());
        assert_eq!(corpus.chunks[t.chunk as usize].index, t.chunk);
    }
    // Every node is an end of some triplet, and its name is normalised.
    assert!(g.nodes.windows(2).all(|w| w[0] < w[1]));
    for (i, name) in g.nodes.iter().enumerate() {
        assert_eq!(g.node(name), Some(i as u32));
        assert_eq!(&corpora::normalize_entity(name), name);
    }
}

#[tokio::test]
async fn identical_chunk_texts_are_extracted_once() {
    let corpus = tiny_corpus(
        &[
            ("a", "Marie Curie was born in Warsaw."),
            ("b", "Marie Curie was born in Warsaw."),
        ],
        vec![],
    );
    let store = Store::open_in_memory().await.unwrap();
    let x = Counting::new(usize::MAX);
    let b = build(&corpus, x.clone(), &store, &BuildOptions::default()).await;
    assert_eq!(x.calls(), 1);
    let chunks: Vec<u32> = b.graph.triplets.iter().map(|t| t.chunk).collect();
    assert_eq!(chunks, [0, 1]);
}

#[tokio::test]
async fn entity_vectors_have_one_row_per_node_and_are_cached() {
    let corpus = demo();
    let store = Store::open_in_memory().await.unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let cache = VectorCache::new(tmp.path());
    let enc = HashEmbedder::default();
    let x: Arc<dyn TripletExtractor> = Arc::new(OfflineExtractor::new());
    let (g, v, stats) = load_or_build(&corpus, x.clone(), &store, &enc, &cache)
        .await
        .unwrap();
    assert_eq!(v.len(), g.nodes.len());
    assert_eq!(stats.graph.nodes, g.nodes.len());
    assert_eq!(v.row(3), enc.vector(&g.nodes[3]).as_slice());
    let (g2, v2, stats2) = load_or_build(&corpus, x, &store, &enc, &cache)
        .await
        .unwrap();
    assert_eq!(stats2.extracted_chunks, 0);
    assert_eq!((g2.nodes, v2), (g.nodes, v));
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
}
