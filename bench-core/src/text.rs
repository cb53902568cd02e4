//! Text rules more than one crate needs: the sentence splitter and its word lists (one copy, so
//! the reader, the metrics and the offline graph cannot drift apart).

/// English month names, lower case: a capitalised month is a date part, not an entity, and a
/// question naming one asks for a time.
pub const MONTHS: &[&str] = &[
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// Abbreviations whose period does not end a sentence (compared lower-cased, without the dot).
pub const ABBREVIATIONS: &[&str] = &[
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "ft", "vs", "etc", "e.g", "i.e",
    "fig", "approx", "no", "gen", "col", "lt", "sgt", "capt", "rev", "gov", "sen", "rep", "inc",
    "ltd", "co", "corp", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct",
    "nov", "dec",
];

/// Whether a period right after `word` belongs to it: an initial ("J" of "J. R. R. Tolkien"),
/// dotted initials ending in a capital ("U.S" of "U.S. Army") or one of [`ABBREVIATIONS`].
pub fn keeps_period(word: &str) -> bool {
    let initials = !word.is_empty()
        && word.split('.').all(|part| {
            let mut letters = part.chars();
            matches!((letters.next(), letters.next()), (Some(c), None) if c.is_alphabetic())
        })
        && word.chars().last().is_some_and(char::is_uppercase);
    initials || ABBREVIATIONS.contains(&word.to_lowercase().as_str())
}

/// Splits `text` into sentences: the one splitter of the offline reader, the generation
/// metrics (coverage, faithfulness) and the offline graph extractor.
///
/// Deliberately simple (the paper does not specify its splitter): a sentence ends at a line break,
/// or at a run of `.`, `!`, `?` or `…` (with any closing quotes or brackets after it) that is
/// followed by whitespace or the end of the text. A single period does not end a sentence after
/// a word that [`keeps_period`] ("Dr.", "e.g.", an initial). Decimal points ("3.5") never split
/// since no whitespace follows. Pieces are trimmed and empty ones dropped, so a text of only
/// whitespace has no sentences.
pub fn split_sentences(text: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < chars.len() {
        let (pos, c) = chars[i];
        if c == '\n' || c == '\r' {
            push_trimmed(text, start, pos, &mut out);
            start = pos + c.len_utf8();
            i += 1;
            continue;
        }
        if !is_terminator(c) {
            i += 1;
            continue;
        }
        // Take the whole run of terminators ("?!", "...") and the closers after it (`."`, `.)`).
        let mut j = i;
        while chars.get(j + 1).is_some_and(|&(_, n)| is_terminator(n)) {
            j += 1;
        }
        let single_period = c == '.' && j == i;
        while chars.get(j + 1).is_some_and(|&(_, n)| is_closer(n)) {
            j += 1;
        }
        let end = chars[j].0 + chars[j].1.len_utf8();
        let at_boundary = chars.get(j + 1).is_none_or(|&(_, n)| n.is_whitespace());
        if at_boundary && !(single_period && keeps_period(last_word(&text[start..pos]))) {
            push_trimmed(text, start, end, &mut out);
            start = end;
        }
        i = j + 1;
    }
    push_trimmed(text, start, text.len(), &mut out);
    out
}

fn is_terminator(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | '…')
}

fn is_closer(c: char) -> bool {
    matches!(c, '"' | '\'' | ')' | ']' | '”' | '’' | '»')
}

fn push_trimmed<'a>(text: &'a str, from: usize, to: usize, out: &mut Vec<&'a str>) {
    let s = text[from..to].trim();
    if !s.is_empty() {
        out.push(s);
    }
}

/// The word just before a period (the end of `before`).
fn last_word(before: &str) -> &str {
    before
        .rsplit(|c: char| c.is_whitespace() || c == '(' || c == '"')
        .next()
        .unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initials_and_abbreviations_keep_their_period() {
        assert!(keeps_period("J") && keeps_period("Dr") && keeps_period("e.g"));
        assert!(keeps_period("U.S") && keeps_period("U.S.A"));
        assert!(!keeps_period("j") && !keeps_period("Paris") && !keeps_period(""));
        assert!(!keeps_period("a.b") && !keeps_period("3.5") && !keeps_period("U.SA"));
        assert_eq!(
            split_sentences("Gen. Lee met Col. Smith. No. 5 won."),
            ["Gen. Lee met Col. Smith.", "No. 5 won."]
        );
    }
}
