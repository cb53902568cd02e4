//! The flags of `ragrouter route eval`.

use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct RouteEvalArgs {
    /// Comma-separated router names (see `ragrouter route list`), or `all`.
    #[arg(long, value_delimiter = ',', default_value = "all")]
    pub routers: Vec<String>,
    /// An external router speaking docs/router-protocol.md: NAME='PROGRAM ARGS...' or
    /// external:PROGRAM (repeatable; the argv is split on whitespace, no shell).
    #[arg(long = "external", value_name = "NAME=PROGRAM ARGS")]
    pub external: Vec<String>,
    /// Seconds an external router may take per request before it is killed (above 0, at most
    /// 86400: a day).
    #[arg(long, default_value_t = 60.0)]
    pub external_timeout: f64,
    /// Features the routers see: q (query), c (corpus indicators), p (probe signals) or a
    /// combination (q+c, q+p, c+p, q+c+p). A router that reads p pays the probe's cost; p
    /// reads at most 1000 distinct signals (more is refused).
    #[arg(long, default_value = "q+c")]
    pub features: String,
    /// Allow runs of different imported sources in one data set (by default `route eval`
    /// refuses to pool, e.g., the FLAN-T5 and the LLaMA-8B Adaptive-RAG imports). Questions
    /// found in more than one source (same text) are counted in a warning on stderr.
    #[arg(long)]
    pub pool_sources: bool,
    /// Number of folds of the stratified k-fold split.
    #[arg(long, default_value_t = 5)]
    pub folds: usize,
    /// kfold (stratified by label), loco (leave one corpus out) or given (train on runs tagged
    /// train, test on runs tagged test, e.g. imported with --split; test questions also found
    /// among the training ones are counted in a warning on stderr).
    #[arg(long, default_value = "kfold")]
    pub split: String,
    /// Restrict the label space to these paradigms (comma-separated; default every paradigm
    /// with tuples). The paper's Table 3: llm-only,naive,graph,hybrid,iterative.
    #[arg(long, value_delimiter = ',')]
    pub classes: Vec<String>,
    /// Inputs of the traditional ML routers: harness (every query feature) or paper (Appendix
    /// D.2: the query-type one-hot, plus the corpus indicators under q+c).
    #[arg(long, default_value = "harness")]
    pub inputs: String,
    /// Random baseline: paradigms (uniform over the paradigms) or all-classes (uniform over
    /// every class, cannot-answer included, as the paper's).
    #[arg(long, default_value = "paradigms")]
    pub random: String,
    /// What a cannot-answer prediction plays: utility (per question, the paradigm a calibrated
    /// estimate fitted on the training folds ranks first) or most-frequent (the paper's).
    #[arg(long, default_value = "utility")]
    pub fallback: String,
    /// Print the tables as one JSON document instead.
    #[arg(long)]
    pub json: bool,
    /// Show every corpus's R.A, F1, MRR and C.R in Table 3 (wider than 100 columns); by default
    /// the table fits 100 columns.
    #[arg(long)]
    pub wide: bool,
    /// Seeds the folds and every router.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Label policy: judge-then-semantic-f1 (the paper's) or cheapest-correct. Default: for
    /// offline runs cheapest-correct (the paradigm with the fewest context tokens whose
    /// delivered context holds the answer; decisions.md, "Labels for routing"), for LLM runs
    /// judge-then-semantic-f1.
    #[arg(long)]
    pub policy: Option<String>,
    /// Restrict to these corpora (comma-separated; default every corpus with results).
    #[arg(long, value_delimiter = ',')]
    pub corpora: Vec<String>,
    /// Use these run ids (comma-separated, one per corpus) instead of each corpus's latest run.
    #[arg(long, value_delimiter = ',')]
    pub runs: Vec<i64>,
    #[command(flatten)]
    pub store: crate::args::StoreArgs,
    /// Directory for cached vectors (question embeddings).
    #[arg(long, default_value = ".ragrouter/cache")]
    pub cache_dir: PathBuf,
    #[command(flatten)]
    pub encoder: crate::args::EncoderArgs,
    /// Model of the OpenAI-compatible endpoint for routers that call an LLM (`llm-router`);
    /// without it they are skipped. The API key is read from $OPENAI_API_KEY, never a flag.
    #[arg(long)]
    pub llm_model: Option<String>,
    /// Base URL of that endpoint (else $OPENAI_BASE_URL, else OpenAI's).
    #[arg(long)]
    pub llm_base_url: Option<String>,
}
