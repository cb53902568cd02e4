//! The generated set written in the generic format (docs/data-format.md), atomically: every file
//! goes into a sibling folder first, renamed into place at the end.

use std::collections::BTreeMap;

use bench_core::{Chunk, Corpus, QueryType};

use super::{Kept, Outcome, Statistics};
use crate::error::Result;

/// Writes the generated set in the generic format (docs/data-format.md) into `dir`, which must
/// not exist: `corpus.jsonl` (the corpus's documents), `queries.jsonl` (the kept questions, their
/// evidence the source documents' ids, their provenance), `corpus.toml` (`name`) and
/// `construction.json` (the statistics). Everything is written into a sibling folder first and
/// renamed at the end, so an interrupted run leaves no half-written set.
pub fn write_set(
    dir: &std::path::Path,
    name: &str,
    corpus: &Corpus,
    kept: &[Kept],
    stats: &Statistics,
) -> Result<()> {
    use crate::error::CorpusError;
    let shown = dir.display().to_string();
    if dir.exists() {
        return Err(CorpusError::io(
            format!("writing the generated set: {shown} already exists (choose a new --out)"),
            std::io::Error::from(std::io::ErrorKind::AlreadyExists),
        ));
    }
    let file_name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "generated".into());
    let tmp = partial_dir(dir, &file_name)?;
    write_file(&tmp, "corpus.jsonl", documents_jsonl(corpus))?;
    write_file(&tmp, "queries.jsonl", queries_jsonl(corpus, kept, stats))?;
    write_file(&tmp, "corpus.toml", corpus_toml(name, corpus, stats))?;
    write_file(
        &tmp,
        "construction.json",
        serde_json::to_string_pretty(stats).expect("serialisable") + "\n",
    )?;
    std::fs::rename(&tmp, dir)
        .map_err(|e| CorpusError::io(format!("moving {} to {shown}", tmp.display()), e))
}

/// Writes `text` into `tmp/file` and syncs it.
fn write_file(tmp: &std::path::Path, file: &str, text: String) -> Result<()> {
    use std::io::Write;
    let io = |e| crate::error::CorpusError::io(format!("writing into {}", tmp.display()), e);
    let mut f = std::fs::File::create(tmp.join(file)).map_err(io)?;
    f.write_all(text.as_bytes()).map_err(io)?;
    f.sync_all().map_err(io)
}

/// `corpus.jsonl`: the corpus's documents, one line each.
fn documents_jsonl(corpus: &Corpus) -> String {
    let mut docs = String::new();
    for d in &corpus.documents {
        let line = serde_json::json!({"id": d.id, "title": d.title, "text": d.text});
        docs.push_str(&line.to_string());
        docs.push('\n');
    }
    docs
}

/// `queries.jsonl`: the kept questions, numbered per type, their evidence the source documents'
/// ids, with their provenance.
fn queries_jsonl(corpus: &Corpus, kept: &[Kept], stats: &Statistics) -> String {
    let mut queries = String::new();
    let mut per_type: BTreeMap<QueryType, usize> = BTreeMap::new();
    for k in kept {
        let c = &k.candidate;
        let n = per_type.entry(c.qtype).or_default();
        *n += 1;
        let chunks: Vec<&Chunk> = c
            .sources
            .iter()
            .filter_map(|&r| corpus.chunks.get(r as usize))
            .collect();
        let mut documents: Vec<&str> = chunks.iter().map(|ch| ch.document.as_str()).collect();
        documents.dedup();
        let filters: BTreeMap<&str, Outcome> =
            k.filters.iter().map(|(f, o)| (f.as_str(), *o)).collect();
        let line = serde_json::json!({
            "id": format!("gen-{}-{:04}", c.qtype.as_str(), n),
            "question": c.question,
            "answers": [c.answer],
            "type": c.qtype.as_str(),
            "evidence": documents,
            "provenance": {
                "corpus": corpus.name,
                "corpus_hash": corpus.content_hash,
                "source_chunks": chunks.iter().map(|ch| ch.id.as_str()).collect::<Vec<_>>(),
                "generator": stats.generator,
                "filters": filters,
            },
        });
        queries.push_str(&line.to_string());
        queries.push('\n');
    }
    queries
}

/// `corpus.toml`: the set's name and a description naming its source corpus and generator.
fn corpus_toml(name: &str, corpus: &Corpus, stats: &Statistics) -> String {
    format!(
        "name = {}\ndescription = {}\n",
        toml_string(name),
        toml_string(&format!(
            "questions generated from {} by {} (ragrouter generate)",
            corpus.name, stats.generator
        ))
    )
}

/// A new folder `.<name>.partial-<pid>[-n]` beside `dir`, created exclusively: a folder of that
/// name that was there before is left alone (another name is taken), never emptied.
fn partial_dir(dir: &std::path::Path, file_name: &str) -> Result<std::path::PathBuf> {
    let pid = std::process::id();
    for n in 0..1000u32 {
        let tmp = match n {
            0 => dir.with_file_name(format!(".{file_name}.partial-{pid}")),
            n => dir.with_file_name(format!(".{file_name}.partial-{pid}-{n}")),
        };
        if let Some(parent) = tmp.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| {
                crate::error::CorpusError::io(format!("creating {}", parent.display()), e)
            })?;
        }
        match std::fs::create_dir(&tmp) {
            Ok(()) => return Ok(tmp),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(crate::error::CorpusError::io(
                    format!("creating {}", tmp.display()),
                    e,
                ))
            }
        }
    }
    Err(crate::error::CorpusError::io(
        format!("writing the generated set: 1000 names .{file_name}.partial-{pid}-N are taken"),
        std::io::Error::from(std::io::ErrorKind::AlreadyExists),
    ))
}

fn toml_string(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}
