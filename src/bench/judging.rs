//! Judging's encoder work: semantic F1 and soft coverage (batched per question, or per tuple) and faithfulness.

use std::collections::HashMap;
use std::sync::Arc;

use anyhow::Result;
use bench_core::Embedder;
use corpora::embed::MiniLm;
use metrics::generation::{semantic_f1, soft_coverage, split_sentences};
use paradigms::ChunkTable;

/// What one text contributes to the metrics: its token embeddings and one vector per sentence.
struct Encoded {
    tokens: bench_core::Embeddings,
    sentences: bench_core::Embeddings,
}

/// Semantic F1 and soft coverage of many (response, gold) pairs with one encoder forward: each
/// distinct non-empty text is encoded once, its token embeddings and its sentence vectors from the
/// same pass (a sentence equal to the whole text reuses the text's pooled vector). The values
/// equal [`generation_quality`]'s per pair up to float summation order inside gemm.
pub(crate) fn generation_quality_batch(
    encoder: &MiniLm,
    pairs: &[(&str, &str)],
) -> Result<Vec<(f64, f64)>> {
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut texts: Vec<&str> = Vec::new();
    for &(response, gold) in pairs {
        if response.trim().is_empty() || gold.trim().is_empty() {
            continue;
        }
        for t in [response, gold] {
            index.entry(t).or_insert_with(|| {
                texts.push(t);
                texts.len() - 1
            });
        }
    }
    // Sequences to run: every text, then every sentence that is not its whole text.
    let mut seqs: Vec<&str> = texts.clone();
    let mut sentence_rows: Vec<Vec<usize>> = Vec::with_capacity(texts.len());
    for (i, t) in texts.iter().enumerate() {
        let rows = split_sentences(t)
            .into_iter()
            .map(|s| {
                if s == *t {
                    i
                } else {
                    seqs.push(s);
                    seqs.len() - 1
                }
            })
            .collect();
        sentence_rows.push(rows);
    }
    let out = if seqs.is_empty() {
        Vec::new()
    } else {
        encoder.tokens_and_sentences(&seqs)?
    };
    let dim = encoder_dim(&out);
    let encoded: Vec<Encoded> = (0..texts.len())
        .map(|i| {
            let mut data = Vec::new();
            for &r in &sentence_rows[i] {
                data.extend_from_slice(&out[r].1);
            }
            Encoded {
                tokens: out[i].0.vectors.clone(),
                sentences: bench_core::Embeddings::new(dim, data),
            }
        })
        .collect();
    Ok(pairs
        .iter()
        .map(|&(response, gold)| {
            if response.trim().is_empty() || gold.trim().is_empty() {
                return (0.0, 0.0);
            }
            let (r, g) = (&encoded[index[response]], &encoded[index[gold]]);
            (
                semantic_f1(&r.tokens, &g.tokens).f1,
                soft_coverage(&g.sentences, &r.sentences),
            )
        })
        .collect())
}

fn encoder_dim(out: &[(corpora::embed::TokenEmbeddings, Vec<f32>)]) -> usize {
    out.first().map_or(corpora::embed::DIM, |(_, v)| v.len())
}

/// Semantic F1 (eq. 10-12, token embeddings of the local encoder) and soft coverage (eq. 13,
/// its sentence vectors) of a response against the gold answer; both 0 for an empty response.
pub(crate) fn generation_quality(
    encoder: &MiniLm,
    response: &str,
    gold: &str,
) -> Result<(f64, f64)> {
    if response.trim().is_empty() || gold.trim().is_empty() {
        return Ok((0.0, 0.0));
    }
    let tokens = encoder.token_embeddings_many(&[response, gold])?;
    let f1 = semantic_f1(&tokens[0].vectors, &tokens[1].vectors).f1;
    let (pred, gt) = (split_sentences(response), split_sentences(gold));
    let mut texts: Vec<&str> = gt.clone();
    texts.extend(&pred);
    let v = encoder.embed(&texts)?;
    let dim = v.dim;
    let gt_rows = bench_core::Embeddings::new(dim, v.data[..gt.len() * dim].to_vec());
    let pred_rows = bench_core::Embeddings::new(dim, v.data[gt.len() * dim..].to_vec());
    Ok((f1, soft_coverage(&gt_rows, &pred_rows)))
}

/// Sentence vectors of context chunks, computed once per chunk and kept for the run, so that
/// faithfulness (eq. 14-15) costs the answer's sentences after the first use of a chunk.
pub(crate) struct FaithfulnessCache {
    chunks: Arc<ChunkTable>,
    vectors: std::sync::Mutex<std::collections::HashMap<String, Arc<bench_core::Embeddings>>>,
}

impl FaithfulnessCache {
    pub(crate) fn new(chunks: Arc<ChunkTable>) -> Self {
        FaithfulnessCache {
            chunks,
            vectors: std::sync::Mutex::new(std::collections::HashMap::new()),
        }
    }

    fn chunk_sentences(
        &self,
        encoder: &MiniLm,
        chunk_id: &str,
    ) -> Result<Arc<bench_core::Embeddings>> {
        if let Some(v) = self.vectors.lock().expect("not poisoned").get(chunk_id) {
            return Ok(v.clone());
        }
        let text = &self.chunks.get(chunk_id)?.text;
        let sentences = metrics::generation::split_sentences(text);
        let v = Arc::new(if sentences.is_empty() {
            bench_core::Embeddings::default()
        } else {
            encoder.embed(&sentences)?
        });
        self.vectors
            .lock()
            .expect("not poisoned")
            .insert(chunk_id.to_owned(), v.clone());
        Ok(v)
    }

    /// Faithfulness of `answer` to the sentences of the context chunks, tau = 0.7.
    pub(crate) fn faithfulness(
        &self,
        encoder: &MiniLm,
        answer: &str,
        context: &[bench_core::RetrievedChunk],
    ) -> Result<metrics::generation::Faithfulness> {
        let answer_sentences = metrics::generation::split_sentences(answer);
        if answer_sentences.is_empty() || context.is_empty() {
            return Ok(metrics::generation::Faithfulness::default());
        }
        let mut data = Vec::new();
        let mut dim = 0;
        for c in context {
            let v = self.chunk_sentences(encoder, &c.chunk_id)?;
            if !v.is_empty() {
                dim = v.dim;
                data.extend_from_slice(&v.data);
            }
        }
        if data.is_empty() {
            return Ok(metrics::generation::Faithfulness::default());
        }
        let ctx = bench_core::Embeddings::new(dim, data);
        let ans = encoder.embed(&answer_sentences)?;
        Ok(metrics::generation::faithfulness(&ans, &ctx, 0.7))
    }
}
