//! Evidence by meaning: statements that match no corpus sentence verbatim, matched by the encoder.
//!
//! Some data sets give gold evidence as paraphrased statements ("Common sun-exposed areas for BCC
//! include the face."), not quotes. Each such statement is compared with every sentence of the
//! corpus by the local encoder's vectors (cosine); the nearest `candidates` are checked best first,
//! and the first whose cosine is at least `min_similarity` and that holds at least
//! `min_content_overlap` of the statement's content words (stemmed, see [`content_words`]) is the
//! match. Every chunk holding that sentence is gold. The defaults were calibrated on 2Wiki's
//! evidence triples written as statements, whose gold passages are known (README, "Evidence by
//! meaning"). Sentence and statement vectors go through the [`VectorCache`], keyed by their
//! texts and the encoder, so a second load embeds nothing; the search is exact and ties go to the
//! lower sentence index, so the matches are deterministic.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bench_core::config::EvidenceMatchConfig;
use bench_core::text::split_sentences;
use bench_core::{Chunk, Document, Embedder, Query, StatementMatch};

use crate::embed::VectorCache;
use crate::error::{CorpusError, Result};
use crate::index::FlatIndex;
use crate::stopwords::is_stop_word;

/// What matching by meaning needs: the local encoder and the vector cache.
#[derive(Clone)]
pub struct SemanticMatching {
    /// The sentence encoder.
    pub encoder: Arc<dyn Embedder>,
    /// Where sentence and statement vectors are kept.
    pub cache: VectorCache,
}

impl std::fmt::Debug for SemanticMatching {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SemanticMatching")
            .field("encoder", &self.encoder.name())
            .field("cache", &self.cache.dir())
            .finish()
    }
}

/// The content words of `text`, stemmed: lower-cased alphanumeric runs without stop words (the
/// list the offline graph extractor skips too) and one-letter words; a trailing `s` is dropped and
/// words are cut to their first 5 characters ("cells" and "cell", "develops" and "development"
/// meet), numbers are kept whole.
pub fn content_words(text: &str) -> BTreeSet<String> {
    let lower = text.to_lowercase();
    lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && !is_stop_word(w))
        .filter_map(|w| {
            if w.chars().all(|c| c.is_ascii_digit()) {
                return Some(w.to_string());
            }
            if w.chars().count() < 2 {
                return None;
            }
            let w = if w.chars().count() > 3 {
                w.strip_suffix('s').unwrap_or(w)
            } else {
                w
            };
            Some(w.chars().take(5).collect())
        })
        .collect()
}

/// Share of `statement`'s content words that `sentence` holds (0 when the statement has none).
pub fn content_overlap(statement: &BTreeSet<String>, sentence: &BTreeSet<String>) -> f64 {
    if statement.is_empty() {
        return 0.0;
    }
    statement.intersection(sentence).count() as f64 / statement.len() as f64
}

/// The corpus's distinct sentences (at least 3 words; a document's title line is not a
/// sentence), each with the chunks that hold it, in first-seen order.
#[derive(Debug, Clone, Default)]
pub struct SentenceIndex {
    /// The sentences.
    pub texts: Vec<String>,
    /// Chunk indices per sentence, ascending.
    pub chunks: Vec<Vec<u32>>,
}

impl SentenceIndex {
    /// The sentences of `chunks`, without each document's title line (from `documents`).
    pub fn new(chunks: &[Chunk], documents: &[Document]) -> Self {
        let titles: HashMap<&str, &str> = documents
            .iter()
            .map(|d| (d.id.as_str(), d.title.trim()))
            .collect();
        let mut at: HashMap<&str, usize> = HashMap::new();
        let mut index = SentenceIndex::default();
        for (ci, chunk) in chunks.iter().enumerate() {
            let title = titles.get(chunk.document.as_str()).copied().unwrap_or("");
            for s in split_sentences(&chunk.text) {
                if (!title.is_empty() && s == title) || s.split_whitespace().count() < 3 {
                    continue;
                }
                let i = *at.entry(s).or_insert_with(|| {
                    index.texts.push(s.to_string());
                    index.chunks.push(Vec::new());
                    index.texts.len() - 1
                });
                if index.chunks[i].last() != Some(&(ci as u32)) {
                    index.chunks[i].push(ci as u32);
                }
            }
        }
        index
    }

    /// Distinct sentences.
    pub fn len(&self) -> usize {
        self.texts.len()
    }

    /// Whether the corpus has no sentence.
    pub fn is_empty(&self) -> bool {
        self.texts.is_empty()
    }
}

/// One sentence near a statement: its index, cosine and content-word overlap.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate {
    /// Index into [`SentenceIndex::texts`].
    pub sentence: u32,
    /// Cosine with the statement.
    pub score: f32,
    /// Share of the statement's content words the sentence holds (`content_overlap`).
    pub overlap: f64,
}

/// The first candidate (they come best cosine first) that passes both thresholds.
pub fn accept(
    candidates: &[Candidate],
    min_similarity: f32,
    min_overlap: f64,
) -> Option<Candidate> {
    candidates
        .iter()
        .take_while(|c| c.score >= min_similarity)
        .find(|c| c.overlap >= min_overlap)
        .copied()
}

/// What matching with given thresholds does where the answer is known (calibration): of
/// `total` statements, `accepted` found a sentence, `correct` of them one inside their gold set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    /// The cosine threshold.
    pub min_similarity: f32,
    /// The content-word overlap threshold.
    pub min_overlap: f64,
    /// Statements scored.
    pub total: usize,
    /// Statements that found a sentence passing both thresholds.
    pub accepted: usize,
    /// Accepted statements whose sentence lies in their gold passage.
    pub correct: usize,
}

impl Calibration {
    /// Share of accepted matches that land in the gold set (1 when none is accepted).
    pub fn precision(&self) -> f64 {
        if self.accepted == 0 {
            1.0
        } else {
            self.correct as f64 / self.accepted as f64
        }
    }

    /// Share of all statements matched inside their gold set.
    pub fn recall(&self) -> f64 {
        self.correct as f64 / self.total.max(1) as f64
    }
}

/// Scores the thresholds on statements whose gold sentences are known: `is_gold(i, sentence)`
/// says whether a sentence lies in statement `i`'s gold passage.
pub fn calibrate(
    candidates: &[Vec<Candidate>],
    is_gold: impl Fn(usize, u32) -> bool,
    min_similarity: f32,
    min_overlap: f64,
) -> Calibration {
    let mut c = Calibration {
        min_similarity,
        min_overlap,
        total: candidates.len(),
        accepted: 0,
        correct: 0,
    };
    for (i, cands) in candidates.iter().enumerate() {
        if let Some(m) = accept(cands, min_similarity, min_overlap) {
            c.accepted += 1;
            if is_gold(i, m.sentence) {
                c.correct += 1;
            }
        }
    }
    c
}

/// Calibration data from 2Wiki (loaded as `2wiki`): the evidence triples of every `every`-th
/// question written as statements "`<subject> <relation> <object>.`", each with the documents
/// titled by its subject (its gold passages); triples whose subject titles no passage are left
/// out (their gold is unknown).
pub fn twowiki_statements(
    corpus: &bench_core::Corpus,
    every: usize,
) -> (Vec<String>, Vec<Vec<usize>>) {
    let titles =
        super::evidence::TitleIndex::new(corpus.documents.iter().map(|d| d.title.as_str()));
    let mut statements = Vec::new();
    let mut gold = Vec::new();
    for q in corpus.queries.iter().step_by(every.max(1)) {
        for e in &q.evidence {
            let Ok(parts) = serde_json::from_str::<Vec<String>>(e) else {
                continue;
            };
            let [subject, relation, object] = parts.as_slice() else {
                continue;
            };
            if let Some(docs) = titles.lookup(subject) {
                statements.push(format!("{subject} {relation} {object}."));
                gold.push(docs.to_vec());
            }
        }
    }
    (statements, gold)
}

/// The corpus's sentences with their vectors, searched exactly.
#[derive(Debug)]
pub struct SentenceSearch {
    /// The sentences searched (a [`Candidate`]'s `sentence` indexes them).
    pub sentences: SentenceIndex,
    words: Vec<BTreeSet<String>>,
    index: FlatIndex,
}

impl SentenceSearch {
    /// Embeds the sentences through the cache (`key` names the corpus in the file name).
    pub fn new(sentences: SentenceIndex, key: &str, m: &SemanticMatching) -> Result<Self> {
        let texts: Vec<&str> = sentences.texts.iter().map(String::as_str).collect();
        let vectors = m.cache.get_or_embed(
            &format!("{key}:sentences"),
            &texts,
            m.encoder.as_ref(),
            &|_, _| {},
        )?;
        let words = sentences.texts.iter().map(|t| content_words(t)).collect();
        let index = FlatIndex::new(vectors)?;
        Ok(SentenceSearch {
            sentences,
            words,
            index,
        })
    }

    /// The `k` nearest sentences of each statement, best cosine first (ties: lower index).
    pub fn candidates(
        &self,
        statements: &[&str],
        key: &str,
        m: &SemanticMatching,
        k: usize,
    ) -> Result<Vec<Vec<Candidate>>> {
        let vectors = m.cache.get_or_embed(
            &format!("{key}:statements"),
            statements,
            m.encoder.as_ref(),
            &|_, _| {},
        )?;
        if vectors.dim != self.index.dim() && !statements.is_empty() && !self.index.is_empty() {
            return Err(CorpusError::Encoder(format!(
                "statement vectors have dimension {}, sentence vectors {}",
                vectors.dim,
                self.index.dim()
            )));
        }
        let hits = self.index.search_batch(&vectors, k);
        Ok(statements
            .iter()
            .zip(hits)
            .map(|(s, hits)| {
                let words = content_words(s);
                hits.into_iter()
                    .map(|h| Candidate {
                        sentence: h.row,
                        score: h.score,
                        overlap: content_overlap(&words, &self.words[h.row as usize]),
                    })
                    .collect()
            })
            .collect())
    }
}

/// Matches `statements` (none of which matched verbatim) to the corpus's sentences by meaning:
/// one [`StatementMatch`] each, with the chunks of the accepted sentence (empty: none passed; its
/// best candidate is kept for the record).
pub(crate) fn match_by_meaning(
    key: &str,
    chunks: &[Chunk],
    documents: &[Document],
    statements: &[&str],
    m: &SemanticMatching,
    cfg: &EvidenceMatchConfig,
) -> Result<Vec<StatementMatch>> {
    if statements.is_empty() {
        return Ok(Vec::new());
    }
    let search = SentenceSearch::new(SentenceIndex::new(chunks, documents), key, m)?;
    let candidates = search.candidates(statements, key, m, cfg.candidates)?;
    Ok(statements
        .iter()
        .zip(candidates)
        .map(|(s, cands)| {
            let accepted = accept(&cands, cfg.min_similarity, cfg.min_content_overlap);
            let shown = accepted.or_else(|| cands.first().copied());
            StatementMatch {
                text: s.to_string(),
                chunks: accepted.map_or_else(Vec::new, |c| {
                    search.sentences.chunks[c.sentence as usize]
                        .iter()
                        .map(|&ci| chunks[ci as usize].id.clone())
                        .collect()
                }),
                score: shown.map_or(0.0, |c| c.score),
                semantic: true,
                sentence: shown.map(|c| search.sentences.texts[c.sentence as usize].clone()),
            }
        })
        .collect())
}

/// Where the statements of `corpus` (content hash `hash`) that matched nothing are listed.
pub fn unmatched_path(cache_dir: &Path, corpus: &str, hash: &str) -> PathBuf {
    let safe = crate::embed::files::file_stem(corpus, usize::MAX);
    cache_dir.join("evidence").join(format!(
        "{safe}-{}-unmatched.jsonl",
        &hash[..hash.len().min(12)]
    ))
}

/// Writes one JSON line per statement that matched nothing (question id, statement, the best
/// sentence seen and its cosine), atomically; returns the count. A list already there with
/// the same content is left alone (not even its folder is touched), so a complete cache shared
/// read-only can be used.
pub(crate) fn write_unmatched(path: &Path, queries: &[Query]) -> Result<usize> {
    let mut out = String::new();
    let mut n = 0;
    for q in queries {
        for s in q.statements.iter().filter(|s| !s.is_matched()) {
            n += 1;
            let line = serde_json::json!({
                "query": q.id,
                "statement": s.text,
                "best_sentence": s.sentence,
                "best_score": s.score,
            });
            out.push_str(&line.to_string());
            out.push('\n');
        }
    }
    // The name holds the corpus's content hash, so an equal list is the usual case.
    let same_size =
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() == out.len() as u64);
    if same_size && std::fs::read(path).is_ok_and(|old| old == out.as_bytes()) {
        return Ok(n);
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let io = |e| CorpusError::io(format!("writing {}", path.display()), e);
    std::fs::create_dir_all(dir).map_err(io)?;
    let tmp = crate::embed::files::unique_sibling(path, "tmp");
    // `create_new`: a file that was there before is never truncated, nor removed below.
    std::fs::File::create_new(&tmp)
        .and_then(|mut f| std::io::Write::write_all(&mut f, out.as_bytes()))
        .map_err(io)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(e)
    })?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unchanged_list_is_not_written_again() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let path = unmatched_path(dir.path(), "c", "0123456789abcdef");
        assert_eq!(write_unmatched(&path, &[]).unwrap(), 0);
        let before = std::fs::metadata(&path).unwrap();
        assert_eq!(write_unmatched(&path, &[]).unwrap(), 0);
        let after = std::fs::metadata(&path).unwrap();
        assert_eq!(
            (before.ino(), before.mtime_nsec()),
            (after.ino(), after.mtime_nsec())
        );
        // A different list is written.
        std::fs::write(&path, "stale\n").unwrap();
        write_unmatched(&path, &[]).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "");
    }

    #[test]
    fn content_words_are_stemmed_and_skip_stop_words() {
        let w = content_words("Basal cells are located in the lower part of the epidermis.");
        let want: BTreeSet<String> = ["basal", "cell", "locat", "lower", "part", "epide"]
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(w, want);
        assert!(content_words("It died on 20 March 851").contains("851"));
        assert!(content_words("the of and").is_empty());
        let a = content_words("BCC most commonly develops in sun-exposed areas.");
        let b = content_words("The development of BCC in areas exposed to the sun.");
        assert!(
            (content_overlap(&a, &b) - 5.0 / 6.0).abs() < 1e-12,
            "{a:?} {b:?}"
        );
        assert_eq!(content_overlap(&BTreeSet::new(), &b), 0.0);
    }

    #[test]
    fn the_first_candidate_passing_both_thresholds_wins() {
        let c = |sentence, score, overlap| Candidate {
            sentence,
            score,
            overlap,
        };
        let cands = [c(4, 0.9, 0.2), c(1, 0.8, 0.6), c(2, 0.4, 1.0)];
        assert_eq!(accept(&cands, 0.5, 0.5), Some(cands[1]));
        assert_eq!(accept(&cands, 0.5, 0.1), Some(cands[0]));
        assert_eq!(accept(&cands, 0.85, 0.5), None);
        assert_eq!(accept(&cands, 0.3, 0.9), Some(cands[2]));
        assert_eq!(accept(&[], 0.0, 0.0), None);
    }

    #[test]
    fn sentences_keep_every_chunk_and_skip_titles_and_fragments() {
        let doc = |id: &str, title: &str| Document {
            id: id.into(),
            title: title.into(),
            text: String::new(),
        };
        let chunk = |i: u32, d: &str, text: &str| Chunk {
            id: format!("{d}#{i}"),
            index: i,
            document: d.into(),
            text: text.into(),
            tokens: 1,
        };
        let chunks = [
            chunk(
                0,
                "a",
                "Lothair II\nLothair II was a king. He ruled Lotharingia well.",
            ),
            chunk(1, "a", "He ruled Lotharingia well. Short one."),
            chunk(2, "b", "Lothair II was a king."),
        ];
        let idx = SentenceIndex::new(&chunks, &[doc("a", "Lothair II"), doc("b", "")]);
        assert_eq!(
            idx.texts,
            ["Lothair II was a king.", "He ruled Lotharingia well."]
        );
        assert_eq!(idx.chunks, [vec![0, 2], vec![0, 1]]);
    }
}
