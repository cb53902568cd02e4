//! GraphRetriever: GraphRAG retrieval (paper Algorithm 4): entities, seeds, PPR, triplets, chunks.
//!
//! 1. Query entities from a [`QueryEntities`] (an LLM prompt or the offline extractor); none means
//!    the whole question is the one entity (Algorithm 4, line 7).
//! 2. Each entity is embedded and linked to its `link_k` nearest graph entities (the entity index
//!    row is the node id); links with similarity `> min_similarity` are max-pooled per node and
//!    the best `seed_k` nodes are the seeds (ties: lower node id).
//! 3. Personalized PageRank from the seeds, personalization proportional to seed similarity.
//! 4. Nodes scoring `>= min_score`, the best `top_nodes` of them, plus the seeds.
//! 5. Triplets with both ends in that node set (self-loop triplets are not edges of the graph,
//!    so they never belong to the induced subgraph), ordered by `max(sim(u), sim(v))` descending
//!    where `sim` is the seed similarity (0 for a non-seed); ties by the PPR score of the better
//!    end (the end with the higher similarity, then PPR), then the PPR score of the other end,
//!    then the triplet index, so the order is total and reproducible. At most `max_triplets`.
//! 6. Their source chunks in that order, de-duplicated; a chunk's score is the sort key
//!    (`max(sim(u), sim(v))`) of the first triplet that brought it. The budget cut is the
//!    paradigm's (`RetrieveThenRead`).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use bench_core::{
    BenchError, Embedder, Embeddings, Retrieval, RetrievalQuery, RetrievedChunk, Retriever,
};
use corpora::{FlatIndex, KnowledgeGraph};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::chunks::ChunkTable;
use crate::ppr::{ppr_top_k, PprEngine, PprRun, PushWorkspace};

/// Query entities and what extracting them cost (0 offline; an LLM extractor bills its call).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExtractedEntities {
    /// The entities found in the question.
    pub entities: Vec<String>,
    /// Prompt tokens the extraction spent (0 offline).
    pub tokens_in: u64,
    /// Reply tokens the extraction spent.
    pub tokens_out: u64,
    /// Why the extractor's reply could not be read as an entity list, when it could not. The
    /// retriever then falls back to the question itself, as for an empty list, and the trace
    /// says so (`entities_unreadable`): a model too weak to list entities still retrieves.
    pub unreadable: Option<String>,
}

/// Extracts the entities of a question (Algorithm 4, line 5).
#[async_trait]
pub trait QueryEntities: Send + Sync {
    /// Identity recorded in the trace.
    fn name(&self) -> &str;
    /// The entities of `question`, with what extracting them cost.
    async fn extract(&self, question: &str) -> bench_core::Result<ExtractedEntities>;
}

/// A plain function as a token-free [`QueryEntities`] (the offline extractor, tests).
pub struct FnEntities<F> {
    /// The extractor's name (recorded in traces).
    pub name: String,
    /// The function that finds the entities.
    pub f: F,
}

impl<F> FnEntities<F> {
    /// An extractor named `name` running `f`.
    pub fn new(name: impl Into<String>, f: F) -> Self {
        FnEntities {
            name: name.into(),
            f,
        }
    }
}

impl<F> std::fmt::Debug for FnEntities<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FnEntities")
            .field("name", &self.name)
            .finish()
    }
}

#[async_trait]
impl<F> QueryEntities for FnEntities<F>
where
    F: Fn(&str) -> Vec<String> + Send + Sync,
{
    fn name(&self) -> &str {
        &self.name
    }

    async fn extract(&self, question: &str) -> bench_core::Result<ExtractedEntities> {
        Ok(ExtractedEntities {
            entities: (self.f)(question),
            ..ExtractedEntities::default()
        })
    }
}

/// GraphRAG's knobs (paper Tables 10-11, Algorithm 4; decisions.md).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GraphParams {
    /// Seeds kept after max-pooling (Table 11: 20).
    pub seed_k: usize,
    /// Nearest graph entities per query entity (Algorithm 4: k = 20).
    pub link_k: usize,
    /// A link needs similarity strictly above this (tau_entity = 0.4).
    pub min_similarity: f32,
    /// PPR damping (restart probability 1 − damping).
    pub damping: f64,
    /// PPR floor (tau_ppr = 1e-5).
    pub min_score: f64,
    /// Expanded nodes kept (Table 11: 100).
    pub top_nodes: usize,
    /// Triplets serialised (Table 11: 500).
    pub max_triplets: usize,
    /// How PPR is computed.
    pub engine: PprEngine,
}

impl Default for GraphParams {
    fn default() -> Self {
        GraphParams {
            seed_k: 20,
            link_k: 20,
            min_similarity: 0.4,
            damping: 0.85,
            min_score: 1e-5,
            top_nodes: 100,
            max_triplets: 500,
            engine: PprEngine::default(),
        }
    }
}

/// A node of the expanded set: seed similarity (0 for a non-seed) and PPR score.
#[derive(Debug, Clone, Copy, PartialEq)]
struct NodeInfo {
    sim: f32,
    ppr: f64,
}

/// Entries of the trace's triplet list.
const TRACE_TRIPLETS: usize = 20;

/// The GraphRAG retriever over one corpus's knowledge graph.
pub struct GraphRetriever {
    /// The knowledge graph walked.
    pub graph: Arc<KnowledgeGraph>,
    /// One vector per graph node, row = node id.
    pub entity_index: Arc<FlatIndex>,
    /// The chunks the graph's triplets come from.
    pub chunks: Arc<ChunkTable>,
    /// Encodes the question's entities to link them to graph nodes.
    pub embedder: Arc<dyn Embedder>,
    /// Finds the entities of a question.
    pub entities: Arc<dyn QueryEntities>,
    /// Seeding, walking and serialisation parameters.
    pub params: GraphParams,
    /// Triplets incident to each node (self-loops excluded), CSR-style, so that the induced
    /// subgraph costs its own size, not a scan of every triplet.
    incident_offsets: Vec<u32>,
    incident: Vec<u32>,
    /// Push scratch space, one per concurrent query.
    workspaces: Mutex<Vec<PushWorkspace>>,
}

impl std::fmt::Debug for GraphRetriever {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphRetriever")
            .field("nodes", &self.graph.nodes.len())
            .field("triplets", &self.graph.triplets.len())
            .field("entities", &self.entities.name())
            .field("params", &self.params)
            .finish()
    }
}

impl GraphRetriever {
    /// Checks that the pieces fit together: one index row per node, index and encoder of the
    /// same dimension, triplet ends inside the graph and source chunks inside the chunk table.
    pub fn new(
        graph: Arc<KnowledgeGraph>,
        entity_index: Arc<FlatIndex>,
        chunks: Arc<ChunkTable>,
        embedder: Arc<dyn Embedder>,
        entities: Arc<dyn QueryEntities>,
        params: GraphParams,
    ) -> bench_core::Result<Self> {
        let n = graph.nodes.len();
        if graph.adjacency.node_count() != n {
            return Err(BenchError::Invalid(format!(
                "graph has {n} nodes but its adjacency {}",
                graph.adjacency.node_count()
            )));
        }
        if entity_index.len() != n {
            return Err(BenchError::Invalid(format!(
                "entity index has {} rows, the graph {n} nodes",
                entity_index.len()
            )));
        }
        if n > 0 && entity_index.dim() != embedder.dim() {
            return Err(BenchError::Embedding(format!(
                "entity index has dimension {}, the encoder {}",
                entity_index.dim(),
                embedder.dim()
            )));
        }
        let mut incident_offsets = vec![0u32; n + 1];
        for (i, t) in graph.triplets.iter().enumerate() {
            if t.u as usize >= n || t.v as usize >= n || t.chunk as usize >= chunks.len() {
                return Err(BenchError::Invalid(format!(
                    "triplet {i} ({}, {}, chunk {}) is outside the graph ({n} nodes) or the \
                     chunk table ({} chunks)",
                    t.u,
                    t.v,
                    t.chunk,
                    chunks.len()
                )));
            }
            if t.u != t.v {
                incident_offsets[t.u as usize + 1] += 1;
                incident_offsets[t.v as usize + 1] += 1;
            }
        }
        for i in 0..n {
            incident_offsets[i + 1] += incident_offsets[i];
        }
        let mut fill = incident_offsets.clone();
        let mut incident = vec![0u32; incident_offsets[n] as usize];
        for (i, t) in graph.triplets.iter().enumerate() {
            if t.u != t.v {
                for end in [t.u, t.v] {
                    incident[fill[end as usize] as usize] = i as u32;
                    fill[end as usize] += 1;
                }
            }
        }
        Ok(GraphRetriever {
            graph,
            entity_index,
            chunks,
            embedder,
            entities,
            params,
            incident_offsets,
            incident,
            workspaces: Mutex::new(Vec::new()),
        })
    }

    /// What a result should record about this retriever.
    pub fn settings(&self) -> serde_json::Value {
        json!({
            "retriever": self.name(),
            "entities": self.entities.name(),
            "params": self.params,
        })
    }

    /// Seeds from entity vectors (row i = entity i): links above the threshold, max-pooled per
    /// node, the best `seed_k` by similarity (ties: lower node id).
    /// The entity index is searched with the blocked gemm top-k of the chunk index.
    pub fn link_seeds(&self, vectors: &Embeddings) -> Vec<(u32, f32)> {
        self.link_seeds_counted(vectors).0
    }

    /// [`Self::link_seeds`], and how many of the vectors link at all (some hit above the
    /// threshold), from the same search.
    pub(crate) fn link_seeds_counted(&self, vectors: &Embeddings) -> (Vec<(u32, f32)>, usize) {
        let mut best: HashMap<u32, f32> = HashMap::new();
        let mut linked = 0;
        for hits in self.entity_index.search_batch(vectors, self.params.link_k) {
            if hits.iter().any(|h| h.score > self.params.min_similarity) {
                linked += 1;
            }
            for hit in hits {
                if hit.score > self.params.min_similarity {
                    let e = best.entry(hit.row).or_insert(hit.score);
                    *e = e.max(hit.score);
                }
            }
        }
        let mut seeds: Vec<(u32, f32)> = best.into_iter().collect();
        seeds.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        seeds.truncate(self.params.seed_k);
        (seeds, linked)
    }

    /// Triplet indices of the subgraph induced by `nodes`, in the documented order, at most
    /// `max_triplets`, each with its sort key `max(sim(u), sim(v))`.
    fn induced_triplets(&self, nodes: &HashMap<u32, NodeInfo>) -> Vec<(u32, f32)> {
        let mut picked: Vec<u32> = Vec::new();
        for &a in nodes.keys() {
            let (lo, hi) = (
                self.incident_offsets[a as usize] as usize,
                self.incident_offsets[a as usize + 1] as usize,
            );
            for &t in &self.incident[lo..hi] {
                let tr = &self.graph.triplets[t as usize];
                // Visit each triplet once, from its `u` end.
                if tr.u == a && nodes.contains_key(&tr.v) {
                    picked.push(t);
                }
            }
        }
        let key = |t: u32| {
            let tr = &self.graph.triplets[t as usize];
            let (a, b) = (nodes[&tr.u], nodes[&tr.v]);
            let a_first = a.sim > b.sim || (a.sim == b.sim && a.ppr >= b.ppr);
            let (better, other) = if a_first { (a, b) } else { (b, a) };
            (better.sim, better.ppr, other.ppr)
        };
        let mut keyed: Vec<(u32, (f32, f64, f64))> =
            picked.into_iter().map(|t| (t, key(t))).collect();
        keyed.sort_by(|x, y| {
            y.1 .0
                .total_cmp(&x.1 .0)
                .then(y.1 .1.total_cmp(&x.1 .1))
                .then(y.1 .2.total_cmp(&x.1 .2))
                .then(x.0.cmp(&y.0))
        });
        keyed.truncate(self.params.max_triplets);
        keyed.into_iter().map(|(t, k)| (t, k.0)).collect()
    }

    fn triplet_text(&self, t: u32) -> String {
        let tr = &self.graph.triplets[t as usize];
        let rel = self
            .graph
            .relations
            .get(tr.relation as usize)
            .map_or("?", String::as_str);
        format!(
            "{} -[{rel}]-> {}",
            self.graph.nodes[tr.u as usize], self.graph.nodes[tr.v as usize]
        )
    }
}

/// The steps of [`GraphRetriever::retrieve`].
impl GraphRetriever {
    /// Step 1: the extracted entities, trimmed and non-empty, or the question itself when
    /// there are none (the flag says so).
    pub(crate) fn query_entities(
        extracted: &ExtractedEntities,
        question: &str,
    ) -> (Vec<String>, bool) {
        let mut entities: Vec<String> = extracted
            .entities
            .iter()
            .map(|e| e.trim().to_string())
            .filter(|e| !e.is_empty())
            .collect();
        let fallback = entities.is_empty();
        if fallback {
            entities.push(question.to_string());
        }
        (entities, fallback)
    }

    /// Step 2's vectors: one per entity, of the entity index's dimension. The question's own
    /// vector, when given, is the fallback entity's vector.
    pub(crate) fn entity_vectors(
        &self,
        entities: &[String],
        fallback: bool,
        question_vector: Option<&[f32]>,
    ) -> bench_core::Result<Embeddings> {
        let vectors = match (fallback, question_vector) {
            (true, Some(v)) => Embeddings {
                dim: v.len(),
                data: v.to_vec(),
            },
            _ => {
                let texts: Vec<&str> = entities.iter().map(String::as_str).collect();
                self.embedder.embed(&texts)?
            }
        };
        if !self.entity_index.is_empty() && vectors.dim != self.entity_index.dim() {
            return Err(BenchError::Embedding(format!(
                "entity vectors have {} dimensions, the entity index {}",
                vectors.dim,
                self.entity_index.dim()
            )));
        }
        Ok(vectors)
    }

    /// Step 3: personalized PageRank from the seeds, on a workspace from the pool.
    fn ppr_from(&self, seeds: &[(u32, f32)]) -> bench_core::Result<PprRun> {
        let personalization: Vec<(u32, f64)> =
            seeds.iter().map(|&(v, s)| (v, f64::from(s))).collect();
        let mut ws = self
            .workspaces
            .lock()
            .map_err(|_| BenchError::Other("PPR workspace pool poisoned".into()))?
            .pop()
            .unwrap_or_default();
        let run = ppr_top_k(
            self.params.engine,
            &self.graph.adjacency,
            &personalization,
            self.params.damping,
            self.params.top_nodes,
            self.params.min_score,
            &mut ws,
        );
        if let Ok(mut pool) = self.workspaces.lock() {
            pool.push(ws);
        }
        run.map_err(|e| BenchError::Other(format!("PPR: {e}")))
    }

    /// Step 4: the PPR's top nodes (similarity 0) plus the seeds with their similarity.
    fn node_set(seeds: &[(u32, f32)], run: &PprRun) -> HashMap<u32, NodeInfo> {
        let mut nodes: HashMap<u32, NodeInfo> = run
            .top
            .iter()
            .map(|&(v, ppr)| (v, NodeInfo { sim: 0.0, ppr }))
            .collect();
        for (&(v, sim), &(_, ppr)) in seeds.iter().zip(&run.seed_scores) {
            nodes.insert(v, NodeInfo { sim, ppr });
        }
        nodes
    }

    /// Step 6: the triplets' source chunks in their order, de-duplicated, each scored by the
    /// key of the first triplet that brought it.
    fn source_chunks(&self, triplets: &[(u32, f32)]) -> Vec<RetrievedChunk> {
        let mut seen = HashSet::new();
        let mut ranked = Vec::new();
        for &(t, key) in triplets {
            let row = self.graph.triplets[t as usize].chunk;
            if seen.insert(row) {
                ranked.push(RetrievedChunk {
                    chunk_id: self.chunks.row(row as usize).id.clone(),
                    score: key,
                });
            }
        }
        ranked
    }

    /// The trace's PPR, subgraph and chunk counts, and the first triplets as text.
    fn trace_walk(
        &self,
        trace: &mut serde_json::Value,
        run: &PprRun,
        nodes: usize,
        triplets: &[(u32, f32)],
        chunks: usize,
    ) {
        trace["ppr"] = json!({
            "engine": run.engine,
            "work": run.work,
            "error": run.error,
            "certified": run.certified,
            "expanded": run.top.len(),
        });
        trace["nodes"] = json!(nodes);
        trace["triplets"] = json!(triplets.len());
        trace["top_triplets"] = json!(triplets
            .iter()
            .take(TRACE_TRIPLETS)
            .map(|&(t, _)| self.triplet_text(t))
            .collect::<Vec<_>>());
        trace["chunks"] = json!(chunks);
    }
}

#[async_trait]
impl Retriever for GraphRetriever {
    fn name(&self) -> &str {
        "graph"
    }

    async fn retrieve(&self, query: RetrievalQuery<'_>) -> bench_core::Result<Retrieval> {
        let extracted = self.entities.extract(query.text).await?;
        let (entities, fallback) = Self::query_entities(&extracted, query.text);
        let vectors = self.entity_vectors(&entities, fallback, query.vector)?;
        let seeds = if self.entity_index.is_empty() {
            Vec::new()
        } else {
            self.link_seeds(&vectors)
        };
        let mut trace = json!({
            "entity_extractor": self.entities.name(),
            "entities": entities,
            "fallback_to_question": fallback,
            "entities_unreadable": extracted.unreadable,
            "seeds": seeds.iter().map(|&(v, s)| json!({
                "node": self.graph.nodes[v as usize], "id": v, "similarity": s,
            })).collect::<Vec<_>>(),
        });
        let mut out = Retrieval {
            ranked: Vec::new(),
            tokens_in: extracted.tokens_in,
            tokens_out: extracted.tokens_out,
            trace: serde_json::Value::Null,
        };
        if !seeds.is_empty() {
            let run = self.ppr_from(&seeds)?;
            let nodes = Self::node_set(&seeds, &run);
            let triplets = self.induced_triplets(&nodes);
            out.ranked = self.source_chunks(&triplets);
            self.trace_walk(&mut trace, &run, nodes.len(), &triplets, out.ranked.len());
        }
        out.trace = trace;
        Ok(out)
    }
}
