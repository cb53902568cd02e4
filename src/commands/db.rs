//! `ragrouter db info FILE`: whether a file is a ragrouter results database, its schema version
//! and what it holds, read without changing a byte or creating a file beside it.

use std::path::PathBuf;

use store::Store;

#[derive(clap::Args, Debug)]
#[command(after_help = "Example:\n  ragrouter db info .ragrouter/results.sqlite")]
pub struct DbArgs {
    #[command(subcommand)]
    pub command: DbCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum DbCommand {
    /// Say whether FILE is a ragrouter results database (by its application id, or, written
    /// before it, by its exact schema), its schema version, and its tables with their rows.
    #[command(after_help = "Examples:
  ragrouter db info .ragrouter/results.sqlite
  ragrouter db info some-app.db      # another application's file: says why it is not ours
Nothing is written: a file that is not ours stays byte-identical, with no -wal or -shm beside it.
So a -wal without its -shm is not read: the counts then say they leave it out, and how long it is.
A directory, a FIFO, a loop of symbolic links, or a file that is not SQLite or is truncated exits 2.
Another process holding the store's lock for 5 s is said so (exit 1).")]
    Info {
        /// The SQLite file.
        file: PathBuf,
    },
}

pub fn run(args: &DbArgs) -> anyhow::Result<()> {
    match &args.command {
        DbCommand::Info { file } => {
            if file.to_string_lossy().contains("://") {
                return Err(crate::checks::BadInput(format!(
                    "db info {}: takes an SQLite file, not a URL",
                    store::redact(&file.to_string_lossy())
                ))
                .into());
            }
            let info = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?
                .block_on(Store::info(file))?;
            print!("{info}");
            Ok(())
        }
    }
}
