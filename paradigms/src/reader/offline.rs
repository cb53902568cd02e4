//! The offline reader of decisions.md: the context sentence that best matches the question by
//! BM25 (IDF from the corpus) plus a bonus for its chunk's rank.

use std::collections::HashMap;

use async_trait::async_trait;
use bench_core::config::OfflineReaderConfig;
use bench_core::{Chunk, ContextChunk, Generation, QueryType, Reader, TokenSource};

/// Bumped whenever the reader's behaviour changes, so that a run's identity (and resume)
/// never mixes answers of two reader versions.
pub const OFFLINE_READER_VERSION: &str = "v3";

/// Longest answer span in words: a chunk without sentence punctuation (tables, lists) would
/// otherwise be answered whole and match any gold answer by sheer length.
const MAX_SENTENCE_WORDS: usize = 60;

/// Lower-cased alphanumeric terms.
fn terms(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_lowercase)
}

/// The reader's answer spans: the sentences of `bench_core::text::split_sentences`, each cut
/// into pieces of at most `MAX_SENTENCE_WORDS` words.
pub fn answer_spans(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for s in bench_core::text::split_sentences(text) {
        push_pieces(s, &mut out);
    }
    out
}

/// Pushes a trimmed sentence, cut at word boundaries into pieces of at most
/// `MAX_SENTENCE_WORDS` words.
fn push_pieces<'a>(s: &'a str, out: &mut Vec<&'a str>) {
    let s = s.trim();
    if s.is_empty() {
        return;
    }
    let mut words = 0;
    let mut start = 0;
    let mut in_word = false;
    for (i, c) in s.char_indices() {
        if c.is_whitespace() {
            if in_word {
                words += 1;
                if words == MAX_SENTENCE_WORDS {
                    out.push(s[start..i].trim());
                    start = i;
                    words = 0;
                }
            }
            in_word = false;
        } else {
            in_word = true;
        }
    }
    let rest = s[start..].trim();
    if !rest.is_empty() {
        out.push(rest);
    }
}

/// BM25 sentence reader; immutable after construction, so one instance serves all queries.
#[derive(Debug)]
pub struct OfflineReader {
    cfg: OfflineReaderConfig,
    /// BM25 IDF of each corpus term, over chunks.
    idf: HashMap<String, f64>,
    /// IDF of a term absent from the corpus.
    unseen_idf: f64,
}

impl OfflineReader {
    /// Computes IDF over the corpus's chunks.
    pub fn new(chunks: &[Chunk], cfg: OfflineReaderConfig) -> Self {
        let mut df: HashMap<String, u32> = HashMap::new();
        for c in chunks {
            let mut seen: Vec<String> = terms(&c.text).collect();
            seen.sort_unstable();
            seen.dedup();
            for t in seen {
                *df.entry(t).or_insert(0) += 1;
            }
        }
        let n = chunks.len() as f64;
        let idf_of = |df: f64| (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
        let idf = df
            .into_iter()
            .map(|(t, d)| (t, idf_of(f64::from(d))))
            .collect();
        OfflineReader {
            cfg,
            idf,
            unseen_idf: idf_of(0.0),
        }
    }

    /// The answer to `question` from `context`: the best sentence, or the best
    /// `summary_sentences` for summary questions; empty when there is no context.
    pub fn read(&self, question: &str, qtype: QueryType, context: &[ContextChunk<'_>]) -> String {
        let mut q: Vec<String> = terms(question).collect();
        q.sort_unstable();
        q.dedup();
        // (score, position, sentence), position keeps ties deterministic.
        let mut sentences: Vec<(f64, usize, &str, Vec<String>)> = Vec::new();
        for c in context {
            for s in answer_spans(c.text) {
                let toks: Vec<String> = terms(s).collect();
                // A sentence made only of the question's own words (a title line, an echo of
                // the question) cannot hold the answer, yet BM25's length normalisation ranks
                // such short lines first.
                if toks.iter().all(|t| q.binary_search(t).is_ok()) {
                    continue;
                }
                let bonus = self.cfg.rank_bonus / (1.0 + c.rank as f64);
                let pos = sentences.len();
                sentences.push((bonus, pos, s, toks));
            }
        }
        if sentences.is_empty() {
            return String::new();
        }
        let avgdl =
            sentences.iter().map(|s| s.3.len()).sum::<usize>() as f64 / sentences.len() as f64;
        let (k1, b) = (self.cfg.bm25_k1, self.cfg.bm25_b);
        for s in &mut sentences {
            let len = s.3.len() as f64;
            let mut score = 0.0;
            for term in &q {
                let tf = s.3.iter().filter(|t| *t == term).count() as f64;
                if tf == 0.0 {
                    continue;
                }
                let idf = self.idf.get(term).copied().unwrap_or(self.unseen_idf);
                score += idf * tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * len / avgdl));
            }
            s.0 += score;
        }
        sentences.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let take = if qtype == QueryType::Summary {
            self.cfg.summary_sentences.max(1)
        } else {
            1
        };
        sentences
            .iter()
            .take(take)
            .map(|s| s.2)
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Share of the question's IDF mass whose terms occur in `text`: how much of what the
    /// question asks about the text speaks to (the offline evaluator's sufficiency score).
    pub fn idf_coverage(&self, question: &str, text: &str) -> f64 {
        let mut q: Vec<String> = terms(question).collect();
        q.sort_unstable();
        q.dedup();
        let present: std::collections::HashSet<String> = terms(text).collect();
        let idf = |t: &String| self.idf.get(t).copied().unwrap_or(self.unseen_idf);
        let total: f64 = q.iter().map(idf).sum();
        if total == 0.0 {
            return 0.0;
        }
        q.iter()
            .filter(|t| present.contains(*t))
            .map(idf)
            .sum::<f64>()
            / total
    }

    /// The reader's configuration.
    pub fn config(&self) -> &OfflineReaderConfig {
        &self.cfg
    }
}

#[async_trait]
impl Reader for OfflineReader {
    fn identity(&self) -> String {
        format!(
            "offline-bm25-reader[{OFFLINE_READER_VERSION}](k1={},b={},rank_bonus={},summary_sentences={})",
            self.cfg.bm25_k1, self.cfg.bm25_b, self.cfg.rank_bonus, self.cfg.summary_sentences
        )
    }

    async fn answer(
        &self,
        question: &str,
        qtype: QueryType,
        context: &[ContextChunk<'_>],
    ) -> bench_core::Result<Generation> {
        Ok(Generation {
            text: self.read(question, qtype, context),
            // No LLM is called: the offline reader costs no tokens.
            tokens_in: 0,
            tokens_out: 0,
            token_source: TokenSource::Cl100k,
            confidence: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(id: &str, text: &str) -> Chunk {
        Chunk {
            id: id.into(),
            index: 0,
            document: id.into(),
            text: text.into(),
            tokens: 10,
        }
    }

    #[test]
    fn sentences_split_on_terminal_punctuation_and_newlines() {
        let s = answer_spans("Dr. Who? Yes. It is 3.5 km long!\nNew line here");
        assert_eq!(
            s,
            ["Dr. Who?", "Yes.", "It is 3.5 km long!", "New line here"]
        );
        let long = vec!["w"; 130].join(" ");
        let parts = answer_spans(&long);
        assert_eq!(parts.len(), 3);
        assert_eq!(parts[0].split_whitespace().count(), MAX_SENTENCE_WORDS);
    }

    #[test]
    fn picks_the_sentence_that_matches_rare_question_terms() {
        let chunks = vec![
            chunk(
                "a",
                "The river Alder flows north. The bridge was built in 1832.",
            ),
            chunk("b", "The river is long. Many bridges cross the river."),
            chunk("c", "Bridges are common."),
        ];
        let reader = OfflineReader::new(&chunks, OfflineReaderConfig::default());
        let ctx: Vec<ContextChunk<'_>> = chunks
            .iter()
            .enumerate()
            .map(|(rank, c)| ContextChunk {
                chunk_id: &c.id,
                text: &c.text,
                rank,
            })
            .collect();
        assert_eq!(
            reader.read("When was the bridge built?", QueryType::Factual, &ctx),
            "The bridge was built in 1832."
        );
        let summary = reader.read("Describe the river Alder", QueryType::Summary, &ctx);
        assert!(
            summary.starts_with("The river Alder flows north."),
            "{summary}"
        );
        assert_eq!(answer_spans(&summary).len(), 3);
        assert_eq!(reader.read("anything", QueryType::Factual, &[]), "");
    }

    #[test]
    fn lines_made_only_of_question_words_are_not_answers() {
        let chunks = vec![chunk(
            "a",
            "Dai Jitao\nDai Jitao was born in Guanghan, Sichuan.",
        )];
        let reader = OfflineReader::new(&chunks, OfflineReaderConfig::default());
        let ctx = [ContextChunk {
            chunk_id: "a",
            text: &chunks[0].text,
            rank: 0,
        }];
        assert_eq!(
            reader.read("Where is Dai Jitao from?", QueryType::Factual, &ctx),
            "Dai Jitao was born in Guanghan, Sichuan."
        );
    }

    #[test]
    fn rank_bonus_breaks_equal_matches_towards_the_better_chunk() {
        let chunks = vec![chunk("a", "Paris is big."), chunk("b", "Paris is big.")];
        let reader = OfflineReader::new(&chunks, OfflineReaderConfig::default());
        let ctx = [
            ContextChunk {
                chunk_id: "b",
                text: "Paris is old.",
                rank: 1,
            },
            ContextChunk {
                chunk_id: "a",
                text: "Paris is big.",
                rank: 0,
            },
        ];
        assert_eq!(
            reader.read("Paris?", QueryType::Factual, &ctx),
            "Paris is big."
        );
    }
}
