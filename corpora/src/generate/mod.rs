//! Query generation (paper Algorithm 2): candidates per type from the corpus and its knowledge graph, then verify-then-filter.
//!
//! Sources are chosen as the paper does: a factual question from one uniformly drawn chunk, a
//! reasoning question from two chunks linked by a bridge entity (a two-step walk on the graph),
//! a summary question from the chunks around an entity drawn in proportion to its degree. A
//! [`Generator`] turns a source into a (question, answer) candidate: LLM prompts
//! ([`llm::LlmGenerator`]) or templates over the graph's triplets ([`offline::TemplateGenerator`]).
//! Each candidate then passes the filters in order, cheapest first, and the first that fails
//! removes it: lexical leakage, duplicate (question embedding similarity), grounding, shortcut
//! (reasoning only: one source chunk alone suffices), closed-book leakage. Without an LLM the
//! filters that need one are recorded as not applied, never as passed.

pub mod llm;
pub mod offline;
pub mod write;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use async_trait::async_trait;
use bench_core::rng::SplitMix64;
use bench_core::{
    Chunk, ContextChunk, Corpus, Embedder, GoldAnswer, Judge, JudgeLabel, Query, QueryType, Reader,
};
use serde::Serialize;

use crate::error::Result;
use crate::graph::KnowledgeGraph;
use crate::load::evidence::normalize;

/// A generated question with what it was made from.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// The type it was generated as.
    pub qtype: QueryType,
    /// The question text.
    pub question: String,
    /// The gold answer.
    pub answer: String,
    /// Rows (`Chunk::index`) of the chunks it was made from: its gold evidence.
    pub sources: Vec<u32>,
    /// Entities the question names (grounding checks they are in the sources).
    pub named: Vec<String>,
}

/// Turns the chosen source chunks into a candidate; `None` when they give none (no usable fact,
/// an unreadable reply). Tokens spent are reported through [`Generator::spent`].
#[async_trait]
pub trait Generator: Send + Sync {
    /// Recorded with every question (`offline-templates/1`, `llm:<model>@<url>`).
    fn identity(&self) -> String;
    /// A candidate of type `qtype` from `source`, or `None` when it gives none.
    async fn generate(&self, qtype: QueryType, source: &Source<'_>) -> Result<Option<Candidate>>;
    /// LLM tokens spent so far.
    fn spent(&self) -> u64 {
        0
    }
}

/// Where a candidate comes from: its chunks and, from the graph, the facts that link them.
#[derive(Debug, Clone)]
pub struct Source<'a> {
    /// The source chunks: one for factual, two for reasoning, the entity's for summary.
    pub chunks: Vec<&'a Chunk>,
    /// (subject, relation, object, chunk row) facts along the source: one for factual, the two
    /// hops for reasoning (bridge entity in the middle), the entity's facts for summary.
    pub facts: Vec<(String, String, String, u32)>,
    /// Summary: the entity the facts are about.
    pub focus: Option<String>,
}

/// The filters of verify-then-filter, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Filter {
    /// The answer (or, for summary, one of its items) appears in the question.
    LexicalLeakage,
    /// The question is a near copy of one kept before (embedding cosine >= 0.95).
    Duplicate,
    /// The answer is not supported by the source chunks.
    Grounding,
    /// Reasoning only: one source chunk alone answers it.
    Shortcut,
    /// The LLM answers it without any context.
    ClosedBookLeakage,
}

impl Filter {
    /// Every filter, in the order they run.
    pub const ALL: [Filter; 5] = [
        Filter::LexicalLeakage,
        Filter::Duplicate,
        Filter::Grounding,
        Filter::Shortcut,
        Filter::ClosedBookLeakage,
    ];

    /// The kebab-case name, as written in the set's provenance.
    pub fn as_str(self) -> &'static str {
        match self {
            Filter::LexicalLeakage => "lexical-leakage",
            Filter::Duplicate => "duplicate",
            Filter::Grounding => "grounding",
            Filter::Shortcut => "shortcut",
            Filter::ClosedBookLeakage => "closed-book-leakage",
        }
    }
}

/// How a kept question fared under one filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// The question passed the filter.
    Passed,
    /// The filter does not apply to the type (shortcut for non-reasoning questions).
    NotApplicable,
    /// The filter needs an LLM and none was configured.
    NotApplied,
}

/// The LLM side of the filters: a reader answers from given chunks (or none) and a judge
/// compares its answer with the candidate's.
pub struct LlmChecks {
    /// Answers from given chunks, or from none (closed book).
    pub reader: Arc<dyn Reader>,
    /// Says whether the reader's answer matches the candidate's.
    pub judge: Arc<dyn Judge>,
}

impl std::fmt::Debug for LlmChecks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmChecks")
            .field("reader", &self.reader.identity())
            .field("judge", &self.judge.identity())
            .finish()
    }
}

/// What generation needs besides the corpus.
pub struct Pipeline<'a> {
    /// The corpus whose chunks are the sources.
    pub corpus: &'a Corpus,
    /// The corpus's knowledge graph: bridges, entities and the facts of templates.
    pub graph: &'a KnowledgeGraph,
    /// Turns sources into candidates.
    pub generator: Arc<dyn Generator>,
    /// Question embeddings for the duplicate filter.
    pub embedder: Arc<dyn Embedder>,
    /// `None` offline: grounding by containment; shortcut and closed-book not applied.
    pub checks: Option<LlmChecks>,
    /// Seed of the draws; each type draws from its own stream derived from it.
    pub seed: u64,
    /// Kept questions wanted per type.
    pub per_type: usize,
    /// Candidates tried per type at most (the paper keeps about half).
    pub max_candidates: usize,
    /// Stop when the LLM tokens spent reach this.
    pub max_tokens: Option<u64>,
    /// Called after each candidate drawn with (draws so far, most draws of the plan).
    pub progress: Option<Progress>,
}

/// A progress callback: (done, total).
pub type Progress = Arc<dyn Fn(u64, u64) + Send + Sync>;

/// Draws per distinct source at most: drawing with replacement, 4 draws per source reach about
/// 98 % of them (1 - e^-4); more draws mostly repeat sources the duplicate filter removes.
pub(crate) const DRAWS_PER_SOURCE: usize = 4;

/// What generation does for one type, said before it starts: the questions wanted, capped at
/// what the corpus can give, and the candidates drawn at most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TypePlan {
    /// The type.
    pub qtype: QueryType,
    /// Questions asked for (`--per-type`).
    pub asked: usize,
    /// An upper bound on the distinct sources the corpus and its graph give this type (chunk and
    /// fact for factual, two-step walks for reasoning, an entity's fact pairs and triples for
    /// summary): no more distinct candidates can be made.
    pub sources: usize,
    /// Questions wanted: `asked`, capped at `sources`.
    pub wanted: usize,
    /// Candidates drawn at most: `max_candidates`, capped at `DRAWS_PER_SOURCE` x `sources`.
    pub draws: usize,
}

impl std::fmt::Debug for Pipeline<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline")
            .field("corpus", &self.corpus.name)
            .field("generator", &self.generator.identity())
            .field("llm_checks", &self.checks)
            .field("per_type", &self.per_type)
            .field("max_candidates", &self.max_candidates)
            .finish_non_exhaustive()
    }
}

/// A kept question, ready to be written.
#[derive(Debug, Clone)]
pub struct Kept {
    /// The question, its answer and sources.
    pub candidate: Candidate,
    /// How it fared under each filter.
    pub filters: BTreeMap<Filter, Outcome>,
}

/// The construction statistics of one type (the paper's Table 6).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TypeStats {
    /// Sources drawn that gave a candidate.
    pub generated: usize,
    /// Draws that found no source (no graph path or entity with facts in two documents).
    pub no_source: usize,
    /// Sources that gave no candidate (no usable fact, an unreadable or declined reply).
    pub no_candidate: usize,
    /// Candidates each filter removed (the first that failed).
    pub removed: BTreeMap<Filter, usize>,
    /// Candidates kept.
    pub kept: usize,
}

/// The whole run's statistics.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Statistics {
    /// The generator's identity.
    pub generator: String,
    /// Statistics per type.
    pub per_type: BTreeMap<QueryType, TypeStats>,
    /// Filters recorded as not applied (no LLM).
    pub not_applied: Vec<Filter>,
    /// LLM tokens spent, generation and filters together.
    pub llm_tokens: u64,
    /// Generation stopped at `--max-tokens` before every type was done.
    pub stopped_at_budget: bool,
}

impl Pipeline<'_> {
    /// The plan of each type in `types` (see [`TypePlan`]).
    pub fn plan(&self, types: &[QueryType]) -> Vec<TypePlan> {
        let sources = Sources::new(self.corpus, self.graph);
        types.iter().map(|&t| self.plan_with(&sources, t)).collect()
    }

    fn plan_with(&self, sources: &Sources<'_>, qtype: QueryType) -> TypePlan {
        let n = sources.capacity(qtype);
        TypePlan {
            qtype,
            asked: self.per_type,
            sources: n,
            wanted: self.per_type.min(n),
            draws: self.max_candidates.min(n.saturating_mul(DRAWS_PER_SOURCE)),
        }
    }

    /// Generates and filters per type in `types`, each from its own seeded stream, within
    /// each type's [`TypePlan`].
    pub async fn run(&self, types: &[QueryType]) -> Result<(Vec<Kept>, Statistics)> {
        let mut stats = Statistics {
            generator: self.generator.identity(),
            not_applied: if self.checks.is_none() {
                vec![Filter::Shortcut, Filter::ClosedBookLeakage]
            } else {
                Vec::new()
            },
            ..Statistics::default()
        };
        let sources = Sources::new(self.corpus, self.graph);
        let mut kept: Vec<Kept> = Vec::new();
        let mut kept_vectors: Vec<Vec<f32>> = Vec::new();
        let mut check_tokens = 0u64;
        let plans: Vec<TypePlan> = types.iter().map(|&t| self.plan_with(&sources, t)).collect();
        let total: u64 = plans.iter().map(|p| p.draws as u64).sum();
        let mut drawn = 0u64;
        'types: for plan in &plans {
            let qtype = plan.qtype;
            let mut rng = SplitMix64::new(bench_core::rng::hash_str(self.seed, qtype.as_str()));
            let mut st = TypeStats::default();
            let mut tried = 0;
            while st.kept < plan.wanted && tried < plan.draws {
                if let Some(p) = &self.progress {
                    p(drawn, total);
                }
                drawn += 1;
                if self
                    .max_tokens
                    .is_some_and(|m| self.generator.spent() + check_tokens >= m)
                {
                    stats.stopped_at_budget = true;
                    stats.per_type.insert(qtype, st);
                    break 'types;
                }
                tried += 1;
                let Some(source) = sources.draw(qtype, &mut rng) else {
                    st.no_source += 1;
                    continue;
                };
                let Some(c) = self.generator.generate(qtype, &source).await? else {
                    st.no_candidate += 1;
                    continue;
                };
                st.generated += 1;
                match self.verify(&c, &kept_vectors, &mut check_tokens).await? {
                    Err(filter) => *st.removed.entry(filter).or_default() += 1,
                    Ok((filters, vector)) => {
                        st.kept += 1;
                        kept_vectors.push(vector);
                        kept.push(Kept {
                            candidate: c,
                            filters,
                        });
                    }
                }
            }
            stats.per_type.insert(qtype, st);
        }
        stats.llm_tokens = self.generator.spent() + check_tokens;
        Ok((kept, stats))
    }

    /// Runs the filters in order; the first that fails is returned. On success, each filter's
    /// outcome and the question's vector (for later duplicates).
    async fn verify(
        &self,
        c: &Candidate,
        kept: &[Vec<f32>],
        tokens: &mut u64,
    ) -> Result<std::result::Result<(BTreeMap<Filter, Outcome>, Vec<f32>), Filter>> {
        let mut out = BTreeMap::new();
        let question = normalize(&c.question);
        if answer_items(c)
            .iter()
            .any(|a| contains_words(&question, &normalize(a)))
        {
            return Ok(Err(Filter::LexicalLeakage));
        }
        out.insert(Filter::LexicalLeakage, Outcome::Passed);

        let vector = self.embedder.embed_one(&c.question)?;
        if kept.iter().any(|k| cosine(k, &vector) >= DUPLICATE_COSINE) {
            return Ok(Err(Filter::Duplicate));
        }
        out.insert(Filter::Duplicate, Outcome::Passed);

        let chunks: Vec<&Chunk> = c
            .sources
            .iter()
            .filter_map(|&r| self.corpus.chunks.get(r as usize))
            .collect();
        let Some(checks) = &self.checks else {
            // Offline grounding: every answer item and every named entity is in the sources.
            let text = normalize(
                &chunks
                    .iter()
                    .map(|ch| ch.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
            );
            let grounded = answer_items(c)
                .iter()
                .chain(&c.named)
                .all(|a| contains_words(&text, &normalize(a)));
            if !grounded {
                return Ok(Err(Filter::Grounding));
            }
            out.insert(Filter::Grounding, Outcome::Passed);
            out.insert(
                Filter::Shortcut,
                if c.qtype == QueryType::Reasoning {
                    Outcome::NotApplied
                } else {
                    Outcome::NotApplicable
                },
            );
            out.insert(Filter::ClosedBookLeakage, Outcome::NotApplied);
            return Ok(Ok((out, vector)));
        };

        if !checks.answers(c, &chunks, tokens).await? {
            return Ok(Err(Filter::Grounding));
        }
        out.insert(Filter::Grounding, Outcome::Passed);
        if c.qtype == QueryType::Reasoning {
            for ch in &chunks {
                if checks.answers(c, &[ch], tokens).await? {
                    return Ok(Err(Filter::Shortcut));
                }
            }
            out.insert(Filter::Shortcut, Outcome::Passed);
        } else {
            out.insert(Filter::Shortcut, Outcome::NotApplicable);
        }
        if checks.answers(c, &[], tokens).await? {
            return Ok(Err(Filter::ClosedBookLeakage));
        }
        out.insert(Filter::ClosedBookLeakage, Outcome::Passed);
        Ok(Ok((out, vector)))
    }
}

/// Cosine at or above which a question is a duplicate of one kept before.
pub(crate) const DUPLICATE_COSINE: f32 = 0.95;

impl LlmChecks {
    /// Whether the reader, given `chunks` (none: closed book), answers the candidate correctly
    /// in the judge's eyes.
    async fn answers(&self, c: &Candidate, chunks: &[&Chunk], tokens: &mut u64) -> Result<bool> {
        let ctx: Vec<ContextChunk<'_>> = chunks
            .iter()
            .enumerate()
            .map(|(rank, ch)| ContextChunk {
                chunk_id: &ch.id,
                text: &ch.text,
                rank,
            })
            .collect();
        let g = self.reader.answer(&c.question, c.qtype, &ctx).await?;
        *tokens += g.tokens_in + g.tokens_out;
        let query = Query {
            id: "candidate".into(),
            text: c.question.clone(),
            qtype: c.qtype,
            gold: GoldAnswer {
                answer: c.answer.clone(),
                aliases: Vec::new(),
            },
            evidence: Vec::new(),
            gold_chunks: Vec::new(),
            gold_documents: Vec::new(),
            statements: Vec::new(),
        };
        let v = self.judge.judge(&query, &g.text).await?;
        *tokens += v.tokens_in + v.tokens_out;
        Ok(v.label == JudgeLabel::Correct)
    }
}

/// The items of an answer: a summary's list ("a, b and c") item by item, else the answer.
fn answer_items(c: &Candidate) -> Vec<String> {
    if c.qtype != QueryType::Summary {
        return vec![c.answer.clone()];
    }
    c.answer
        .split(", ")
        .flat_map(|p| p.split(" and "))
        .map(|p| p.trim().to_owned())
        .filter(|p| !p.is_empty())
        .collect()
}

/// Whether normalised `needle` occurs in normalised `hay` as whole words.
fn contains_words(hay: &str, needle: &str) -> bool {
    !needle.is_empty() && format!(" {hay} ").contains(&format!(" {needle} "))
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    // Embedders return unit vectors.
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Sampling the sources of each type from the corpus and its graph.
struct Sources<'a> {
    corpus: &'a Corpus,
    graph: &'a KnowledgeGraph,
    /// Triplet indices per source chunk row.
    by_chunk: BTreeMap<u32, Vec<usize>>,
    /// Triplet indices per subject node.
    by_subject: BTreeMap<u32, Vec<usize>>,
    /// Triplet indices per node, either end.
    by_node: BTreeMap<u32, Vec<usize>>,
    /// (cumulative degree, node) over the entities with facts from two or more documents, for
    /// drawing one in proportion to its degree.
    cumulative: Vec<(u64, u32)>,
    /// Facts A -r1-> B with a fact B -r2-> C from another document (C is not A).
    chain_starts: Vec<usize>,
    /// Triplets with a relation other than the offline extractor's co-occurrence link: a
    /// question over "related_to" says little, so these are preferred where there are any.
    specific: Vec<bool>,
}

impl<'a> Sources<'a> {
    fn new(corpus: &'a Corpus, graph: &'a KnowledgeGraph) -> Self {
        let mut s = Sources {
            corpus,
            graph,
            by_chunk: BTreeMap::new(),
            by_subject: BTreeMap::new(),
            by_node: BTreeMap::new(),
            cumulative: Vec::new(),
            chain_starts: Vec::new(),
            specific: graph
                .triplets
                .iter()
                .map(|t| graph.relations[t.relation as usize] != crate::graph::offline::RELATED_TO)
                .collect(),
        };
        for (i, t) in graph.triplets.iter().enumerate() {
            s.by_chunk.entry(t.chunk).or_default().push(i);
            s.by_subject.entry(t.u).or_default().push(i);
            s.by_node.entry(t.u).or_default().push(i);
            s.by_node.entry(t.v).or_default().push(i);
        }
        let mut total = 0u64;
        for n in 0..graph.nodes.len() as u32 {
            let docs: BTreeSet<&str> = s
                .by_node
                .get(&n)
                .into_iter()
                .flatten()
                .map(|&i| {
                    corpus.chunks[graph.triplets[i].chunk as usize]
                        .document
                        .as_str()
                })
                .collect();
            if docs.len() >= 2 {
                total += graph.adjacency.degree(n) as u64;
                s.cumulative.push((total, n));
            }
        }
        s.chain_starts = (0..graph.triplets.len())
            .filter(|&i| !s.continuations(i).is_empty())
            .collect();
        s
    }

    fn fact(&self, i: usize) -> (String, String, String, u32) {
        let t = &self.graph.triplets[i];
        (
            self.graph.nodes[t.u as usize].clone(),
            self.graph.relations[t.relation as usize].clone(),
            self.graph.nodes[t.v as usize].clone(),
            t.chunk,
        )
    }

    /// The facts B -r2-> C that continue fact `first` (A -r1-> B) from another document.
    fn continuations(&self, first: usize) -> Vec<usize> {
        let t1 = self.graph.triplets[first];
        let doc1 = &self.chunk(t1.chunk).document;
        self.by_subject
            .get(&t1.v)
            .into_iter()
            .flatten()
            .copied()
            .filter(|&j| {
                let t2 = self.graph.triplets[j];
                t2.v != t1.u && &self.chunk(t2.chunk).document != doc1
            })
            .collect()
    }

    /// The triplets of `ts` with a specific relation, or all of them when none has one.
    fn prefer_specific(&self, ts: &[usize]) -> Vec<usize> {
        let specific: Vec<usize> = ts.iter().copied().filter(|&i| self.specific[i]).collect();
        if specific.is_empty() {
            ts.to_vec()
        } else {
            specific
        }
    }

    /// An upper bound on the distinct sources `draw` can give `qtype` (see [`TypePlan::sources`]).
    fn capacity(&self, qtype: QueryType) -> usize {
        match qtype {
            // A chunk, with one of its facts when it has any.
            QueryType::Factual | QueryType::Other => (0..self.corpus.chunks.len() as u32)
                .map(|r| self.by_chunk.get(&r).map_or(1, |ts| ts.len().max(1)))
                .fold(0usize, usize::saturating_add),
            QueryType::Reasoning => self
                .chain_starts
                .iter()
                .map(|&i| self.continuations(i).len())
                .fold(0usize, usize::saturating_add),
            // Two or three of an entity's facts.
            QueryType::Summary => self
                .cumulative
                .iter()
                .map(|&(_, n)| {
                    let f = self.by_node.get(&n).map_or(0, Vec::len);
                    let pairs = f.saturating_mul(f.saturating_sub(1)) / 2;
                    let triples = pairs.saturating_mul(f.saturating_sub(2)) / 3;
                    pairs.saturating_add(triples)
                })
                .fold(0usize, usize::saturating_add),
        }
    }

    fn chunk(&self, row: u32) -> &'a Chunk {
        &self.corpus.chunks[row as usize]
    }

    fn draw(&self, qtype: QueryType, rng: &mut SplitMix64) -> Option<Source<'a>> {
        match qtype {
            QueryType::Factual | QueryType::Other => {
                let row = rng.below(self.corpus.chunks.len()) as u32;
                let facts = self
                    .by_chunk
                    .get(&row)
                    .map(|ts| {
                        let ts = self.prefer_specific(ts);
                        vec![self.fact(ts[rng.below(ts.len())])]
                    })
                    .unwrap_or_default();
                Some(Source {
                    chunks: vec![self.chunk(row)],
                    facts,
                    focus: None,
                })
            }
            QueryType::Reasoning => {
                // A two-step walk: A -r1-> B in one document, B -r2-> C in another.
                // Only facts that start such a walk are drawn: a sparse graph has few.
                if self.chain_starts.is_empty() {
                    return None;
                }
                let starts = self.prefer_specific(&self.chain_starts);
                let first = starts[rng.below(starts.len())];
                let t1 = self.graph.triplets[first];
                let next = self.prefer_specific(&self.continuations(first));
                let second = next[rng.below(next.len())];
                let t2 = self.graph.triplets[second];
                Some(Source {
                    chunks: vec![self.chunk(t1.chunk), self.chunk(t2.chunk)],
                    facts: vec![self.fact(first), self.fact(second)],
                    focus: None,
                })
            }
            QueryType::Summary => {
                // An entity with facts from two or more documents, drawn in proportion to its
                // degree among such entities.
                let total = self.cumulative.last()?.0;
                if total == 0 {
                    return None;
                }
                let x = rng.next_u64() % total;
                let node = self.cumulative[self.cumulative.partition_point(|&(c, _)| c <= x)].1;
                let mut facts: Vec<usize> = self.by_node.get(&node)?.clone();
                rng.shuffle(&mut facts);
                let mut docs = Vec::new();
                let mut chosen = Vec::new();
                for i in facts {
                    let d = &self.chunk(self.graph.triplets[i].chunk).document;
                    if !docs.contains(d) {
                        docs.push(d.clone());
                        chosen.push(i);
                    }
                    if chosen.len() == 3 {
                        break;
                    }
                }
                if chosen.len() < 2 {
                    return None;
                }
                let mut chunks: Vec<&Chunk> = Vec::new();
                for &i in &chosen {
                    let ch = self.chunk(self.graph.triplets[i].chunk);
                    if !chunks.iter().any(|c| c.id == ch.id) {
                        chunks.push(ch);
                    }
                }
                Some(Source {
                    chunks,
                    facts: chosen.iter().map(|&i| self.fact(i)).collect(),
                    focus: Some(self.graph.nodes[node as usize].clone()),
                })
            }
        }
    }
}
