//! `ragrouter import`: published outcome matrices into the results database, so routers see
//! them through the same routing data set as benched tuples.

use std::path::PathBuf;

use anyhow::Result;
use bench_core::{OutcomeImport, SplitTag, Store};
use corpora::outcomes::{load_adaptive_rag, load_outcomes_jsonl, ArmSpec};

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  ragrouter import adaptive-rag \\
      --queries ../shared/datasets/adaptive-rag-outcomes/classifier/data/valid.json \\
      --labels ../shared/datasets/adaptive-rag-outcomes/classifier/data/flan_t5_xl/valid.json --split test
  ragrouter import outcomes my-outcomes.jsonl --cost-unit tokens
Importing the same data twice adds nothing; an import is written whole or not at all.")]
pub struct ImportArgs {
    #[command(subcommand)]
    pub command: ImportCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum ImportCommand {
    /// A file of the generic outcome format (docs/outcomes-format.md), one question per line.
    #[command(after_help = "Example:
  ragrouter import outcomes my-outcomes.jsonl --cost-unit tokens --db imported.sqlite")]
    Outcomes(OutcomesArgs),
    /// Adaptive-RAG's classifier data (per-question EM of no / single-step / multi-step retrieval).
    #[command(after_help = "Examples:
  ragrouter import adaptive-rag --db ar.sqlite --split test \\
      --queries ../shared/datasets/adaptive-rag-outcomes/classifier/data/valid.json \\
      --labels ../shared/datasets/adaptive-rag-outcomes/classifier/data/flan_t5_xl/valid.json
  ragrouter import adaptive-rag --db ar.sqlite --split train \\
      --labels ../shared/datasets/adaptive-rag-outcomes/classifier/data/flan_t5_xl/train.json")]
    AdaptiveRag(AdaptiveRagArgs),
}

#[derive(clap::Args, Debug)]
pub struct Common {
    /// Tag the imported runs as a split of the source (`route eval --split given` trains on
    /// train and tests on test; kfold and loco use the runs not tagged train).
    #[arg(long, value_name = "train|test")]
    pub split: Option<String>,
    /// Map source strategy names to paradigms: NAME=PARADIGM (comma-separated, repeatable).
    #[arg(long, value_delimiter = ',')]
    pub arm: Vec<String>,
    /// Default cost per strategy or paradigm, used where a record gives none: NAME=NUMBER.
    #[arg(long, value_delimiter = ',')]
    pub cost: Vec<String>,
    /// Name of the source; the runs' mode is `imported:SOURCE` (default: derived from the files).
    #[arg(long)]
    pub source: Option<String>,
    /// Results database; a file or postgres://USER@HOST[:PORT]/DB.
    #[arg(
        long,
        env = "RAGROUTER_DB",
        default_value = ".ragrouter/results.sqlite",
        value_parser = crate::cli::DbParser
    )]
    pub db: bench_core::DbTarget,
}

#[derive(clap::Args, Debug)]
pub struct OutcomesArgs {
    /// The JSON-lines file.
    pub file: PathBuf,
    /// What the records' `cost` counts (shown on every cost axis and table).
    #[arg(long, default_value = "cost")]
    pub cost_unit: String,
    #[command(flatten)]
    pub common: Common,
}

#[derive(clap::Args, Debug)]
pub struct AdaptiveRagArgs {
    /// The questions: `classifier/data/valid.json` (3,000 test questions). Without it, the
    /// labels file's own questions (the training file lists only questions some strategy got right).
    #[arg(long)]
    pub queries: Option<PathBuf>,
    /// The silver labels, e.g. `classifier/data/flan_t5_xl/valid.json`; a question without a
    /// record here had no correct strategy.
    #[arg(long)]
    pub labels: PathBuf,
    #[command(flatten)]
    pub common: Common,
}

pub fn run(args: &ImportArgs) -> Result<()> {
    let (imp, db) = match &args.command {
        ImportCommand::Outcomes(a) => {
            if a.cost_unit.trim().is_empty() {
                return Err(crate::bench::BadInput(
                    "--cost-unit: empty; say what the records' cost counts (e.g. tokens)".into(),
                )
                .into());
            }
            let spec = spec(ArmSpec::identity(), &a.common)?;
            let split = split(&a.common)?;
            let imp = load_outcomes_jsonl(
                &a.file,
                &spec,
                split,
                a.common.source.as_deref(),
                &a.cost_unit,
            )?;
            (imp, &a.common.db)
        }
        ImportCommand::AdaptiveRag(a) => {
            let spec = spec(ArmSpec::adaptive_rag(), &a.common)?;
            let split = split(&a.common)?;
            let imp = load_adaptive_rag(
                a.queries.as_deref(),
                &a.labels,
                &spec,
                split,
                a.common.source.as_deref(),
            )?;
            (imp, &a.common.db)
        }
    };
    write(&imp, db)
}

fn spec(base: ArmSpec, c: &Common) -> Result<ArmSpec> {
    if c.source.as_deref().is_some_and(|s| s.trim().is_empty()) {
        return Err(crate::bench::BadInput("--source: empty; name the source".into()).into());
    }
    Ok(base.with_arms(&c.arm)?.with_costs(&c.cost)?)
}

fn split(c: &Common) -> Result<Option<SplitTag>> {
    Ok(c.split.as_deref().map(str::parse).transpose()?)
}

fn write(imp: &OutcomeImport, db: &bench_core::DbTarget) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let done = runtime.block_on(async {
        let store = Store::open_db(db).await?;
        let done = store.import_outcomes(imp).await;
        // Closed, not dropped: the last connection folds the WAL into the file.
        store.close().await;
        done
    })?;
    println!(
        "import {} ({}{}), cost in {}: {} questions into {}",
        imp.source,
        imp.mode(),
        imp.split
            .map(|s| format!(", split {s}"))
            .unwrap_or_default(),
        imp.cost_unit,
        imp.records.len(),
        db
    );
    for c in &done {
        if c.already {
            println!(
                "  {:<18} {:>5} questions, {:>6} tuples: already imported as run {}, nothing added",
                c.corpus, c.questions, c.tuples, c.run_id
            );
        } else {
            println!(
                "  {:<18} {:>5} questions, {:>6} tuples: run {}",
                c.corpus, c.questions, c.tuples, c.run_id
            );
        }
    }
    Ok(())
}
