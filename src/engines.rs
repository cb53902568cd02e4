//! What a run is assembled from: readers, judges, evaluators, extractors and paradigms, offline or LLM-backed.

use std::sync::Arc;

use anyhow::{Context as _, Result};
use bench_core::config::PprEngineName;
use bench_core::{BenchConfig, Embedder, Judge, Paradigm, ParadigmId, Reader, Retriever};
use corpora::{
    build_graph, embed_entities, BuildOptions, KnowledgeGraph, LlmExtractor, MiniLm,
    OfflineExtractor, TripletExtractor, VectorCache,
};
use metrics::query::complexity_score;
use store::Store;

use crate::checks::BadInput;
use corpora::FlatIndex;
use llm::budget::{Budgeted, TokenBudget};
use llm::{CachedLlm, LlmSettings, OpenAiLlm};
use metrics::{DeliveredJudge, LlmJudge};
use paradigms::{
    ChunkTable, DenseRetriever, Evaluator, ExtractedEntities, FnEntities, GraphParams,
    GraphRetriever, LlmEvaluator, LlmReader, MemoRetriever, OfflineEvaluator, OfflineReader,
    PprEngine, QueryEntities,
};

/// The knowledge graph and the vector index of its entities.
pub(crate) type GraphParts = (Arc<KnowledgeGraph>, Arc<FlatIndex>);

/// The engines a run's paradigms are assembled from.
pub(crate) struct ParadigmParts<'a> {
    pub(crate) config: &'a BenchConfig,
    pub(crate) chunks: Arc<ChunkTable>,
    pub(crate) index: Arc<FlatIndex>,
    pub(crate) embedder: Arc<dyn Embedder>,
    pub(crate) reader: Arc<dyn Reader>,
    pub(crate) offline_reader: Arc<OfflineReader>,
    pub(crate) graph: Option<GraphParts>,
    pub(crate) extractor: Arc<OfflineExtractor>,
    /// Entities of a question for graph retrieval (offline rules or the LLM).
    pub(crate) entities: Arc<dyn QueryEntities>,
    /// The LLM self-evaluator of IterativeRAG; `None` offline.
    pub(crate) llm_evaluator: Option<Arc<dyn Evaluator>>,
    /// One dense and one graph retriever for every paradigm, their results memoised per query;
    /// `None` builds a retriever per paradigm that shares nothing (`--share-nothing`).
    pub(crate) shared: Option<SharedRetrievers>,
}

/// The memoised retrievers all paradigms of a run use, made on first use.
#[derive(Default)]
pub(crate) struct SharedRetrievers {
    dense: std::sync::OnceLock<Arc<dyn Retriever>>,
    graph: std::sync::OnceLock<Arc<dyn Retriever>>,
}

/// Queries whose retrievals are kept: far more than the questions in flight (a few units, each
/// one question and its iterative sub-questions).
const MEMO_QUERIES: usize = 1024;

impl ParadigmParts<'_> {
    fn dense(&self) -> Arc<dyn Retriever> {
        match &self.shared {
            None => self.new_dense(),
            Some(s) => s
                .dense
                .get_or_init(|| Arc::new(MemoRetriever::new(self.new_dense(), MEMO_QUERIES)))
                .clone(),
        }
    }

    fn graph(&self) -> bench_core::Result<Arc<dyn Retriever>> {
        let Some(s) = &self.shared else {
            return self.new_graph();
        };
        if let Some(g) = s.graph.get() {
            return Ok(g.clone());
        }
        let g: Arc<dyn Retriever> = Arc::new(MemoRetriever::new(self.new_graph()?, MEMO_QUERIES));
        Ok(s.graph.get_or_init(|| g).clone())
    }

    fn new_dense(&self) -> Arc<dyn Retriever> {
        Arc::new(DenseRetriever {
            index: self.index.clone(),
            chunks: self.chunks.clone(),
            embedder: self.embedder.clone(),
            top_k: self.config.retrieval.top_k,
            min_similarity: self.config.retrieval.min_similarity,
        })
    }

    fn new_graph(&self) -> bench_core::Result<Arc<dyn Retriever>> {
        Ok(Arc::new(self.graph_retriever()?))
    }

    /// A GraphRAG retriever of its own (the probe step reads its linking and PPR).
    pub(crate) fn graph_retriever(&self) -> bench_core::Result<GraphRetriever> {
        let (graph, entity_index) = self.graph.clone().ok_or_else(|| {
            bench_core::BenchError::Other("the knowledge graph was not built".into())
        })?;
        let g = &self.config.graph;
        GraphRetriever::new(
            graph,
            entity_index,
            self.chunks.clone(),
            self.embedder.clone(),
            self.entities.clone(),
            GraphParams {
                seed_k: g.seed_k,
                link_k: g.link_k,
                min_similarity: g.min_entity_similarity,
                damping: g.damping,
                min_score: g.min_ppr_score,
                top_nodes: g.top_nodes,
                max_triplets: g.max_triplets,
                // The configuration was validated: these are the only names.
                engine: match g.ppr_engine {
                    PprEngineName::Push => PprEngine::push(),
                    PprEngineName::Exact => PprEngine::exact(),
                    PprEngineName::Certified => PprEngine::certified(),
                },
            },
        )
    }

    pub(crate) fn build(&self, id: ParadigmId) -> Result<Arc<dyn Paradigm>> {
        Ok(paradigms::registry::build(id, self)?)
    }
}

impl paradigms::Toolkit for ParadigmParts<'_> {
    fn config(&self) -> &BenchConfig {
        self.config
    }

    fn reader(&self) -> Arc<dyn Reader> {
        self.reader.clone()
    }

    fn chunks(&self) -> Arc<ChunkTable> {
        self.chunks.clone()
    }

    fn dense(&self) -> Arc<dyn Retriever> {
        ParadigmParts::dense(self)
    }

    fn graph(&self) -> bench_core::Result<Arc<dyn Retriever>> {
        ParadigmParts::graph(self)
    }

    fn evaluator(&self) -> Arc<dyn Evaluator> {
        match &self.llm_evaluator {
            Some(e) => e.clone(),
            None => {
                let extractor = self.extractor.clone();
                Arc::new(OfflineEvaluator {
                    reader: self.offline_reader.clone(),
                    entities: Arc::new(move |t: &str| extractor.entities(t)),
                    min_coverage: self.config.iterative.offline_sufficient_coverage,
                })
            }
        }
    }

    fn complexity(&self) -> fn(&str) -> f64 {
        complexity_score
    }
}

/// Builds the knowledge graph with default options (extracting only chunks not in `store`, the
/// extraction cache), with a progress bar over the chunks.
pub(crate) async fn extract_graph_with_progress(
    corpus: &bench_core::Corpus,
    extractor: Arc<dyn TripletExtractor>,
    store: &dyn bench_core::ExtractionCache,
) -> Result<corpora::GraphBuild> {
    let bar = crate::progress::bar(corpus.chunks.len() as u64, "extracting triplets", "chunks");
    let build = build_graph(
        corpus,
        extractor,
        store,
        &BuildOptions::default(),
        &|done, _| bar.set_position(done as u64),
    )
    .await
    .context("building the knowledge graph")?;
    bar.finish_and_clear();
    Ok(build)
}

/// Builds the knowledge graph (extracting only chunks not in `store`, the extraction cache)
/// and embeds its entities (through the vector cache), with progress bars.
pub(crate) async fn build_graph_with_progress(
    corpus: &bench_core::Corpus,
    extractor: Arc<dyn TripletExtractor>,
    store: &dyn bench_core::ExtractionCache,
    embedder: &dyn Embedder,
    cache: &VectorCache,
) -> Result<(Arc<KnowledgeGraph>, Arc<FlatIndex>, String)> {
    let build = extract_graph_with_progress(corpus, extractor, store).await?;
    let s = &build.stats;
    eprintln!(
        "graph: {} nodes, {} edges, {} relation types, {} components ({} chunks from cache, {} extracted, {} failed)",
        s.graph.nodes,
        s.graph.edges,
        s.graph.relation_types,
        s.graph.components,
        s.cached_chunks,
        s.extracted_chunks,
        s.failures.len()
    );
    let ebar = crate::progress::bar(
        build.graph.nodes.len() as u64,
        "embedding entities",
        "entities",
    );
    let vectors = embed_entities(&corpus.name, &build.graph, embedder, cache, &|d, _| {
        ebar.set_position(d as u64)
    })
    .context("embedding graph entities")?;
    ebar.finish_and_clear();
    let index = FlatIndex::new(vectors).context("building the entity index")?;
    Ok((
        Arc::new(build.graph),
        Arc::new(index),
        build.stats.signature,
    ))
}

/// The LLM settings of the run from the configuration's `[llm.*]` tables, the flags and the
/// environment; `None` runs offline.
pub(crate) fn resolve_llm(
    args: &crate::args::LlmArgs,
    config: &BenchConfig,
) -> Result<Option<LlmSettings>> {
    // Errors about the `[llm]` tables name the file they came from.
    let in_file = |m: String| match &config.source {
        Some(p) if m.contains("llm.") || m.contains("[llm]") => {
            BadInput(format!("config {}: {m}", p.display()))
        }
        _ => BadInput(m),
    };
    let file = config
        .llm
        .clone()
        .map(serde_json::from_value::<llm::LlmFileConfig>)
        .transpose()
        .map_err(|e| in_file(format!("[llm]: {e}")))?;
    if let Some(f) = &file {
        f.validate().map_err(|e| in_file(e.to_string()))?;
    }
    let flags = llm::LlmFlags {
        base_url: args.llm_base_url.clone(),
        model: args.llm_model.clone(),
    };
    llm::resolve(file.as_ref(), &flags, &|k| std::env::var(k).ok())
        .map_err(|e| in_file(e.to_string()).into())
}

/// Whether the configuration's `[llm.embedding]` table names a model: only then are chunks,
/// questions and graph entities embedded by the endpoint (the role otherwise inherits the
/// answering model, which is a chat model, so the local encoder stays).
fn embedding_endpoint_configured(config: &BenchConfig) -> bool {
    config
        .llm
        .as_ref()
        .and_then(|l| l.get("embedding"))
        .and_then(|e| e.get("model"))
        .is_some()
}

/// The encoder a run embeds with, and the endpoint behind it if it is one (for its token bill).
pub(crate) type ChosenEmbedder = (Arc<dyn Embedder>, Option<Arc<llm::EndpointEmbedder>>);

/// The run's sentence encoder: the `[llm.embedding]` endpoint when configured, else the local
/// MiniLM; the endpoint as such too, for its token bill. Called before the store is opened: a
/// bad key variable or an unreachable endpoint stops the run before anything is written. The
/// endpoint's dimension is read from (or recorded in) `cache_dir`, next to the vectors it keys.
pub(crate) fn choose_embedder(
    config: &BenchConfig,
    settings: Option<&LlmSettings>,
    local: Arc<MiniLm>,
    cache_dir: &std::path::Path,
) -> Result<ChosenEmbedder> {
    let Some(settings) = settings.filter(|_| embedding_endpoint_configured(config)) else {
        return Ok((local as Arc<dyn Embedder>, None));
    };
    let endpoint = llm::EndpointEmbedder::connect(
        settings.embedding.clone(),
        &|k| std::env::var(k).ok(),
        Some(cache_dir),
    )
    .map_err(|e| match e {
        llm::LlmError::Config(_) => anyhow::Error::from(BadInput(e.to_string())),
        llm::LlmError::Core(e) => {
            anyhow::Error::from(e).context("connecting to the embedding endpoint")
        }
    })?;
    eprintln!(
        "encoder: {} ({} dimensions, {} texts per request)",
        endpoint.identity(),
        endpoint.dim(),
        endpoint.batch_size()
    );
    let endpoint = Arc::new(endpoint);
    Ok((endpoint.clone(), Some(endpoint)))
}

/// Adds what the embedding endpoint was sent since the last call (requests, texts, tokens from
/// `usage` and counted with cl100k) to the run's `embedding_usage` in `runs.config_json`,
/// accumulated over the run's invocations. Nothing without an endpoint.
pub(crate) async fn record_embedding_usage(
    store: &Store,
    run_id: i64,
    endpoint: Option<&llm::EndpointEmbedder>,
) -> Result<()> {
    let Some(endpoint) = endpoint else {
        return Ok(());
    };
    let u = endpoint.take_unrecorded();
    store
        .add_embedding_usage(
            run_id,
            endpoint.identity(),
            store::EmbeddingUsage {
                requests: u.requests,
                texts: u.texts,
                tokens: u.tokens,
                usage_tokens: u.usage_tokens,
                counted_tokens: u.counted_tokens,
            },
        )
        .await
        .context("recording the embedding endpoint's usage with the run")?;
    Ok(())
}

/// One HTTP client per role, made before the store is opened.
pub(crate) struct LlmClients {
    pub(crate) answer: OpenAiLlm,
    pub(crate) judge: OpenAiLlm,
    pub(crate) graph: OpenAiLlm,
}

impl LlmClients {
    pub(crate) fn new(settings: &LlmSettings) -> Result<Self> {
        let client = |cfg: &llm::EndpointConfig| {
            OpenAiLlm::new(cfg.clone()).map_err(|e| anyhow::Error::from(BadInput(e.to_string())))
        };
        Ok(LlmClients {
            answer: client(&settings.answer)?,
            judge: client(&settings.judge)?,
            graph: client(&settings.graph)?,
        })
    }
}

/// The reader, judge, evaluator and extractors of a run, offline or LLM-backed.
pub(crate) struct Engines {
    pub(crate) reader: Arc<dyn Reader>,
    pub(crate) judge: Arc<dyn Judge>,
    pub(crate) graph_extractor: Arc<dyn TripletExtractor>,
    pub(crate) entities: Arc<dyn QueryEntities>,
    pub(crate) evaluator: Option<Arc<dyn Evaluator>>,
    /// The cached clients (answer, judge, graph), for the end-of-run call counts.
    pub(crate) cached: Vec<(&'static str, Arc<CachedLlm<Budgeted<OpenAiLlm>>>)>,
    /// The token budget every LLM call of the run reserves in (`--max-tokens`); unlimited until
    /// armed. A cached reply costs nothing: the budget sits between the cache and the client.
    pub(crate) budget: Arc<TokenBudget>,
}

impl Engines {
    pub(crate) fn offline(
        config: &BenchConfig,
        offline_reader: Arc<OfflineReader>,
        extractor: Arc<OfflineExtractor>,
    ) -> Self {
        let e = extractor.clone();
        Engines {
            reader: offline_reader,
            judge: Arc::new(DeliveredJudge::with_config(&config.judge)),
            graph_extractor: extractor,
            entities: Arc::new(FnEntities::new("offline-rules", move |q: &str| {
                e.entities(q)
            })),
            evaluator: None,
            cached: Vec::new(),
            budget: TokenBudget::new(),
        }
    }

    /// `logprobs`: ask the answer endpoint for this many log-probability alternatives per
    /// token (the answer probe's confidence signals).
    pub(crate) fn llm(
        config: &BenchConfig,
        clients: LlmClients,
        store: &Store,
        logprobs: Option<u8>,
    ) -> Self {
        let budget = TokenBudget::new();
        let answer = Arc::new(CachedLlm::new(
            Budgeted::new(clients.answer, budget.clone()),
            store.clone(),
            paradigms::READER_PROMPT_VERSION,
        ));
        let judge = Arc::new(CachedLlm::new(
            Budgeted::new(clients.judge, budget.clone()),
            store.clone(),
            metrics::JUDGE_PROMPT_VERSION,
        ));
        let graph = Arc::new(CachedLlm::new(
            Budgeted::new(clients.graph, budget.clone()),
            store.clone(),
            GRAPH_PROMPT_VERSION,
        ));
        let extractor = Arc::new(LlmExtractor::new(graph.clone()));
        Engines {
            reader: Arc::new(
                LlmReader::new(answer.clone(), &config.generation).with_logprobs(logprobs),
            ),
            judge: Arc::new(LlmJudge::new(judge.clone())),
            graph_extractor: extractor.clone(),
            entities: Arc::new(LlmEntities(extractor)),
            evaluator: Some(Arc::new(LlmEvaluator {
                llm: answer.clone(),
                temperature: config.iterative.evaluator_temperature,
            })),
            cached: vec![("answer", answer), ("judge", judge), ("graph", graph)],
            budget,
        }
    }

    /// `llm calls: ...` with cache hits and calls sent per role; `None` offline.
    pub(crate) fn cache_line(&self) -> Option<String> {
        if self.cached.is_empty() {
            return None;
        }
        let parts: Vec<String> = self
            .cached
            .iter()
            .map(|(role, c)| format!("{role} {} cached, {} sent", c.hits(), c.misses()))
            .collect();
        Some(format!("llm calls: {}", parts.join("; ")))
    }

    /// `llm retries: ...` per role (HTTP attempts repeated after a failure), counted once here
    /// rather than only as WARN lines mid-run; `None` offline.
    pub(crate) fn retry_line(&self) -> Option<String> {
        if self.cached.is_empty() {
            return None;
        }
        let parts: Vec<String> = self
            .cached
            .iter()
            .map(|(role, c)| {
                let n = c
                    .inner()
                    .inner()
                    .stats
                    .retries
                    .load(std::sync::atomic::Ordering::Relaxed);
                format!("{role} {n}")
            })
            .collect();
        Some(format!("llm retries: {}", parts.join(", ")))
    }
}

/// Cache namespace of the graph role's calls (the prompts themselves are in every key).
pub(crate) const GRAPH_PROMPT_VERSION: &str = "graph-v1";

/// Query entities from the LLM extractor, billing its tokens to retrieval.
pub(crate) struct LlmEntities(Arc<LlmExtractor>);

#[async_trait::async_trait]
impl QueryEntities for LlmEntities {
    fn name(&self) -> &str {
        "llm"
    }

    async fn extract(&self, question: &str) -> bench_core::Result<ExtractedEntities> {
        let (entities, tokens_in, tokens_out) = self.0.query_entities_or_reply(question).await?;
        let (entities, unreadable) = match entities {
            Ok(e) => (e, None),
            Err(why) => {
                tracing::warn!(%why, "the question's entity list is unreadable: retrieving from the question itself");
                (Vec::new(), Some(why))
            }
        };
        Ok(ExtractedEntities {
            entities,
            tokens_in,
            tokens_out,
            unreadable,
        })
    }
}

/// The router LLM of `route eval` when a model is named (`None` without one), its settings
/// checked before anything runs.
pub(crate) fn router_llm(model: Option<&str>, base_url: Option<&str>) -> Result<Option<OpenAiLlm>> {
    let flags = llm::LlmFlags {
        base_url: base_url.map(str::to_owned),
        model: model.map(str::to_owned),
    };
    if flags.model.is_none() {
        if flags.base_url.is_some() {
            return Err(bench_core::BenchError::Invalid(
                "--llm-base-url needs --llm-model (the router LLM's model)".into(),
            )
            .into());
        }
        return Ok(None);
    }
    let invalid =
        |e: &dyn std::fmt::Display| bench_core::BenchError::Invalid(format!("router LLM: {e}"));
    let settings =
        llm::resolve(None, &flags, &|k| std::env::var(k).ok()).map_err(|e| invalid(&e))?;
    settings
        .map(|s| OpenAiLlm::new(s.answer).map_err(|e| invalid(&e).into()))
        .transpose()
}

/// The vector cache as the routers' source of question vectors.
pub(crate) struct CachedQuestions(pub(crate) VectorCache);

impl routers::dataset::QuestionVectors for CachedQuestions {
    fn get_or_embed(
        &self,
        key: &str,
        texts: &[&str],
        embedder: &dyn Embedder,
    ) -> bench_core::Result<bench_core::Embeddings> {
        Ok(self.0.get_or_embed(key, texts, embedder, &|_, _| {})?)
    }
}
