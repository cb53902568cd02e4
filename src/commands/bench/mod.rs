//! `ragrouter bench`: load a corpus, embed it, run the chosen paradigms over its questions,
//! judge every answer and store one tuple per (query, paradigm); resume what a run left undone.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context as _, Result};
use bench_core::{BenchConfig, Embedder, Mode, ParadigmId, Query};
use corpora::{load_corpus, MiniLm, VectorCache};
use llm::LlmSettings;

mod assemble;
mod dry_run;
mod execute;
pub(crate) mod finish;
mod invocation;
mod retrieval;
mod shared;
mod signals_step;

use crate::engines::*;
use dry_run::*;
use invocation::Invocation;
use shared::{statements_line, EmbeddedCorpus};

use crate::checks::BadInput;
use crate::cli::BenchArgs;

pub fn run(args: BenchArgs) -> Result<()> {
    let config = resolve_config(&args)?;
    let paradigm_ids = parse_paradigms(&args.paradigms)?;
    let probes = signals_step::parse(args.probes.as_deref())?;
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
    let invocation = Invocation {
        args: &args,
        config: &config,
        corpus: &corpus,
        queries: &queries,
        paradigm_ids: &paradigm_ids,
        llm_settings: llm_settings.as_ref(),
        mode: &mode,
        embedded: &embedded,
        reader_logprobs: probes.reader_logprobs(),
    };
    runtime.block_on(invocation.answer(llm_clients))
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
        queries = corpora::sample_stratified(&queries, n, config.seed);
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
) -> Result<EmbeddedCorpus> {
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
    let (index, graph) = corpora::dense_index(
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
            Some(corpora::Origin::Built) => " (built and stored in the cache)",
            Some(corpora::Origin::Cached) => " (read from the cache)",
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

    Ok(EmbeddedCorpus {
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
