//! Contextual token embeddings of the real encoder: tied to the sentence vectors and their reference values.

use std::sync::OnceLock;

use bench_core::Embedder;
use corpora::MiniLm;

fn model() -> &'static MiniLm {
    static M: OnceLock<MiniLm> = OnceLock::new();
    M.get_or_init(|| MiniLm::new().expect("load all-MiniLM-L6-v2"))
}

const TEXT: &str = "A man is eating food.";

/// Mean over rows, then L2 normalisation: sentence-transformers' pooling (every row is real).
fn pooled(rows: &bench_core::Embeddings) -> Vec<f32> {
    let mut m = vec![0.0f32; rows.dim];
    for r in rows.rows() {
        m.iter_mut().zip(r).for_each(|(a, b)| *a += b);
    }
    let n = rows.len() as f32;
    m.iter_mut().for_each(|v| *v /= n);
    let norm = m.iter().map(|v| v * v).sum::<f32>().sqrt();
    m.iter_mut().for_each(|v| *v /= norm);
    m
}

#[test]
fn pooled_hidden_states_are_the_sentence_vector() {
    let m = model();
    let hidden = m.hidden_states(TEXT).unwrap();
    let ids = m.tokenize(&[TEXT]).unwrap();
    assert_eq!(
        hidden.len(),
        ids[0].len(),
        "one row per wordpiece incl. specials"
    );
    let mean = pooled(&hidden);
    let sentence = m.embed_one(TEXT).unwrap();
    for (i, (a, b)) in mean.iter().zip(&sentence).enumerate() {
        assert!((a - b).abs() < 1e-5, "dim {i}: {a} != {b}");
    }
    // sentence-transformers' reference values (as in encoder_reference.rs): the hook is the
    // forward that produces them, not merely self-consistent.
    let want = [0.033242, 0.004406, -0.006277, 0.048379, -0.138702];
    for (i, (g, w)) in mean.iter().zip(want).enumerate() {
        assert!((g - w).abs() < 1e-4, "dim {i}: {g:.6} != {w}");
    }
}

#[test]
fn rows_are_wordpieces_without_specials() {
    let m = model();
    let t = m.token_embeddings(TEXT).unwrap();
    let ids = m.tokenize(&[TEXT]).unwrap();
    assert_eq!(t.len(), ids[0].len() - 2);
    assert_eq!(t.vectors.len(), t.tokens.len());
    assert_eq!(t.vectors.dim, 384);
    assert_eq!(t.tokens, ["a", "man", "is", "eating", "food", "."]);
    // The rows are the hidden states between [CLS] and [SEP], unnormalised.
    let hidden = m.hidden_states(TEXT).unwrap();
    assert_eq!(t.vectors.data, hidden.data[384..hidden.data.len() - 384]);
    let norm = |r: &[f32]| r.iter().map(|v| v * v).sum::<f32>().sqrt();
    assert!(t.vectors.rows().any(|r| (norm(r) - 1.0).abs() > 0.1));
}

#[test]
fn identical_texts_give_identical_vectors() {
    let m = model();
    let a = m.token_embeddings(TEXT).unwrap();
    let b = m.token_embeddings(TEXT).unwrap();
    assert_eq!(a, b);
    // In one batch with another text, each text still attends only to itself.
    let many = m
        .token_embeddings_many(&[TEXT, "The stock market crashed today.", TEXT])
        .unwrap();
    assert_eq!(many.len(), 3);
    assert_eq!(many[0].tokens, a.tokens);
    assert_eq!(many[2].tokens, a.tokens);
    for (x, y) in many[0].vectors.data.iter().zip(&many[2].vectors.data) {
        assert!((x - y).abs() < 1e-5);
    }
    for (x, y) in many[0].vectors.data.iter().zip(&a.vectors.data) {
        assert!((x - y).abs() < 1e-4);
    }
}

#[test]
fn empty_text_has_no_token_rows() {
    let m = model();
    let t = m.token_embeddings("").unwrap();
    assert!(t.is_empty());
    assert!(t.vectors.is_empty());
    assert_eq!(
        m.hidden_states("").unwrap().len(),
        2,
        "[CLS] and [SEP] only"
    );
    assert!(m.token_embeddings_many(&[]).unwrap().is_empty());
}
