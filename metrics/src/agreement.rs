//! Signals of the answer-agreement probe: how two cheap paradigms' answers to one question
//! compare (exact match and token F1 between them, their lengths, whether each refuses), the
//! first look a cascade or a router takes before paying for an expensive paradigm.

use crate::answer::{exact_match, token_f1, tokens};

/// Phrases that mark an answer as a refusal (matched on the lower-cased answer). Taken from
/// what instruction-tuned readers say when the context lacks the answer.
const REFUSALS: &[&str] = &[
    "unknown",
    "not enough information",
    "no answer",
    "not mentioned",
    "not specified",
    "not provided",
    "no information",
    "cannot be determined",
    "cannot determine",
    "can't determine",
    "i don't know",
    "i do not know",
    "unable to",
    "not stated",
    "insufficient information",
];

/// Whether `answer` refuses (empty, or says it does not know).
pub fn is_refusal(answer: &str) -> bool {
    let a = answer.trim().to_lowercase();
    a.is_empty() || REFUSALS.iter().any(|r| a.contains(r))
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
}
