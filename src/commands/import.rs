//! `ragrouter import`: published outcome matrices into the results database, so routers see
//! them through the same routing data set as benched tuples.

use std::path::PathBuf;

use anyhow::Result;
use bench_core::{GoldAnswer, OutcomeImport, ParadigmId, Signal, SplitTag};
use corpora::{load_adaptive_rag, load_adarague, load_outcomes_jsonl, AdaragueOptions, ArmSpec};
use store::Store;

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  ragrouter import adaptive-rag \\
      --queries ../shared/datasets/adaptive-rag-outcomes/classifier/data/valid.json \\
      --labels ../shared/datasets/adaptive-rag-outcomes/classifier/data/flan_t5_xl/valid.json --split test
  ragrouter import adarague ../shared/datasets/adarague-llama8b --db adarague.sqlite
  ragrouter import adarague ../shared/datasets/adarague-llama8b --pairs --db adarague-pairs.sqlite
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
    /// AdaRAGUE's LLaMA-3.1-8B outcomes with answers (test and training splits, the published
    /// classifier's choices, SeaKR's uncertainty), as upstream ships them.
    #[command(after_help = "Example:
  ragrouter import adarague ../shared/datasets/adarague-llama8b --db adarague.sqlite")]
    Adarague(AdarogueArgs),
}

#[derive(clap::Args, Debug)]
pub struct AdarogueArgs {
    /// The folder (`../shared/datasets/adarague-llama8b`).
    pub dir: PathBuf,
    /// The test questions' text [default: DIR/../adaptive-rag-outcomes/classifier/data/valid.json].
    #[arg(long)]
    pub queries: Option<PathBuf>,
    /// Name of the source; the runs' mode is `imported:SOURCE` [default: adarague/llama_8b_it].
    #[arg(long)]
    pub source: Option<String>,
    #[command(flatten)]
    pub pairs: PairsArg,
    #[command(flatten)]
    pub store: crate::args::StoreArgs,
}

#[derive(clap::Args, Debug)]
pub struct PairsArg {
    /// Also derive the `pairs` probe's signals from the answers: every pair of answered arms
    /// compared, each answer's shape (docs/outcomes-format.md). Off by default: a router that
    /// reads them through `--features p` pays every arm they compare, the expensive ones too;
    /// a cascade reads each once its arms have run.
    #[arg(long)]
    pub pairs: bool,
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
    #[command(flatten)]
    pub store: crate::args::StoreArgs,
}

#[derive(clap::Args, Debug)]
pub struct OutcomesArgs {
    /// The JSON-lines file.
    pub file: PathBuf,
    /// What the records' `cost` counts (shown on every cost axis and table).
    #[arg(long, default_value = "cost")]
    pub cost_unit: String,
    #[command(flatten)]
    pub pairs: PairsArg,
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
    if let ImportCommand::Adarague(a) = &args.command {
        let mut imps = load_adarague(&AdaragueOptions {
            dir: a.dir.clone(),
            queries: a.queries.clone(),
            source: a.source.clone(),
        })?;
        for imp in &mut imps {
            score_answers(imp, a.pairs.pairs);
        }
        return write_all(&imps, &a.store.db);
    }
    let mut pairs = false;
    let (mut imp, db) = match &args.command {
        ImportCommand::Outcomes(a) => {
            if a.cost_unit.trim().is_empty() {
                return Err(crate::checks::BadInput(
                    "--cost-unit: empty; say what the records' cost counts (e.g. tokens)".into(),
                )
                .into());
            }
            pairs = a.pairs.pairs;
            let spec = spec(ArmSpec::identity(), &a.common)?;
            let split = split(&a.common)?;
            let imp = load_outcomes_jsonl(
                &a.file,
                &spec,
                split,
                a.common.source.as_deref(),
                &a.cost_unit,
            )?;
            (imp, &a.common.store.db)
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
            (imp, &a.common.store.db)
        }
        ImportCommand::Adarague(_) => unreachable!("handled above"),
    };
    score_answers(&mut imp, pairs);
    write_all(std::slice::from_ref(&imp), db)
}

/// The harness scores every imported answer against the record's gold answers: `correct` is its
/// normalised exact match, `score` its token F1, and the source's verdict stays beside them.
/// A record with answers of both cheap arms (LLM-only and NaiveRAG) gains the answer-agreement
/// probe's six signals, billed as those two arms; with `pairs`, one with answers of two arms or
/// more gains the `pairs` probe's signals, each billed as the arms it compares.
pub fn score_answers(imp: &mut OutcomeImport, pairs: bool) {
    let cheap = [ParadigmId::LlmOnly, ParadigmId::Naive];
    for r in &mut imp.records {
        let Some((first, rest)) = r.answers.split_first() else {
            continue;
        };
        let gold = GoldAnswer {
            answer: first.clone(),
            aliases: rest.to_vec(),
        };
        let score = |answer: &str| metrics::answer::answer_quality(answer, &gold);
        for (_, o) in &mut r.outcomes {
            if let Some(a) = &o.answer {
                let q = score(a);
                o.correct = q.em >= 1.0;
                o.score = Some(q.f1);
            }
        }
        for c in &mut r.published {
            if let Some(a) = &c.answer {
                c.correct = score(a).em >= 1.0;
            }
        }
        let answer_of = |p: ParadigmId| {
            r.outcomes
                .iter()
                .find(|(q, _)| *q == p)
                .and_then(|(_, o)| o.answer.clone())
        };
        if let (Some(a), Some(b)) = (answer_of(cheap[0]), answer_of(cheap[1])) {
            let names = metrics::agreement::agreement_names(cheap[0].as_str(), cheap[1].as_str());
            let values = metrics::agreement::agreement_signals(&a, &b);
            for (n, v) in names.iter().zip(values) {
                if !r.signals.iter().any(|s| s.name == *n) {
                    r.signals.push(Signal::free(n, Some(v), "answers", &cheap));
                }
            }
        }
        if pairs {
            add_pairs(r);
        }
    }
}

/// The post-arm probe's signals (`pairs`) of a record with at least two answered arms: every
/// pair of answers compared and each answer's shape, computed by the function the bench's probe
/// step calls. A signal the record already carries under the same name is kept as given.
fn add_pairs(r: &mut bench_core::OutcomeRecord) {
    let answers: Vec<(ParadigmId, &str)> = r
        .outcomes
        .iter()
        .filter_map(|(p, o)| o.answer.as_deref().map(|a| (*p, a)))
        .collect();
    if answers.len() < 2 {
        return;
    }
    let derived = metrics::pairs::pairs_signals(&r.question, &answers);
    for s in derived {
        if !r.signals.iter().any(|x| x.name == s.name) {
            r.signals.push(s);
        }
    }
}

fn spec(base: ArmSpec, c: &Common) -> Result<ArmSpec> {
    if c.source.as_deref().is_some_and(|s| s.trim().is_empty()) {
        return Err(crate::checks::BadInput("--source: empty; name the source".into()).into());
    }
    Ok(base.with_arms(&c.arm)?.with_costs(&c.cost)?)
}

fn split(c: &Common) -> Result<Option<SplitTag>> {
    Ok(c.split.as_deref().map(str::parse).transpose()?)
}

fn write_all(imps: &[OutcomeImport], db: &store::DbTarget) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let done = runtime.block_on(async {
        let store = Store::open_db(db).await?;
        let done = store.import_outcomes_all(imps).await;
        // Closed, not dropped: the last connection folds the WAL into the file.
        store.close().await;
        done
    })?;
    let mut done = done.into_iter();
    for imp in imps {
        report(imp, db, done.by_ref().take(imp.by_corpus().len()).collect());
    }
    Ok(())
}

fn report(imp: &OutcomeImport, db: &store::DbTarget, done: Vec<store::ImportedCorpus>) {
    let signals: usize = imp.records.iter().map(|r| r.signals.len()).sum();
    let published: usize = imp.records.iter().map(|r| r.published.len()).sum();
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
            if let Some(earlier) = c.earlier {
                eprintln!(
                    "warning: corpus {}: run {earlier} of the same source and split holds other \
                     outcomes (the same questions with other labels?); route eval reads the \
                     latest, run {}",
                    c.corpus, c.run_id
                );
            }
        }
    }
    if signals + published > 0 {
        println!("  {signals} signals, {published} published router choices");
    }
}
