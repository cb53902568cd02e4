//! `ragrouter setup`: fetch and verify the encoder's weights ahead of a run.

use crate::cli::SetupArgs;

pub fn run(args: &SetupArgs) -> anyhow::Result<()> {
    args.encoder.check()?;
    let files = corpora::ensure_model(args.encoder.model_dir.as_deref())?;
    println!("encoder weights ready in {}", files.dir.display());
    Ok(())
}
