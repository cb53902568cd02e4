//! `ragrouter merge`: shard databases of the same runs (`bench --shard I/N`) into one file.

use std::path::PathBuf;

use anyhow::Result;
use bench_core::Store;

#[derive(clap::Args, Debug)]
#[command(after_help = "Example:
  ragrouter bench 2wiki --shard 1/2 --db a.sqlite      # on one machine
  ragrouter bench 2wiki --shard 2/2 --db b.sqlite      # on another
  ragrouter merge all.sqlite a.sqlite b.sqlite
The output must be new; inputs holding different runs (another corpus, configuration, mode or
model) are refused and nothing is written.")]
pub struct MergeArgs {
    /// The merged results database (a new file).
    pub out: PathBuf,
    /// Shard databases of the same runs (at most 9).
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
}

pub fn run(args: &MergeArgs) -> Result<()> {
    if args.out.exists() {
        return Err(crate::bench::BadInput(format!(
            "merge: {} exists; the merged database must be a new file",
            args.out.display()
        ))
        .into());
    }
    for input in &args.inputs {
        if input == &args.out {
            return Err(crate::bench::BadInput(format!(
                "merge: {} is both an input and the output",
                input.display()
            ))
            .into());
        }
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        // `merge_from` checks the inputs (schema, same runs) before it writes; on any error the
        // new output file is removed, so nothing is left behind.
        let inputs: Vec<&std::path::Path> = args.inputs.iter().map(PathBuf::as_path).collect();
        let out = Store::open(&args.out).await?;
        let merged = match out.merge_from(&inputs).await {
            Ok(m) => m,
            Err(e) => {
                out.close().await;
                for suffix in ["", "-wal", "-shm"] {
                    let _ = std::fs::remove_file(format!("{}{suffix}", args.out.display()));
                }
                return Err(e.into());
            }
        };
        for m in &merged {
            println!(
                "run {} on {}: {} tuples from {} inputs{} (key {})",
                m.id,
                m.corpus,
                m.tuples,
                inputs.len(),
                if m.finished { "" } else { ", unfinished" },
                &m.run_key[..m.run_key.len().min(12)]
            );
        }
        println!("merged into {}", args.out.display());
        Ok(())
    })
}
