//! Signals of the post-arm probe `pairs`: every arm's answer compared with every other arm's
//! answer to the same question, and each answer's own shape.
//!
//! A cascade learns these after each stage: a pair's signals need both arms played, a shape's
//! its one arm (the signals' `paradigms` say which), so a router knows a signal as soon as the
//! arms it names have run. The bench's probe step and every import with answer strings call
//! [`pairs_signals`], so one answer set gives the same signals whatever stored it.
//!
//! Per pair of arms `a`, `b` (paradigm ids, `a` first in `ParadigmId::ALL` order):
//! `pair.<a>.<b>.em` (normalised exact match), `.f1` (token F1), `.a_in_b` / `.b_in_a` (the one
//! answer's normalised tokens occur as a contiguous run in the other's), `.len_ratio` (shorter
//! over longer length in normalised tokens; 1 when both are empty) and `.both_refuse`. Per arm
//! `p`: `shape.<p>.len` (normalised tokens), `.yesno` (the answer is "yes" or "no"), `.number`
//! (it holds a number or a year), `.q_overlap` (share of its tokens that occur in the question;
//! missing when the question has no text) and `.refusal` ([`crate::agreement::is_refusal`]).
//! Every value is 1 / 0 or a count or share; none costs anything beyond the arms it reads.

use std::collections::HashSet;

use bench_core::{ParadigmId, Signal};

use crate::agreement::is_refusal;
use crate::answer::{exact_match, token_f1, tokens};

/// The probe's name, on every signal it writes.
pub const PROBE: &str = "pairs";

/// The fields of a pair's signals, in [`pair_values`] order.
pub const PAIR_FIELDS: [&str; 6] = ["em", "f1", "a_in_b", "b_in_a", "len_ratio", "both_refuse"];

/// The fields of an answer's shape, in [`shape_values`] order.
pub const SHAPE_FIELDS: [&str; 5] = ["len", "yesno", "number", "q_overlap", "refusal"];

/// Number words that make a whole answer a number ("two", "forty five", "three hundred").
const NUMBER_WORDS: &[&str] = &[
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
    "thirty",
    "forty",
    "fifty",
    "sixty",
    "seventy",
    "eighty",
    "ninety",
    "hundred",
    "thousand",
    "million",
    "billion",
];

fn flag(v: bool) -> f64 {
    f64::from(u8::from(v))
}

/// Whether `inner` is non-empty and occurs as a contiguous run of `outer`.
fn contains_run(outer: &[String], inner: &[String]) -> bool {
    !inner.is_empty() && outer.windows(inner.len()).any(|w| w == inner)
}

/// The six pair values of answers `a` and `b`, in [`PAIR_FIELDS`] order.
pub fn pair_values(a: &str, b: &str) -> [f64; 6] {
    let (ta, tb) = (tokens(a), tokens(b));
    let (short, long) = (ta.len().min(tb.len()), ta.len().max(tb.len()));
    let len_ratio = if long == 0 {
        1.0
    } else {
        short as f64 / long as f64
    };
    [
        exact_match(a, b),
        token_f1(a, b),
        flag(contains_run(&tb, &ta)),
        flag(contains_run(&ta, &tb)),
        len_ratio,
        flag(is_refusal(a) && is_refusal(b)),
    ]
}

/// Whether the answer holds a number or a year: a token of digits alone ("1994", "5,800"
/// normalises to "5800"), or an answer made of number words only ("forty five").
fn is_number(t: &[String]) -> bool {
    t.iter().any(|w| w.chars().all(|c| c.is_ascii_digit()))
        || (!t.is_empty() && t.iter().all(|w| NUMBER_WORDS.contains(&w.as_str())))
}

/// The five shape values of `answer` to `question`, in [`SHAPE_FIELDS`] order; `q_overlap` is
/// `None` when the question normalises to nothing (its text is unknown).
pub fn shape_values(answer: &str, question: &str) -> [Option<f64>; 5] {
    let t = tokens(answer);
    let q: HashSet<String> = tokens(question).into_iter().collect();
    let overlap = if q.is_empty() {
        None
    } else if t.is_empty() {
        Some(0.0)
    } else {
        Some(t.iter().filter(|w| q.contains(*w)).count() as f64 / t.len() as f64)
    };
    let joined = t.join(" ");
    [
        Some(t.len() as f64),
        Some(flag(joined == "yes" || joined == "no")),
        Some(flag(is_number(&t))),
        overlap,
        Some(flag(is_refusal(answer))),
    ]
}

/// The probe's signals for one question: `answers` are the arms' answers (any order; an arm
/// named twice counts once, the first answer kept). Shapes come per arm, then pairs, both in
/// `ParadigmId::ALL` order; each signal's `paradigms` are the arms it reads, its cost 0.
pub fn pairs_signals(question: &str, answers: &[(ParadigmId, &str)]) -> Vec<Signal> {
    let mut arms: Vec<(ParadigmId, &str)> = Vec::with_capacity(answers.len());
    for &(p, a) in answers {
        if !arms.iter().any(|(q, _)| *q == p) {
            arms.push((p, a));
        }
    }
    arms.sort_by_key(|(p, _)| *p);
    let mut out = Vec::new();
    for &(p, a) in &arms {
        for (field, v) in SHAPE_FIELDS.iter().zip(shape_values(a, question)) {
            let name = format!("shape.{p}.{field}");
            out.push(Signal::free(&name, v, PROBE, &[p]));
        }
    }
    for (i, &(pa, a)) in arms.iter().enumerate() {
        for &(pb, b) in &arms[i + 1..] {
            for (field, v) in PAIR_FIELDS.iter().zip(pair_values(a, b)) {
                let name = format!("pair.{pa}.{pb}.{field}");
                out.push(Signal::free(&name, Some(v), PROBE, &[pa, pb]));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::ParadigmId::{Iterative, LlmOnly, Naive};

    #[test]
    fn pair_values_of_hand_made_answers() {
        // Same normalised text: everything agrees.
        assert_eq!(
            pair_values("The Beatles", "beatles."),
            [1.0, 1.0, 1.0, 1.0, 1.0, 0.0]
        );
        // {john, lennon} inside {john, lennon, and, paul, mccartney}: F1 = 2·1·0.4/1.4 = 4/7.
        let v = pair_values("John Lennon", "John Lennon and Paul McCartney");
        assert_eq!(v[0], 0.0);
        assert!((v[1] - 4.0 / 7.0).abs() < 1e-12, "{}", v[1]);
        assert_eq!(&v[2..], &[1.0, 0.0, 0.4, 0.0]);
        // Containment is of a contiguous run: "lennon john" is not inside "john lennon x".
        assert_eq!(pair_values("Lennon John", "John Lennon x")[2], 0.0);
        // Both refuse, in different words.
        assert_eq!(
            pair_values("Not available", "There is no answer"),
            [0.0, 0.0, 0.0, 0.0, 0.5, 1.0]
        );
        // An empty answer: contained nowhere, length ratio 0; two empty ones agree fully.
        assert_eq!(pair_values("", "1994"), [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        assert_eq!(pair_values("", " "), [1.0, 1.0, 0.0, 0.0, 1.0, 1.0]);
    }

    #[test]
    fn shape_values_of_hand_made_answers() {
        let q = "In which year did the Berlin Wall fall?";
        assert_eq!(
            shape_values("1989", q),
            [Some(1.0), Some(0.0), Some(1.0), Some(0.0), Some(0.0)]
        );
        // "the" is dropped; {berlin, wall, fell}: 2 of 3 in the question.
        let s = shape_values("The Berlin Wall fell", q);
        assert_eq!(s[0], Some(3.0));
        assert!((s[3].unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(
            shape_values("Yes.", "Is Paris in France?"),
            [Some(1.0), Some(1.0), Some(0.0), Some(0.0), Some(0.0)]
        );
        // "Yes, both" is not a bare yes/no; "forty five" is a number; "5,800 genes" holds one.
        assert_eq!(shape_values("Yes, both", q)[1], Some(0.0));
        assert_eq!(shape_values("forty five", q)[2], Some(1.0));
        assert_eq!(shape_values("5,800 genes", q)[2], Some(1.0));
        assert_eq!(shape_values("One Direction", q)[2], Some(0.0));
        assert_eq!(
            shape_values("Unknown", q),
            [Some(1.0), Some(0.0), Some(0.0), Some(0.0), Some(1.0)]
        );
        // No question text: the overlap is missing, not 0.
        assert_eq!(shape_values("Paris", "")[3], None);
        assert_eq!(shape_values("", q)[3], Some(0.0));
    }

    #[test]
    fn signals_name_their_arms_in_paradigm_order() {
        let s = pairs_signals(
            "Who wrote Hamlet?",
            &[
                (Iterative, "William Shakespeare"),
                (LlmOnly, "Shakespeare"),
                (Naive, "Unknown"),
                (LlmOnly, "ignored: the arm was named before"),
            ],
        );
        assert_eq!(s.len(), 3 * 5 + 3 * 6);
        let get = |n: &str| s.iter().find(|x| x.name == n).unwrap();
        assert_eq!(get("shape.llm-only.len").value, Some(1.0));
        assert_eq!(get("shape.naive.refusal").value, Some(1.0));
        assert_eq!(get("shape.naive.refusal").paradigms, [Naive]);
        let p = get("pair.llm-only.iterative.a_in_b");
        assert_eq!(
            (p.value, p.paradigms.as_slice()),
            (Some(1.0), &[LlmOnly, Iterative][..])
        );
        assert_eq!(get("pair.llm-only.iterative.b_in_a").value, Some(0.0));
        assert_eq!(get("pair.naive.iterative.em").value, Some(0.0));
        assert!(s.iter().all(|x| x.probe == PROBE && x.cost == 0.0));
        assert!(!s.iter().any(|x| x.name.starts_with("pair.iterative")));
        // One arm: its shape only.
        assert_eq!(pairs_signals("q", &[(Naive, "x")]).len(), 5);
    }
}
