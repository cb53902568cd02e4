//! Entity and relation normalisation: NFKC, lowercase, collapsed whitespace, no surrounding punctuation.

use unicode_normalization::UnicodeNormalization;

/// Relation of two neighbouring entities with no content word between them.
pub const RELATED_TO: &str = "related_to";

/// The node name of an entity mention: NFKC, lowercased, whitespace runs collapsed to one space,
/// punctuation and symbols stripped from both ends (inner punctuation, as in "u.s." or "o'neill",
/// is part of the name). Empty when nothing alphanumeric is left.
pub fn entity(text: &str) -> String {
    let folded: String = text.nfkc().flat_map(char::to_lowercase).collect();
    let collapsed = collapse_whitespace(&folded);
    let trimmed = collapsed.trim_matches(|c: char| !c.is_alphanumeric());
    // A possessive left at the end ("curie's") names the same entity as without it.
    let trimmed = trimmed
        .strip_suffix("'s")
        .or_else(|| trimmed.strip_suffix("\u{2019}s"))
        .unwrap_or(trimmed);
    trimmed
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_string()
}

/// A relation label: the same folding as entities; empty relations become `related_to`.
pub fn relation(text: &str) -> String {
    let folded: String = text.nfkc().flat_map(char::to_lowercase).collect();
    let collapsed = collapse_whitespace(&folded);
    let trimmed = collapsed.trim_matches(|c: char| !c.is_alphanumeric());
    if trimmed.is_empty() {
        RELATED_TO.to_string()
    } else {
        trimmed.to_string()
    }
}

fn collapse_whitespace(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_case_width_whitespace_and_edge_punctuation() {
        assert_eq!(entity("  Marie   Curie, "), "marie curie");
        assert_eq!(entity("\"Warsaw\""), "warsaw");
        assert_eq!(entity("(The Beatles)."), "the beatles");
        // NFKC: full-width letters and the "ﬁ" ligature fold to ASCII.
        assert_eq!(entity("ＰＡＲＩＳ"), "paris");
        assert_eq!(entity("ﬁnland"), "finland");
        assert_eq!(entity("Marie\tCurie\n"), "marie curie");
        assert_eq!(entity("Curie's"), "curie");
        assert_eq!(entity("Curie’s"), "curie");
    }

    #[test]
    fn keeps_inner_punctuation_and_drops_empty() {
        assert_eq!(entity("U.S."), "u.s");
        assert_eq!(entity("O'Neill"), "o'neill");
        assert_eq!(entity("Jean-Paul Sartre"), "jean-paul sartre");
        assert_eq!(entity(" ... "), "");
        assert_eq!(entity("1,867"), "1,867");
    }

    #[test]
    fn relations_fold_and_default() {
        assert_eq!(relation(" Was Born In "), "was born in");
        assert_eq!(relation(" -- "), "related_to");
    }
}
