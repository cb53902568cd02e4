//! `ragrouter generate <corpus>`: questions per type from the corpus and its knowledge graph, verified and filtered (paper Algorithm 2), written as a generic-format set.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context as _, Result};
use bench_core::{BenchConfig, Embedder, QueryType};
use corpora::{
    load_corpus, write_set, Filter, Generator, Kept, KnowledgeGraph, LlmChecks, LlmGenerator,
    MiniLm, OfflineExtractor, Pipeline, Statistics, TemplateGenerator, TripletExtractor,
};
use store::Store;

use crate::checks::BadInput;
use crate::engines::{resolve_llm, Engines, LlmClients};

#[derive(clap::Args, Debug)]
pub struct GenerateArgs {
    /// Corpus name (see `ragrouter corpora`) or `jsonl:<dir>` for the generic format.
    pub corpus: String,
    /// Folder to write the set into (must not exist): corpus.jsonl, queries.jsonl, corpus.toml,
    /// construction.json; `ragrouter bench jsonl:<out>` runs it.
    #[arg(long)]
    pub out: PathBuf,
    /// Kept questions wanted per type.
    #[arg(long, default_value_t = 20)]
    pub per_type: usize,
    /// Query types to generate (comma-separated) [default: factual,reasoning,summary with an
    /// LLM; factual,reasoning offline, where a summary's gold (a list of entities from several
    /// documents) is no span the offline judge could find in a context].
    #[arg(long, value_delimiter = ',')]
    pub types: Vec<String>,
    /// Candidates tried per type at most [default: 4 x --per-type; the paper kept 46 %].
    #[arg(long)]
    pub max_candidates: Option<usize>,
    /// The set's short name (corpus.toml) [default: <corpus>-generated].
    #[arg(long)]
    pub name: Option<String>,
    /// Seed of the source sampling (overrides the configuration's) [default: 42].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Generation temperature (the paper's 0.7).
    #[arg(long, default_value_t = 0.7)]
    pub temperature: f32,
    /// Stop before the LLM tokens spent pass N (what was kept so far is written).
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u64>,
    /// Print the LLM calls a run would make at most, and exit without calling anything.
    #[arg(long)]
    pub dry_run: bool,
    /// TOML configuration (chunking, seed, [llm]) [default: none].
    #[arg(long)]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub store: crate::args::StoreArgs,
    #[command(flatten)]
    pub load: crate::args::LoadArgs,
    #[command(flatten)]
    pub llm: crate::args::LlmArgs,
}

fn parse_types(names: &[String]) -> Result<Vec<QueryType>> {
    let mut out = Vec::new();
    for n in names {
        let t: QueryType = n.parse().map_err(|_| {
            BadInput(format!(
                "--types: unknown query type {n:?} (expected factual, reasoning or summary)"
            ))
        })?;
        if t == QueryType::Other {
            return Err(BadInput("--types: `other` has no generation strategy".into()).into());
        }
        if !out.contains(&t) {
            out.push(t);
        }
    }
    Ok(out)
}

/// Checks the arguments, loads the corpus, generates on its graph and writes the kept set.
pub fn run(args: &GenerateArgs) -> Result<()> {
    crate::checks::check_folder("--cache-dir", &args.load.cache_dir)?;
    args.load.encoder.check()?;
    let types = parse_types(&args.types)?;
    let config = checked_config(args)?;
    let settings = resolve_llm(&args.llm, &config)?;
    let types = chosen_types(types, settings.is_some())?;
    let clients = settings.as_ref().map(LlmClients::new).transpose()?;
    let encoder: Arc<dyn Embedder> = Arc::new(
        MiniLm::from_dir(args.load.encoder.model_dir.as_deref())
            .context("loading the sentence encoder")?,
    );
    let (corpus, name) = load_named(args, &config, encoder.clone())?;
    let max_candidates = args.max_candidates.unwrap_or(4 * args.per_type);
    let llm_model = settings.as_ref().map(|s| s.answer.model.as_str());
    if args.dry_run {
        print_dry_run(&types, max_candidates, &corpus, llm_model.is_some());
        return Ok(());
    }
    announce(args, &corpus, &types, max_candidates, &config, llm_model);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let job = Job {
        args,
        config: &config,
        corpus: &corpus,
        types: &types,
        max_candidates,
        llm: settings.is_some(),
    };
    let (kept, stats) = runtime.block_on(job.generate(clients, encoder))?;
    print!("{}", render_stats(&stats));
    write_kept(args, &name, &corpus, &kept, &stats)
}

/// Checks the numeric flags, `--name` and `--out`, and reads the configuration (`--seed` over its
/// seed): everything refused before any loading.
fn checked_config(args: &GenerateArgs) -> Result<BenchConfig> {
    if args.per_type == 0 {
        return Err(BadInput("--per-type: expected at least 1".into()).into());
    }
    if args.max_candidates == Some(0) {
        return Err(BadInput("--max-candidates 0: expected at least 1".into()).into());
    }
    let max_t = bench_core::config::MAX_TEMPERATURE as f32;
    if !(0.0..=max_t).contains(&args.temperature) {
        return Err(BadInput(format!(
            "--temperature {}: expected a number in [0, {max_t}]",
            args.temperature
        ))
        .into());
    }
    // The set's name follows corpus.toml's rule, or `bench jsonl:<out>` would refuse the set.
    if let Some(name) = &args.name {
        corpora::check_corpus_name(name)
            .map_err(|why| BadInput(format!("--name {name:?}: corpus name {why}")))?;
    }
    let mut config = match &args.config {
        Some(p) => BenchConfig::from_toml_file(p)?,
        None => BenchConfig::default(),
    };
    if let Some(seed) = args.seed {
        config.seed = seed;
    }
    config
        .validate()
        .map_err(|e| BadInput(format!("configuration: {e}")))?;
    if args.out.exists() {
        return Err(BadInput(format!(
            "--out {}: already exists (generate writes a new folder)",
            args.out.display()
        ))
        .into());
    }
    Ok(config)
}

/// The types to generate: those asked for, or the default of the mode; summary is refused
/// offline.
fn chosen_types(mut types: Vec<QueryType>, llm: bool) -> Result<Vec<QueryType>> {
    if types.is_empty() {
        types = vec![QueryType::Factual, QueryType::Reasoning];
        if llm {
            types.push(QueryType::Summary);
        }
    } else if !llm && types.contains(&QueryType::Summary) {
        return Err(BadInput(
            "--types summary: not generated offline. A summary's gold is the list of entities \
             linked to one entity across documents; the offline judge scores a tuple by a gold \
             span in the delivered context, which no context holds for a list, so every summary \
             question would score 0. Generate summary questions with an LLM endpoint \
             (--llm-model, or [llm] in --config), or drop summary from --types."
                .into(),
        )
        .into());
    }
    Ok(types)
}

/// Loads the corpus and names the set (`--name`, or `<corpus>-generated`, checked).
fn load_named(
    args: &GenerateArgs,
    config: &BenchConfig,
    encoder: Arc<dyn Embedder>,
) -> Result<(bench_core::Corpus, String)> {
    // Loaded as `bench` and `graph` load it (evidence matched by meaning through the vector
    // cache in --cache-dir), so the corpus and its hash are the ones their runs store.
    let opts = args
        .load
        .data
        .load_options_matching(config, encoder, &args.load.cache_dir);
    let corpus = load_corpus(&args.corpus, &opts)
        .with_context(|| format!("loading corpus {}", args.corpus))?;
    let name = args
        .name
        .clone()
        .unwrap_or_else(|| format!("{}-generated", corpus.name));
    corpora::check_corpus_name(&name).map_err(|why| {
        BadInput(format!(
            "the set's name {name:?}: corpus name {why} (give --name)"
        ))
    })?;
    Ok((corpus, name))
}

/// `--dry-run`: the LLM calls a run would make at most.
fn print_dry_run(
    types: &[QueryType],
    max_candidates: usize,
    corpus: &bench_core::Corpus,
    llm: bool,
) {
    let calls: usize = types
        .iter()
        .map(|&t| calls_per_candidate(t) * max_candidates)
        .sum();
    println!(
        "dry run: {} types x at most {max_candidates} candidates on {}: at most {calls} LLM calls \
         (plus the graph's extraction for uncached chunks){}",
        types.len(),
        corpus.name,
        if llm {
            ""
        } else {
            " (offline: no call is made)"
        }
    );
}

/// The line said before the work: corpus, quotas, seed and mode (`llm_model`: the answering
/// model, `None` offline).
fn announce(
    args: &GenerateArgs,
    corpus: &bench_core::Corpus,
    types: &[QueryType],
    max_candidates: usize,
    config: &BenchConfig,
    llm_model: Option<&str>,
) {
    eprintln!(
        "generate: {} ({} documents, {} chunks), {} per type of {}, at most {max_candidates} candidates each, seed {}, {}",
        corpus.name,
        corpus.documents.len(),
        corpus.chunks.len(),
        args.per_type,
        types.iter().map(|t| t.as_str()).collect::<Vec<_>>().join(", "),
        config.seed,
        match llm_model {
            None => "offline: template questions over the rule-based graph's relations (the \
                     words between two entities), to exercise the pipeline and retrieval, not \
                     fluent questions to publish; shortcut and closed-book filters not applied"
                .to_owned(),
            Some(model) => format!("LLM {model}"),
        }
    );
}

/// The extractor, generator and filters' reader and judge of a generation: offline rules and
/// templates, or the LLM engines (the generator through the response cache).
type Makers = (
    Arc<dyn TripletExtractor>,
    Arc<dyn Generator>,
    Option<LlmChecks>,
);

/// What one generation reads, checked and loaded.
struct Job<'a> {
    args: &'a GenerateArgs,
    config: &'a BenchConfig,
    corpus: &'a bench_core::Corpus,
    types: &'a [QueryType],
    max_candidates: usize,
    llm: bool,
}

impl Job<'_> {
    /// Opens the store, builds the graph and runs the pipeline: the kept questions and the
    /// statistics.
    async fn generate(
        &self,
        clients: Option<LlmClients>,
        encoder: Arc<dyn Embedder>,
    ) -> Result<(Vec<Kept>, Statistics)> {
        let store = Store::open_db(&self.args.store.db).await?;
        let (extractor, generator, checks) = self.makers(clients, &store)?;
        let graph = self.graph(extractor, &store).await?;
        let mut pipeline = Pipeline {
            corpus: self.corpus,
            graph: &graph,
            generator,
            embedder: encoder,
            checks,
            seed: self.config.seed,
            per_type: self.args.per_type,
            max_candidates: self.max_candidates,
            max_tokens: self.args.max_tokens,
            progress: None,
        };
        let plan = pipeline.plan(self.types);
        eprint!("{}", render_plan(&plan, self.llm));
        let total: u64 = plan.iter().map(|p| p.draws as u64).sum();
        let bar = crate::progress::bar(total, "generating", "candidates");
        let shown = bar.clone();
        pipeline.progress = Some(Arc::new(move |done, _| shown.set_position(done)));
        let out = pipeline.run(self.types).await;
        bar.finish_and_clear();
        Ok(out?)
    }

    /// Offline rules and templates without clients; the LLM engines with them.
    fn makers(&self, clients: Option<LlmClients>, store: &Store) -> Result<Makers> {
        let Some(clients) = clients else {
            return Ok((
                Arc::new(OfflineExtractor::new()),
                Arc::new(TemplateGenerator),
                None,
            ));
        };
        let engines = Engines::llm(self.config, clients, store, None);
        // The answering endpoint, through the response cache (the prompt is part of the cache
        // key, and its version is in GENERATE_PROMPT_VERSION).
        let generation: Arc<dyn bench_core::Llm> = engines
            .cached
            .iter()
            .find(|(role, _)| *role == "answer")
            .map(|(_, c)| c.clone())
            .context("the answering endpoint")?;
        Ok((
            engines.graph_extractor.clone(),
            Arc::new(LlmGenerator::new(generation, self.args.temperature)) as Arc<dyn Generator>,
            Some(LlmChecks {
                reader: engines.reader.clone(),
                judge: engines.judge.clone(),
            }),
        ))
    }

    /// The corpus's knowledge graph (extractions through the store's cache), with a progress bar.
    async fn graph(
        &self,
        extractor: Arc<dyn TripletExtractor>,
        store: &Store,
    ) -> Result<KnowledgeGraph> {
        let build =
            crate::engines::extract_graph_with_progress(self.corpus, extractor, store).await?;
        Ok(build.graph)
    }
}

/// Writes the set, or refuses an empty one (nothing written).
fn write_kept(
    args: &GenerateArgs,
    name: &str,
    corpus: &bench_core::Corpus,
    kept: &[Kept],
    stats: &Statistics,
) -> Result<()> {
    if kept.is_empty() {
        // An empty set is one `bench` refuses: nothing is written; the statistics above say
        // which filter removed the candidates.
        return Err(BadInput(format!(
            "kept no question: nothing written to {} (see which filter removed the candidates \
             in the statistics above)",
            args.out.display()
        ))
        .into());
    }
    write_set(&args.out, name, corpus, kept, stats)
        .with_context(|| format!("writing the set into {}", args.out.display()))?;
    println!(
        "wrote {} questions to {} (name {name}); run them with: ragrouter bench jsonl:{}",
        kept.len(),
        args.out.display(),
        args.out.display()
    );
    Ok(())
}

/// LLM calls one candidate of `t` makes at most: one generation; grounding and closed book, a
/// reader and a judge call each; shortcut (reasoning), a reader and a judge call per source
/// chunk (two).
fn calls_per_candidate(t: QueryType) -> usize {
    if t == QueryType::Reasoning {
        1 + 2 + 4 + 2
    } else {
        1 + 2 + 2
    }
}

/// The plan said before the work: per type, the questions wanted (capped where the corpus cannot
/// give as many, with the reason) and the candidates drawn at most; the most LLM calls.
fn render_plan(plan: &[corpora::TypePlan], llm: bool) -> String {
    let mut out = String::new();
    for p in plan {
        out.push_str(&format!(
            "  {}: {} questions wanted, at most {} candidates drawn\n",
            p.qtype.as_str(),
            p.wanted,
            p.draws
        ));
        if p.wanted < p.asked {
            out.push_str(&format!(
                "    capped: --per-type {} asks for more than the corpus can give: at most {} \
                 distinct sources for {} questions\n",
                p.asked,
                p.sources,
                p.qtype.as_str()
            ));
        }
    }
    let draws: usize = plan.iter().map(|p| p.draws).sum();
    let calls: usize = plan
        .iter()
        .map(|p| calls_per_candidate(p.qtype) * p.draws)
        .sum();
    out.push_str(&format!(
        "  estimate: at most {draws} candidates{}\n",
        if llm {
            format!(", at most {calls} LLM calls")
        } else {
            " (offline: no LLM call)".into()
        }
    ));
    out
}

/// The construction statistics as a table: per type, candidates, removals per filter, kept.
pub fn render_stats(s: &Statistics) -> String {
    let mut out = format!("construction statistics ({}):\n", s.generator);
    let mut header = vec![
        "type".to_owned(),
        "drawn".into(),
        "no source".into(),
        "candidates".into(),
    ];
    header.extend(Filter::ALL.iter().map(|f| format!("-{}", f.as_str())));
    header.extend(["kept".into(), "pass %".into()]);
    let mut rows = vec![header];
    for (t, st) in &s.per_type {
        let mut row = vec![
            t.as_str().to_owned(),
            (st.generated + st.no_candidate + st.no_source).to_string(),
            st.no_source.to_string(),
            st.generated.to_string(),
        ];
        for f in Filter::ALL {
            row.push(if s.not_applied.contains(&f) {
                "n/a".into()
            } else {
                st.removed.get(&f).copied().unwrap_or(0).to_string()
            });
        }
        row.push(st.kept.to_string());
        row.push(format!(
            "{:.1}",
            100.0 * st.kept as f64 / st.generated.max(1) as f64
        ));
        rows.push(row);
    }
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|c| rows.iter().map(|r| r[c].len()).max().unwrap_or(0))
        .collect();
    for r in &rows {
        let cells: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, x)| {
                if c == 0 {
                    format!("{x:<w$}", w = widths[c])
                } else {
                    format!("{x:>w$}", w = widths[c])
                }
            })
            .collect();
        out.push_str("  ");
        out.push_str(&cells.join("  "));
        out.push('\n');
    }
    if !s.not_applied.is_empty() {
        out.push_str(&format!(
            "  n/a: {} need an LLM and were not applied\n",
            s.not_applied
                .iter()
                .map(|f| f.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if s.stopped_at_budget {
        out.push_str(&format!(
            "  stopped at --max-tokens after {} LLM tokens\n",
            s.llm_tokens
        ));
    }
    out
}
