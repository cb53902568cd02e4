//! The `ragrouter` binary: parses the command line, picks the concrete engines, maps errors to
//! exit codes (0 success, 1 failure while running, 2 bad input or usage).

mod bench;
mod cli;
mod commands;
mod table;

use clap::Parser;

use crate::cli::{Cli, Command};

/// Exit code for bad input: unknown names, malformed files, invalid configuration.
const EXIT_BAD_INPUT: i32 = 2;

fn main() {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_new(&cli.log)
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let result = match cli.command {
        Command::Bench(args) => bench::run(args),
        Command::Corpora(args) => commands::corpora::run(&args),
        Command::Setup(args) => commands::setup::run(&args),
        Command::CheckLlm(args) => commands::check_llm::run(&args),
        Command::Graph(args) => commands::graph::run(&args),
        Command::Metrics(args) => commands::metrics::run(&args),
        Command::Route(args) => commands::route::run(&args),
        Command::Report(args) => commands::report::run(&args),
        Command::Import(args) => commands::import::run(&args),
    };
    if let Err(err) = result {
        eprintln!("error: {err:#}");
        std::process::exit(exit_code(&err));
    }
}

fn exit_code(err: &anyhow::Error) -> i32 {
    use bench_core::BenchError;
    use corpora::CorpusError;
    for cause in err.chain() {
        if let Some(e) = cause.downcast_ref::<CorpusError>() {
            if matches!(
                e,
                CorpusError::Malformed { .. } | CorpusError::UnknownCorpus { .. }
            ) {
                return EXIT_BAD_INPUT;
            }
        }
        if let Some(BenchError::Invalid(_)) = cause.downcast_ref::<BenchError>() {
            return EXIT_BAD_INPUT;
        }
        if cause.downcast_ref::<bench::BadInput>().is_some() {
            return EXIT_BAD_INPUT;
        }
    }
    1
}
