//! `ragrouter setup`: fetch and verify the encoder's weights ahead of a run.

use crate::cli::SetupArgs;

pub fn run(args: &SetupArgs) -> anyhow::Result<()> {
    if let Some(dir) = &args.model_dir {
        super::check_folder("--model-dir", dir)?;
    }
    let files = corpora::embed::ensure_model(args.model_dir.as_deref())?;
    println!("encoder weights ready in {}", files.dir.display());
    Ok(())
}
