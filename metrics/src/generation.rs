//! Generation-quality metrics of Appendix C.1 (semantic F1, soft coverage, faithfulness) over vectors.
//!
//! Everything here is a pure function of embedding rows; the encoder lives in `corpora`, which
//! `metrics` must not depend on. The caller embeds and records the encoder's identity, since the
//! paper's semantic F1 used microsoft/deberta-xlarge-mnli and this project uses the local
//! all-MiniLM-L6-v2 (its contextual token states for semantic F1, its sentence vectors for
//! coverage and faithfulness).
//!
//! Cosine similarity is computed from the raw rows (they need not be unit length); a zero row has
//! similarity 0 with everything, and a similarity is clamped to [-1, 1] so that rounding cannot
//! push an identical pair above 1.

use bench_core::Embeddings;

/// The paper's faithfulness threshold (Appendix C.1, eq. 14).
pub const DEFAULT_TAU: f64 = 0.7;

/// BERTScore-style precision, recall and F1 (eq. 10-12).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SemanticF1 {
    /// Mean best match of each response token among the reference tokens.
    pub precision: f64,
    /// Mean best match of each reference token among the response tokens.
    pub recall: f64,
    /// Harmonic mean of precision and recall.
    pub f1: f64,
}

/// Hard and soft faithfulness (eq. 14-15).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Faithfulness {
    /// Share of answer sentences whose best context match reaches `tau`.
    pub hard: f64,
    /// Mean over answer sentences of the best context match.
    pub soft: f64,
}

fn norms(e: &Embeddings) -> Vec<f64> {
    e.rows()
        .map(|r| {
            r.iter()
                .map(|&v| f64::from(v) * f64::from(v))
                .sum::<f64>()
                .sqrt()
        })
        .collect()
}

/// `sim[i][j] = cos(a_i, b_j)`, in f64.
fn cosine_matrix(a: &Embeddings, b: &Embeddings) -> Vec<Vec<f64>> {
    assert_eq!(
        a.dim, b.dim,
        "embedding dimensions differ ({} vs {})",
        a.dim, b.dim
    );
    let (na, nb) = (norms(a), norms(b));
    a.rows()
        .zip(&na)
        .map(|(ra, &la)| {
            b.rows()
                .zip(&nb)
                .map(|(rb, &lb)| {
                    if la == 0.0 || lb == 0.0 {
                        return 0.0;
                    }
                    let dot: f64 = ra
                        .iter()
                        .zip(rb)
                        .map(|(&x, &y)| f64::from(x) * f64::from(y))
                        .sum();
                    (dot / (la * lb)).clamp(-1.0, 1.0)
                })
                .collect()
        })
        .collect()
}

/// Cosine similarity of two vectors (0 when either is all zeros); panics when lengths differ.
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let ea = Embeddings::new(a.len().max(1), a.to_vec());
    let eb = Embeddings::new(b.len().max(1), b.to_vec());
    cosine_matrix(&ea, &eb)
        .first()
        .and_then(|r| r.first())
        .copied()
        .unwrap_or(0.0)
}

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 {
        0.0
    } else {
        sum / n as f64
    }
}

fn row_max(row: &[f64]) -> f64 {
    row.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

/// Semantic F1 (eq. 10-12): every prediction token is matched greedily to its most similar
/// reference token (precision), every reference token to its most similar prediction token
/// (recall), and F1 is their harmonic mean.
///
/// Rows are contextual token embeddings (one per wordpiece, specials excluded). Unlike the
/// `bert_score` package's defaults this applies **no IDF weighting and no baseline rescaling**:
/// eq. 10-12 have neither. F1 is `2PR / (P + R)` and 0 when `P + R = 0` (as `bert_score` does).
///
/// Empty sides: when either the prediction or the reference has no tokens there is nothing to
/// match, so precision, recall and F1 are all 0 (an empty answer earns nothing; an empty
/// reference cannot be matched, and gold answers are never empty in practice).
///
/// Panics when the two sides have different dimensions.
pub fn semantic_f1(pred_tokens: &Embeddings, ref_tokens: &Embeddings) -> SemanticF1 {
    if pred_tokens.is_empty() || ref_tokens.is_empty() {
        return SemanticF1::default();
    }
    let sim = cosine_matrix(pred_tokens, ref_tokens);
    let precision = mean(sim.iter().map(|r| row_max(r)));
    let recall = mean(
        (0..ref_tokens.len()).map(|j| sim.iter().map(|r| r[j]).fold(f64::NEG_INFINITY, f64::max)),
    );
    let f1 = if precision + recall == 0.0 {
        0.0
    } else {
        2.0 * precision * recall / (precision + recall)
    };
    SemanticF1 {
        precision,
        recall,
        f1,
    }
}

/// Soft coverage (eq. 13): the mean, over ground-truth sentences, of the best cosine with any
/// predicted sentence.
///
/// No ground-truth sentences: 0 (the mean is undefined and nothing can be credited). No
/// predicted sentences: 0 (nothing covers anything).
pub fn soft_coverage(gt_sentences: &Embeddings, pred_sentences: &Embeddings) -> f64 {
    if gt_sentences.is_empty() || pred_sentences.is_empty() {
        return 0.0;
    }
    let sim = cosine_matrix(gt_sentences, pred_sentences);
    mean(sim.iter().map(|r| row_max(r)))
}

/// Faithfulness (eq. 14-15) of the answer's sentences against the retrieved context's sentences:
/// `hard` is the share whose best context cosine is `>= tau` (a similarity exactly at `tau`
/// counts), `soft` the mean best cosine. [`DEFAULT_TAU`] is the paper's 0.7.
///
/// An empty answer, or an empty context (nothing can support a sentence), gives 0 for both.
pub fn faithfulness(
    answer_sentences: &Embeddings,
    context_sentences: &Embeddings,
    tau: f64,
) -> Faithfulness {
    if answer_sentences.is_empty() || context_sentences.is_empty() {
        return Faithfulness::default();
    }
    let best: Vec<f64> = cosine_matrix(answer_sentences, context_sentences)
        .iter()
        .map(|r| row_max(r))
        .collect();
    Faithfulness {
        hard: mean(best.iter().map(|&s| f64::from(u8::from(s >= tau)))),
        soft: mean(best.iter().copied()),
    }
}

/// The sentence splitter coverage and faithfulness use (shared with the reader and the graph).
pub use bench_core::text::split_sentences;
