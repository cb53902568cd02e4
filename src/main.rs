//! The `ragrouter` binary: parses the command line, picks the concrete engines, maps errors to
//! exit codes (0 success, 1 failure while running, 2 bad input or usage).
//!
//! # Modules
//!
//! - The commands, one module each under `src/commands/`: `bench`, `corpora`, `setup`, `graph`,
//!   `generate` (Algorithm 2's question sets), `metrics`, `check-llm`, `route eval` / `route list`,
//!   `report`, `import` (outcome matrices, docs/outcomes-format.md), `merge` (shard databases) and
//!   `db info`.
//! - Flag groups declared once and flattened (`src/args.rs`: `StoreArgs`, `EncoderArgs`,
//!   `LoadArgs`, `DataArgs`, `LlmArgs`).
//! - The bad-input error and the checks before any work (`src/checks.rs`).
//! - Engine assembly offline or LLM-backed, and the vector cache as the routers' question vectors
//!   (`src/engines.rs`).
//! - The corpus indicators' storage key and table (`src/indicators.rs`).
//! - `src/commands/bench/`: the command as steps (`mod.rs`: load the questions, embed, announce the
//!   mode, then `Invocation::answer`); one invocation's inputs and its main line: graph, paradigms
//!   from the registry, `start` the run, execute, the signals step, `report` (`invocation.rs`);
//!   what every run assembles first, the offline parts, the paradigms and the graph
//!   (`assemble.rs`); the run loop with budget and resume (`execute.rs`); `--retrieval-only`,
//!   offline, storing nothing (`retrieval.rs`); the dry-run estimate (`dry_run.rs`); the signals
//!   step that writes each question's signals after the tuples, resumable (`signals_step.rs`,
//!   `--probes`); what the steps share (`shared.rs`: `EmbeddedCorpus`, `Shared`, the stage
//!   clock, a leaf so no step names its parent).
//! - The end-of-run table (`src/table.rs`).
//! - The one progress-bar style (`src/progress.rs`).
//!
//! Why a crate of its own: the only place that picks concrete engines.

// The binary's doc comments are clap help text (`--db postgres://USER@HOST[:PORT]/DB`,
// `<corpus>`), shown as written, not rustdoc markup.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

mod args;
mod checks;
mod cli;
mod commands;
mod engines;
mod indicators;
mod progress;
mod table;

use clap::Parser;

use crate::cli::{Cli, Command};

/// Exit code for bad input: unknown names, malformed files, invalid configuration.
const EXIT_BAD_INPUT: i32 = 2;

fn main() {
    args::unset_empty_env();
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_new(&cli.log)
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        // Log lines pass the same masking as messages: a driver may log a URL parameter.
        .with_writer(|| Masked(std::io::stderr()))
        // Colour codes only on a terminal: piped or redirected logs stay plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let result = match cli.command {
        Command::Bench(args) => commands::bench::run(args),
        Command::Corpora(args) => commands::corpora::run(&args),
        Command::Setup(args) => commands::setup::run(&args),
        Command::CheckLlm(args) => commands::check_llm::run(&args),
        Command::Graph(args) => commands::graph::run(&args),
        Command::Generate(args) => commands::generate::run(&args),
        Command::Metrics(args) => commands::metrics::run(&args),
        Command::Route(args) => commands::route::run(&args),
        Command::Report(args) => commands::report::run(&args),
        Command::Leaderboard(args) => commands::leaderboard::run(&args),
        Command::Import(args) => commands::import::run(&args),
        Command::Merge(args) => commands::merge::run(&args),
        Command::Db(args) => commands::db::run(&args),
    };
    if let Err(err) = result {
        eprintln!("error: {}", shown(&message(&err)));
        std::process::exit(exit_code(&err));
    }
}

/// The error chain joined by ": ", each cause once: error types that print their source in
/// their own message (`"{context}: {source}"`) would otherwise repeat the OS error.
fn message(err: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in err.chain() {
        let m = cause.to_string();
        if m.is_empty() || out.ends_with(&m) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&m);
    }
    out
}

/// Standard error with every credential masked ([`store::redact`]); the log
/// formatter writes each event in one call.
struct Masked(std::io::Stderr);

impl std::io::Write for Masked {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let masked = store::redact(&String::from_utf8_lossy(buf));
        self.0.write_all(masked.as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// Longest line of an error message shown whole: a parser quoting a 200 kB line of a file
/// would otherwise flood the terminal.
const MAX_LINE: usize = 400;

/// A message as shown: every credential masked, every line cut to [`MAX_LINE`] characters.
fn shown(message: &str) -> String {
    store::redact(message)
        .lines()
        .map(|line| match line.char_indices().nth(MAX_LINE) {
            Some((cut, _)) => format!(
                "{}... ({} more characters)",
                &line[..cut],
                line[cut..].chars().count()
            ),
            None => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
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
            if let CorpusError::Core(e) = e {
                if e.is_bad_input() {
                    return EXIT_BAD_INPUT;
                }
            }
        }
        if cause
            .downcast_ref::<BenchError>()
            .is_some_and(BenchError::is_bad_input)
        {
            return EXIT_BAD_INPUT;
        }
        if cause
            .downcast_ref::<store::StoreError>()
            .is_some_and(store::StoreError::is_bad_input)
        {
            return EXIT_BAD_INPUT;
        }
        if cause.downcast_ref::<checks::BadInput>().is_some() {
            return EXIT_BAD_INPUT;
        }
        if let Some(e) = cause.downcast_ref::<metrics::corpus::MetricsError>() {
            use metrics::corpus::MetricsError as M;
            if matches!(e, M::BadLine { .. } | M::BadBytes { .. } | M::Invalid(_)) {
                return EXIT_BAD_INPUT;
            }
        }
        // A named input path that does not exist, is a directory, or is not text: the user's
        // input, not a failure while running.
        if let Some(e) = cause.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind as K;
            if matches!(e.kind(), K::NotFound | K::IsADirectory | K::InvalidData) {
                return EXIT_BAD_INPUT;
            }
        }
    }
    1
}
