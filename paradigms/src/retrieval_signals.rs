//! Zero-token probe signals computed from the retriever primitives before any paradigm reads:
//! the dense top-k scores (top-1, top-1 − top-2, mean of the top 5 and 10, Adaptive-k's largest
//! gap), a BM25 index over chunks (the `bm25` crate) with its top score and its top-10 overlap
//! with the dense ranking, and the graph's view of a question (entity mentions and links, the
//! Personalized PageRank distribution from the seeds, the seeds' degree and component size).
//!
//! Each function returns plain numbers; `bench`'s probe step names them, times them and writes
//! them through `Store::put_signals`. A value that cannot be measured for a question (no entity
//! mention, no seed) is `None`, stored as an explicit missing signal.

use bm25::{Embedder, EmbedderBuilder, Scorer, Tokenizer};
use corpora::Csr;

use crate::graph::GraphRetriever;
use crate::ppr::{ppr_top_k, PushWorkspace};

/// Signals of one sorted (descending) list of dense similarities.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DenseSignals {
    /// The best similarity.
    pub top1: Option<f64>,
    /// Top-1 minus top-2 (`None` with fewer than two scores).
    pub margin: Option<f64>,
    /// Mean of the best 5.
    pub mean5: Option<f64>,
    /// Mean of the best 10.
    pub mean10: Option<f64>,
    /// Adaptive-k: the 1-based position `i` of the largest drop `s_i − s_{i+1}` in the sorted
    /// scores (ties: the first), i.e. how many chunks sit above the largest gap.
    pub gap_position: Option<f64>,
}

/// The dense signals of `scores`, sorted best first (as `FlatIndex::search` returns them).
pub fn dense_signals(scores: &[f32]) -> DenseSignals {
    let s: Vec<f64> = scores.iter().map(|&v| f64::from(v)).collect();
    let mean =
        |k: usize| (!s.is_empty()).then(|| s.iter().take(k).sum::<f64>() / s.len().min(k) as f64);
    let mut gap: Option<(usize, f64)> = None;
    for (i, w) in s.windows(2).enumerate() {
        let d = w[0] - w[1];
        if gap.is_none_or(|(_, g)| d > g) {
            gap = Some((i + 1, d));
        }
    }
    DenseSignals {
        top1: s.first().copied(),
        margin: (s.len() >= 2).then(|| s[0] - s[1]),
        mean5: mean(5),
        mean10: mean(10),
        gap_position: gap.map(|(i, _)| i as f64),
    }
}

/// Share of `a`'s first `k` rows that are among `b`'s first `k` (|A ∩ B| / k), `None` when
/// `k` is 0.
pub fn top_overlap(a: &[u32], b: &[u32], k: usize) -> Option<f64> {
    if k == 0 {
        return None;
    }
    let b: Vec<u32> = b.iter().take(k).copied().collect();
    let shared = a.iter().take(k).filter(|r| b.contains(r)).count();
    Some(shared as f64 / k as f64)
}

/// Lower-cased alphanumeric terms, the offline reader's tokenisation (no stemming, no stop
/// list: BM25's IDF weighs common words down).
#[derive(Debug, Clone, Copy, Default)]
pub struct Terms;

impl Tokenizer for Terms {
    fn tokenize(&self, input_text: &str) -> Vec<String> {
        input_text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|t| !t.is_empty())
            .map(str::to_lowercase)
            .collect()
    }
}

/// A BM25 (Okapi, k1 = 1.2, b = 0.75) index over the chunk texts, row = chunk row; built with
/// the `bm25` crate: `score = Σ_{t in query} ln(1 + (N − n_t + 0.5)/(n_t + 0.5)) ·
/// f(t,d)(k1+1) / (f(t,d) + k1(1 − b + b·|d|/avgdl))`, a query term counted as often as it
/// occurs in the query.
pub struct Bm25Index {
    embedder: Embedder<u32, Terms>,
    scorer: Scorer<u32, u32>,
}

impl std::fmt::Debug for Bm25Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bm25Index")
            .field("avgdl", &self.embedder.avgdl())
            .finish()
    }
}

impl Bm25Index {
    /// A BM25 index over `texts`.
    pub fn new(texts: &[&str]) -> Bm25Index {
        let embedder =
            EmbedderBuilder::<u32, Terms>::with_tokenizer_and_fit_to_corpus(Terms, texts).build();
        let mut scorer = Scorer::new();
        for (row, text) in texts.iter().enumerate() {
            scorer.upsert(&(row as u32), embedder.embed(text));
        }
        Bm25Index { embedder, scorer }
    }

    /// The `k` best rows with a positive score, best first (ties: the lower row).
    pub fn search(&self, query: &str, k: usize) -> Vec<(u32, f64)> {
        let mut hits: Vec<(u32, f64)> = self
            .scorer
            .matches(&self.embedder.embed(query))
            .into_iter()
            .map(|d| (d.id, f64::from(d.score)))
            .collect();
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        hits.truncate(k);
        hits
    }
}

/// Connected-component sizes of a graph, per node (computed once per graph).
#[derive(Debug, Clone)]
pub struct Components {
    /// Component id of each node.
    of: Vec<u32>,
    /// Size of each component.
    size: Vec<u32>,
}

impl Components {
    /// The connected components of `csr`.
    pub fn new(csr: &Csr) -> Components {
        let of = corpora::component_ids(csr);
        let size = corpora::component_sizes(&of);
        Components { of, size }
    }

    /// Number of nodes in `node`'s component (1 for an isolated node).
    pub fn size_of(&self, node: u32) -> u32 {
        self.size[self.of[node as usize] as usize]
    }
}

/// The graph's view of one question.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphSignals {
    /// Entity mentions the extractor found (0: the retriever falls back to the question).
    pub mentions: f64,
    /// Mentions whose best link to a graph entity is above the linking threshold.
    pub linked: f64,
    /// linked / mentions (`None` without a mention).
    pub hit_rate: Option<f64>,
    /// Seeds (after max-pooling, at most `seed_k`), as the retriever would pick them.
    pub seeds: f64,
    /// Best PPR score, mass of the best 10, entropy (nats) of the best `top_nodes` scores
    /// normalised to sum 1 (`None` without a seed).
    pub ppr_top1: Option<f64>,
    /// Share of the PPR mass in the best 10 nodes.
    pub ppr_top10_mass: Option<f64>,
    /// Entropy (nats) of the best scores, normalised.
    pub ppr_entropy: Option<f64>,
    /// Mean degree of the seeds and the largest component holding a seed.
    pub seed_degree: Option<f64>,
    /// Size of the largest component holding a seed.
    pub seed_component: Option<f64>,
    /// LLM tokens the entity extraction cost (0 offline).
    pub tokens: u64,
}

/// Entity linking and PPR for one question, exactly as [`GraphRetriever`] links and expands
/// (entities, or the question itself when there is none; `vector` is the question's own
/// vector, used for that fallback). `ws` is kept across questions: the certified engine
/// factorises the graph once per workspace.
pub async fn graph_signals(
    retriever: &GraphRetriever,
    components: &Components,
    question: &str,
    vector: &[f32],
    ws: &mut PushWorkspace,
) -> bench_core::Result<GraphSignals> {
    let extracted = retriever.entities.extract(question).await?;
    let (entities, fallback) = GraphRetriever::query_entities(&extracted, question);
    let vectors = retriever.entity_vectors(&entities, fallback, Some(vector))?;
    let (seeds, linked) = if retriever.entity_index.is_empty() {
        (Vec::new(), 0)
    } else {
        retriever.link_seeds_counted(&vectors)
    };
    // The question itself stands in when nothing was extracted: no mention, none linked.
    let (mentions, linked) = if fallback {
        (0, 0)
    } else {
        (entities.len(), linked)
    };
    let mut out = GraphSignals {
        mentions: mentions as f64,
        linked: linked as f64,
        hit_rate: (mentions > 0).then(|| linked as f64 / mentions as f64),
        seeds: seeds.len() as f64,
        ppr_top1: None,
        ppr_top10_mass: None,
        ppr_entropy: None,
        seed_degree: None,
        seed_component: None,
        tokens: extracted.tokens_in + extracted.tokens_out,
    };
    if !seeds.is_empty() {
        seed_signals(retriever, components, &seeds, ws, &mut out)?;
    }
    Ok(out)
}

/// The seeds' mean degree and largest component, and the shape of the PPR run from them, into
/// `out` (`seeds` not empty).
fn seed_signals(
    retriever: &GraphRetriever,
    components: &Components,
    seeds: &[(u32, f32)],
    ws: &mut PushWorkspace,
    out: &mut GraphSignals,
) -> bench_core::Result<()> {
    let csr = &retriever.graph.adjacency;
    let p = retriever.params;
    out.seed_degree = Some(
        seeds
            .iter()
            .map(|&(v, _)| csr.degree(v) as f64)
            .sum::<f64>()
            / seeds.len() as f64,
    );
    out.seed_component = seeds
        .iter()
        .map(|&(v, _)| components.size_of(v))
        .max()
        .map(f64::from);
    let personalization: Vec<(u32, f64)> = seeds.iter().map(|&(v, s)| (v, f64::from(s))).collect();
    let run = ppr_top_k(
        p.engine,
        csr,
        &personalization,
        p.damping,
        p.top_nodes,
        p.min_score,
        ws,
    )
    .map_err(|e| bench_core::BenchError::Other(format!("PPR: {e}")))?;
    (out.ppr_top1, out.ppr_top10_mass, out.ppr_entropy) = ppr_shape(&run.top);
    Ok(())
}

/// Top-1 score, mass of the best 10 and entropy of the listed scores normalised to sum 1, of a
/// PPR top list (best first); all `None` for an empty list.
pub fn ppr_shape(top: &[(u32, f64)]) -> (Option<f64>, Option<f64>, Option<f64>) {
    let total: f64 = top.iter().map(|t| t.1).sum();
    if top.is_empty() || total <= 0.0 {
        return (None, None, None);
    }
    let entropy = -top
        .iter()
        .map(|t| t.1 / total)
        .filter(|&q| q > 0.0)
        .map(|q| q * q.ln())
        .sum::<f64>();
    (
        Some(top[0].1),
        Some(top.iter().take(10).map(|t| t.1).sum()),
        Some(entropy),
    )
}

/// Rows of `hits` (row, score) in order, for the overlap.
pub fn rows<T>(hits: &[(u32, T)]) -> Vec<u32> {
    hits.iter().map(|h| h.0).collect()
}
