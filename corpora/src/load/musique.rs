//! MuSiQue as HippoRAG prepared it: passages `[{title,text}]`, questions with `is_supporting` paragraphs.

use bench_core::{GoldAnswer, Query, QueryType};
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use super::evidence::normalize;
use super::loader::{CorpusInfo, Loader};
use super::parsed::{Parsed, PendingQuery};
use super::records::{parse_json_array, read_file, Record};
use super::twowiki::read_passages;
use crate::error::Result;

const CORPUS_FILE: &str = "musique_train_corpus.json";
const QUESTIONS_FILE: &str = "musique_train.json";

/// MuSiQue's registry entry.
pub(crate) const LOADER: Loader = Loader {
    info: CorpusInfo {
        name: "musique-dev",
        description: "MuSiQue, HippoRAG tuning set: 1,890 passages, 100 multi-hop questions",
        folder: "musique-hipporag-dev",
        files: &[CORPUS_FILE, QUESTIONS_FILE],
    },
    load: |s| parse(s.dir, s.hint),
    embedded_source: "",
};

/// Reads the passages and the questions in `dir`.
fn parse(dir: &Path, hint: &str) -> Result<Parsed> {
    let (corpus_file, documents) = read_passages(&dir.join(CORPUS_FILE), hint)?;
    // Titles repeat in MuSiQue (different paragraphs of one article), so a supporting paragraph
    // is found by title AND text; exact first, then both normalised.
    let mut exact: HashMap<(&str, &str), Vec<usize>> = HashMap::new();
    let mut normalized: HashMap<(String, String), Vec<usize>> = HashMap::new();
    for (i, d) in documents.iter().enumerate() {
        exact.entry((&d.title, &d.text)).or_default().push(i);
        normalized
            .entry((normalize(&d.title), normalize(&d.text)))
            .or_default()
            .push(i);
    }

    let q_path = dir.join(QUESTIONS_FILE);
    let queries_file = q_path.display().to_string();
    let records = parse_json_array(&queries_file, &read_file(&q_path, hint)?)?;
    let mut queries = Vec::with_capacity(records.len());
    for (i, v) in records.iter().enumerate() {
        let rec = Record::new(&queries_file, format!("record [{i}]"), v)?;
        let id = rec.non_empty_str("id")?;
        let rec = rec.with_id(id);
        let mut gold_docs = BTreeSet::new();
        let mut evidence = Vec::new();
        for (j, p) in rec.array("paragraphs")?.iter().enumerate() {
            let para = Record::new(
                &queries_file,
                format!("{} paragraphs[{j}]", rec.location()),
                p,
            )?;
            if para.opt_bool("is_supporting")? != Some(true) {
                continue;
            }
            let title = para.str("title")?;
            let text = para.str("paragraph_text")?;
            let docs = exact.get(&(title, text)).cloned().or_else(|| {
                normalized
                    .get(&(normalize(title), normalize(text)))
                    .cloned()
            });
            gold_docs.extend(docs.into_iter().flatten());
            evidence.push(title.to_string());
        }
        queries.push(PendingQuery {
            query: Query {
                id: id.to_string(),
                text: rec.non_empty_str("question")?.to_string(),
                // MuSiQue questions are 2- to 4-hop compositions.
                qtype: QueryType::Reasoning,
                gold: GoldAnswer {
                    answer: rec.non_empty_str("answer")?.to_string(),
                    aliases: rec.opt_str_list("answer_aliases")?,
                },
                evidence,
                gold_chunks: Vec::new(),
                gold_documents: Vec::new(),
                statements: Vec::new(),
            },
            location: rec.location().to_string(),
            gold_docs: gold_docs.into_iter().collect(),
            gold_sentences: Vec::new(),
        });
    }
    Ok(Parsed {
        documents,
        corpus_file,
        queries,
        queries_file,
        name: None,
        evidence_must_resolve: false,
    })
}
