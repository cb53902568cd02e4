//! The flags of `ragrouter leaderboard` and `ragrouter leaderboard verify`.

use std::path::PathBuf;

/// `ragrouter leaderboard`: build the board, or `verify` one.
#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct LeaderboardArgs {
    #[command(subcommand)]
    pub command: Option<LeaderboardCommand>,
    #[command(flatten)]
    pub build: BuildArgs,
}

#[derive(clap::Subcommand, Debug)]
pub enum LeaderboardCommand {
    /// Re-score every predictions file of a board against the stores and recompute every
    /// number of its leaderboard.json: exit 0, or 1 naming the first mismatch.
    #[command(
        after_help = "Example:\n  ragrouter leaderboard verify docs/leaderboard --db stores/offline.sqlite --db stores/adarague.sqlite"
    )]
    Verify(VerifyArgs),
}

/// The flags of a build.
#[derive(clap::Args, Debug)]
pub struct BuildArgs {
    /// A results store (repeatable: one per import): each gives one or more outcome matrices.
    #[arg(long = "db", value_name = "DB", value_parser = crate::args::DbParser, required = true)]
    pub dbs: Vec<store::DbTarget>,
    /// Output folder (created if needed): replaced whole by the new board; a folder holding
    /// files no earlier board or report wrote is refused.
    #[arg(long, required = true)]
    pub out: Option<PathBuf>,
    /// Comma-separated built-in router names (see `ragrouter route list`), or `all` (the opt-in
    /// ones only when named). The baselines are always on the board.
    #[arg(long, value_delimiter = ',', default_value = "all")]
    pub routers: Vec<String>,
    /// An external router speaking docs/router-protocol.md: NAME='PROGRAM ARGS...' (repeatable).
    #[arg(long = "external", value_name = "NAME=PROGRAM ARGS")]
    pub external: Vec<String>,
    /// Seconds an external router may take per request before it is killed (above 0, at most
    /// 86400).
    #[arg(long, default_value_t = 60.0)]
    pub external_timeout: f64,
    /// Evaluate these routers again even where the store holds their evaluation
    /// (comma-separated names, or `all`).
    #[arg(long, value_delimiter = ',')]
    pub refresh: Vec<String>,
    /// Directory for cached vectors (question embeddings).
    #[arg(long, default_value = ".ragrouter/cache")]
    pub cache_dir: PathBuf,
    #[command(flatten)]
    pub encoder: crate::args::EncoderArgs,
}

/// The flags of `verify`.
#[derive(clap::Args, Debug)]
pub struct VerifyArgs {
    /// The board's folder (as written by `ragrouter leaderboard --out`).
    pub dir: PathBuf,
    /// The stores the board was built from (repeatable).
    #[arg(long = "db", value_name = "DB", value_parser = crate::args::DbParser, required = true)]
    pub dbs: Vec<store::DbTarget>,
}
