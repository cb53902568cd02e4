//! `ragrouter report`: figures, tables, exports and the HTML report of stored runs.

use std::path::PathBuf;

use anyhow::Context;
use store::Store;

/// Arguments of `ragrouter report`.
#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// Only these corpora (comma-separated; default: every corpus with a run). `--corpora` as in
    /// `route eval`.
    #[arg(long, visible_alias = "corpora", value_delimiter = ',')]
    pub corpus: Vec<String>,
    /// These runs (repeatable; default: the latest run with results of each corpus). `--runs`
    /// as in `route eval`.
    #[arg(
        long = "run",
        visible_alias = "runs",
        value_name = "ID",
        value_delimiter = ','
    )]
    pub runs: Vec<i64>,
    /// These router evaluations (repeatable; default: the latest of each feature set and split,
    /// among those made on exactly the report's runs where any were).
    #[arg(long = "eval", value_name = "ID")]
    pub evals: Vec<i64>,
    /// Output folder (created if needed): replaced whole by the new report; a folder holding
    /// files no earlier report wrote (see its report-manifest.json) is refused.
    #[arg(long)]
    pub out: PathBuf,
    #[command(flatten)]
    pub store: crate::args::StoreArgs,
}

/// Loads the selection and writes the report; prints what was written and what is missing.
pub fn run(args: &ReportArgs) -> anyhow::Result<()> {
    crate::checks::check_folder("--out", &args.out)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    // Before any work: the folder must be new, empty or an earlier report's.
    reports::check_out_dir(&args.out)?;
    let data = runtime.block_on(async {
        // Reading only: a missing, empty or foreign file is refused, never given a schema; a
        // store in a folder the user cannot write is read.
        let store = Store::open_read_only_db(&args.store.db).await?;
        reports::load(
            &store,
            &reports::Selection {
                corpora: args.corpus.clone(),
                runs: args.runs.clone(),
                evals: args.evals.clone(),
            },
        )
        .await
    })?;
    let written = reports::write_report(&data, &args.out)
        .with_context(|| format!("writing the report into {}", args.out.display()))?;
    println!(
        "report of {} run(s) ({} tuples) and {} router evaluation(s) written to {}: {} files",
        data.runs.len(),
        data.tuples.len(),
        data.evals.len(),
        args.out.display(),
        written.files.len()
    );
    for m in &written.missing {
        println!("note: {m}");
    }
    println!("open {}", args.out.join("report.html").display());
    Ok(())
}
