//! Graph construction: per-chunk extraction through the store's cache (resumable, each result
//! written as it finishes), then a deterministic assembly into a [`KnowledgeGraph`].

use std::collections::HashMap;
use std::sync::Arc;

use bench_core::{
    BenchError, Chunk, Corpus, Embedder, Embeddings, ExtractionCache, ExtractionRow,
    ExtractionStatus, GraphBuildRecord,
};
use sha2::{Digest, Sha256};
use tokio::task::JoinSet;

use super::extract::{Extraction, ExtractorId, TripletExtractor};
use super::normalize;
use super::types::{Csr, GraphTriplet, KnowledgeGraph, Triplet};
use crate::embed::VectorCache;
use crate::error::{CorpusError, Result};

/// What [`build_graph`] may be told besides the corpus and the extractor.
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// Chunks extracted at once; `None` takes the extractor's own (15 for the LLM, the cores
    /// for the offline rules).
    pub concurrency: Option<usize>,
    /// Build from the first N chunks only (a partial graph, e.g. to try an LLM on a sample).
    pub limit_chunks: Option<usize>,
}

/// Size and connectivity of a graph.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GraphStats {
    /// Entities.
    pub nodes: usize,
    /// Undirected edges of the simple graph.
    pub edges: usize,
    /// Distinct relation labels.
    pub relation_types: usize,
    /// Triplets attached to the graph (several may share an edge).
    pub triplets: usize,
    /// Connected components, isolated nodes included.
    pub components: usize,
    /// Nodes of the largest connected component.
    pub largest_component: usize,
}

impl GraphStats {
    /// The statistics of `graph`.
    pub fn of(graph: &KnowledgeGraph) -> GraphStats {
        let (components, largest_component) = components(&graph.adjacency);
        GraphStats {
            nodes: graph.nodes.len(),
            edges: graph.adjacency.edge_count(),
            relation_types: graph.relations.len(),
            triplets: graph.triplets.len(),
            components,
            largest_component,
        }
    }
}

/// What a build did and cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildStats {
    /// The extractor the graph was built with.
    pub extractor: ExtractorId,
    /// Chunks the graph covers.
    pub chunks: usize,
    /// (chunk id, error) of every chunk whose extraction failed: not in the graph, retried by
    /// the next build.
    pub failures: Vec<(String, String)>,
    /// Construction tokens of the whole graph (every chunk's extraction, cached or not).
    pub tokens_in: u64,
    /// Completion tokens of the whole graph, counted as `tokens_in` is.
    pub tokens_out: u64,
    /// Distinct chunk texts whose extraction was read from the store.
    pub cached_chunks: usize,
    /// Distinct chunk texts extracted by this build.
    pub extracted_chunks: usize,
    /// Size and connectivity of the built graph.
    pub graph: GraphStats,
    /// What the graph was built from: the extractor and, per chunk in corpus order, its text
    /// hash and whether its extraction succeeded. Two builds with the same signature are the
    /// same graph; a tuple records the signature of the build it was answered on.
    pub signature: String,
}

/// A built graph and its statistics.
#[derive(Debug, Clone)]
pub struct GraphBuild {
    /// The graph.
    pub graph: KnowledgeGraph,
    /// What the build did and cost.
    pub stats: BuildStats,
}

/// sha256 of a chunk's text: extractions are keyed by content, not by position.
pub(crate) fn chunk_hash(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// One distinct text's result.
#[derive(Debug)]
enum Outcome {
    Ok(Vec<Triplet>),
    Failed(String),
}

/// Builds `corpus`'s knowledge graph with `extractor`. Chunks with a stored successful
/// extraction under the extractor's identity are not extracted again; the others are, at most
/// `concurrency` at a time, and each result (success or failure) is written to `store` as it
/// finishes, so an interrupted build resumes where it stopped. `progress(done, total)` counts
/// distinct chunk texts. The build is recorded in `graph_builds`.
pub async fn build_graph(
    corpus: &Corpus,
    extractor: Arc<dyn TripletExtractor>,
    store: &dyn ExtractionCache,
    options: &BuildOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<GraphBuild> {
    let id = extractor.identity();
    let chunks = &corpus.chunks[..options
        .limit_chunks
        .unwrap_or(usize::MAX)
        .min(corpus.chunks.len())];
    let texts = DistinctTexts::of(chunks);
    let mut tally = cached_outcomes(store, &id, &texts.distinct).await?;
    let cached_chunks = tally.outcomes.len();
    let pending: Vec<&String> = texts
        .distinct
        .iter()
        .filter(|h| !tally.outcomes.contains_key(*h))
        .collect();
    let total = texts.distinct.len();
    progress(cached_chunks, total);
    if !pending.is_empty() {
        tracing::info!(
            extractor = %id.extractor,
            model = %id.model,
            cached = cached_chunks,
            pending = pending.len(),
            "extracting triplets"
        );
    }
    let concurrency = options
        .concurrency
        .unwrap_or_else(|| extractor.concurrency())
        .max(1);
    let step = |done: usize| progress(cached_chunks + done, total);
    let extracted_chunks = extract_pending(
        chunks,
        &texts,
        &pending,
        (&extractor, &id, store),
        concurrency,
        &mut tally,
        &step,
    )
    .await?;

    let mut failures = Vec::new();
    let per_chunk = chunks.iter().zip(&texts.hashes).map(|(c, h)| {
        let outcome = &tally.outcomes[h.as_str()];
        if let Outcome::Failed(e) = outcome {
            failures.push((c.id.clone(), e.clone()));
        }
        (
            c.index,
            match outcome {
                Outcome::Ok(t) => t.as_slice(),
                Outcome::Failed(_) => &[],
            },
        )
    });
    let graph = assemble(per_chunk);
    let stats = BuildStats {
        extractor: id.clone(),
        chunks: chunks.len(),
        failures,
        tokens_in: tally.tokens_in,
        tokens_out: tally.tokens_out,
        cached_chunks,
        extracted_chunks,
        graph: GraphStats::of(&graph),
        signature: signature(&id, &texts.hashes, &tally.outcomes),
    };
    record_build(store, corpus, id, &stats).await?;
    Ok(GraphBuild { graph, stats })
}

/// Each chunk's text hash, and the distinct texts in corpus order with the first chunk holding
/// each.
struct DistinctTexts {
    /// Per chunk, its text's hash.
    hashes: Vec<String>,
    /// Per distinct hash, the first chunk with that text.
    first_of: HashMap<String, usize>,
    /// The distinct hashes in corpus order.
    distinct: Vec<String>,
}

impl DistinctTexts {
    /// Hashes `chunks`' texts and finds the distinct ones.
    fn of(chunks: &[Chunk]) -> Self {
        let hashes: Vec<String> = chunks.iter().map(|c| chunk_hash(&c.text)).collect();
        let mut first_of: HashMap<String, usize> = HashMap::new();
        let mut distinct: Vec<String> = Vec::new();
        for (i, h) in hashes.iter().enumerate() {
            if !first_of.contains_key(h.as_str()) {
                first_of.insert(h.clone(), i);
                distinct.push(h.clone());
            }
        }
        DistinctTexts {
            hashes,
            first_of,
            distinct,
        }
    }
}

/// The outcomes so far, per text hash, and the tokens they cost.
struct Tally {
    outcomes: HashMap<String, Outcome>,
    tokens_in: u64,
    tokens_out: u64,
}

/// The stored successful extractions of `distinct` under `id` (an unreadable one is extracted
/// again).
async fn cached_outcomes(
    store: &dyn ExtractionCache,
    id: &ExtractorId,
    distinct: &[String],
) -> Result<Tally> {
    let cached = store.cached_extractions(id, distinct).await?;
    let mut tally = Tally {
        outcomes: HashMap::with_capacity(distinct.len()),
        tokens_in: 0,
        tokens_out: 0,
    };
    for (hash, row) in cached {
        if row.status != ExtractionStatus::Ok {
            continue;
        }
        match serde_json::from_str::<Vec<Triplet>>(&row.triplets_json) {
            Ok(t) => {
                tally.tokens_in += row.tokens_in;
                tally.tokens_out += row.tokens_out;
                tally.outcomes.insert(hash, Outcome::Ok(t));
            }
            Err(e) => {
                tracing::warn!(chunk_hash = %hash, error = %e, "re-extracting an unreadable stored extraction")
            }
        }
    }
    Ok(tally)
}

/// Extracts the `pending` texts, at most `concurrency` at a time, writing each result to the
/// store as it finishes and adding it to `tally`; `step(done)` after each. Returns how many
/// were extracted.
async fn extract_pending(
    chunks: &[Chunk],
    texts: &DistinctTexts,
    pending: &[&String],
    (extractor, id, store): (
        &Arc<dyn TripletExtractor>,
        &ExtractorId,
        &dyn ExtractionCache,
    ),
    concurrency: usize,
    tally: &mut Tally,
    step: &(dyn Fn(usize) + Sync),
) -> Result<usize> {
    let mut tasks = JoinSet::new();
    let mut next = pending.iter();
    let mut extracted_chunks = 0;
    loop {
        while tasks.len() < concurrency {
            let Some(hash) = next.next() else { break };
            let text = chunks[texts.first_of[hash.as_str()]].text.clone();
            let (extractor, hash) = (extractor.clone(), (*hash).clone());
            tasks.spawn(async move {
                let r = extractor.extract(&text).await;
                (hash, r)
            });
        }
        let Some(joined) = tasks.join_next().await else {
            break;
        };
        let (hash, result) = joined.map_err(|e| {
            CorpusError::Core(BenchError::Other(format!("an extraction task failed: {e}")))
        })?;
        let (row, outcome) = extraction_row(hash.clone(), result);
        // Written before anything else happens: a kill after this line loses nothing.
        store.put_extraction(id, &row).await?;
        tally.tokens_in += row.tokens_in;
        tally.tokens_out += row.tokens_out;
        tally.outcomes.insert(hash, outcome);
        extracted_chunks += 1;
        step(extracted_chunks);
    }
    Ok(extracted_chunks)
}

/// The stored row and the outcome of one extraction (a failure keeps the tokens it cost).
fn extraction_row(chunk_hash: String, result: Result<Extraction>) -> (ExtractionRow, Outcome) {
    match result {
        Ok(x) => (
            ExtractionRow {
                chunk_hash,
                status: ExtractionStatus::Ok,
                triplets_json: serde_json::to_string(&x.triplets).expect("serialisable"),
                tokens_in: x.tokens_in,
                tokens_out: x.tokens_out,
                error: None,
            },
            Outcome::Ok(x.triplets),
        ),
        Err(e) => {
            let (tin, tout) = match &e {
                CorpusError::Extraction {
                    tokens_in,
                    tokens_out,
                    ..
                } => (*tokens_in, *tokens_out),
                _ => (0, 0),
            };
            let message = e.to_string();
            (
                ExtractionRow {
                    chunk_hash,
                    status: ExtractionStatus::Failed,
                    triplets_json: "[]".into(),
                    tokens_in: tin,
                    tokens_out: tout,
                    error: Some(message.clone()),
                },
                Outcome::Failed(message),
            )
        }
    }
}

/// sha256 over the extractor's identity and, per chunk, its text hash and whether it was
/// extracted: the same inputs give the same graph.
fn signature(id: &ExtractorId, hashes: &[String], outcomes: &HashMap<String, Outcome>) -> String {
    let mut h = Sha256::new();
    for part in [&id.extractor, &id.model, &id.prompt_hash] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    for hash in hashes {
        let ok = matches!(outcomes[hash.as_str()], Outcome::Ok(_));
        h.update(hash.as_bytes());
        h.update([u8::from(ok)]);
    }
    hex::encode(h.finalize())
}

/// Records the build in `graph_builds`.
async fn record_build(
    store: &dyn ExtractionCache,
    corpus: &Corpus,
    id: ExtractorId,
    stats: &BuildStats,
) -> Result<()> {
    let g = &stats.graph;
    store
        .record_graph_build(&GraphBuildRecord {
            corpus: corpus.name.clone(),
            corpus_hash: corpus.content_hash.clone(),
            extractor: id,
            chunks: stats.chunks as u64,
            nodes: g.nodes as u64,
            edges: g.edges as u64,
            relation_types: g.relation_types as u64,
            triplets: g.triplets as u64,
            components: g.components as u64,
            failures: stats.failures.len() as u64,
            tokens_in: stats.tokens_in,
            tokens_out: stats.tokens_out,
            signature: stats.signature.clone(),
        })
        .await?;
    Ok(())
}

/// The graph of per-chunk triplets `(chunk index, triplets)`: entities and relations normalised,
/// node and relation ids in sorted name order, triplets sorted by (chunk, u, v, relation) without
/// repeats, self-loops and empty names dropped. The same input always gives the same graph.
pub(crate) fn assemble<'a>(
    per_chunk: impl IntoIterator<Item = (u32, &'a [Triplet])>,
) -> KnowledgeGraph {
    let mut raw: Vec<(u32, String, String, String)> = Vec::new();
    for (chunk, triplets) in per_chunk {
        for t in triplets {
            let (s, o) = (normalize::entity(&t.subject), normalize::entity(&t.object));
            if s.is_empty() || o.is_empty() || s == o {
                continue;
            }
            raw.push((chunk, s, normalize::relation(&t.relation), o));
        }
    }
    let mut nodes: Vec<String> = raw
        .iter()
        .flat_map(|(_, s, _, o)| [s.clone(), o.clone()])
        .collect();
    nodes.sort_unstable();
    nodes.dedup();
    let mut relations: Vec<String> = raw.iter().map(|(_, _, r, _)| r.clone()).collect();
    relations.sort_unstable();
    relations.dedup();
    let node_ids: HashMap<String, u32> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.clone(), i as u32))
        .collect();
    let relation_ids: HashMap<&str, u32> = relations
        .iter()
        .enumerate()
        .map(|(i, r)| (r.as_str(), i as u32))
        .collect();
    let mut triplets: Vec<GraphTriplet> = raw
        .iter()
        .map(|(chunk, s, r, o)| GraphTriplet {
            u: node_ids[s],
            v: node_ids[o],
            relation: relation_ids[r.as_str()],
            chunk: *chunk,
        })
        .collect();
    triplets.sort_unstable_by_key(|t| (t.chunk, t.u, t.v, t.relation));
    triplets.dedup();
    let adjacency = Csr::from_edges(nodes.len(), triplets.iter().map(|t| (t.u, t.v)));
    KnowledgeGraph {
        nodes,
        node_ids,
        relations,
        triplets,
        adjacency,
    }
}

/// Connected components of an undirected CSR: (count, size of the largest). Isolated nodes are
/// components of one.
pub fn components(csr: &Csr) -> (usize, usize) {
    let size = component_sizes(&component_ids(csr));
    (size.len(), size.iter().copied().max().unwrap_or(0) as usize)
}

/// The size of each component of [`component_ids`]' numbering.
pub fn component_sizes(ids: &[u32]) -> Vec<u32> {
    // Ids first appear in increasing order, so a new one is always the next index.
    let mut size: Vec<u32> = Vec::new();
    for &c in ids {
        if c as usize == size.len() {
            size.push(0);
        }
        size[c as usize] += 1;
    }
    size
}

/// Each node's connected component, numbered 0, 1, ... in the order of each component's lowest
/// node (so a node's id is never above any new one met later in node order).
pub fn component_ids(csr: &Csr) -> Vec<u32> {
    let n = csr.node_count();
    let mut id = vec![u32::MAX; n];
    let mut stack = Vec::new();
    let mut next = 0u32;
    for start in 0..n as u32 {
        if id[start as usize] != u32::MAX {
            continue;
        }
        id[start as usize] = next;
        stack.push(start);
        while let Some(u) = stack.pop() {
            for &v in csr.neighbors(u) {
                if id[v as usize] == u32::MAX {
                    id[v as usize] = next;
                    stack.push(v);
                }
            }
        }
        next += 1;
    }
    id
}

/// Vectors of the graph's entity names, row i = node i, through the vector cache (key
/// `<corpus>:entities`): a second call with the same graph embeds nothing.
pub fn embed_entities(
    corpus: &str,
    graph: &KnowledgeGraph,
    embedder: &dyn Embedder,
    cache: &VectorCache,
    progress: &dyn Fn(usize, usize),
) -> Result<Embeddings> {
    let names: Vec<&str> = graph.nodes.iter().map(String::as_str).collect();
    cache.get_or_embed(&format!("{corpus}:entities"), &names, embedder, progress)
}

/// The graph and entity vectors the graph retriever needs: built from the stored extractions
/// (extracting only what is missing) and embedded through the cache.
pub async fn load_or_build(
    corpus: &Corpus,
    extractor: Arc<dyn TripletExtractor>,
    store: &dyn ExtractionCache,
    embedder: &dyn Embedder,
    cache: &VectorCache,
) -> Result<(KnowledgeGraph, Embeddings, BuildStats)> {
    let build = build_graph(
        corpus,
        extractor,
        store,
        &BuildOptions::default(),
        &|_, _| {},
    )
    .await?;
    if !build.stats.failures.is_empty() {
        tracing::warn!(
            corpus = %corpus.name,
            failures = build.stats.failures.len(),
            "graph built without the chunks whose extraction failed; the next build retries them"
        );
    }
    let vectors = embed_entities(&corpus.name, &build.graph, embedder, cache, &|_, _| {})?;
    Ok((build.graph, vectors, build.stats))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str, r: &str, o: &str) -> Triplet {
        Triplet {
            subject: s.into(),
            relation: r.into(),
            object: o.into(),
        }
    }

    #[test]
    fn assembly_is_sorted_normalised_undirected_and_simple() {
        let c0 = vec![
            t("Warsaw", "capital of", "Poland"),
            t("Marie  Curie", "Born in", "Warsaw."),
            t("marie curie", "born in", "warsaw"), // repeat after normalisation
            t("Poland", "x", "poland"),            // self-loop
        ];
        let c1 = vec![t("Poland", "borders", "Warsaw"), t("", "r", "x")];
        let g = assemble([(0, c0.as_slice()), (1, c1.as_slice())]);
        assert_eq!(g.nodes, ["marie curie", "poland", "warsaw"]);
        assert_eq!(g.relations, ["borders", "born in", "capital of"]);
        assert_eq!(g.node("warsaw"), Some(2));
        assert_eq!(
            g.triplets,
            [
                GraphTriplet {
                    u: 0,
                    v: 2,
                    relation: 1,
                    chunk: 0
                },
                GraphTriplet {
                    u: 2,
                    v: 1,
                    relation: 2,
                    chunk: 0
                },
                GraphTriplet {
                    u: 1,
                    v: 2,
                    relation: 0,
                    chunk: 1
                },
            ]
        );
        // warsaw-poland appears twice (both directions) but is one undirected edge.
        assert_eq!(g.adjacency.edge_count(), 2);
        assert_eq!(g.adjacency.neighbors(2), [0, 1]);
        assert_eq!(g.adjacency.neighbors(1), [2]);
        assert_eq!(components(&g.adjacency), (1, 3));
        // Input order of chunks does not matter.
        let g2 = assemble([(1, c1.as_slice()), (0, c0.as_slice())]);
        assert_eq!(g2.triplets, g.triplets);
        assert_eq!(g2.nodes, g.nodes);
    }

    #[test]
    fn components_count_isolated_nodes() {
        let csr = Csr::from_edges(5, [(0, 1), (1, 2)]);
        assert_eq!(components(&csr), (3, 3));
        assert_eq!(components(&Csr::from_edges(0, [])), (0, 0));
    }
}
