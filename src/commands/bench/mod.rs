//! `ragrouter bench`: load a corpus, embed it, run the chosen paradigms over its questions,
//! judge every answer and store one tuple per (query, paradigm); resume what a run left undone.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context as _, Result};
use bench_core::{BenchConfig, Embedder, Mode, ParadigmId, Query};
use corpora::embed::{MiniLm, VectorCache};
use corpora::graph::KnowledgeGraph;
use corpora::load::load_corpus;
use llm::LlmSettings;
use paradigms::ChunkTable;
use store::{RunSpec, Store};

mod assemble;
mod dry_run;
mod execute;
pub(crate) mod finish;
mod probe;
mod retrieval;
mod step;

use crate::engines::*;
use dry_run::*;
use execute::*;
use metrics::{FaithfulnessCache, TupleEvaluator};
use step::{Embedded, Shared, StageClock, Step};

use crate::checks::BadInput;
use crate::cli::BenchArgs;
use crate::table;

pub fn run(args: BenchArgs) -> Result<()> {
    let config = resolve_config(&args)?;
    let paradigm_ids = parse_paradigms(&args.paradigms)?;
    let probes = probe::parse(args.probes.as_deref())?;
    // A --db that is a directory or another application's file is refused before any work,
    // and so are folder arguments that are files.
    crate::checks::check_db(&args.store.db)?;
    crate::checks::check_folder("--cache-dir", &args.cache_dir)?;
    args.encoder.check()?;
    let llm_settings = resolve_llm(&args.llm, &config)?;
    if args.retrieval_only && llm_settings.is_some() {
        // Its readers are the offline ones: an LLM would only add billable calls to the timing.
        return Err(BadInput(
            "--retrieval-only times the paradigms offline (retrieval and the offline reader, \
             no LLM call), but an LLM is configured (--llm-model, or a model in the \
             configuration's [llm] tables): drop one of them"
                .into(),
        )
        .into());
    }
    probes.note_unrunnable(llm_settings.is_some());
    // The HTTP clients are made (and their keys looked up) before the store is opened; the
    // response cache that wraps them needs the store and is added inside the runtime.
    let llm_clients = llm_settings.as_ref().map(LlmClients::new).transpose()?;
    // Everything that can fail on bad input happens before the database is touched. The local
    // encoder also matches evidence statements by meaning (a dry run maps evidence verbatim only:
    // its estimate does not read gold chunks).
    let encoder = if args.dry_run {
        None
    } else {
        Some(Arc::new(
            MiniLm::from_dir(args.encoder.model_dir.as_deref())
                .context("loading the sentence encoder")?,
        ))
    };
    let (corpus, queries) = load_questions(&args, &config, encoder.clone())?;
    let Some(encoder) = encoder else {
        let llm = llm_settings.is_some();
        print!(
            "{}",
            dry_run_estimate(&corpus, &queries, &paradigm_ids, &config, llm)?
        );
        return Ok(());
    };
    let embedded = embed(
        &args,
        &config,
        llm_settings.as_ref(),
        encoder,
        &corpus,
        &queries,
    )?;
    let mode = announce_mode(llm_settings.as_ref(), embedded.endpoint_embedder.is_some());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let step = Step {
        args: &args,
        config: &config,
        corpus: &corpus,
        queries: &queries,
        paradigm_ids: &paradigm_ids,
        llm_settings: llm_settings.as_ref(),
        mode: &mode,
        embedded: &embedded,
    };
    runtime.block_on(step.answer(llm_clients))
}

/// Loads the corpus and picks the questions of this invocation (`--limit`, `--sample`, `--shard`).
fn load_questions(
    args: &BenchArgs,
    config: &BenchConfig,
    encoder: Option<Arc<MiniLm>>,
) -> Result<(bench_core::Corpus, Vec<Query>)> {
    // Everything that can fail on bad input happens before the database is touched.
    // A run of no question would be stored as finished with nothing in it;
    // refused before loading, which may write to the cache.
    for (flag, n) in [("--limit", args.limit), ("--sample", args.sample)] {
        if n == Some(0) {
            return Err(BadInput(format!("{flag} 0: a run needs at least one question")).into());
        }
    }
    let t_load = Instant::now();
    let opts = match encoder {
        Some(e) => args.data.load_options_matching(config, e, &args.cache_dir),
        None => args.data.load_options(config),
    };
    let corpus = load_corpus(&args.corpus, &opts)
        .with_context(|| format!("loading corpus {}", args.corpus))?;
    let mut queries = corpus.queries.clone();
    if let Some(limit) = args.limit {
        queries.truncate(limit);
    }
    if let Some(n) = args.sample {
        let available = queries.len();
        queries = corpora::load::sample_stratified(&queries, n, config.seed);
        if n > available {
            eprintln!(
                "sample: --sample {n} asks for more than the {available} questions there are: \
                 clamped to all {available}"
            );
        }
        eprintln!(
            "sample: {} of {} questions, stratified by query type, seed {}",
            queries.len(),
            corpus.queries.len(),
            config.seed
        );
    }
    if let Some(shard) = &args.shard {
        let (i, n) = parse_shard(shard)?;
        let before = queries.len();
        queries = queries
            .into_iter()
            .enumerate()
            .filter(|(p, _)| p % n == i - 1)
            .map(|(_, q)| q)
            .collect();
        if queries.is_empty() {
            return Err(BadInput(format!(
                "--shard {shard}: shard {i} of {n} holds no question ({before} questions in all); \
                 use at most {before} shards"
            ))
            .into());
        }
        eprintln!("shard {i}/{n}: {} questions", queries.len());
    }
    if queries.is_empty() {
        return Err(BadInput(format!(
            "corpus {}: no question to run (a run needs at least one)",
            corpus.name
        ))
        .into());
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
    let unmatched = corpus
        .queries
        .iter()
        .filter(|q| !q.evidence.is_empty() && q.gold_chunks.is_empty())
        .count();
    if unmatched > 0 {
        eprintln!(
            "{unmatched} of {} questions: evidence matched no document or chunk (evidence recall is \
             not measured for them)",
            corpus.queries.len()
        );
    }
    if let Some(line) = statements_line(&corpus, opts.semantic.as_ref().map(|m| m.cache.dir())) {
        eprintln!("{line}");
    }
    Ok((corpus, queries))
}

/// How the evidence statements were matched (verbatim, by meaning, not at all) and the share of
/// questions with gold chunks; `None` when the corpus's evidence has no statements.
pub(crate) fn statements_line(
    corpus: &bench_core::Corpus,
    cache_dir: Option<&std::path::Path>,
) -> Option<String> {
    let all: Vec<&bench_core::StatementMatch> =
        corpus.queries.iter().flat_map(|q| &q.statements).collect();
    if all.is_empty() {
        return None;
    }
    let verbatim = all.iter().filter(|s| s.is_matched() && !s.semantic).count();
    let meaning = all.iter().filter(|s| s.is_matched() && s.semantic).count();
    let none = all.len() - verbatim - meaning;
    let with_gold = corpus.queries_with_gold_chunks();
    let listed = match cache_dir {
        Some(dir) if none > 0 => format!(
            " (listed in {})",
            corpora::load::semantic::unmatched_path(dir, &corpus.name, &corpus.content_hash)
                .display()
        ),
        _ => String::new(),
    };
    Some(format!(
        "evidence statements: {}: {verbatim} matched verbatim, {meaning} by meaning, {none} matched \
         nothing{listed}; gold chunks for {with_gold} of {} questions ({:.1} %)",
        all.len(),
        corpus.queries.len(),
        100.0 * with_gold as f64 / corpus.queries.len().max(1) as f64
    ))
}

/// Chunks drawn (with this seed) to estimate an approximate index's recall before a run.
const RECALL_SAMPLE: usize = 200;
const RECALL_SEED: u64 = 0x5EC_A11;

/// Embeds chunks and questions (through the vector cache) and builds the dense index.
fn embed(
    args: &BenchArgs,
    config: &BenchConfig,
    llm_settings: Option<&LlmSettings>,
    encoder: Arc<MiniLm>,
    corpus: &bench_core::Corpus,
    queries: &[Query],
) -> Result<Embedded> {
    let t_embed = Instant::now();
    let (embedder, endpoint_embedder) =
        choose_embedder(config, llm_settings, encoder.clone(), &args.cache_dir)?;
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
    let (index, graph) = corpora::index::dense_index(
        chunk_vectors,
        &config.retrieval,
        &args.cache_dir,
        &format!("{}:chunks", corpus.name),
    )
    .context("building the dense index")?;
    eprintln!(
        "dense index: {}{}",
        index.describe(),
        match graph {
            Some(corpora::index::Origin::Built) => " (built and stored in the cache)",
            Some(corpora::index::Origin::Cached) => " (read from the cache)",
            None => "",
        }
    );
    if let Some(recall) = index.sampled_recall(config.retrieval.top_k, RECALL_SAMPLE, RECALL_SEED) {
        eprintln!(
            "dense index: recall@{} against exact search, {RECALL_SAMPLE} sampled chunks as \
             queries: {recall:.3}{}",
            config.retrieval.top_k,
            match (recall < 0.95, config.retrieval.index) {
                (false, _) => "",
                (true, bench_core::config::IndexKind::Ivf) => {
                    " (below 0.95: raise [retrieval] ivf_nprobe, or use index = \"exact\")"
                }
                (true, _) => " (below 0.95: try index = \"ivf\", or \"exact\")",
            }
        );
    }
    let index = Arc::new(index);

    Ok(Embedded {
        encoder,
        embedder,
        endpoint_embedder,
        cache,
        query_vectors,
        index,
        secs: embed_secs,
    })
}

/// The run's mode, printed with the LLM settings it uses.
fn announce_mode(llm_settings: Option<&LlmSettings>, embeds_by_endpoint: bool) -> Mode {
    let mode = match llm_settings {
        None => Mode::Offline,
        // The settings refuse a base URL that carries a credential; masked all the same, so
        // the label stored with every run and tuple can never hold one.
        Some(s) => Mode::Llm {
            base_url: store::redact(&s.answer.base_url),
            model: s.answer.model.clone(),
        },
    };
    match llm_settings {
        None => eprintln!("mode: {} (no LLM endpoint configured)", mode.label()),
        Some(s) => eprint!("{}", describe_settings(&mode, s, embeds_by_endpoint)),
    }
    mode
}

/// The LLM settings a person needs to see, one line per role: the model and endpoint, then the
/// limits that shape a run (the whole record is stored with the run). The embedding role is
/// listed only when an endpoint embeds; otherwise the local encoder does.
fn describe_settings(mode: &Mode, s: &LlmSettings, embeds_by_endpoint: bool) -> String {
    let line = |e: &llm::EndpointConfig| {
        let mut l = format!(
            "{} (timeout {} s, {} in flight, {} retries",
            e.identity(),
            e.timeout_s,
            e.max_in_flight,
            e.max_retries
        );
        if let Some(r) = e.rpm {
            l.push_str(&format!(", {r} requests/min"));
        }
        if let Some(t) = e.tpm {
            l.push_str(&format!(", {t} tokens/min"));
        }
        l.push(')');
        l
    };
    let answer = line(&s.answer);
    let mut out = format!("mode: {}\n  answer: {answer}\n", mode.label());
    for (role, e) in s.roles().into_iter().skip(1) {
        if role == "embedding" && !embeds_by_endpoint {
            out.push_str("  embedding: the local sentence encoder (all-MiniLM-L6-v2)\n");
            continue;
        }
        let l = line(e);
        if l == answer {
            out.push_str(&format!("  {role}: as answer\n"));
        } else {
            out.push_str(&format!("  {role}: {l}\n"));
        }
    }
    out
}

impl Step<'_> {
    /// Opens the store, assembles the paradigms, answers the pending tuples and reports.
    async fn answer(&self, llm_clients: Option<LlmClients>) -> Result<()> {
        if self.args.retrieval_only {
            return self.retrieval_only().await;
        }
        let store = Store::open_db(&self.args.store.db).await?;
        store.upsert_corpus(self.corpus).await?;
        let offline = self.offline_parts();
        let engines = match llm_clients {
            None => Engines::offline(
                self.config,
                offline.reader.clone(),
                offline.extractor.clone(),
            ),
            Some(clients) => Engines::llm(
                self.config,
                clients,
                &store,
                probe::parse(self.args.probes.as_deref())?.reader_logprobs(),
            ),
        };

        let (graph, graph_build, graph_secs) = self.graph(&store, &engines).await?;
        let (parts, paradigms) = self.paradigms(&offline, &engines, graph.clone())?;
        let chunks = offline.chunks.clone();
        let (run, shared) = self.start(&store, &engines, chunks, graph_build).await?;
        let t_answer = Instant::now();
        let budget = Budget {
            max_tokens: self.args.max_tokens,
            spent_before: store.run_tokens(run.id).await?,
        };
        let done = store.finished_pairs(run.id).await?;
        let stop = execute(
            &shared,
            &paradigms,
            self.queries,
            &self.embedded.query_vectors,
            &done,
            self.config.concurrency,
            budget,
        )
        .await?;
        let used = shared.budget.spent();
        if used.counted > 0 && !matches!(stop, Stop::Budget { .. }) {
            eprintln!(
                "llm tokens of this invocation: {} counted with cl100k; {}",
                used.counted,
                reported_line(&used)
            );
        }
        // Query-time embeddings (graph entities of questions) are billed too.
        let endpoint = self.embedded.endpoint_embedder.as_deref();
        record_embedding_usage(&store, run.id, endpoint).await?;
        match stop {
            Stop::Done => {}
            Stop::Budget { spent } => {
                let s = shared.budget.spent();
                println!(
                    "stopped at the token budget (--max-tokens {}): this invocation's LLM calls cost \
                     {} tokens counted with cl100k (each call's bound, prompt + max_tokens, was reserved \
                     before it was sent; {} call(s) the budget could not hold were not sent); {}; \
                     run {} holds {spent} tokens as recorded. Finished tuples are stored in {}; run \
                     again with a larger budget to continue",
                    self.args.max_tokens.unwrap_or_default(),
                    s.counted,
                    s.refused,
                    reported_line(&s),
                    run.id,
                    self.args.store.db
                );
                return Ok(());
            }
            Stop::Interrupted => anyhow::bail!(
                "interrupted: finished tuples are stored in {}; run the same command again to resume run {}",
                self.args.store.db,
                run.id
            ),
        }
        let answer_secs = t_answer.elapsed().as_secs_f64();
        self.probe(&store, run.id, &parts, graph.is_some()).await?;
        // The probe step's embeddings (its entity linking of the questions) are the run's bill too.
        record_embedding_usage(&store, run.id, self.embedded.endpoint_embedder.as_deref()).await?;
        let graph_used = graph
            .as_ref()
            .map(|(g, _)| (g.as_ref(), engines.graph_extractor.identity()));
        self.report(
            &store,
            run,
            &engines,
            graph_used,
            &shared,
            [graph_secs, answer_secs],
        )
        .await?;
        // Checkpointed: the file alone holds the run (an early return is, when the store drops).
        store.close().await;
        Ok(())
    }

    /// Resumes or starts the run (recording the LLM and embedding settings, and dropping tuples
    /// answered on another graph build) and makes what every task shares.
    async fn start(
        &self,
        store: &Store,
        engines: &Engines,
        chunks: Arc<ChunkTable>,
        graph_build: Option<String>,
    ) -> Result<(store::RunHandle, Arc<Shared>)> {
        let spec = RunSpec {
            corpus: self.corpus,
            config: self.config,
            mode: self.mode.clone(),
            reader: engines.reader.identity(),
            judge: engines.judge.identity(),
            embedder: self.embedded.embedder.name().to_owned(),
            extractor: if graph_build.is_some() {
                engines.graph_extractor.identity().label()
            } else {
                String::new()
            },
            crate_version: env!("CARGO_PKG_VERSION").to_owned(),
            llm: self.llm_settings.map(LlmSettings::record_json),
        };
        let run = store.start_run(&spec, self.args.fresh).await?;
        let endpoint = self.embedded.endpoint_embedder.as_deref();
        record_embedding_usage(store, run.id, endpoint).await?;
        if let Some(signature) = &graph_build {
            let on_graph: Vec<ParadigmId> = self
                .paradigm_ids
                .iter()
                .copied()
                .filter(|p| p.uses_graph())
                .collect();
            let dropped = store
                .drop_other_graph_builds(run.id, &on_graph, signature)
                .await?;
            if dropped > 0 {
                eprintln!(
                    "{dropped} tuples were answered on another build of the graph (an earlier \
                     attempt's, with failed extractions): answered again on this one"
                );
            }
        }
        let lease = match store.backend() {
            store::Backend::Sqlite => None,
            store::Backend::Postgres => {
                let started_ms = store.clock_ms().await?;
                Some(store::Lease {
                    run_id: run.id,
                    worker: worker_name(started_ms),
                    lease_ms: (self.args.lease.max(1) * 1000) as i64,
                    started_ms,
                })
            }
        };
        let llm = self.llm_settings.is_some();
        let shared = Arc::new(Shared {
            store: store.clone(),
            run_id: run.id,
            evaluator: TupleEvaluator {
                judge: engines.judge.clone(),
                encoder: self.embedded.encoder.clone(),
                faithfulness: llm.then(FaithfulnessCache::new),
                faithful: paradigms::registry::faithful_paradigms(),
                reader_recall: (!llm).then_some(self.config.judge.correct_recall),
            },
            mode: self.mode.label(),
            config_hash: spec.config_hash(),
            fault_delay: fault_delay(),
            clock: StageClock::default(),
            share: !self.args.share_nothing && !llm,
            blocking: !llm,
            chunks,
            graph_build,
            lease,
            budget: engines.budget.clone(),
        });
        Ok((run, shared))
    }

    /// The end of a finished run: the table, the counts of unreadable replies, the corpus
    /// indicators and the time by stage.
    async fn report(
        &self,
        store: &Store,
        run: store::RunHandle,
        engines: &Engines,
        graph_used: Option<(&KnowledgeGraph, corpora::graph::ExtractorId)>,
        shared: &Shared,
        [graph_secs, answer_secs]: [f64; 2],
    ) -> Result<()> {
        let outcome = store.run_outcome(run.id).await?;
        if let Some(err) = finish::all_failed(&outcome, run.id, &self.args.store.db) {
            print!("{}", table::render(&store.summary(run.id).await?));
            return Err(err);
        }
        store.finish_run(run.id).await?;
        let rows = store.summary(run.id).await?;
        println!(
            "\nrun {} ({}) on {}: {} tuples in {}",
            run.id,
            if run.resumed { "resumed" } else { "new" },
            self.corpus.name,
            store.count_results(run.id).await?,
            self.args.store.db
        );
        println!("mode: {}", self.mode.label());
        // Approximate search changes which chunks every retrieving paradigm sees: say so here.
        let dense = self.embedded.index.describe();
        if dense != "exact" {
            println!("dense index: {dense} (approximate)");
        }
        if self.llm_settings.is_none() {
            println!("{}", table::OFFLINE_CORRECT);
        }
        println!();
        for line in [engines.cache_line(), engines.retry_line()]
            .into_iter()
            .flatten()
        {
            eprintln!("{line}");
        }
        print!("{}", table::render(&rows));
        if let Some(line) = statements_line(self.corpus, Some(&self.args.cache_dir)) {
            println!("{line}");
        }
        for (paradigm, n, of) in store.count_stops(run.id, "evaluation-unreadable").await? {
            println!(
                "{paradigm}: {n} of {of} loops stopped at an unreadable self-evaluation \
                 (the answer so far was kept; the reply is in the trace)"
            );
        }
        for (paradigm, n, of) in store.count_unreadable_entities(run.id).await? {
            println!(
                "{paradigm}: {n} of {of} graph retrievals used the question itself: the entity \
                 list was unreadable (the reply is in the trace)"
            );
        }
        finish::ensure_corpus_metrics(
            store,
            self.corpus,
            graph_used,
            &self.embedded.cache,
            self.embedded.embedder.as_ref(),
        )
        .await?;
        if let Some((configuration, metrics)) = store
            .corpus_metrics(&self.corpus.name, &self.corpus.content_hash)
            .await?
        {
            println!("\ncorpus indicators ({configuration}):");
            print!("{}", crate::indicators::render_indicators(&metrics));
        }
        // This invocation's work only: a resumed run does not count the tuples stored before.
        let [retrieval, reading, judging, storing] = shared.clock.seconds();
        eprintln!(
            "\nwall time by stage: embedding {:.1}s, graph {graph_secs:.1}s, answering {answer_secs:.1}s \
             (summed over the {} tuples answered now: retrieval {retrieval:.1}s, reading {reading:.1}s, \
             judging {judging:.1}s, storing {storing:.1}s)",
            self.embedded.secs,
            shared.clock.tuples.load(Ordering::Relaxed),
        );
        Ok(())
    }
}

/// What the endpoint reported for the calls of this invocation, beside the cl100k count.
fn reported_line(s: &llm::budget::Spent) -> String {
    let missing = if s.unreported > 0 {
        format!(" ({} call(s) reported no usage)", s.unreported)
    } else {
        String::new()
    };
    format!("the endpoint reported {} tokens{missing}", s.reported)
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

/// `RAGROUTER_FAULT_DELAY_MS`: a pause before each write (at most a minute), which widens the
/// window in which the crash-and-resume tests kill a run. A test hook: debug builds only.
#[cfg(debug_assertions)]
fn fault_delay() -> Option<std::time::Duration> {
    std::env::var("RAGROUTER_FAULT_DELAY_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map(|ms| std::time::Duration::from_millis(ms.min(60_000)))
}

/// Release builds have no test hooks.
#[cfg(not(debug_assertions))]
fn fault_delay() -> Option<std::time::Duration> {
    None
}

/// A worker's name in the claims table: host, process and start (database clock).
fn worker_name(started_ms: i64) -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "host".into());
    format!("{host}/{}/{started_ms}", std::process::id())
}

/// `I/N` with `1 <= I <= N`.
fn parse_shard(s: &str) -> Result<(usize, usize)> {
    let parsed = s
        .split_once('/')
        .and_then(|(i, n)| Some((i.trim().parse().ok()?, n.trim().parse().ok()?)))
        .filter(|&(i, n): &(usize, usize)| i >= 1 && i <= n);
    parsed.ok_or_else(|| {
        BadInput(format!(
            "--shard {s:?}: expected I/N with 1 <= I <= N, e.g. 1/4"
        ))
        .into()
    })
}

fn parse_paradigms(names: &[String]) -> Result<Vec<ParadigmId>> {
    let mut out = Vec::new();
    for n in names {
        let id: ParadigmId = n.parse()?;
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
    let bar = crate::progress::bar(texts.len() as u64, what, "");
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
