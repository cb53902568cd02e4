//! 2WikiMultihopQA as HippoRAG prepared it: passages `[{title,text}]`, questions with evidence triples.

use bench_core::Document;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

use super::evidence::TitleIndex;
use super::loader::{CorpusInfo, Loader};
use super::parsed::Parsed;
use super::questions::{read_question_array, Question};
use super::records::{read_record_array, Record};
use crate::error::Result;

const CORPUS_FILE: &str = "2wikimultihopqa_corpus.json";
const QUESTIONS_FILE: &str = "2wikimultihop_questions.json";

/// 2WikiMultihopQA's registry entry.
pub(crate) const LOADER: Loader = Loader::in_folder(
    CorpusInfo {
        name: "2wiki",
        description: "2WikiMultihopQA, HippoRAG subset: 6,119 passages, 1,000 multi-hop questions",
        folder: "2wiki-hipporag",
        files: &[CORPUS_FILE, QUESTIONS_FILE],
    },
    |s| parse(s.dir, s.hint),
);

/// Reads `[{title, text}]` passages; ids are positions (`p{index}`) because titles need not be
/// unique. Shared with MuSiQue, whose corpus file has the same shape.
pub(crate) fn read_passages(path: &Path, hint: &str) -> Result<(String, Vec<Document>)> {
    read_record_array(path, hint, |i, rec| {
        Ok(Document {
            id: format!("p{i}"),
            title: rec.str("title")?.to_string(),
            text: rec.non_empty_str("text")?.to_string(),
        })
    })
}

/// The evidence triples `[[subject, relation, object], ...]`, each checked to be strings.
fn triples<'a>(rec: &Record<'a>) -> Result<Vec<&'a [Value]>> {
    rec.array("evidence")?
        .iter()
        .enumerate()
        .map(|(i, t)| match t {
            Value::Array(parts) if !parts.is_empty() && parts.iter().all(Value::is_string) => {
                Ok(parts.as_slice())
            }
            _ => Err(rec.error(
                &format!("evidence[{i}]"),
                "expected a triple [subject, relation, object] of strings",
            )),
        })
        .collect()
}

/// Reads the passages and the questions in `dir`.
fn parse(dir: &Path, hint: &str) -> Result<Parsed> {
    let (corpus_file, documents) = read_passages(&dir.join(CORPUS_FILE), hint)?;
    let titles = TitleIndex::new(documents.iter().map(|d| d.title.as_str()));

    let (queries_file, queries) = read_question_array(&dir.join(QUESTIONS_FILE), hint, |rec| {
        let triples = triples(rec)?;
        // The passage about each triple's subject is a supporting passage.
        let mut gold_docs = BTreeSet::new();
        for t in &triples {
            let subject = t[0].as_str().unwrap_or_default();
            if let Some(docs) = titles.lookup(subject) {
                gold_docs.extend(docs.iter().copied());
            }
        }
        // Each triple as compact JSON: the raw evidence, unambiguous.
        let evidence = triples
            .iter()
            .map(|t| Value::Array(t.to_vec()).to_string())
            .collect();
        // Every 2Wiki question type (compositional, comparison, inference, bridge_comparison)
        // needs two or more passages.
        let q = Question::multi_hop(rec, Vec::new(), evidence, gold_docs.into_iter().collect())?;
        Ok(Some(q))
    })?;
    Ok(Parsed::new(documents, corpus_file, queries, queries_file))
}
