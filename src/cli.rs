//! Command-line definitions (clap derive); no logic lives here.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "ragrouter",
    version,
    about = "Benchmark harness for adaptive RAG routing (RAGRouter-Bench)",
    long_about = "Runs RAG paradigms over real corpora, stores one (query, corpus, paradigm, performance) \
tuple per run in SQLite, characterises corpora and evaluates routers. With no LLM endpoint configured \
everything runs offline, deterministically, and every record says `offline`."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Log filter (tracing env-filter syntax), also read from RAGROUTER_LOG.
    #[arg(long, global = true, env = "RAGROUTER_LOG", default_value = "warn")]
    pub log: String,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run paradigms over a corpus's questions and store the tuples.
    Bench(BenchArgs),
    /// List the known corpora and where their files are looked for.
    Corpora(DataArgs),
    /// Fetch and verify the local sentence encoder's weights (done on first use otherwise).
    Setup(SetupArgs),
    /// Probe the configured LLM endpoints before a long run.
    CheckLlm(crate::commands::check_llm::CheckLlmArgs),
    /// Build (or load from cache) a corpus's knowledge graph and print its statistics.
    Graph(crate::commands::graph::GraphArgs),
    /// Corpus metrics of raw files (edge list TSV and/or float32 embeddings).
    Metrics(crate::commands::metrics::MetricsArgs),
    /// Evaluate routers on the stored tuples (`route eval`) or list them (`route list`).
    Route(crate::commands::route::RouteArgs),
    /// Write the figures, tables, exports and HTML report of the stored runs and router evaluations.
    Report(crate::commands::report::ReportArgs),
}

#[derive(Debug, Args, Clone)]
pub struct DataArgs {
    /// Directory holding the data sets (else $RAGROUTER_DATA_DIR, else ../shared/datasets).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct SetupArgs {
    /// Directory for the encoder's weights (else $RAGROUTER_MODEL_DIR, else the user cache).
    #[arg(long, env = "RAGROUTER_MODEL_DIR")]
    pub model_dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Corpus name (see `ragrouter corpora`) or `jsonl:<dir>` for the generic format.
    pub corpus: String,
    /// Comma-separated paradigm ids.
    #[arg(long, value_delimiter = ',', default_values_t = default_paradigms())]
    pub paradigms: Vec<String>,
    /// Run only the first N questions (in file order).
    #[arg(long)]
    pub limit: Option<usize>,
    /// Results database.
    #[arg(long, default_value = ".ragrouter/results.sqlite")]
    pub db: PathBuf,
    /// Directory for cached vectors.
    #[arg(long, default_value = ".ragrouter/cache")]
    pub cache_dir: PathBuf,
    /// TOML configuration overriding the defaults of decisions.md.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Seed recorded with the run (overrides the configuration's).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Start a new run even if one with the same configuration exists.
    #[arg(long)]
    pub fresh: bool,
    /// Queries answered concurrently.
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// Stop cleanly before the run's LLM token bill would pass N (finished tuples are kept;
    /// the same command with a larger budget continues).
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u64>,
    /// Print the expected number of LLM calls and an estimated token bill, and exit without
    /// calling anything or writing the database.
    #[arg(long)]
    pub dry_run: bool,
    /// Compute every tuple on its own: no retrieval shared between the paradigms of a question,
    /// no batched encoding of answers for semantic F1 and coverage (slower; the tuples are the
    /// same, which is what this switch is for).
    #[arg(long)]
    pub share_nothing: bool,
    /// Time the paradigms alone: run every paradigm over every question (retrieval, and the
    /// offline reader IterativeRAG needs between rounds) with no judging, scoring or storing,
    /// print the wall time and exit. No run or tuple is stored (`just perf` prints it beside the
    /// full run).
    #[arg(long)]
    pub retrieval_only: bool,
    #[command(flatten)]
    pub data: DataArgs,
    /// Directory of the encoder's weights.
    #[arg(long, env = "RAGROUTER_MODEL_DIR")]
    pub model_dir: Option<PathBuf>,
    /// Base URL of the OpenAI-compatible answering endpoint (else the configuration's
    /// llm.answer.base_url, else $OPENAI_BASE_URL, else OpenAI's). Needs a model to take effect.
    #[arg(long)]
    pub llm_base_url: Option<String>,
    /// Model of the answering endpoint: naming one switches the run to LLM mode. The API key is
    /// read from $OPENAI_API_KEY (or the configuration's api_key_env), never from a flag.
    #[arg(long)]
    pub llm_model: Option<String>,
}

fn default_paradigms() -> Vec<String> {
    crate::bench::AVAILABLE
        .iter()
        .map(|p| p.as_str().to_owned())
        .collect()
}
