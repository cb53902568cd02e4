//! Contextual token embeddings from the MiniLM forward, for BERTScore-style semantic F1.
//!
//! The paper computes semantic F1 with microsoft/deberta-xlarge-mnli; this benchmark uses the
//! local all-MiniLM-L6-v2 instead (no second model to download, same forward as the sentence
//! vectors), so a record must name [`crate::embed::MiniLm`]'s identity next to the score.

use bench_core::Embeddings;
use gemm::Parallelism;
use tokenizers::Encoding;

use super::minilm::{MiniLm, DIM};
use crate::error::{CorpusError, Result};

/// The wordpieces of one text and their last-layer hidden states.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenEmbeddings {
    /// Wordpieces as the tokenizer spells them (`##` marks a continuation), specials excluded.
    pub tokens: Vec<String>,
    /// One unnormalised row per entry of `tokens`: the last hidden state before pooling.
    /// `[CLS]` and `[SEP]` are dropped, as BERTScore gives them no weight.
    pub vectors: Embeddings,
}

impl TokenEmbeddings {
    /// Wordpieces (and rows).
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Whether the text gave no wordpieces.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }
}

impl MiniLm {
    /// Contextual token embeddings of `text` (truncated to [`MiniLm::max_seq_len`] wordpieces
    /// including the specials, as for sentence vectors). An empty text gives no rows.
    pub fn token_embeddings(&self, text: &str) -> Result<TokenEmbeddings> {
        let mut all = self.token_embeddings_many(&[text])?;
        Ok(all.pop().expect("one result per text"))
    }

    /// [`Self::token_embeddings`] of several texts in one forward (entry `i` for `texts[i]`).
    pub fn token_embeddings_many(&self, texts: &[&str]) -> Result<Vec<TokenEmbeddings>> {
        Ok(self
            .tokens_and_sentences(texts)?
            .into_iter()
            .map(|(t, _)| t)
            .collect())
    }

    /// Token embeddings and the sentence vector (mean of every row, specials included, then L2
    /// norm: the arithmetic of [`bench_core::Embedder::embed`]) of each text, from one forward.
    pub fn tokens_and_sentences(&self, texts: &[&str]) -> Result<Vec<(TokenEmbeddings, Vec<f32>)>> {
        let (encodings, hidden) = self.forward_unpooled(texts)?;
        let mut out = Vec::with_capacity(encodings.len());
        let mut start = 0;
        for enc in &encodings {
            let special = enc.get_special_tokens_mask();
            let mut tokens = Vec::new();
            let mut data = Vec::new();
            for (i, &id) in enc.get_ids().iter().enumerate() {
                // The mask marks the specials the post-processor added ([CLS], [SEP]).
                if special.get(i).copied().unwrap_or(0) == 1 {
                    continue;
                }
                let row = start + i;
                // `encode_fast` (the ids the sentence vectors use) leaves the token strings
                // empty, so they come from the vocabulary.
                tokens.push(self.tokenizer.id_to_token(id).unwrap_or_default());
                data.extend_from_slice(&hidden[row * DIM..(row + 1) * DIM]);
            }
            let mut pooled = vec![0.0f32; DIM];
            super::bert::pool_into(
                &hidden[start * DIM..(start + enc.get_ids().len()) * DIM],
                &mut pooled,
            );
            start += enc.get_ids().len();
            out.push((
                TokenEmbeddings {
                    tokens,
                    vectors: Embeddings::new(DIM, data),
                },
                pooled,
            ));
        }
        Ok(out)
    }

    /// Every last-layer row of `text`, `[CLS]` and `[SEP]` included: the rows whose mean,
    /// L2-normalised, is the sentence vector (which is how the tests tie this hook to the
    /// reference values).
    pub fn hidden_states(&self, text: &str) -> Result<Embeddings> {
        let (_, hidden) = self.forward_unpooled(&[text])?;
        Ok(Embeddings::new(DIM, hidden))
    }

    /// Tokenizes and runs the forward without pooling: the encodings and their stacked rows.
    fn forward_unpooled(&self, texts: &[&str]) -> Result<(Vec<Encoding>, Vec<f32>)> {
        let encodings = texts
            .iter()
            .map(|t| {
                self.tokenizer
                    .encode_fast(*t, true)
                    .map_err(|e| CorpusError::Encoder(format!("tokenizing: {e}")))
            })
            .collect::<Result<Vec<_>>>()?;
        if encodings.is_empty() {
            return Ok((encodings, Vec::new()));
        }
        let seqs: Vec<&[u32]> = encodings.iter().map(Encoding::get_ids).collect();
        let threads = rayon::current_num_threads();
        // A few short texts: parallelism inside gemm is the only parallelism there is.
        let par = if threads > 1 {
            Parallelism::Rayon(threads)
        } else {
            Parallelism::None
        };
        let hidden = self.bert.last_hidden_state(&seqs, par)?;
        Ok((encodings, hidden))
    }
}
