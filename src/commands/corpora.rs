//! `ragrouter corpora`: the corpus registry and where each corpus's files are looked for.

use crate::args::DataArgs;

pub fn run(args: &DataArgs) -> anyhow::Result<()> {
    let dir = corpora::find_data_dir(args.data_dir.as_deref());
    match &dir.path {
        Some(p) => println!("data directory: {} (from {})", p.display(), dir.source),
        None => println!(
            "data directory: none found (give --data-dir or set RAGROUTER_DATA_DIR; \
             ../shared/datasets is used when it exists)"
        ),
    }
    println!();
    for loc in &dir.corpora {
        let status = if loc.info.is_embedded() {
            "embedded"
        } else if loc.available {
            "available"
        } else {
            "missing"
        };
        println!(
            "{:<12} {:<9} {}",
            loc.info.name, status, loc.info.description
        );
        for f in &loc.files {
            let mark = if f.exists { "ok " } else { "-- " };
            println!("{:<12} {mark}{}", "", f.path.display());
        }
    }
    println!();
    println!("Any data set in the generic format: jsonl:<dir> (see docs/data-format.md).");
    Ok(())
}
