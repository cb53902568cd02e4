//! `ragrouter merge`: shard databases of the same runs (`bench --shard I/N`) into one file.

use std::path::PathBuf;

use anyhow::Result;
use store::Store;

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
        return Err(crate::checks::BadInput(format!(
            "merge: {} exists; the merged database must be a new file",
            args.out.display()
        ))
        .into());
    }
    for input in &args.inputs {
        if input == &args.out {
            return Err(crate::checks::BadInput(format!(
                "merge: {} is both an input and the output",
                input.display()
            ))
            .into());
        }
    }
    check_distinct(&args.inputs)?;
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
        // The file alone holds the merge: a copy of it needs no -wal.
        out.close().await;
        for m in &merged {
            println!(
                "run {} on {}: {} tuples from {} inputs{} (key {})",
                m.id,
                store::printable(&m.corpus),
                m.tuples,
                inputs.len(),
                if m.finished { "" } else { ", unfinished" },
                store::printable(&m.run_key.chars().take(12).collect::<String>())
            );
        }
        println!("merged into {}", args.out.display());
        Ok(())
    })
}

/// Refuses an input given twice: the same file by another path (a link, `./a` and `a`), or a
/// byte-identical copy. Its tuples would be counted once and the merge would look complete. A
/// copy whose bytes differ (`VACUUM`ed) is refused by the merge, which compares what the inputs
/// hold.
fn check_distinct(inputs: &[PathBuf]) -> Result<()> {
    let twice = |a: &PathBuf, b: &PathBuf, how: &str| -> anyhow::Error {
        crate::checks::BadInput(format!(
            "merge: {} and {} are {how}: each shard must be given once",
            a.display(),
            b.display()
        ))
        .into()
    };
    let mut seen: Vec<(&PathBuf, PathBuf, u64)> = Vec::new();
    for input in inputs {
        // A missing input is reported by the merge itself, with its usual message.
        let (Ok(real), Ok(meta)) = (input.canonicalize(), std::fs::metadata(input)) else {
            continue;
        };
        if let Some((first, ..)) = seen.iter().find(|(_, r, _)| *r == real) {
            return Err(twice(first, input, "the same file"));
        }
        seen.push((input, real, meta.len()));
    }
    for (i, (a, _, len_a)) in seen.iter().enumerate() {
        for (b, _, len_b) in &seen[i + 1..] {
            if len_a == len_b && same_bytes(a, b)? {
                return Err(twice(a, b, "byte-identical copies of one shard"));
            }
        }
    }
    Ok(())
}

/// Whether two files of equal length hold the same bytes (read side by side in blocks).
fn same_bytes(a: &std::path::Path, b: &std::path::Path) -> Result<bool> {
    use std::io::Read;
    let (mut fa, mut fb) = (std::fs::File::open(a)?, std::fs::File::open(b)?);
    let (mut ba, mut bb) = (vec![0u8; 1 << 16], vec![0u8; 1 << 16]);
    loop {
        let n = fa.read(&mut ba)?;
        if n == 0 {
            return Ok(true);
        }
        fb.read_exact(&mut bb[..n])?;
        if ba[..n] != bb[..n] {
            return Ok(false);
        }
    }
}
