//! Appendix C.1 metrics on tiny vectors against hand-computed values, plus the LLM judge on scripted replies.

use std::sync::Arc;

use bench_core::{
    BenchError, ChatResponse, Embeddings, Judge, JudgeLabel, LlmErrorKind, QueryType, Usage,
};
use fixtures::{Scripted, ScriptedLlm};
use metrics::generation::{
    cosine, faithfulness, semantic_f1, soft_coverage, split_sentences, Faithfulness, SemanticF1,
    DEFAULT_TAU,
};
use metrics::{judge_request, LlmJudge, JUDGE_PROMPT_VERSION};
use proptest::prelude::*;

fn rows(dim: usize, r: &[&[f32]]) -> Embeddings {
    Embeddings::new(dim, r.iter().flat_map(|x| x.iter().copied()).collect())
}

fn empty(dim: usize) -> Embeddings {
    Embeddings::new(dim, vec![])
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

macro_rules! assert_close {
    ($a:expr, $b:expr) => {{
        let (a, b): (f64, f64) = ($a, $b);
        assert!(close(a, b), "{} = {a}, want {b}", stringify!($a));
    }};
}

const SQRT2: f64 = std::f64::consts::SQRT_2;

// ---------------------------------------------------------------- semantic F1 (eq. 10-12)

#[test]
fn semantic_f1_greedy_matching_by_hand() {
    // pred {(1,0), (0,1)}, ref {(1,0)}: cos matrix [[1], [0]].
    // P = (1 + 0) / 2 = 0.5; R = max(1, 0) = 1; F1 = 2 * 0.5 * 1 / 1.5 = 2/3.
    let s = semantic_f1(&rows(2, &[&[1., 0.], &[0., 1.]]), &rows(2, &[&[1., 0.]]));
    assert_close!(s.precision, 0.5);
    assert_close!(s.recall, 1.0);
    assert_close!(s.f1, 2.0 / 3.0);
}

#[test]
fn semantic_f1_uses_true_cosine_of_unnormalised_rows() {
    // pred {(2,0,0), (0,3,4)}, ref {(0,0,5), (1,1,0)}:
    //   cos((2,0,0),(0,0,5)) = 0          cos((2,0,0),(1,1,0)) = 2 / (2 sqrt2) = 1/sqrt2
    //   cos((0,3,4),(0,0,5)) = 20/25 = 0.8 cos((0,3,4),(1,1,0)) = 3 / (5 sqrt2)
    // P = (1/sqrt2 + 0.8) / 2; R = (max(0, 0.8) + max(1/sqrt2, 3/(5 sqrt2))) / 2 = the same.
    let pred = rows(3, &[&[2., 0., 0.], &[0., 3., 4.]]);
    let reference = rows(3, &[&[0., 0., 5.], &[1., 1., 0.]]);
    let want = (1.0 / SQRT2 + 0.8) / 2.0; // 0.753553...
    let s = semantic_f1(&pred, &reference);
    assert_close!(s.precision, want);
    assert_close!(s.recall, want);
    assert_close!(s.f1, want);

    // ref {(0,0,5)} alone: P = (0 + 0.8) / 2 = 0.4, R = 0.8, F1 = 2 * 0.32 / 1.2 = 0.5333...
    let s = semantic_f1(&pred, &rows(3, &[&[0., 0., 5.]]));
    assert_close!(s.precision, 0.4);
    assert_close!(s.recall, 0.8);
    assert_close!(s.f1, 0.64 / 1.2);
}

#[test]
fn semantic_f1_edge_cases() {
    let r = rows(2, &[&[1., 0.]]);
    // Empty prediction, empty reference, both empty: nothing to match, all 0.
    assert_eq!(semantic_f1(&empty(2), &r), SemanticF1::default());
    assert_eq!(semantic_f1(&r, &empty(2)), SemanticF1::default());
    assert_eq!(semantic_f1(&empty(2), &empty(2)), SemanticF1::default());
    // A zero row has cosine 0 with everything; P + R = 0 gives F1 = 0, not NaN.
    let s = semantic_f1(&rows(2, &[&[0., 0.]]), &r);
    assert_eq!((s.precision, s.recall, s.f1), (0.0, 0.0, 0.0));
    // Opposite vectors: P = R = -1, and eq. 12 taken literally gives 2 * 1 / -2 = -1.
    let s = semantic_f1(&rows(2, &[&[-1., 0.]]), &r);
    assert_close!(s.f1, -1.0);
    // Identical sides score 1 (cosines are clamped, so never above 1).
    let a = rows(3, &[&[0.3, -1.2, 2.0], &[5.0, 0.1, 0.1]]);
    let s = semantic_f1(&a, &a);
    assert_close!(s.f1, 1.0);
    assert!(s.precision <= 1.0 && s.recall <= 1.0);
}

#[test]
#[should_panic(expected = "dimensions differ")]
fn semantic_f1_rejects_mixed_dimensions() {
    semantic_f1(&rows(2, &[&[1., 0.]]), &rows(3, &[&[1., 0., 0.]]));
}

// ---------------------------------------------------------------- soft coverage (eq. 13)

#[test]
fn soft_coverage_by_hand() {
    // gt {(1,0), (0,1)}, pred {(3,4)}: cos = 3/5 and 4/5; coverage = (0.6 + 0.8) / 2 = 0.7.
    let gt = rows(2, &[&[1., 0.], &[0., 1.]]);
    assert_close!(soft_coverage(&gt, &rows(2, &[&[3., 4.]])), 0.7);
    // pred {(3,4), (0,2)}: gt (1,0) -> max(0.6, 0) = 0.6; gt (0,1) -> max(0.8, 1) = 1; mean 0.8.
    assert_close!(soft_coverage(&gt, &rows(2, &[&[3., 4.], &[0., 2.]])), 0.8);
    // Not symmetric: gt {(3,4)} against pred {(1,0), (0,1)} is max(0.6, 0.8) = 0.8.
    assert_close!(soft_coverage(&rows(2, &[&[3., 4.]]), &gt), 0.8);
    // Empty sides give 0.
    assert_eq!(soft_coverage(&gt, &empty(2)), 0.0);
    assert_eq!(soft_coverage(&empty(2), &gt), 0.0);
}

// ---------------------------------------------------------------- faithfulness (eq. 14-15)

#[test]
fn faithfulness_by_hand() {
    // context {(3,4), (4,3)}; answer sentences and their best context cosine:
    //   (1,0):  max(3/5, 4/5)                     = 0.8          >= 0.7
    //   (1,1):  max(7/(5 sqrt2), 7/(5 sqrt2))     = 0.98995...   >= 0.7
    //   (1,-1): max(-1/(5 sqrt2), 1/(5 sqrt2))    = 0.14142...   <  0.7
    // hard = 2/3; soft = (0.8 + 7/(5 sqrt2) + 1/(5 sqrt2)) / 3 = 0.643790...
    let answer = rows(2, &[&[1., 0.], &[1., 1.], &[1., -1.]]);
    let context = rows(2, &[&[3., 4.], &[4., 3.]]);
    let f = faithfulness(&answer, &context, DEFAULT_TAU);
    assert_close!(f.hard, 2.0 / 3.0);
    assert_close!(
        f.soft,
        (0.8 + 7.0 / (5.0 * SQRT2) + 1.0 / (5.0 * SQRT2)) / 3.0
    );
    // Lower the threshold below 1/(5 sqrt2): every sentence is supported.
    assert_close!(faithfulness(&answer, &context, 0.1).hard, 1.0);
}

#[test]
fn faithfulness_threshold_is_inclusive() {
    // cos((2,0,0,0), (7,5,5,1)) = 14 / (2 * 10) = 0.7 exactly (|(7,5,5,1)| = sqrt(100)).
    let answer = rows(4, &[&[2., 0., 0., 0.]]);
    let context = rows(4, &[&[7., 5., 5., 1.]]);
    assert_eq!(cosine(answer.row(0), context.row(0)), 0.7);
    let f = faithfulness(&answer, &context, 0.7);
    assert_eq!(
        f,
        Faithfulness {
            hard: 1.0,
            soft: 0.7
        }
    );
    assert_eq!(faithfulness(&answer, &context, 0.700_000_1).hard, 0.0);
}

#[test]
fn faithfulness_of_empty_sides_is_zero() {
    let c = rows(2, &[&[1., 0.]]);
    assert_eq!(faithfulness(&empty(2), &c, 0.7), Faithfulness::default());
    assert_eq!(faithfulness(&c, &empty(2), 0.7), Faithfulness::default());
}

// ---------------------------------------------------------------- properties

fn matrix(dim: usize) -> impl Strategy<Value = Embeddings> {
    prop::collection::vec(prop::collection::vec(-3.0f32..3.0, dim), 0..6)
        .prop_map(move |r| Embeddings::new(dim, r.into_iter().flatten().collect()))
}

proptest! {
    #[test]
    fn semantic_f1_is_symmetric_with_p_and_r_swapped(a in matrix(3), b in matrix(3)) {
        let ab = semantic_f1(&a, &b);
        let ba = semantic_f1(&b, &a);
        prop_assert!((ab.f1 - ba.f1).abs() < 1e-12);
        prop_assert!((ab.precision - ba.recall).abs() < 1e-12);
        prop_assert!((ab.recall - ba.precision).abs() < 1e-12);
        prop_assert!((-1.0..=1.0).contains(&ab.precision));
        prop_assert!((-1.0..=1.0).contains(&ab.recall));
    }

    #[test]
    fn scores_stay_in_range(a in matrix(2), b in matrix(2), tau in -1.0f64..1.0) {
        let cov = soft_coverage(&a, &b);
        prop_assert!((-1.0..=1.0).contains(&cov));
        let f = faithfulness(&a, &b, tau);
        prop_assert!((0.0..=1.0).contains(&f.hard));
        prop_assert!((-1.0..=1.0).contains(&f.soft));
        // Hard support counts exactly the sentences whose best match reaches tau, so it can only
        // fall as tau rises.
        prop_assert!(faithfulness(&a, &b, (tau + 0.5).min(1.0)).hard <= f.hard);
    }
}

// ---------------------------------------------------------------- sentence splitting

#[test]
fn sentences_split_at_terminators_and_line_breaks() {
    assert_eq!(
        split_sentences("Paris is the capital. It is large!  Is it? Yes"),
        ["Paris is the capital.", "It is large!", "Is it?", "Yes"]
    );
    assert_eq!(
        split_sentences("Wait... what?! Fine\nNext line\n\n- a bullet"),
        ["Wait...", "what?!", "Fine", "Next line", "- a bullet"]
    );
    assert_eq!(
        split_sentences("He said \"stop.\" Then he left (quickly.) End."),
        ["He said \"stop.\"", "Then he left (quickly.)", "End."]
    );
}

#[test]
fn sentences_keep_initials_abbreviations_and_decimals() {
    assert_eq!(
        split_sentences("Dr. Smith met J. R. R. Tolkien in 1950. He paid 3.5 dollars, e.g. cash."),
        [
            "Dr. Smith met J. R. R. Tolkien in 1950.",
            "He paid 3.5 dollars, e.g. cash."
        ]
    );
    assert!(split_sentences("").is_empty());
    assert!(split_sentences("  \n \r\n ").is_empty());
    assert_eq!(split_sentences("no terminator"), ["no terminator"]);
}

// ---------------------------------------------------------------- the LLM judge

fn query() -> bench_core::Query {
    let mut q = fixtures::query(
        "q1",
        "When did Ermengarde die?",
        QueryType::Factual,
        "20 March 851",
        &[],
    );
    q.gold.aliases = vec!["851".into()];
    q
}

#[tokio::test]
async fn llm_judge_reads_the_label_and_bills_usage() {
    let llm = Arc::new(ScriptedLlm::new([Scripted::Reply(
        "{\"label\": \"Correct\"}".into(),
        Some(Usage {
            prompt_tokens: 120,
            completion_tokens: 6,
        }),
    )]));
    let judge = LlmJudge::new(llm.clone());
    let v = judge.judge(&query(), "She died in 851.").await.unwrap();
    assert_eq!(v.label, JudgeLabel::Correct);
    assert_eq!((v.tokens_in, v.tokens_out), (120, 6));
    let sent = llm.requests.lock().unwrap()[0].clone();
    assert_eq!(
        sent,
        judge_request(
            "When did Ermengarde die?",
            &query().gold,
            "She died in 851."
        )
    );
    assert!(sent.messages[1].content.contains("Also acceptable: 851"));
    assert!(judge.identity().contains(JUDGE_PROMPT_VERSION));
    assert!(judge.identity().ends_with("scripted@test"));
}

#[tokio::test]
async fn llm_judge_counts_tokens_without_usage() {
    let reply = "Verdict: Incomplete";
    let llm = Arc::new(ScriptedLlm::new([Scripted::Reply(reply.into(), None)]));
    let v = LlmJudge::new(llm.clone())
        .judge(&query(), "March")
        .await
        .unwrap();
    assert_eq!(v.label, JudgeLabel::Incomplete);
    let sent = llm.requests.lock().unwrap()[0].clone();
    let (tin, tout, _) = ChatResponse {
        content: reply.into(),
        usage: None,
    }
    .token_bill(&sent);
    assert_eq!((v.tokens_in, v.tokens_out), (tin, tout));
    assert!(tin > 0 && tout > 0);
}

#[tokio::test]
async fn llm_judge_never_guesses() {
    let llm = Arc::new(ScriptedLlm::new([Scripted::Reply(
        "Correct, but incomplete.".into(),
        None,
    )]));
    let err = LlmJudge::new(llm)
        .judge(&query(), "851?")
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            BenchError::Llm {
                kind: LlmErrorKind::Unparseable,
                ..
            }
        ),
        "{err}"
    );
}

#[tokio::test]
async fn llm_judge_passes_llm_failures_and_skips_empty_answers() {
    let llm = Arc::new(ScriptedLlm::new([Scripted::Fail(
        LlmErrorKind::Retryable,
        "429".into(),
    )]));
    let judge = LlmJudge::new(llm.clone());
    // An empty response is no-answer without spending a call.
    let v = judge.judge(&query(), "  ").await.unwrap();
    assert_eq!(v.label, JudgeLabel::NoAnswer);
    assert_eq!((v.tokens_in, v.tokens_out, llm.calls()), (0, 0, 0));
    let err = judge.judge(&query(), "851").await.unwrap_err();
    assert!(matches!(
        err,
        BenchError::Llm {
            kind: LlmErrorKind::Retryable,
            ..
        }
    ));
}
