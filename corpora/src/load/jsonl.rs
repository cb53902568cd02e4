//! The generic format's two files (docs/data-format.md): documents and questions as JSON lines
//! (the embedded demo is read by this too; `jsonl_dir` finds them in a folder).

use bench_core::{Document, GoldAnswer, QueryType};
use std::collections::{BTreeSet, HashMap};

use super::evidence::TitleIndex;
use super::parsed::Parsed;
use super::questions::{read_questions, Question};
use super::records::{malformed, parse_jsonl, Record};
use crate::error::Result;

/// Parses the two files' contents; the names are only used in errors.
pub(crate) fn parse_texts(
    corpus_file: &str,
    corpus_text: &str,
    queries_file: &str,
    queries_text: &str,
) -> Result<Parsed> {
    let documents = read_documents(corpus_file, corpus_text)?;
    let gold = GoldLookup::new(&documents);
    let lines = parse_jsonl(queries_file, queries_text)?;
    let located = lines.iter().map(|(line, v)| (format!("line {line}"), v));
    let queries = read_questions(queries_file, located, |rec| question(rec, &gold).map(Some))?;
    if documents.is_empty() {
        // Checked here as well as in assemble so that the message says what a line looks like.
        return Err(malformed(
            corpus_file,
            "whole file",
            "the corpus is empty: expected one JSON object per line with \"id\" and \"text\"",
        ));
    }
    Ok(Parsed::new(
        documents,
        corpus_file.to_string(),
        queries,
        queries_file.to_string(),
    ))
}

/// The documents file: one object per line with a unique non-empty `id`, an optional `title`
/// and a non-empty `text`.
fn read_documents(corpus_file: &str, corpus_text: &str) -> Result<Vec<Document>> {
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
    Ok(documents)
}

/// The documents by id and by title, to resolve evidence.
struct GoldLookup<'d> {
    ids: HashMap<&'d str, usize>,
    titles: TitleIndex,
}

impl<'d> GoldLookup<'d> {
    /// The lookup of `documents`.
    fn new(documents: &'d [Document]) -> Self {
        GoldLookup {
            ids: documents
                .iter()
                .enumerate()
                .map(|(i, d)| (d.id.as_str(), i))
                .collect(),
            titles: TitleIndex::new(documents.iter().map(|d| d.title.as_str())),
        }
    }

    /// The gold of `evidence`: a document id, then a document title, makes its whole document
    /// gold; anything else is a sentence that the gold chunks contain.
    fn resolve(&self, evidence: &[String]) -> (Vec<usize>, Vec<String>) {
        let mut gold_docs = BTreeSet::new();
        let mut gold_sentences = Vec::new();
        for e in evidence {
            if let Some(&d) = self.ids.get(e.as_str()) {
                gold_docs.insert(d);
                continue;
            }
            match self.titles.lookup(e) {
                Some(docs) => gold_docs.extend(docs.iter().copied()),
                None => gold_sentences.push(e.clone()),
            }
        }
        (gold_docs.into_iter().collect(), gold_sentences)
    }
}

/// One question line: `question`, `answers` (the first is the answer, the rest aliases, with
/// `aliases`), `type` and the optional `evidence`.
fn question(rec: &Record<'_>, gold: &GoldLookup<'_>) -> Result<Question> {
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
    let (gold_docs, gold_sentences) = gold.resolve(&evidence);
    Ok(Question {
        text: text.to_string(),
        qtype,
        gold: GoldAnswer { answer, aliases },
        evidence,
        gold_docs,
        gold_sentences,
    })
}
