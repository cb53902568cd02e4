//! The offline rule-based extractor of decisions.md: capitalised runs, numbers and dates are
//! entities; neighbouring entities of a sentence are joined by the content words between them.

use std::collections::HashSet;

use async_trait::async_trait;

use super::extract::{Extraction, ExtractorId, TripletExtractor};
use super::normalize;
use super::types::Triplet;
use crate::error::Result;
use crate::stopwords::{is_stop_word, STOP_WORDS};

pub use super::normalize::RELATED_TO;
/// At most this many content words make a relation.
pub(crate) const MAX_RELATION_WORDS: usize = 5;
/// Bump when the rules change: it is part of the extractor's identity, so cached triplets of
/// older rules are not reused.
const RULES_VERSION: &str = "offline-rules/3";

/// The rule-based extractor; no model, no tokens, deterministic.
#[derive(Debug, Clone)]
pub struct OfflineExtractor {
    concurrency: usize,
}

impl Default for OfflineExtractor {
    fn default() -> Self {
        OfflineExtractor {
            concurrency: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
        }
    }
}

impl OfflineExtractor {
    /// The extractor, extracting as many chunks at once as the machine has cores.
    pub fn new() -> Self {
        Self::default()
    }

    /// Normalised entities of `text` (a question, say), distinct, in order of first mention.
    pub fn entities(&self, text: &str) -> Vec<String> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for sentence in sentences(text) {
            for (_, name) in named_spans(text, &sentence) {
                if seen.insert(name.clone()) {
                    out.push(name);
                }
            }
        }
        out
    }

    /// Triplets of `text`: per sentence, each pair of neighbouring entities. Entity names are
    /// normalised; relations are lowercased content words.
    pub fn triplets(&self, text: &str) -> Vec<Triplet> {
        let mut out = Vec::new();
        for sentence in sentences(text) {
            let spans = named_spans(text, &sentence);
            for pair in spans.windows(2) {
                let ((a, subject), (b, object)) = (&pair[0], &pair[1]);
                if subject == object {
                    continue;
                }
                let (subject, object) = (subject.clone(), object.clone());
                let words: Vec<String> = sentence
                    .items
                    .iter()
                    .filter_map(|it| match it {
                        Item::Word(w) if w.start >= a.end && w.end <= b.start => Some(w),
                        _ => None,
                    })
                    .map(|w| text[w.start..w.end].to_lowercase())
                    // Single letters (units, stray initials) carry no relation.
                    .filter(|w| {
                        w.chars().any(char::is_alphabetic)
                            && w.chars().nth(1).is_some()
                            && !is_stop_word(w)
                    })
                    .take(MAX_RELATION_WORDS)
                    .collect();
                let relation = if words.is_empty() {
                    RELATED_TO.to_string()
                } else {
                    normalize::relation(&words.join(" "))
                };
                out.push(Triplet {
                    subject,
                    relation,
                    object,
                });
            }
        }
        out
    }
}

#[async_trait]
impl TripletExtractor for OfflineExtractor {
    fn identity(&self) -> ExtractorId {
        let mut parts: Vec<&[u8]> = vec![RULES_VERSION.as_bytes()];
        parts.extend(STOP_WORDS.iter().map(|w| w.as_bytes()));
        parts.extend(bench_core::text::ABBREVIATIONS.iter().map(|w| w.as_bytes()));
        ExtractorId {
            extractor: "offline".into(),
            model: RULES_VERSION.into(),
            prompt_hash: bench_core::config::hash_parts(parts),
        }
    }

    fn concurrency(&self) -> usize {
        self.concurrency
    }

    async fn extract(&self, chunk_text: &str) -> Result<Extraction> {
        Ok(Extraction {
            triplets: self.triplets(chunk_text),
            tokens_in: 0,
            tokens_out: 0,
        })
    }
}

/// Entity spans of a sentence with their normalised names. Names that normalise to nothing or
/// to a single letter are dropped: a lone capital is a unit ("25 °C") or a stray initial, and
/// as a node it would join every chunk that mentions temperatures.
fn named_spans(text: &str, sentence: &Sentence) -> Vec<(Span, String)> {
    entity_spans(text, sentence)
        .into_iter()
        .map(|s| (s, normalize::entity(&text[s.start..s.end])))
        .filter(|(_, n)| {
            let mut chars = n.chars();
            match (chars.next(), chars.next()) {
                (None, _) => false,
                (Some(c), None) => !c.is_alphabetic(),
                _ => true,
            }
        })
        .collect()
}

/// A word with its byte span (including a swallowed abbreviation period).
#[derive(Debug, Clone, Copy)]
struct Word {
    start: usize,
    end: usize,
    capitalised: bool,
    number: bool,
}

#[derive(Debug, Clone, Copy)]
enum Item {
    Word(Word),
    /// Punctuation inside a sentence: ends a capitalised run.
    Break,
}

#[derive(Debug, Default)]
struct Sentence {
    items: Vec<Item>,
}

/// A byte span of an entity mention.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start: usize,
    end: usize,
}

/// Splits `text` into sentences of words and breaks: the sentences of
/// `bench_core::text::split_sentences`, each scanned into words (a period stays on an initial or
/// abbreviation) and breaks (any other punctuation, a terminator inside the sentence included).
fn sentences(text: &str) -> Vec<Sentence> {
    let mut out = Vec::new();
    for piece in bench_core::text::split_sentences(text) {
        // `piece` is a slice of `text`: spans are offsets into the whole text.
        let base = piece.as_ptr() as usize - text.as_ptr() as usize;
        let mut cur = Sentence::default();
        scan_words(text, base, base + piece.len(), &mut cur);
        push_sentence(&mut out, &mut cur);
    }
    out
}

/// Words and breaks of `text[from..to]`, one sentence.
fn scan_words(text: &str, from: usize, to: usize, cur: &mut Sentence) {
    let chars: Vec<(usize, char)> = text[from..to]
        .char_indices()
        .map(|(p, c)| (from + p, c))
        .collect();
    let at = |i: usize| chars.get(i).map(|&(_, c)| c);
    let pos = |i: usize| chars.get(i).map(|&(p, _)| p).unwrap_or(to);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i].1;
        if c.is_alphanumeric() {
            let start = i;
            let numeric = c.is_ascii_digit();
            let mut j = i + 1;
            while let Some(d) = at(j) {
                let next_alnum = at(j + 1).is_some_and(char::is_alphanumeric);
                let joins = d.is_alphanumeric()
                    || (matches!(d, '\'' | '\u{2019}' | '-') && next_alnum)
                    // 1,867 and 3.5 are one number.
                    || (numeric
                        && matches!(d, ',' | '.')
                        && at(j - 1).is_some_and(|p| p.is_ascii_digit())
                        && at(j + 1).is_some_and(|n| n.is_ascii_digit()));
                if !joins {
                    break;
                }
                j += 1;
            }
            let word = &text[pos(start)..pos(j)];
            if at(j) == Some('.') && bench_core::text::keeps_period(word) {
                j += 1;
            }
            cur.items.push(Item::Word(Word {
                start: pos(start),
                end: pos(j),
                capitalised: c.is_uppercase(),
                number: numeric,
            }));
            i = j;
        } else {
            if !c.is_whitespace() {
                cur.items.push(Item::Break);
            }
            i += 1;
        }
    }
}

fn push_sentence(out: &mut Vec<Sentence>, cur: &mut Sentence) {
    if cur.items.iter().any(|it| matches!(it, Item::Word(_))) {
        out.push(std::mem::take(cur));
    } else {
        cur.items.clear();
    }
}

fn lower(text: &str, w: &Word) -> String {
    text[w.start..w.end].trim_end_matches('.').to_lowercase()
}

fn is_month(text: &str, w: &Word) -> bool {
    w.capitalised && bench_core::text::MONTHS.contains(&lower(text, w).as_str())
}

fn is_day(text: &str, w: &Word) -> bool {
    let s = &text[w.start..w.end];
    w.number && s.len() <= 2 && s.parse::<u32>().is_ok_and(|d| (1..=31).contains(&d))
}

fn is_year(text: &str, w: &Word) -> bool {
    let s = &text[w.start..w.end];
    w.number && s.len() == 4 && s.bytes().all(|b| b.is_ascii_digit())
}

/// Entity mentions of a sentence, in order: dates first claim their words, then capitalised
/// runs (without a leading capitalised stop word) and the remaining numbers.
fn entity_spans(text: &str, sentence: &Sentence) -> Vec<Span> {
    let items = &sentence.items;
    let word = |i: usize| match items.get(i) {
        Some(Item::Word(w)) => Some(*w),
        _ => None,
    };
    let mut spans = Vec::new();
    let mut i = 0;
    // Capitalised run being collected: (start, end) of its first and last word.
    let mut run: Option<Span> = None;
    let flush = |run: &mut Option<Span>, spans: &mut Vec<Span>| {
        if let Some(r) = run.take() {
            spans.push(r);
        }
    };
    while i < items.len() {
        let Some(w) = word(i) else {
            flush(&mut run, &mut spans);
            i += 1;
            continue;
        };
        if let Some(len) = date_at(text, items, i) {
            flush(&mut run, &mut spans);
            let last = word(i + len - 1).expect("dates end on a word");
            spans.push(Span {
                start: w.start,
                end: last.end,
            });
            i += len;
            continue;
        }
        if w.number {
            flush(&mut run, &mut spans);
            spans.push(Span {
                start: w.start,
                end: w.end,
            });
        } else if w.capitalised && is_stop_word(&lower(text, &w)) {
            // A capitalised stop word is never part of a name: "The", "In", "He" opening a
            // sentence, and "He" after an abbreviation's period that did not end the sentence.
            // So a name is the same whether or not its mention opens the sentence.
            flush(&mut run, &mut spans);
        } else if w.capitalised {
            match &mut run {
                Some(r) => r.end = w.end,
                None => {
                    run = Some(Span {
                        start: w.start,
                        end: w.end,
                    })
                }
            }
        } else {
            flush(&mut run, &mut spans);
        }
        i += 1;
    }
    flush(&mut run, &mut spans);
    spans
}

/// Length in items of a date starting at item `i`: "12 May 1867", "May 12, 1867", "May 1867",
/// "12 May", "May 12".
fn date_at(text: &str, items: &[Item], i: usize) -> Option<usize> {
    let w = |k: usize| match items.get(k) {
        Some(Item::Word(w)) => Some(*w),
        _ => None,
    };
    let first = w(i)?;
    if is_day(text, &first) {
        let m = w(i + 1).filter(|m| is_month(text, m))?;
        let _ = m;
        return Some(if w(i + 2).is_some_and(|y| is_year(text, &y)) {
            3
        } else {
            2
        });
    }
    if is_month(text, &first) {
        if let Some(d) = w(i + 1) {
            if is_year(text, &d) {
                return Some(2);
            }
            if is_day(text, &d) {
                // "May 12, 1867": the comma is one break item.
                if matches!(items.get(i + 2), Some(Item::Break))
                    && w(i + 3).is_some_and(|y| is_year(text, &y))
                    && text[d.end..w(i + 3)?.start].trim() == ","
                {
                    return Some(4);
                }
                if w(i + 2).is_some_and(|y| is_year(text, &y)) {
                    return Some(3);
                }
                return Some(2);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str, r: &str, o: &str) -> Triplet {
        Triplet {
            subject: s.into(),
            relation: r.into(),
            object: o.into(),
        }
    }

    #[test]
    fn marie_curie() {
        let x = OfflineExtractor::new();
        let s = "Marie Curie was born in Warsaw in 1867.";
        assert_eq!(x.entities(s), ["marie curie", "warsaw", "1867"]);
        assert_eq!(
            x.triplets(s),
            [
                t("marie curie", "born", "warsaw"),
                t("warsaw", RELATED_TO, "1867")
            ]
        );
    }

    #[test]
    fn sentence_initial_stop_word_is_ignored() {
        let x = OfflineExtractor::new();
        assert_eq!(
            x.entities("The Beatles formed in Liverpool."),
            ["beatles", "liverpool"]
        );
        assert_eq!(
            x.triplets("In Paris, Victor Hugo wrote Les Misérables."),
            [
                t("paris", RELATED_TO, "victor hugo"),
                t("victor hugo", "wrote", "les misérables")
            ]
        );
        // A sentence-initial content word is a (one-word) entity as the rule says.
        assert_eq!(x.entities("He met Albert Einstein."), ["albert einstein"]);
    }

    #[test]
    fn dates_numbers_and_sentences() {
        let x = OfflineExtractor::new();
        assert_eq!(
            x.entities(
                "She was born on 7 November 1867 in Warsaw. She won 2 Nobel Prizes on May 5, 1911."
            ),
            [
                "7 november 1867",
                "warsaw",
                "2",
                "nobel prizes",
                "may 5, 1911"
            ]
        );
        // No triplet crosses a sentence boundary.
        let tr = x.triplets("Pierre Curie lived in Paris. Warsaw is in Poland.");
        assert_eq!(
            tr,
            [
                t("pierre curie", "lived", "paris"),
                t("warsaw", RELATED_TO, "poland")
            ]
        );
        assert_eq!(
            x.entities("It cost 1,250.5 dollars in March 1920."),
            ["1,250.5", "march 1920"]
        );
    }

    #[test]
    fn initials_and_abbreviations_stay_in_the_name() {
        let x = OfflineExtractor::new();
        assert_eq!(
            x.entities("J. R. R. Tolkien taught at Oxford. Dr. Watson met Sherlock Holmes in the U.S. Army."),
            ["j. r. r. tolkien", "oxford", "dr. watson", "sherlock holmes", "u.s. army"]
        );
    }

    #[test]
    fn relation_is_at_most_five_content_words() {
        let x = OfflineExtractor::new();
        let tr = x.triplets(
            "Ada Lovelace wrote extensive detailed original visionary programming notes about Babbage.",
        );
        assert_eq!(
            tr,
            [t(
                "ada lovelace",
                "wrote extensive detailed original visionary",
                "babbage"
            )]
        );
        // Lines are sentences; a title line gives no triplet with the body.
        assert_eq!(
            x.triplets("Marie Curie\nShe studied at Sorbonne with Paul Langevin."),
            [t("sorbonne", RELATED_TO, "paul langevin")]
        );
        // A lone capital (a unit, a stray initial) is not an entity.
        assert_eq!(
            x.triplets("Paris averages 25 °C in July."),
            [t("paris", "averages", "25"), t("25", RELATED_TO, "july")]
        );
        // Same entity twice in a row: no self-loop.
        assert!(x.triplets("Paris and Paris.").is_empty());
    }
}
