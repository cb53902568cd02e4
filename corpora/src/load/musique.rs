//! MuSiQue as HippoRAG prepared it: passages `[{title,text}]`, questions with `is_supporting` paragraphs.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use super::evidence::normalize;
use super::loader::{CorpusInfo, Loader};
use super::parsed::Parsed;
use super::questions::{read_question_array, Question};
use super::records::Record;
use super::twowiki::read_passages;
use crate::error::Result;

const CORPUS_FILE: &str = "musique_train_corpus.json";
const QUESTIONS_FILE: &str = "musique_train.json";

/// MuSiQue's registry entry.
pub(crate) const LOADER: Loader = Loader::in_folder(
    CorpusInfo {
        name: "musique-dev",
        description: "MuSiQue, HippoRAG tuning set: 1,890 passages, 100 multi-hop questions",
        folder: "musique-hipporag-dev",
        files: &[CORPUS_FILE, QUESTIONS_FILE],
    },
    |s| parse(s.dir, s.hint),
);

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

    let (queries_file, queries) = read_question_array(&dir.join(QUESTIONS_FILE), hint, |rec| {
        let mut gold_docs = BTreeSet::new();
        let mut evidence = Vec::new();
        for (j, p) in rec.array("paragraphs")?.iter().enumerate() {
            let para = Record::new(rec.file(), format!("{} paragraphs[{j}]", rec.location()), p)?;
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
        // MuSiQue questions are 2- to 4-hop compositions.
        let aliases = rec.opt_str_list("answer_aliases")?;
        let q = Question::multi_hop(rec, aliases, evidence, gold_docs.into_iter().collect())?;
        Ok(Some(q))
    })?;
    Ok(Parsed::new(documents, corpus_file, queries, queries_file))
}
