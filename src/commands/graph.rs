//! `ragrouter graph <corpus>`: build (or resume) a corpus's knowledge graph, embed its entities
//! and print its size, connectivity, failures and construction cost.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context as _, Result};
use bench_core::{BenchConfig, Embedder};
use corpora::{
    build_graph, embed_entities, load_corpus, BuildOptions, MiniLm, OfflineExtractor, VectorCache,
};
use store::Store;

#[derive(clap::Args, Debug)]
pub struct GraphArgs {
    /// Corpus name (see `ragrouter corpora`) or `jsonl:<dir>` for the generic format.
    pub corpus: String,
    #[command(flatten)]
    pub store: crate::args::StoreArgs,
    #[command(flatten)]
    pub load: crate::args::LoadArgs,
    /// Build from the first N chunks only.
    #[arg(long)]
    pub limit_chunks: Option<usize>,
}

fn bar(len: u64, msg: &str) -> indicatif::ProgressBar {
    crate::progress::bar(len, msg, "")
}

pub fn run(args: &GraphArgs) -> Result<()> {
    crate::checks::check_folder("--cache-dir", &args.load.cache_dir)?;
    args.load.encoder.check()?;
    let t_all = Instant::now();
    let config = BenchConfig::default();
    // The encoder is checked before the store is touched: bad input writes nothing.
    let embedder: Arc<dyn Embedder> = Arc::new(
        MiniLm::from_dir(args.load.encoder.model_dir.as_deref())
            .context("loading the sentence encoder")?,
    );
    let opts =
        args.load
            .data
            .load_options_matching(&config, embedder.clone(), &args.load.cache_dir);
    let corpus = load_corpus(&args.corpus, &opts)
        .with_context(|| format!("loading corpus {}", args.corpus))?;
    println!(
        "corpus {}: {} documents, {} chunks",
        corpus.name,
        corpus.documents.len(),
        corpus.chunks.len()
    );
    let extractor = Arc::new(OfflineExtractor::new());
    let options = BuildOptions {
        concurrency: None,
        limit_chunks: args.limit_chunks,
    };

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let t_build = Instant::now();
    let build = runtime.block_on(async {
        let store = Store::open_db(&args.store.db).await?;
        let progress = bar(0, "extracting triplets");
        let build = build_graph(&corpus, extractor, &store, &options, &|done, total| {
            progress.set_length(total as u64);
            progress.set_position(done as u64);
        })
        .await;
        progress.finish_and_clear();
        anyhow::Ok(build?)
    })?;
    let build_secs = t_build.elapsed().as_secs_f64();
    let s = &build.stats;
    let g = &s.graph;
    println!(
        "extractor: {} ({}, rules {})",
        s.extractor.extractor,
        s.extractor.model,
        &s.extractor.prompt_hash[..12]
    );
    println!(
        "extraction: {} chunks, {} distinct texts from the store, {} extracted, {} failed [{build_secs:.2}s]",
        s.chunks,
        s.cached_chunks,
        s.extracted_chunks,
        s.failures.len()
    );
    println!(
        "graph: {} nodes, {} edges, {} relation types, {} triplets",
        g.nodes, g.edges, g.relation_types, g.triplets
    );
    println!(
        "components: {}, largest {} nodes ({:.1}% of nodes)",
        g.components,
        g.largest_component,
        100.0 * g.largest_component as f64 / g.nodes.max(1) as f64
    );
    println!(
        "construction tokens: {} in, {} out (offline extractor: no LLM)",
        s.tokens_in, s.tokens_out
    );

    let t_embed = Instant::now();
    let progress = bar(build.graph.nodes.len() as u64, "embedding entities");
    let vectors = embed_entities(
        &corpus.name,
        &build.graph,
        embedder.as_ref(),
        &VectorCache::new(&args.load.cache_dir),
        &|done, _| progress.set_position(done as u64),
    )
    .context("embedding entity names")?;
    progress.finish_and_clear();
    println!(
        "entity vectors: {} x {} [{:.2}s]",
        vectors.len(),
        vectors.dim,
        t_embed.elapsed().as_secs_f64()
    );
    println!("total time: {:.2}s", t_all.elapsed().as_secs_f64());

    if !s.failures.is_empty() {
        println!("\nextraction failures (chunk: error):");
        for (chunk, error) in s.failures.iter().take(20) {
            println!("  {chunk}: {error}");
        }
        if s.failures.len() > 20 {
            println!("  ... and {} more", s.failures.len() - 20);
        }
        anyhow::bail!(
            "{} chunks failed extraction and are missing from the graph; run the same command again to retry them",
            s.failures.len()
        );
    }
    Ok(())
}
