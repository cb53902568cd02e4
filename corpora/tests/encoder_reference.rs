//! The real encoder against sentence-transformers' reference values (downloads the weights once).

use std::sync::OnceLock;

use bench_core::Embedder;
use corpora::MiniLm;
#[cfg(feature = "candle-baseline")]
use corpora::{ensure_model, CandleMiniLm};

fn model() -> &'static MiniLm {
    static M: OnceLock<MiniLm> = OnceLock::new();
    M.get_or_init(|| MiniLm::new().expect("load all-MiniLM-L6-v2"))
}

fn cos(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn pair(a: &str, b: &str) -> f32 {
    let e = model().embed(&[a, b]).unwrap();
    cos(e.row(0), e.row(1))
}

#[test]
fn identity_and_shape() {
    let m = model();
    assert_eq!(m.dim(), 384);
    assert_eq!(m.name(), "all-MiniLM-L6-v2@gemm(sha256:53aa5117)");
    let e = m.embed(&["A man is eating food."]).unwrap();
    assert_eq!((e.len(), e.dim), (1, 384));
    assert!((cos(e.row(0), e.row(0)) - 1.0).abs() < 1e-5);
}

#[test]
fn reference_similarities() {
    let cases = [
        (
            "A man is eating food.",
            "A man is eating a piece of bread.",
            0.7553,
        ),
        (
            "A man is eating food.",
            "The new movie is awesome.",
            -0.0461,
        ),
        (
            "How do I reset my password?",
            "I forgot my login credentials, how can I change them?",
            0.6592,
        ),
        (
            "How do I reset my password?",
            "The stock market crashed today.",
            0.0685,
        ),
    ];
    for (a, b, want) in cases {
        let got = pair(a, b);
        assert!(
            (got - want).abs() < 1e-4,
            "cos({a:?}, {b:?}) = {got:.5}, want {want}"
        );
    }
}

#[test]
fn reference_first_dimensions() {
    let v = model().embed_one("A man is eating food.").unwrap();
    let want = [0.033242, 0.004406, -0.006277, 0.048379, -0.138702];
    for (i, (g, w)) in v.iter().zip(want).enumerate() {
        assert!((g - w).abs() < 1e-4, "dim {i}: {g:.6} != {w}");
    }
}

fn long_text(words: usize) -> String {
    let vocab = [
        "retrieval",
        "graph",
        "passage",
        "the",
        "model",
        "answers",
        "questions",
        "about",
        "medicine",
        "law",
    ];
    (0..words)
        .map(|i| vocab[(i * 7 + i / 3) % vocab.len()])
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn batching_does_not_leak_padding_or_order() {
    let m = model();
    let long = long_text(150);
    let texts = [
        "Hi.",
        long.as_str(),
        "A man is eating food.",
        "How do I reset my password?",
        "",
        "The stock market crashed today, and analysts are still trying to understand why it happened.",
    ];
    let batch = m.embed(&texts).unwrap();
    for (i, t) in texts.iter().enumerate() {
        let alone = m.embed_one(t).unwrap();
        let diff = batch
            .row(i)
            .iter()
            .zip(&alone)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(diff < 1e-5, "text {i}: batch differs from alone by {diff}");
    }
    // Many texts (several parallel chunks) keep their order.
    let many: Vec<String> = (0..300)
        .map(|i| format!("{} {i}", long_text(5 + i % 60)))
        .collect();
    let refs: Vec<&str> = many.iter().map(String::as_str).collect();
    let all = m.embed(&refs).unwrap();
    for i in [0, 17, 150, 299] {
        let alone = m.embed_one(refs[i]).unwrap();
        let diff = all
            .row(i)
            .iter()
            .zip(&alone)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(diff < 1e-5, "text {i} of 300 differs by {diff}");
    }
    assert_eq!(m.embed(&refs).unwrap(), all, "not deterministic");
}

#[test]
fn long_text_is_truncated_at_256_wordpieces() {
    let m = model();
    let text = long_text(600);
    let ids = m.tokenize(&[&text]).unwrap();
    assert_eq!(ids[0].len(), 256);
    assert_eq!((ids[0][0], ids[0][255]), (101, 102), "[CLS] ... [SEP] kept");
    let v = m.embed_one(&text).unwrap();
    // Truncation means the tail does not matter.
    let longer = format!("{text} completely different ending words here");
    let w = m.embed_one(&longer).unwrap();
    assert!((cos(&v, &w) - 1.0).abs() < 1e-5);
    assert!((cos(&v, &v) - 1.0).abs() < 1e-5);
}

/// Built only with candle (`just test-candle`): the default build leaves candle out, and the
/// encoder is checked against sentence-transformers' own values above.
#[cfg(feature = "candle-baseline")]
#[test]
fn agrees_with_plain_candle_bert() {
    let files = ensure_model(None).unwrap();
    let candle = CandleMiniLm::load(&files, 4).unwrap();
    let long = long_text(400);
    let texts = [
        "A man is eating food.",
        "The new movie is awesome.",
        long.as_str(),
        "x",
        "How do I reset my password?",
    ];
    let a = model().embed(&texts).unwrap();
    let b = candle.embed(&texts).unwrap();
    for i in 0..texts.len() {
        let diff = a
            .row(i)
            .iter()
            .zip(b.row(i))
            .map(|(x, y)| (x - y).abs())
            .fold(0.0f32, f32::max);
        assert!(
            diff < 2e-5,
            "text {i}: gemm and candle forwards differ by {diff}"
        );
    }
}
