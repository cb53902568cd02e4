//! The questions file as every loader reads it: one record per question, its id first (later
//! errors name it), then what the loader makes of the rest.

use bench_core::{GoldAnswer, Query, QueryType};
use serde_json::Value;
use std::path::Path;

use super::parsed::PendingQuery;
use super::records::{parse_json_array, read_file, Record};
use crate::error::Result;

/// What a loader reads from one question record besides its id.
pub(crate) struct Question {
    /// The question's text.
    pub text: String,
    /// Its type.
    pub qtype: QueryType,
    /// The answer and its aliases.
    pub gold: GoldAnswer,
    /// The evidence as the file gives it.
    pub evidence: Vec<String>,
    /// Documents that are gold as a whole.
    pub gold_docs: Vec<usize>,
    /// Evidence sentences: the chunks that contain one are gold.
    pub gold_sentences: Vec<String>,
}

/// Reads the question records of `file`, each a (location, value) pair: a JSON object with a
/// non-empty `"id"`; `one` reads the rest of it (`None` leaves the question out).
pub(crate) fn read_questions<'v>(
    file: &str,
    records: impl IntoIterator<Item = (String, &'v Value)>,
    mut one: impl FnMut(&Record<'_>) -> Result<Option<Question>>,
) -> Result<Vec<PendingQuery>> {
    let mut queries = Vec::new();
    for (location, v) in records {
        let rec = Record::new(file, location, v)?;
        let id = rec.non_empty_str("id")?;
        let rec = rec.with_id(id);
        let Some(q) = one(&rec)? else { continue };
        queries.push(PendingQuery {
            query: Query {
                id: id.to_string(),
                text: q.text,
                qtype: q.qtype,
                gold: q.gold,
                evidence: q.evidence,
                gold_chunks: Vec::new(),
                gold_documents: Vec::new(),
                statements: Vec::new(),
            },
            location: rec.location().to_string(),
            gold_docs: q.gold_docs,
            gold_sentences: q.gold_sentences,
        });
    }
    Ok(queries)
}

/// Reads a questions file that is one JSON array (records named `record [i]`) with
/// [`read_questions`]; returns the file's name as errors give it, and the questions. A missing
/// file is reported with `hint`.
pub(crate) fn read_question_array(
    path: &Path,
    hint: &str,
    one: impl FnMut(&Record<'_>) -> Result<Option<Question>>,
) -> Result<(String, Vec<PendingQuery>)> {
    let file = path.display().to_string();
    let records = parse_json_array(&file, &read_file(path, hint)?)?;
    let located = records
        .iter()
        .enumerate()
        .map(|(i, v)| (format!("record [{i}]"), v));
    let queries = read_questions(&file, located, one)?;
    Ok((file, queries))
}
