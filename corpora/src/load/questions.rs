//! The questions file as every loader reads it: one record per question, its id first (later
//! errors name it), then what the loader makes of the rest.

use bench_core::{GoldAnswer, Query, QueryType};
use serde_json::Value;
use std::path::Path;

use super::parsed::PendingQuery;
use super::records::{read_record_array, Record};
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

impl Question {
    /// A multi-hop question of a HippoRAG-prepared set (2Wiki, MuSiQue): the record's `question`
    /// and `answer`, of type reasoning (every one needs two or more passages), gold as whole
    /// documents.
    pub(crate) fn multi_hop(
        rec: &Record<'_>,
        aliases: Vec<String>,
        evidence: Vec<String>,
        gold_docs: Vec<usize>,
    ) -> Result<Self> {
        Ok(Question {
            text: rec.non_empty_str("question")?.to_string(),
            qtype: QueryType::Reasoning,
            gold: GoldAnswer {
                answer: rec.non_empty_str("answer")?.to_string(),
                aliases,
            },
            evidence,
            gold_docs,
            gold_sentences: Vec::new(),
        })
    }
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
        queries.extend(read_question(Record::new(file, location, v)?, &mut one)?);
    }
    Ok(queries)
}

/// One question record: its id first (later errors name it), then `one` on the rest.
fn read_question(
    rec: Record<'_>,
    one: &mut impl FnMut(&Record<'_>) -> Result<Option<Question>>,
) -> Result<Option<PendingQuery>> {
    let id = rec.non_empty_str("id")?;
    let rec = rec.with_id(id);
    let Some(q) = one(&rec)? else {
        return Ok(None);
    };
    Ok(Some(PendingQuery {
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
    }))
}

/// Reads a questions file that is one JSON array (records named `record [i]`) as
/// [`read_questions`] does; returns the file's name as errors give it, and the questions. A
/// missing file is reported with `hint`.
pub(crate) fn read_question_array(
    path: &Path,
    hint: &str,
    mut one: impl FnMut(&Record<'_>) -> Result<Option<Question>>,
) -> Result<(String, Vec<PendingQuery>)> {
    let (file, queries) = read_record_array(path, hint, |_, rec| read_question(rec, &mut one))?;
    Ok((file, queries.into_iter().flatten().collect()))
}
