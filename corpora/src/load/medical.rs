//! GraphRAG-Bench Medical: `medical.json` (one textbook) and `medical_questions.json`.

use bench_core::config::DataConfig;
use bench_core::{Document, GoldAnswer, QueryType};
use serde_json::Value;
use std::path::Path;

use super::loader::{CorpusInfo, Loader};
use super::parsed::Parsed;
use super::questions::{read_question_array, Question};
use super::records::{read_record_array, Record};
use crate::error::Result;

const CORPUS_FILE: &str = "medical.json";
const QUESTIONS_FILE: &str = "medical_questions.json";

/// GraphRAG-Bench Medical's registry entry.
pub(crate) const LOADER: Loader = Loader::in_folder(
    CorpusInfo {
        name: "medical",
        description: "GraphRAG-Bench Medical: one textbook (221,495 tokens, 538 chunks), \
                      1,896 questions (factual, reasoning, summary)",
        folder: "graphrag-bench-medical",
        files: &[CORPUS_FILE, QUESTIONS_FILE],
    },
    |s| parse(s.dir, s.data, s.hint),
);

/// GraphRAG-Bench's question types as the paper groups them; Creative Generation is left out
/// (None) unless `include_creative`, then kept as `other`.
fn map_type(raw: &str, include_creative: bool) -> Option<Option<QueryType>> {
    match raw {
        "Fact Retrieval" => Some(Some(QueryType::Factual)),
        "Complex Reasoning" => Some(Some(QueryType::Reasoning)),
        "Contextual Summarize" => Some(Some(QueryType::Summary)),
        "Creative Generation" => Some(include_creative.then_some(QueryType::Other)),
        _ => None,
    }
}

/// The evidence field is one string of sentences joined by ";" (a list is accepted too); each
/// sentence is gold evidence on its own.
fn evidence_sentences(rec: &Record<'_>) -> Result<Vec<String>> {
    let raw: Vec<&str> = match rec.get("evidence") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::String(s) => Ok(s.as_str()),
                _ => Err(rec.error(&format!("evidence[{i}]"), "expected a string")),
            })
            .collect::<Result<_>>()?,
        Some(_) => {
            return Err(rec.error("evidence", "expected a string or an array of strings"));
        }
    };
    Ok(raw
        .into_iter()
        .flat_map(|s| s.split(';'))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect())
}

/// Reads the textbook and the questions in `dir`.
fn parse(dir: &Path, data: &DataConfig, hint: &str) -> Result<Parsed> {
    let (corpus_file, documents) = read_record_array(&dir.join(CORPUS_FILE), hint, |i, rec| {
        // Untitled: the context alone gives the paper's 221,495 tokens and 538 chunks
        // (a "Medical\n" title would add tokens and change the windows).
        Ok(Document {
            id: format!("d{i}"),
            title: String::new(),
            text: rec.non_empty_str("context")?.to_string(),
        })
    })?;

    let (queries_file, queries) = read_question_array(&dir.join(QUESTIONS_FILE), hint, |rec| {
        let raw_type = rec.str("question_type")?;
        let Some(qtype) = map_type(raw_type, data.include_creative) else {
            return Err(rec.error(
                "question_type",
                format_args!(
                    "unknown type {raw_type:?}: expected Fact Retrieval, Complex Reasoning, \
                     Contextual Summarize or Creative Generation"
                ),
            ));
        };
        let Some(qtype) = qtype else { return Ok(None) };
        let sentences = evidence_sentences(rec)?;
        Ok(Some(Question {
            text: rec.non_empty_str("question")?.to_string(),
            qtype,
            gold: GoldAnswer {
                answer: rec.non_empty_str("answer")?.to_string(),
                aliases: Vec::new(),
            },
            evidence: sentences.clone(),
            gold_docs: Vec::new(),
            gold_sentences: sentences,
        }))
    })?;
    Ok(Parsed::new(documents, corpus_file, queries, queries_file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_follow_the_paper() {
        assert_eq!(
            map_type("Fact Retrieval", false),
            Some(Some(QueryType::Factual))
        );
        assert_eq!(
            map_type("Complex Reasoning", false),
            Some(Some(QueryType::Reasoning))
        );
        assert_eq!(
            map_type("Contextual Summarize", false),
            Some(Some(QueryType::Summary))
        );
        assert_eq!(map_type("Creative Generation", false), Some(None));
        assert_eq!(
            map_type("Creative Generation", true),
            Some(Some(QueryType::Other))
        );
        assert_eq!(map_type("Trivia", true), None);
    }

    #[test]
    fn evidence_is_split_into_sentences() {
        let v = serde_json::json!({"evidence": "A is B.; C is D.;  ; E."});
        let rec = Record::new("m.json", "record [0]".into(), &v).unwrap();
        assert_eq!(
            evidence_sentences(&rec).unwrap(),
            ["A is B.", "C is D.", "E."]
        );
        let v = serde_json::json!({"evidence": ["A.", "B.; C."]});
        let rec = Record::new("m.json", "record [0]".into(), &v).unwrap();
        assert_eq!(evidence_sentences(&rec).unwrap(), ["A.", "B.", "C."]);
        let v = serde_json::json!({"evidence": 3});
        let rec = Record::new("m.json", "record [0]".into(), &v).unwrap();
        assert!(evidence_sentences(&rec)
            .unwrap_err()
            .to_string()
            .contains("\"evidence\""));
    }
}
