//! Signals of the answer-agreement probe: how two cheap paradigms' answers to one question
//! compare (exact match and token F1 between them, their lengths, whether each refuses), the
//! first look a cascade or a router takes before paying for an expensive paradigm.

use crate::answer::{exact_match, token_f1, tokens};

/// Answers that are a refusal only when they are the whole answer: each also begins real
/// answers ("Unknown Soldier", "None but the Brave", "none of them"), so none is read as a prefix.
/// ("n/a" is left out: normalised it is "na", the symbol of sodium.)
/// Written as a reader says them; compared after SQuAD normalisation (case, punctuation and
/// articles dropped), like every phrase here.
pub const WHOLE_REFUSALS: &[&str] = &[
    "unknown",
    "none",
    "none of the above",
    "not sure",
    "unclear",
];

/// Phrases that make an answer a refusal when it begins with them (at a word boundary): no real
/// answer starts this way, and a reader that refuses often explains itself after them ("Not
/// mentioned in the text. However, ..."). Titles that begin like a refusal ("I Can't Let Maggie
/// Go", "Sorry Seems to Be the Hardest Word") are why the list names whole phrases, not "i can't"
/// or "sorry". A phrase met later in the answer does not count:
/// "The director of X is not mentioned" names what it could not find, and "unable to walk" is
/// an answer.
pub const LEADING_REFUSALS: &[&str] = &[
    "i don't know",
    "i do not know",
    "i'm not sure",
    "i am not sure",
    "i cannot answer",
    "i cannot determine",
    "i cannot find",
    "i cannot provide",
    "i cannot verify",
    "i can't answer",
    "i can't determine",
    "i can't find",
    "i can't verify",
    "i am unable to",
    "i'm unable to",
    "i'm sorry",
    "i am sorry",
    "unable to answer",
    "unable to determine",
    "unable to find",
    "unable to verify",
    "there is no",
    "there are no",
    "there was no",
    "not available",
    "not applicable",
    "not mentioned",
    "not specified",
    "not provided",
    "not stated",
    "not given",
    "not known",
    "not enough information",
    "not in the text",
    "not in the provided text",
    "not in the context",
    "not in the passage",
    "it is not mentioned",
    "it is not specified",
    "it is not possible",
    "it is unclear",
    "no information",
    "no answer",
    "no data",
    "insufficient information",
    "cannot be determined",
    "cannot determine",
    "can't determine",
    "cannot answer",
    "can't answer",
    "we cannot",
    "the answer cannot be determined",
    "the answer is not",
    "the text does not",
    "the provided text does not",
    "the context does not",
    "the passage does not",
];

/// Whether `answer` is a refusal: empty once normalised, one of [`WHOLE_REFUSALS`], or
/// beginning with one of [`LEADING_REFUSALS`] at a word boundary. Matched on the whole answer,
/// never as a substring.
pub fn is_refusal(answer: &str) -> bool {
    let a = tokens(answer);
    if a.is_empty() {
        return true;
    }
    WHOLE_REFUSALS.iter().any(|r| tokens(r) == a)
        || LEADING_REFUSALS.iter().any(|r| {
            let r = tokens(r);
            a.len() >= r.len() && a[..r.len()] == r[..]
        })
}

/// The probe's signal names for arms `a` and `b` (paradigm ids), in the order
/// [`agreement_signals`] returns their values.
pub fn agreement_names(a: &str, b: &str) -> [String; 6] {
    [
        "agree.em".to_string(),
        "agree.f1".to_string(),
        format!("len.{a}"),
        format!("len.{b}"),
        format!("refusal.{a}"),
        format!("refusal.{b}"),
    ]
}

/// Exact match and token F1 between the two answers (SQuAD normalisation), their lengths in
/// normalised tokens, and 1 / 0 for a refusal of each.
pub fn agreement_signals(a: &str, b: &str) -> [f64; 6] {
    let flag = |v: bool| f64::from(u8::from(v));
    [
        exact_match(a, b),
        token_f1(a, b),
        tokens(a).len() as f64,
        tokens(b).len() as f64,
        flag(is_refusal(a)),
        flag(is_refusal(b)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agreement_of_hand_made_pairs() {
        // "The Beatles" and "beatles" normalise to the same token.
        assert_eq!(
            agreement_signals("The Beatles", "beatles"),
            [1.0, 1.0, 1.0, 1.0, 0.0, 0.0]
        );
        // {john, lennon} vs {john, lennon, and, mccartney}: 2 shared, P 1, R 1/2, F1 2/3.
        let s = agreement_signals("John Lennon", "John Lennon and McCartney");
        assert_eq!(s[0], 0.0);
        assert!((s[1] - 2.0 / 3.0).abs() < 1e-12, "{}", s[1]);
        assert_eq!(&s[2..4], &[2.0, 4.0]);
        let s = agreement_signals("There is no answer", "1994");
        assert_eq!(&s[4..], &[1.0, 0.0]);
        assert!(is_refusal("  ") && is_refusal("Not mentioned in the text"));
        assert!(!is_refusal("Grover Cleveland"));
        assert_eq!(
            agreement_names("llm-only", "naive")[2..4],
            ["len.llm-only".to_string(), "len.naive".to_string()]
        );
    }

    #[test]
    fn refusal_is_matched_on_the_whole_answer() {
        for refusal in [
            "",
            " . ",
            "Unknown",
            "unknown.",
            "None",
            "None of the above",
            "I don't know",
            "I do not know the answer.",
            "There is no answer to this question",
            "there is no information in the provided text about the AFL",
            "Not available",
            "Not Applicable",
            "not mentioned in the text. However, the dog is a black dog",
            "Not in the provided text",
            "The answer cannot be determined from the provided text.",
            "I am unable to verify who plays Dr. Russell",
            "cannot be determined",
            "We cannot determine which film",
        ] {
            assert!(is_refusal(refusal), "{refusal:?} should be a refusal");
        }
        for answer in [
            "Unknown Soldier",
            "The Tomb of the Unknown Soldier",
            "None but the Brave",
            "none of them",
            "unable to walk",
            "He was unable to walk",
            "The director of Gas, Oil And Water is not mentioned in the text.",
            "I Can't Let Maggie Go",
            "Sorry Seems to Be the Hardest Word",
            "Na",
            "no",
            "No one",
            "1994",
            "Thereafter",
            "Nonesuch Records",
        ] {
            assert!(!is_refusal(answer), "{answer:?} should not be a refusal");
        }
    }
}
