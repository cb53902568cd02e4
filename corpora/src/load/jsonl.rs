//! The generic format (docs/data-format.md): a folder with `corpus.jsonl` and `queries.jsonl`.

use bench_core::{Document, GoldAnswer, Query, QueryType};
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use super::evidence::TitleIndex;
use super::parsed::{Parsed, PendingQuery};
use super::records::{malformed, parse_jsonl, read_file, Record};
use crate::error::Result;

pub(crate) const CORPUS_FILE: &str = "corpus.jsonl";
pub(crate) const QUERIES_FILE: &str = "queries.jsonl";
pub(crate) const MANIFEST_FILE: &str = "corpus.toml";

/// `corpus.toml`: what the files do not say about the corpus.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    /// The short name tables and figures show; the folder's name when absent.
    name: Option<String>,
    /// Free text for the record (where the data came from, its licence).
    #[allow(dead_code)]
    description: Option<String>,
}

/// The corpus's short name: `corpus.toml`'s `name`, else the folder's name. Its identity is its
/// content hash, so the same files reached by any path are one corpus.
fn short_name(dir: &Path) -> Result<String> {
    let manifest = dir.join(MANIFEST_FILE);
    let shown = manifest.display().to_string();
    // No manifest is fine; one that is there must be a regular file under the input cap.
    let read = match std::fs::symlink_metadata(&manifest) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        _ => Some(bench_core::input::read_input(&manifest, "manifest")?),
    };
    let (name, file) = match read {
        Some(bytes) => {
            // Not UTF-8: the error names the line of the first bad byte.
            let text = bench_core::input::decode_utf8(bytes, &shown)?;
            let m: Manifest = toml::from_str(&text).map_err(|e| {
                malformed(&shown, "whole file", format!("not a valid manifest: {e}"))
            })?;
            (m.name, Some(shown))
        }
        None => (None, None),
    };
    let name = match name {
        Some(n) => n,
        None => dir
            .canonicalize()
            .ok()
            .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| dir.display().to_string()),
    };
    let bad = |why: &str| {
        let (file, location) = match &file {
            Some(f) => (f.clone(), "field \"name\"".to_string()),
            None => (dir.display().to_string(), "the folder's name".to_string()),
        };
        Err(malformed(
            &file,
            location,
            format!("corpus name {} {why}", super::names::quoted_name(&name)),
        ))
    };
    if let Err(why) = super::names::check_corpus_name(&name) {
        return bad(&format!("{why} (set one in corpus.toml: name = \"...\")"));
    }
    Ok(name)
}

/// Reads `<dir>/corpus.jsonl` and `<dir>/queries.jsonl`.
pub(crate) fn parse_dir(dir: &Path) -> Result<Parsed> {
    let hint = format!(
        "the generic format needs {CORPUS_FILE} and {QUERIES_FILE} in {} (docs/data-format.md)",
        dir.display()
    );
    let corpus_path = dir.join(CORPUS_FILE);
    let queries_path = dir.join(QUERIES_FILE);
    let corpus_text = read_file(&corpus_path, &hint)?;
    let queries_text = read_file(&queries_path, &hint)?;
    let name = short_name(dir)?;
    let mut parsed = parse_texts(
        &corpus_path.display().to_string(),
        &corpus_text,
        &queries_path.display().to_string(),
        &queries_text,
    )?;
    parsed.name = Some(name);
    Ok(parsed)
}

/// Parses the two files' contents; the names are only used in errors.
pub(crate) fn parse_texts(
    corpus_file: &str,
    corpus_text: &str,
    queries_file: &str,
    queries_text: &str,
) -> Result<Parsed> {
    let mut documents = Vec::new();
    let mut doc_lines: HashMap<String, usize> = HashMap::new();
    for (line, v) in parse_jsonl(corpus_file, corpus_text)? {
        let rec = Record::new(corpus_file, format!("line {line}"), &v)?;
        let id = rec.non_empty_str("id")?;
        let rec = rec.with_id(id);
        if let Some(first) = doc_lines.insert(id.to_string(), line) {
            return Err(rec.error(
                "id",
                format_args!("duplicate document id {id:?} (first at line {first})"),
            ));
        }
        documents.push(Document {
            id: id.to_string(),
            title: rec.opt_str("title")?.unwrap_or_default().to_string(),
            text: rec.non_empty_str("text")?.to_string(),
        });
    }
    let titles = TitleIndex::new(documents.iter().map(|d| d.title.as_str()));
    let doc_index: HashMap<&str, usize> = documents
        .iter()
        .enumerate()
        .map(|(i, d)| (d.id.as_str(), i))
        .collect();

    let mut queries = Vec::new();
    for (line, v) in parse_jsonl(queries_file, queries_text)? {
        let rec = Record::new(queries_file, format!("line {line}"), &v)?;
        let id = rec.non_empty_str("id")?;
        let rec = rec.with_id(id);
        let text = rec.non_empty_str("question")?;
        let mut answers = rec.str_list("answers")?.into_iter();
        let answer = match answers.next() {
            Some(a) if !a.trim().is_empty() => a,
            _ => {
                return Err(rec.error(
                    "answers",
                    "expected a non-empty array whose first element is the answer",
                ))
            }
        };
        let mut aliases: Vec<String> = answers.collect();
        aliases.extend(rec.opt_str_list("aliases")?);
        let raw_type = rec.non_empty_str("type")?;
        let qtype: QueryType = raw_type.parse().map_err(|_| {
            rec.error(
                "type",
                format_args!("expected factual, reasoning, summary or other, found {raw_type:?}"),
            )
        })?;
        let evidence = rec.opt_str_list("evidence")?;
        // A document id, then a document title, makes its whole document gold; anything else
        // is a sentence that the gold chunks contain.
        let mut gold_docs = BTreeSet::new();
        let mut gold_sentences = Vec::new();
        for e in &evidence {
            if let Some(&d) = doc_index.get(e.as_str()) {
                gold_docs.insert(d);
                continue;
            }
            match titles.lookup(e) {
                Some(docs) => gold_docs.extend(docs.iter().copied()),
                None => gold_sentences.push(e.clone()),
            }
        }
        queries.push(PendingQuery {
            query: Query {
                id: id.to_string(),
                text: text.to_string(),
                qtype,
                gold: GoldAnswer { answer, aliases },
                evidence,
                gold_chunks: Vec::new(),
                gold_documents: Vec::new(),
                statements: Vec::new(),
            },
            location: rec.location().to_string(),
            gold_docs: gold_docs.into_iter().collect(),
            gold_sentences,
        });
    }
    if documents.is_empty() {
        // Checked here as well as in assemble so that the message says what a line looks like.
        return Err(malformed(
            corpus_file,
            "whole file",
            "the corpus is empty: expected one JSON object per line with \"id\" and \"text\"",
        ));
    }
    Ok(Parsed {
        documents,
        corpus_file: corpus_file.to_string(),
        queries,
        queries_file: queries_file.to_string(),
        name: None,
        evidence_must_resolve: false,
    })
}
