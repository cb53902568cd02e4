//! Mapping gold evidence (document titles, evidence sentences) to documents and chunks.

use aho_corasick::{AhoCorasick, MatchKind};
use bench_core::Chunk;
use std::collections::{BTreeSet, HashMap};
use unicode_normalization::UnicodeNormalization;

/// Text for fuzzy-but-safe comparison: Unicode NFKC, lower case, every character that is not a
/// letter or digit replaced by a space, runs of whitespace collapsed, trimmed.
pub fn normalize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut pending_space = false;
    for c in s.nfkc().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            if pending_space && !out.is_empty() {
                out.push(' ');
            }
            pending_space = false;
            out.push(c);
        } else {
            pending_space = true;
        }
    }
    out
}

/// Looks documents up by title: exact first, then normalised (see [`normalize`]).
#[derive(Debug, Default)]
pub(crate) struct TitleIndex {
    exact: HashMap<String, Vec<usize>>,
    normalized: HashMap<String, Vec<usize>>,
}

impl TitleIndex {
    pub(crate) fn new<'a>(titles: impl IntoIterator<Item = &'a str>) -> Self {
        let mut idx = TitleIndex::default();
        for (i, t) in titles.into_iter().enumerate() {
            if t.is_empty() {
                continue;
            }
            idx.exact.entry(t.to_string()).or_default().push(i);
            let n = normalize(t);
            if !n.is_empty() {
                idx.normalized.entry(n).or_default().push(i);
            }
        }
        idx
    }

    /// Every document with this title (titles can repeat: all of them are gold), or None.
    pub(crate) fn lookup(&self, title: &str) -> Option<&[usize]> {
        if let Some(d) = self.exact.get(title) {
            return Some(d);
        }
        let n = normalize(title);
        if n.is_empty() {
            return None;
        }
        self.normalized.get(&n).map(Vec::as_slice)
    }
}

/// For each list of evidence sentences, the indices of the chunks whose normalised text contains
/// at least one of them (as whole words). One Aho-Corasick pass over the chunks finds every
/// sentence at once, instead of one scan of the corpus per sentence.
pub(crate) fn sentences_to_chunks(chunks: &[Chunk], sentences: &[Vec<String>]) -> Vec<Vec<usize>> {
    // Distinct normalised sentences, padded with spaces so that matches fall on word boundaries.
    let mut pattern_ids: HashMap<String, usize> = HashMap::new();
    let mut patterns: Vec<String> = Vec::new();
    let per_query: Vec<Vec<usize>> = sentences
        .iter()
        .map(|list| {
            list.iter()
                .filter_map(|s| {
                    let n = normalize(s);
                    if n.is_empty() {
                        return None;
                    }
                    let padded = format!(" {n} ");
                    Some(*pattern_ids.entry(padded.clone()).or_insert_with(|| {
                        patterns.push(padded);
                        patterns.len() - 1
                    }))
                })
                .collect()
        })
        .collect();
    if patterns.is_empty() {
        return vec![Vec::new(); sentences.len()];
    }
    let ac = AhoCorasick::builder()
        .match_kind(MatchKind::Standard)
        .build(&patterns)
        .expect("evidence patterns build an automaton");
    let mut pattern_chunks: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); patterns.len()];
    for (ci, chunk) in chunks.iter().enumerate() {
        let hay = format!(" {} ", normalize(&chunk.text));
        for m in ac.find_overlapping_iter(&hay) {
            pattern_chunks[m.pattern().as_usize()].insert(ci);
        }
    }
    per_query
        .into_iter()
        .map(|pids| {
            let set: BTreeSet<usize> = pids
                .iter()
                .flat_map(|&p| pattern_chunks[p].iter().copied())
                .collect();
            set.into_iter().collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(i: u32, text: &str) -> Chunk {
        Chunk {
            id: format!("d#{i}"),
            index: i,
            document: "d".into(),
            text: text.into(),
            tokens: 1,
        }
    }

    #[test]
    fn normalize_folds_case_width_punctuation_and_space() {
        assert_eq!(normalize("  \"Come Dance  With Me"), "come dance with me");
        assert_eq!(normalize("ＡＢＣ—déf."), "abc déf");
        assert_eq!(normalize("Saxe-Eisenach"), "saxe eisenach");
        assert_eq!(normalize("..."), "");
    }

    #[test]
    fn titles_match_exactly_then_normalised_and_keep_duplicates() {
        let idx = TitleIndex::new(["Come Dance With Me", "Paris", "Paris", "paris!"]);
        assert_eq!(idx.lookup("Paris"), Some([1, 2].as_slice()));
        assert_eq!(idx.lookup("\"Come Dance With Me"), Some([0].as_slice()));
        assert_eq!(idx.lookup("PARIS"), Some([1, 2, 3].as_slice()));
        assert_eq!(idx.lookup("London"), None);
        assert_eq!(idx.lookup("?"), None);
    }

    #[test]
    fn sentences_match_whole_words_across_whitespace_and_case() {
        let chunks = [
            chunk(0, "The river Ost\nfloods in  spring. Bridges help."),
            chunk(1, "In spring, the river Ost floods; the mill stops."),
            chunk(2, "Nothing here about springs."),
        ];
        let got = sentences_to_chunks(
            &chunks,
            &[
                vec!["the river ost floods in spring.".into()],
                vec!["the mill stops".into(), "Bridges help".into()],
                vec!["spring".into()],
                vec!["ring".into(), "".into()],
                vec![],
            ],
        );
        assert_eq!(got, vec![vec![0], vec![0, 1], vec![0, 1], vec![], vec![]]);
    }
}
