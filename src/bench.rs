//! `ragrouter bench`: load a corpus, embed it, run the chosen paradigms over its questions,
//! judge every answer and store one tuple per (query, paradigm); resume what a run left undone.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context as _, Result};
use bench_core::{
    BenchConfig, Embedder, Judge, Mode, Paradigm, ParadigmId, QualityMetrics, Query, Reader,
    ResultRecord, RunSpec, Store,
};
use corpora::embed::{MiniLm, VectorCache};
use corpora::index::FlatIndex;
use corpora::load::{load_corpus, LoadOptions};
use indicatif::{ProgressBar, ProgressStyle};
use metrics::answer::{answer_quality, evidence_recall, OfflineJudge};
use paradigms::{ChunkTable, DenseRetriever, LlmOnly, OfflineReader, RetrieveThenRead};
use tokio::task::JoinSet;

use crate::cli::BenchArgs;
use crate::table;

/// Paradigms this build can run.
pub const AVAILABLE: [ParadigmId; 2] = [ParadigmId::LlmOnly, ParadigmId::Naive];

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
}

pub fn run(args: BenchArgs) -> Result<()> {
    let config = resolve_config(&args)?;
    let paradigm_ids = parse_paradigms(&args.paradigms)?;

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

    let embedder: Arc<dyn Embedder> = Arc::new(
        MiniLm::from_dir(args.model_dir.as_deref()).context("loading the sentence encoder")?,
    );
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
    let index = Arc::new(FlatIndex::new(chunk_vectors).context("building the dense index")?);

    let mode = Mode::Offline;
    eprintln!("mode: {} (no LLM endpoint configured)", mode.label());
    let chunks = Arc::new(ChunkTable::new(corpus.chunks.clone()));
    let reader: Arc<dyn Reader> = Arc::new(OfflineReader::new(
        &corpus.chunks,
        config.offline_reader.clone(),
    ));
    let judge: Arc<dyn Judge> = Arc::new(OfflineJudge {
        correct_recall: config.judge.correct_recall,
    });
    let paradigms: Vec<Arc<dyn Paradigm>> = paradigm_ids
        .iter()
        .map(|&id| -> Arc<dyn Paradigm> {
            match id {
                ParadigmId::LlmOnly => Arc::new(LlmOnly {
                    reader: reader.clone(),
                }),
                ParadigmId::Naive => Arc::new(RetrieveThenRead {
                    id,
                    retriever: Arc::new(DenseRetriever {
                        index: index.clone(),
                        chunks: chunks.clone(),
                        embedder: embedder.clone(),
                        top_k: config.retrieval.top_k,
                        min_similarity: config.retrieval.min_similarity,
                    }),
                    reader: reader.clone(),
                    chunks: chunks.clone(),
                    budget: config.retrieval.context_budget,
                }),
                _ => unreachable!("parse_paradigms admits only available paradigms"),
            }
        })
        .collect();

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        let store = Store::open(&args.db).await?;
        let spec = RunSpec {
            corpus: &corpus,
            config: &config,
            mode: mode.label(),
            reader: reader.identity(),
            judge: judge.identity(),
            embedder: embedder.name().to_owned(),
            crate_version: env!("CARGO_PKG_VERSION").to_owned(),
        };
        store.upsert_corpus(&corpus).await?;
        let run = store.start_run(&spec, args.fresh).await?;
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
        });
        let interrupted = execute(
            &shared,
            &paradigms,
            &queries,
            &query_vectors,
            &done,
            config.concurrency,
        )
        .await?;
        if interrupted {
            anyhow::bail!(
                "interrupted: finished tuples are stored in {}; run the same command again to resume run {}",
                args.db.display(),
                run.id
            );
        }
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
        print!("{}", table::render(&rows));
        Ok(())
    })
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
) -> Result<bool> {
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
    loop {
        while !interrupted && tasks.len() < concurrency {
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
                shared.store.write_result(shared.run_id, &record).await
            });
        }
        tokio::select! {
            joined = tasks.join_next() => match joined {
                None => break,
                Some(res) => {
                    res.context("a query task panicked")??;
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
    Ok(interrupted)
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
    let mut error = error;
    if error.is_none() {
        quality = answer_quality(&output.answer, &query.gold);
        quality.evidence_recall = evidence_recall(
            &query.gold_chunks,
            output.context.iter().map(|c| c.chunk_id.as_str()),
        );
        let t = Instant::now();
        match shared.judge.judge(query, &output.answer).await {
            Ok(v) => {
                judge = Some(v.label);
                output.latency.judge_ms = t.elapsed().as_secs_f64() * 1e3;
            }
            Err(e) => error = Some(format!("judge: {e}")),
        }
    }
    ResultRecord {
        query_id: query.id.clone(),
        paradigm: paradigm.id(),
        output,
        judge,
        quality,
        mode: shared.mode.clone(),
        config_hash: shared.config_hash.clone(),
        error,
    }
}
