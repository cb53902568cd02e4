//! `ragrouter bench`: load a corpus, embed it, run the chosen paradigms over its questions,
//! judge every answer and store one tuple per (query, paradigm); resume what a run left undone.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context as _, Result};
use bench_core::{
    BenchConfig, Embedder, Judge, Mode, Paradigm, ParadigmId, QualityMetrics, Query, Reader,
    ResultRecord, Retriever, RunSpec, Store,
};
use corpora::embed::{MiniLm, VectorCache};
use corpora::graph::{
    build_graph, embed_entities, BuildOptions, KnowledgeGraph, LlmExtractor, OfflineExtractor,
    TripletExtractor,
};
use corpora::index::FlatIndex;
use corpora::load::{load_corpus, LoadOptions};
use indicatif::{ProgressBar, ProgressStyle};
use llm::{CachedLlm, LlmSettings, OpenAiLlm};
use metrics::answer::{answer_quality, evidence_recall, OfflineJudge};
use metrics::judge::LlmJudge;
use metrics::query::complexity_score;
use paradigms::{
    ChunkTable, DenseRetriever, Evaluator, ExtractedEntities, FnEntities, FusedRetriever,
    FusionMethod, GraphParams, GraphRetriever, Iterative, LlmEvaluator, LlmOnly, LlmReader,
    OfflineEvaluator, OfflineReader, PprEngine, QueryEntities, RetrieveThenRead, Weighting,
};
use tokio::task::JoinSet;

use crate::cli::BenchArgs;
use crate::table;

/// Paradigms this build can run.
pub const AVAILABLE: [ParadigmId; 7] = ParadigmId::ALL;

/// Bad input detected by the command itself (exit code 2).
#[derive(Debug)]
pub struct BadInput(pub String);

impl std::fmt::Display for BadInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadInput {}

/// Everything a query task needs, shared by all tasks.
struct Shared {
    store: Store,
    run_id: i64,
    judge: Arc<dyn Judge>,
    mode: String,
    config_hash: String,
    /// `RAGROUTER_FAULT_DELAY_MS`: a pause before each write, for crash-and-resume tests.
    fault_delay: Option<std::time::Duration>,
    /// Time spent writing tuples, for the stage breakdown.
    store_micros: AtomicU64,
    /// The local encoder: semantic F1 (token embeddings) and soft coverage (sentence vectors).
    encoder: Arc<MiniLm>,
}

pub fn run(args: BenchArgs) -> Result<()> {
    let config = resolve_config(&args)?;
    let paradigm_ids = parse_paradigms(&args.paradigms)?;
    let llm_settings = resolve_llm(&args, &config)?;
    // The HTTP clients are made (and their keys looked up) before the store is opened; the
    // response cache that wraps them needs the store and is added inside the runtime.
    let llm_clients = llm_settings.as_ref().map(LlmClients::new).transpose()?;

    // Everything that can fail on bad input happens before the database is touched.
    let t_load = Instant::now();
    let corpus = load_corpus(
        &args.corpus,
        &LoadOptions {
            data_dir: args.data.data_dir.clone(),
            chunking: config.chunking.clone(),
            data: config.data.clone(),
        },
    )
    .with_context(|| format!("loading corpus {}", args.corpus))?;
    let mut queries = corpus.queries.clone();
    if let Some(limit) = args.limit {
        queries.truncate(limit);
    }
    eprintln!(
        "corpus {}: {} documents, {} chunks, {} tokens, {} questions ({} with gold chunks), loaded in {:.1}s",
        corpus.name,
        corpus.documents.len(),
        corpus.chunks.len(),
        corpus.chunk_tokens(),
        corpus.queries.len(),
        corpus.queries_with_gold_chunks(),
        t_load.elapsed().as_secs_f64()
    );

    if args.dry_run {
        print!(
            "{}",
            dry_run_estimate(
                &corpus,
                &queries,
                &paradigm_ids,
                &config,
                llm_settings.is_some()
            )
        );
        return Ok(());
    }

    let t_embed = Instant::now();
    let encoder = Arc::new(
        MiniLm::from_dir(args.model_dir.as_deref()).context("loading the sentence encoder")?,
    );
    let embedder: Arc<dyn Embedder> = encoder.clone();
    let cache = VectorCache::new(&args.cache_dir);
    let chunk_vectors = embed_with_progress(
        &cache,
        &format!("{}:chunks", corpus.name),
        &corpus
            .chunks
            .iter()
            .map(|c| c.text.as_str())
            .collect::<Vec<_>>(),
        embedder.as_ref(),
        "embedding chunks",
    )?;
    let query_vectors = embed_with_progress(
        &cache,
        &format!("{}:queries", corpus.name),
        &queries.iter().map(|q| q.text.as_str()).collect::<Vec<_>>(),
        embedder.as_ref(),
        "embedding questions",
    )?;
    let embed_secs = t_embed.elapsed().as_secs_f64();
    let index = Arc::new(FlatIndex::new(chunk_vectors).context("building the dense index")?);

    let mode = match &llm_settings {
        None => Mode::Offline,
        Some(s) => Mode::Llm {
            base_url: s.answer.base_url.clone(),
            model: s.answer.model.clone(),
        },
    };
    match &llm_settings {
        None => eprintln!("mode: {} (no LLM endpoint configured)", mode.label()),
        Some(s) => eprintln!(
            "mode: {} (judge {}, graph {}); settings: {}",
            mode.label(),
            s.judge.identity(),
            s.graph.identity(),
            s.record_json()
        ),
    }
    let chunks = Arc::new(ChunkTable::new(corpus.chunks.clone()));
    let offline_reader = Arc::new(OfflineReader::new(
        &corpus.chunks,
        config.offline_reader.clone(),
    ));
    let needs_graph = paradigm_ids.iter().any(|p| uses_graph(*p));
    let extractor = Arc::new(OfflineExtractor::new());

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        let store = Store::open(&args.db).await?;
        store.upsert_corpus(&corpus).await?;
        let engines = match llm_clients {
            None => Engines::offline(&config, offline_reader.clone(), extractor.clone()),
            Some(clients) => Engines::llm(&config, clients, &store),
        };
        let reader = engines.reader.clone();
        let judge = engines.judge.clone();

        let t_graph = Instant::now();
        let graph = if needs_graph {
            Some(
                build_graph_with_progress(
                    &corpus,
                    engines.graph_extractor.clone(),
                    &store,
                    embedder.as_ref(),
                    &cache,
                )
                .await?,
            )
        } else {
            None
        };
        let graph_secs = t_graph.elapsed().as_secs_f64();

        let parts = Parts {
            config: &config,
            chunks: chunks.clone(),
            index: index.clone(),
            embedder: embedder.clone(),
            reader: reader.clone(),
            offline_reader: offline_reader.clone(),
            graph,
            extractor: extractor.clone(),
            entities: engines.entities.clone(),
            llm_evaluator: engines.evaluator.clone(),
        };
        let paradigms = paradigm_ids
            .iter()
            .map(|&id| parts.build(id))
            .collect::<Result<Vec<_>>>()?;

        let spec = RunSpec {
            corpus: &corpus,
            config: &config,
            mode: mode.label(),
            reader: reader.identity(),
            judge: judge.identity(),
            embedder: embedder.name().to_owned(),
            extractor: if needs_graph {
                let id = engines.graph_extractor.identity();
                format!("{}:{}:{}", id.extractor, id.model, id.prompt_hash)
            } else {
                String::new()
            },
            crate_version: env!("CARGO_PKG_VERSION").to_owned(),
        };
        let run = store.start_run(&spec, args.fresh).await?;
        if let Some(settings) = &llm_settings {
            record_llm_settings(&store, run.id, settings).await?;
        }
        let done = store.finished_pairs(run.id).await?;
        let shared = Arc::new(Shared {
            store: store.clone(),
            run_id: run.id,
            judge,
            mode: mode.label(),
            config_hash: spec.config_hash(),
            fault_delay: std::env::var("RAGROUTER_FAULT_DELAY_MS")
                .ok()
                .and_then(|v| v.parse().ok())
                .map(std::time::Duration::from_millis),
            store_micros: AtomicU64::new(0),
            encoder: encoder.clone(),
        });
        let t_answer = Instant::now();
        let budget = Budget {
            max_tokens: args.max_tokens,
            spent_before: store.run_tokens(run.id).await?,
        };
        let stop = execute(
            &shared,
            &paradigms,
            &queries,
            &query_vectors,
            &done,
            config.concurrency,
            budget,
        )
        .await?;
        if let Stop::Budget { spent } = stop {
            println!(
                "stopped at the token budget: {spent} LLM tokens spent by run {} (--max-tokens {}); \
                 finished tuples are stored in {}; run again with a larger budget to continue",
                run.id,
                args.max_tokens.unwrap_or_default(),
                args.db.display()
            );
            return Ok(());
        }
        if stop == Stop::Interrupted {
            anyhow::bail!(
                "interrupted: finished tuples are stored in {}; run the same command again to resume run {}",
                args.db.display(),
                run.id
            );
        }
        let answer_secs = t_answer.elapsed().as_secs_f64();
        store.finish_run(run.id).await?;
        let rows = store.summary(run.id).await?;
        println!(
            "\nrun {} ({}) on {}: {} tuples in {}",
            run.id,
            if run.resumed { "resumed" } else { "new" },
            corpus.name,
            store.count_results(run.id).await?,
            args.db.display()
        );
        println!("mode: {}\n", mode.label());
        if let Some(line) = engines.cache_line() {
            eprintln!("{line}");
        }
        print!("{}", table::render(&rows));
        if let Some((configuration, metrics)) =
            store.corpus_metrics(&corpus.name, &corpus.content_hash).await?
        {
            println!("\ncorpus indicators ({configuration}):");
            print!("{}", crate::commands::metrics::render_indicators(&metrics));
        }
        let stage = store.stage_totals(run.id).await?;
        eprintln!(
            "\nwall time by stage: embedding {embed_secs:.1}s, graph {graph_secs:.1}s, answering {answer_secs:.1}s \
             (summed over tuples: retrieval {:.1}s, reading {:.1}s, judging {:.1}s, storing {:.1}s)",
            stage.0 / 1e3,
            stage.1 / 1e3,
            stage.2 / 1e3,
            shared.store_micros.load(Ordering::Relaxed) as f64 / 1e6,
        );
        Ok(())
    })
}

fn uses_graph(p: ParadigmId) -> bool {
    matches!(
        p,
        ParadigmId::Graph | ParadigmId::Hybrid | ParadigmId::IterativeGraph | ParadigmId::Fusion
    )
}

/// The engines a run's paradigms are assembled from.
struct Parts<'a> {
    config: &'a BenchConfig,
    chunks: Arc<ChunkTable>,
    index: Arc<FlatIndex>,
    embedder: Arc<dyn Embedder>,
    reader: Arc<dyn Reader>,
    offline_reader: Arc<OfflineReader>,
    graph: Option<(Arc<KnowledgeGraph>, Arc<FlatIndex>)>,
    extractor: Arc<OfflineExtractor>,
    /// Entities of a question for graph retrieval (offline rules or the LLM).
    entities: Arc<dyn QueryEntities>,
    /// The LLM self-evaluator of IterativeRAG; `None` offline.
    llm_evaluator: Option<Arc<dyn Evaluator>>,
}

impl Parts<'_> {
    fn dense(&self) -> Arc<dyn Retriever> {
        Arc::new(DenseRetriever {
            index: self.index.clone(),
            chunks: self.chunks.clone(),
            embedder: self.embedder.clone(),
            top_k: self.config.retrieval.top_k,
            min_similarity: self.config.retrieval.min_similarity,
        })
    }

    fn graph(&self) -> Result<Arc<dyn Retriever>> {
        let (graph, entity_index) = self
            .graph
            .clone()
            .context("the knowledge graph was not built")?;
        let g = &self.config.graph;
        Ok(Arc::new(GraphRetriever::new(
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
                engine: match g.ppr_engine.as_str() {
                    "push" => PprEngine::push(),
                    _ => PprEngine::exact(),
                },
            },
        )?))
    }

    fn retrieve_then_read(
        &self,
        id: ParadigmId,
        retriever: Arc<dyn Retriever>,
    ) -> Arc<dyn Paradigm> {
        Arc::new(RetrieveThenRead {
            id,
            retriever,
            reader: self.reader.clone(),
            chunks: self.chunks.clone(),
            budget: self.config.retrieval.context_budget,
        })
    }

    fn iterative(&self, id: ParadigmId, retriever: Arc<dyn Retriever>) -> Arc<dyn Paradigm> {
        let extractor = self.extractor.clone();
        let evaluator: Arc<dyn Evaluator> = match &self.llm_evaluator {
            Some(e) => e.clone(),
            None => Arc::new(OfflineEvaluator {
                reader: self.offline_reader.clone(),
                entities: Arc::new(move |t: &str| extractor.entities(t)),
                min_coverage: self.config.iterative.offline_sufficient_coverage,
            }),
        };
        Arc::new(Iterative {
            id,
            retriever,
            reader: self.reader.clone(),
            evaluator,
            chunks: self.chunks.clone(),
            budget: self.config.retrieval.context_budget,
            max_rounds: self.config.iterative.max_rounds,
        })
    }

    fn build(&self, id: ParadigmId) -> Result<Arc<dyn Paradigm>> {
        Ok(match id {
            ParadigmId::LlmOnly => Arc::new(LlmOnly {
                reader: self.reader.clone(),
            }),
            ParadigmId::Naive => self.retrieve_then_read(id, self.dense()),
            ParadigmId::Graph => self.retrieve_then_read(id, self.graph()?),
            ParadigmId::Hybrid => {
                let method = match self.config.hybrid.fusion.as_str() {
                    "interleave" => FusionMethod::Interleave,
                    _ => FusionMethod::Rrf,
                };
                let fused = FusedRetriever::new(
                    self.dense(),
                    self.graph()?,
                    Weighting::Equal(method),
                    complexity_score,
                );
                self.retrieve_then_read(id, Arc::new(fused))
            }
            ParadigmId::Fusion => {
                let fused = FusedRetriever::new(
                    self.dense(),
                    self.graph()?,
                    Weighting::Complexity,
                    complexity_score,
                );
                self.retrieve_then_read(id, Arc::new(fused))
            }
            ParadigmId::Iterative => self.iterative(id, self.dense()),
            ParadigmId::IterativeGraph => self.iterative(id, self.graph()?),
        })
    }
}

/// Builds the knowledge graph (extracting only chunks not in the store) and embeds its
/// entities (through the vector cache), with progress bars.
async fn build_graph_with_progress(
    corpus: &bench_core::Corpus,
    extractor: Arc<dyn TripletExtractor>,
    store: &Store,
    embedder: &dyn Embedder,
    cache: &VectorCache,
) -> Result<(Arc<KnowledgeGraph>, Arc<FlatIndex>)> {
    let bar = ProgressBar::new(corpus.chunks.len() as u64).with_message("extracting triplets");
    bar.set_style(progress_style("chunks"));
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
    let ebar = ProgressBar::new(build.graph.nodes.len() as u64).with_message("embedding entities");
    ebar.set_style(progress_style("entities"));
    let vectors = embed_entities(&corpus.name, &build.graph, embedder, cache, &|d, _| {
        ebar.set_position(d as u64)
    })
    .context("embedding graph entities")?;
    ebar.finish_and_clear();
    let index = FlatIndex::new(vectors).context("building the entity index")?;
    Ok((Arc::new(build.graph), Arc::new(index)))
}

fn progress_style(unit: &str) -> ProgressStyle {
    ProgressStyle::with_template(&format!(
        "{{msg:>20}} {{bar:40}} {{pos}}/{{len}} {unit} [{{elapsed_precise}}, eta {{eta}}]"
    ))
    .expect("valid template")
}

fn resolve_config(args: &BenchArgs) -> Result<BenchConfig> {
    let mut config = match &args.config {
        Some(p) => BenchConfig::from_toml_file(p)?,
        None => BenchConfig::default(),
    };
    if let Some(seed) = args.seed {
        config.seed = seed;
    }
    if let Some(c) = args.concurrency {
        config.concurrency = c;
    }
    config
        .validate()
        .map_err(|e| BadInput(format!("configuration: {e}")))?;
    Ok(config)
}

/// The LLM settings of the run from the configuration's `[llm.*]` tables, the flags and the
/// environment; `None` runs offline.
fn resolve_llm(args: &BenchArgs, config: &BenchConfig) -> Result<Option<LlmSettings>> {
    let file = config
        .llm
        .clone()
        .map(serde_json::from_value::<llm::LlmFileConfig>)
        .transpose()
        .map_err(|e| BadInput(format!("configuration [llm]: {e}")))?;
    let flags = llm::LlmFlags {
        base_url: args.llm_base_url.clone(),
        model: args.llm_model.clone(),
    };
    llm::resolve(file.as_ref(), &flags, &|k| std::env::var(k).ok())
        .map_err(|e| BadInput(e.to_string()).into())
}

/// Adds the run's LLM settings (every role; names of key variables, never keys) to the run's
/// stored configuration as its `llm` field.
async fn record_llm_settings(store: &Store, run_id: i64, settings: &LlmSettings) -> Result<()> {
    sqlx::query(
        "UPDATE runs SET config_json = json_set(config_json, '$.llm', json(?)) WHERE id = ?",
    )
    .bind(settings.record_json().to_string())
    .bind(run_id)
    .execute(store.pool())
    .await
    .context("recording the LLM settings with the run")?;
    Ok(())
}

/// One HTTP client per role, made before the store is opened.
struct LlmClients {
    answer: OpenAiLlm,
    judge: OpenAiLlm,
    graph: OpenAiLlm,
}

impl LlmClients {
    fn new(settings: &LlmSettings) -> Result<Self> {
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
struct Engines {
    reader: Arc<dyn Reader>,
    judge: Arc<dyn Judge>,
    graph_extractor: Arc<dyn TripletExtractor>,
    entities: Arc<dyn QueryEntities>,
    evaluator: Option<Arc<dyn Evaluator>>,
    /// The cached clients (answer, judge, graph), for the end-of-run call counts.
    cached: Vec<(&'static str, Arc<CachedLlm<OpenAiLlm>>)>,
}

impl Engines {
    fn offline(
        config: &BenchConfig,
        offline_reader: Arc<OfflineReader>,
        extractor: Arc<OfflineExtractor>,
    ) -> Self {
        let e = extractor.clone();
        Engines {
            reader: offline_reader,
            judge: Arc::new(OfflineJudge {
                correct_recall: config.judge.correct_recall,
            }),
            graph_extractor: extractor,
            entities: Arc::new(FnEntities::new("offline-rules", move |q: &str| {
                e.entities(q)
            })),
            evaluator: None,
            cached: Vec::new(),
        }
    }

    fn llm(config: &BenchConfig, clients: LlmClients, store: &Store) -> Self {
        let answer = Arc::new(CachedLlm::new(
            clients.answer,
            store.clone(),
            paradigms::reader::PROMPT_VERSION,
        ));
        let judge = Arc::new(CachedLlm::new(
            clients.judge,
            store.clone(),
            metrics::judge::JUDGE_PROMPT_VERSION,
        ));
        let graph = Arc::new(CachedLlm::new(
            clients.graph,
            store.clone(),
            GRAPH_PROMPT_VERSION,
        ));
        let extractor = Arc::new(LlmExtractor::new(graph.clone()));
        Engines {
            reader: Arc::new(LlmReader::new(answer.clone(), &config.generation)),
            judge: Arc::new(LlmJudge::new(judge.clone())),
            graph_extractor: extractor.clone(),
            entities: Arc::new(LlmEntities(extractor)),
            evaluator: Some(Arc::new(LlmEvaluator {
                llm: answer.clone(),
                temperature: config.iterative.evaluator_temperature,
            })),
            cached: vec![("answer", answer), ("judge", judge), ("graph", graph)],
        }
    }

    /// `llm calls: ...` with cache hits and calls sent per role; `None` offline.
    fn cache_line(&self) -> Option<String> {
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
}

/// Cache namespace of the graph role's calls (the prompts themselves are in every key).
const GRAPH_PROMPT_VERSION: &str = "graph-v1";

/// Query entities from the LLM extractor, billing its tokens to retrieval.
struct LlmEntities(Arc<LlmExtractor>);

#[async_trait::async_trait]
impl QueryEntities for LlmEntities {
    fn name(&self) -> &str {
        "llm"
    }

    async fn extract(&self, question: &str) -> bench_core::Result<ExtractedEntities> {
        let (entities, tokens_in, tokens_out) = self.0.query_entities(question).await?;
        Ok(ExtractedEntities {
            entities,
            tokens_in,
            tokens_out,
        })
    }
}

fn parse_paradigms(names: &[String]) -> Result<Vec<ParadigmId>> {
    let mut out = Vec::new();
    for n in names {
        let id: ParadigmId = n.parse()?;
        if !AVAILABLE.contains(&id) {
            let avail: Vec<_> = AVAILABLE.iter().map(|p| p.as_str()).collect();
            return Err(BadInput(format!(
                "paradigm {id} is not available in this build yet; available: {}",
                avail.join(", ")
            ))
            .into());
        }
        if !out.contains(&id) {
            out.push(id);
        }
    }
    if out.is_empty() {
        return Err(BadInput("no paradigm given".into()).into());
    }
    Ok(out)
}

fn embed_with_progress(
    cache: &VectorCache,
    key: &str,
    texts: &[&str],
    embedder: &dyn Embedder,
    what: &str,
) -> Result<bench_core::Embeddings> {
    let bar = ProgressBar::new(texts.len() as u64).with_message(what.to_owned());
    bar.set_style(
        ProgressStyle::with_template(
            "{msg:>20} {bar:40} {pos}/{len} [{elapsed_precise}, eta {eta}]",
        )
        .expect("valid template"),
    );
    let t = Instant::now();
    let out = cache
        .get_or_embed(key, texts, embedder, &|done, _| {
            bar.set_position(done as u64)
        })
        .with_context(|| format!("{what} ({} texts)", texts.len()))?;
    bar.finish_and_clear();
    tracing::info!(
        what,
        rows = out.len(),
        secs = t.elapsed().as_secs_f64(),
        "vectors ready"
    );
    Ok(out)
}

/// Runs every pending (query, paradigm) pair, at most `concurrency` at once, writing each
/// tuple as it finishes. Returns whether Ctrl-C stopped it early.
async fn execute(
    shared: &Arc<Shared>,
    paradigms: &[Arc<dyn Paradigm>],
    queries: &[Query],
    vectors: &bench_core::Embeddings,
    done: &HashSet<(String, ParadigmId)>,
    concurrency: usize,
    budget: Budget,
) -> Result<Stop> {
    let mut pending = Vec::new();
    for (i, q) in queries.iter().enumerate() {
        for p in paradigms {
            if !done.contains(&(q.id.clone(), p.id())) {
                pending.push((i, p.clone()));
            }
        }
    }
    let total = queries.len() * paradigms.len();
    let bar = ProgressBar::new(total as u64).with_position((total - pending.len()) as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{msg:>20} {bar:40} {pos}/{len} tuples [{elapsed_precise}, eta {eta}]",
        )
        .expect("valid template"),
    );
    bar.set_message("answering");
    if pending.len() < total {
        eprintln!(
            "resuming: {} of {} tuples already stored",
            total - pending.len(),
            total
        );
    }

    let queries: Arc<Vec<Query>> = Arc::new(queries.to_vec());
    let vectors = Arc::new(vectors.clone());
    let mut tasks = JoinSet::new();
    let mut next = pending.into_iter();
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    let mut interrupted = false;
    let mut budget_hit = false;
    let (mut spent, mut finished) = (budget.spent_before, 0u64);
    loop {
        while !interrupted && !budget_hit && tasks.len() < concurrency {
            if let Some(max) = budget.max_tokens {
                // The next tuple is expected to cost what finished ones did on average; the
                // tuples in flight are counted at that rate too.
                let per_tuple = (spent - budget.spent_before)
                    .checked_div(finished)
                    .unwrap_or(0);
                if spent + per_tuple * (tasks.len() as u64 + 1) > max {
                    budget_hit = true;
                    break;
                }
            }
            let Some((qi, paradigm)) = next.next() else {
                break;
            };
            let (shared, queries, vectors) = (shared.clone(), queries.clone(), vectors.clone());
            tasks.spawn(async move {
                let record =
                    answer_one(&shared, paradigm.as_ref(), &queries[qi], vectors.row(qi)).await;
                if let Some(delay) = shared.fault_delay {
                    // Fault-injection knob: widens the window in which a kill lands mid-run.
                    tokio::time::sleep(delay).await;
                }
                let t = Instant::now();
                let written = shared.store.write_result(shared.run_id, &record).await;
                shared
                    .store_micros
                    .fetch_add(t.elapsed().as_micros() as u64, Ordering::Relaxed);
                written.map(|()| {
                    record.output.tokens.total() + record.judge_tokens_in + record.judge_tokens_out
                })
            });
        }
        tokio::select! {
            joined = tasks.join_next() => match joined {
                None => break,
                Some(res) => {
                    spent += res.context("a query task panicked")??;
                    finished += 1;
                    bar.inc(1);
                }
            },
            _ = &mut ctrl_c, if !interrupted => {
                interrupted = true;
                bar.println("interrupt: finishing the tuples in flight, then stopping");
            }
        }
    }
    bar.finish_and_clear();
    Ok(if interrupted {
        Stop::Interrupted
    } else if budget_hit {
        Stop::Budget { spent }
    } else {
        Stop::Done
    })
}

/// The token budget of `--max-tokens`.
#[derive(Debug, Clone, Copy)]
struct Budget {
    max_tokens: Option<u64>,
    /// LLM tokens of the run's tuples stored before this invocation.
    spent_before: u64,
}

/// How `execute` ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Done,
    Interrupted,
    Budget { spent: u64 },
}

/// Runs, judges and scores one (query, paradigm) pair; a failure becomes a recorded error.
async fn answer_one(
    shared: &Shared,
    paradigm: &dyn Paradigm,
    query: &Query,
    vector: &[f32],
) -> ResultRecord {
    let (output, error) = match paradigm.run(query, vector).await {
        Ok(o) => (o, None),
        Err(e) => (Default::default(), Some(e.to_string())),
    };
    let mut output = output;
    let mut judge = None;
    let mut quality = QualityMetrics::default();
    let mut judge_tokens = (0, 0);
    let mut error = error;
    if error.is_none() {
        quality = answer_quality(&output.answer, &query.gold);
        quality.evidence_recall = evidence_recall(
            &query.gold_chunks,
            output.context.iter().map(|c| c.chunk_id.as_str()),
        );
        let t = Instant::now();
        match generation_quality(&shared.encoder, &output.answer, &query.gold.answer) {
            Ok((semantic_f1, coverage)) => {
                quality.semantic_f1 = Some(semantic_f1);
                quality.coverage = Some(coverage);
            }
            Err(e) => error = Some(format!("semantic metrics: {e}")),
        }
        match shared.judge.judge(query, &output.answer).await {
            Ok(v) => {
                judge = Some(v.label);
                judge_tokens = (v.tokens_in, v.tokens_out);
            }
            Err(e) => error = Some(format!("judge: {e}")),
        }
        output.latency.judge_ms = t.elapsed().as_secs_f64() * 1e3;
    }
    ResultRecord {
        query_id: query.id.clone(),
        paradigm: paradigm.id(),
        output,
        judge,
        quality,
        judge_tokens_in: judge_tokens.0,
        judge_tokens_out: judge_tokens.1,
        mode: shared.mode.clone(),
        config_hash: shared.config_hash.clone(),
        error,
    }
}

/// Semantic F1 (eq. 10-12, token embeddings of the local encoder) and soft coverage (eq. 13,
/// its sentence vectors) of a response against the gold answer; both 0 for an empty response.
fn generation_quality(encoder: &MiniLm, response: &str, gold: &str) -> Result<(f64, f64)> {
    use metrics::generation::{semantic_f1, soft_coverage, split_sentences};
    if response.trim().is_empty() || gold.trim().is_empty() {
        return Ok((0.0, 0.0));
    }
    let tokens = encoder.token_embeddings_many(&[response, gold])?;
    let f1 = semantic_f1(&tokens[0].vectors, &tokens[1].vectors).f1;
    let (pred, gt) = (split_sentences(response), split_sentences(gold));
    let mut texts: Vec<&str> = gt.clone();
    texts.extend(&pred);
    let v = encoder.embed(&texts)?;
    let dim = v.dim;
    let gt_rows = bench_core::Embeddings::new(dim, v.data[..gt.len() * dim].to_vec());
    let pred_rows = bench_core::Embeddings::new(dim, v.data[gt.len() * dim..].to_vec());
    Ok((f1, soft_coverage(&gt_rows, &pred_rows)))
}

/// Prompt tokens beyond the question and context (system prompt, instructions, numbering).
const PROMPT_OVERHEAD: u64 = 120;
/// Bound on the output of an entity-list or self-evaluation call.
const SHORT_REPLY: u64 = 128;

/// `--dry-run`: LLM calls and an upper-bound token bill from corpus and question sizes, without
/// calling anything (cached responses and extractions are not subtracted).
fn dry_run_estimate(
    corpus: &bench_core::Corpus,
    queries: &[Query],
    paradigms: &[ParadigmId],
    config: &BenchConfig,
    llm: bool,
) -> String {
    let n = queries.len() as u64;
    let q_tokens: u64 = queries
        .iter()
        .map(|q| bench_core::tokens::count(&q.text))
        .sum();
    let gold_tokens: u64 = queries
        .iter()
        .map(|q| bench_core::tokens::count(&q.gold.answer))
        .sum();
    let ctx = config.retrieval.context_budget.min(corpus.chunk_tokens());
    let max_out = u64::from(config.generation.max_tokens);
    let rounds = config.iterative.max_rounds as u64;
    let mut out = format!(
        "dry run: {} on {} questions ({} mode); bounds assume full {}-token contexts and {}-token answers\n",
        corpus.name,
        n,
        if llm { "LLM" } else { "offline" },
        ctx,
        max_out
    );
    out.push_str(&format!(
        "{:<16} {:>12} {:>16} {:>16}\n",
        "paradigm", "calls", "input tokens", "output tokens"
    ));
    // Per question, judge included: (min calls, max calls, input bound, output bound).
    let q = q_tokens.div_ceil(n.max(1));
    let g = gold_tokens.div_ceil(n.max(1));
    let (p_, c, m, sh, r) = (PROMPT_OVERHEAD, ctx, max_out, SHORT_REPLY, rounds);
    let direct = p_ + q;
    let with_ctx = p_ + q + c;
    let judge_in = p_ + q + g + m;
    let (mut calls_max, mut tin, mut tout) = (0u64, 0u64, 0u64);
    for &p in paradigms {
        let (cmin, cmax, i, o) = match p {
            ParadigmId::LlmOnly => (1, 1, direct, m),
            ParadigmId::Naive => (1, 1, with_ctx, m),
            ParadigmId::Graph | ParadigmId::Hybrid | ParadigmId::Fusion => {
                (2, 2, direct + with_ctx, sh + m)
            }
            // Round 0 answers directly and self-evaluates; each later round reads the context
            // and self-evaluates over it (and extracts entities for the graph variant).
            ParadigmId::Iterative => (
                2,
                2 + 2 * r,
                direct + (direct + m) + r * (with_ctx + with_ctx + m),
                m + sh + r * (m + sh),
            ),
            ParadigmId::IterativeGraph => (
                2,
                2 + 3 * r,
                direct + (direct + m) + r * (direct + with_ctx + with_ctx + m),
                m + sh + r * (sh + m + sh),
            ),
        };
        let (cmin, cmax, i, o) = (
            (cmin + 1) * n,
            (cmax + 1) * n,
            (i + judge_in) * n,
            (o + 8) * n,
        );
        calls_max += cmax;
        tin += i;
        tout += o;
        let calls = if cmin == cmax {
            cmax.to_string()
        } else {
            format!("{cmin}-{cmax}")
        };
        out.push_str(&format!("{:<16} {calls:>12} {i:>16} {o:>16}\n", p.as_str()));
    }
    if paradigms.iter().any(|p| uses_graph(*p)) {
        let chunks = corpus.chunks.len() as u64;
        let i = chunks * PROMPT_OVERHEAD + corpus.chunk_tokens();
        let o = chunks * 512;
        calls_max += chunks;
        tin += i;
        tout += o;
        out.push_str(&format!(
            "{:<16} {:>12} {:>16} {:>16}\n",
            "graph build", chunks, i, o
        ));
    }
    out.push_str(&format!(
        "total: at most {calls_max} calls, {tin} input and {tout} output tokens{}\n",
        if llm {
            ""
        } else {
            " (offline: no call is made; these are what an LLM run would cost)"
        }
    ));
    out
}
