//! `MiniLm`: the all-MiniLM-L6-v2 sentence encoder (tokenizer, length-sorted chunks, both cores).

use std::path::Path;

use bench_core::{Embedder, Embeddings};
use gemm::Parallelism;
use rayon::prelude::*;
use tokenizers::{Tokenizer, TruncationParams};

use super::bert::{Bert, BertConfig};
use super::files::{ensure_model, ModelFiles, MODEL_NAME};
use crate::error::{CorpusError, Result};

/// Wordpieces per text including `[CLS]`/`[SEP]` (sentence-transformers' `max_seq_length`).
pub const MAX_SEQ_LEN: usize = 256;
/// Output dimension of all-MiniLM-L6-v2.
pub const DIM: usize = 384;
/// Default token rows per forward chunk: large enough for efficient gemm, small enough that
/// the activations of a chunk stay cache-friendly and both cores get several chunks.
pub const DEFAULT_CHUNK_TOKENS: usize = 1024;

/// all-MiniLM-L6-v2: deterministic, unit-length 384-d vectors matching sentence-transformers.
pub struct MiniLm {
    // Visible to the sibling `tokens` module, which runs the same forward without pooling.
    pub(super) tokenizer: Tokenizer,
    pub(super) bert: Bert,
    name: String,
    max_seq_len: usize,
    chunk_tokens: usize,
}

impl std::fmt::Debug for MiniLm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MiniLm")
            .field("name", &self.name)
            .field("max_seq_len", &self.max_seq_len)
            .field("chunk_tokens", &self.chunk_tokens)
            .finish()
    }
}

impl MiniLm {
    /// Loads the model from its default location, downloading it on first use.
    pub fn new() -> Result<Self> {
        Self::load(&ensure_model(None)?)
    }

    /// Loads from a directory (see [`ensure_model`] for where it is looked for).
    pub fn from_dir(dir: Option<&Path>) -> Result<Self> {
        Self::load(&ensure_model(dir)?)
    }

    /// Loads the verified weights, configuration and tokenizer in `files`.
    pub fn load(files: &ModelFiles) -> Result<Self> {
        let config: BertConfig = read_json(&files.config)?;
        let loading = |e: &dyn std::fmt::Display| {
            CorpusError::Encoder(format!("loading {}: {e}", files.weights.display()))
        };
        let bytes = std::fs::read(&files.weights).map_err(|e| loading(&e))?;
        let tensors = safetensors::SafeTensors::deserialize(&bytes).map_err(|e| loading(&e))?;
        let bert = Bert::from_tensors(config, &tensors)?;
        if bert.cfg.hidden_size != DIM {
            return Err(CorpusError::Encoder(format!(
                "expected a {DIM}-d model, got {}",
                bert.cfg.hidden_size
            )));
        }
        let max_seq_len = max_seq_len(&files.dir).min(bert.cfg.max_position_embeddings);
        let tokenizer = load_tokenizer(&files.tokenizer, max_seq_len)?;
        let short = files.sha256.get(..8).unwrap_or(&files.sha256);
        Ok(MiniLm {
            tokenizer,
            bert,
            name: format!("{MODEL_NAME}@gemm(sha256:{short})"),
            max_seq_len,
            chunk_tokens: DEFAULT_CHUNK_TOKENS,
        })
    }

    /// Sets the token rows per forward chunk (a tuning knob; results do not depend on it
    /// beyond float rounding).
    pub fn with_chunk_tokens(mut self, tokens: usize) -> Self {
        self.chunk_tokens = tokens.max(1);
        self
    }

    /// Wordpieces per text including `[CLS]`/`[SEP]`: `sentence_bert_config.json`'s
    /// `max_seq_length` (else `MAX_SEQ_LEN`), capped by the position embeddings.
    pub fn max_seq_len(&self) -> usize {
        self.max_seq_len
    }

    /// Wordpiece ids of each text, with `[CLS]`/`[SEP]`, truncated to [`Self::max_seq_len`].
    pub fn tokenize(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>> {
        texts
            .par_iter()
            .map(|t| {
                self.tokenizer
                    .encode_fast(*t, true)
                    .map(|e| e.get_ids().to_vec())
                    .map_err(|e| CorpusError::Encoder(format!("tokenizing: {e}")))
            })
            .collect()
    }

    /// Embeds already tokenized texts (row `i` for `ids[i]`).
    pub fn embed_ids(&self, ids: &[Vec<u32>]) -> Result<Embeddings> {
        let mut out = vec![0.0f32; ids.len() * DIM];
        // Longest first: chunks of similar lengths, and the big ones start early so the two
        // threads finish together.
        let mut order: Vec<usize> = (0..ids.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(ids[i].len()));
        let chunks = self.plan_chunks(&order, ids);
        let threads = rayon::current_num_threads();
        let results: Vec<Result<Vec<f32>>> = if chunks.len() >= threads && threads > 1 {
            // Coarse parallelism: one chunk per thread, each single-threaded, nothing to sync.
            chunks
                .par_iter()
                .map(|c| self.run_chunk(c, ids, Parallelism::None))
                .collect()
        } else {
            // Too few chunks to share out: parallelise inside each gemm instead.
            let par = if threads > 1 {
                Parallelism::Rayon(threads)
            } else {
                Parallelism::None
            };
            chunks.iter().map(|c| self.run_chunk(c, ids, par)).collect()
        };
        for (chunk, res) in chunks.iter().zip(results) {
            let vecs = res?;
            for (&i, v) in chunk.iter().zip(vecs.chunks_exact(DIM)) {
                out[i * DIM..(i + 1) * DIM].copy_from_slice(v);
            }
        }
        Ok(Embeddings::new(DIM, out))
    }

    /// Splits `order` (longest first) into consecutive chunks of at most `chunk_tokens` rows,
    /// shrunk so both threads get at least two chunks when there is enough work.
    fn plan_chunks(&self, order: &[usize], ids: &[Vec<u32>]) -> Vec<Vec<usize>> {
        let total: usize = ids.iter().map(Vec::len).sum();
        let threads = rayon::current_num_threads().max(1);
        let budget = total
            .div_ceil(2 * threads)
            .clamp(256, self.chunk_tokens.max(1));
        let mut chunks = Vec::new();
        let mut cur = Vec::new();
        let mut cur_tokens = 0;
        for &i in order {
            let l = ids[i].len();
            if !cur.is_empty() && cur_tokens + l > budget {
                chunks.push(std::mem::take(&mut cur));
                cur_tokens = 0;
            }
            cur.push(i);
            cur_tokens += l;
        }
        if !cur.is_empty() {
            chunks.push(cur);
        }
        chunks
    }

    fn run_chunk(&self, chunk: &[usize], ids: &[Vec<u32>], par: Parallelism) -> Result<Vec<f32>> {
        let seqs: Vec<&[u32]> = chunk.iter().map(|&i| ids[i].as_slice()).collect();
        let mut out = vec![0.0f32; seqs.len() * DIM];
        self.bert.encode_into(&seqs, &mut out, par)?;
        Ok(out)
    }
}

impl Embedder for MiniLm {
    fn name(&self) -> &str {
        &self.name
    }

    fn dim(&self) -> usize {
        DIM
    }

    fn embed(&self, texts: &[&str]) -> bench_core::Result<Embeddings> {
        let ids = self.tokenize(texts)?;
        Ok(self.embed_ids(&ids)?)
    }
}

impl bench_core::TokenEncoder for MiniLm {
    fn tokens_and_sentences(
        &self,
        texts: &[&str],
    ) -> bench_core::Result<Vec<(Embeddings, Vec<f32>)>> {
        Ok(MiniLm::tokens_and_sentences(self, texts)?
            .into_iter()
            .map(|(t, v)| (t.vectors, v))
            .collect())
    }
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CorpusError::io(format!("reading {}", path.display()), e))?;
    serde_json::from_str(&text)
        .map_err(|e| CorpusError::Encoder(format!("parsing {}: {e}", path.display())))
}

/// `max_seq_length` from `sentence_bert_config.json`, 256 when absent.
fn max_seq_len(dir: &Path) -> usize {
    #[derive(serde::Deserialize)]
    struct SbertConfig {
        max_seq_length: usize,
    }
    read_json::<SbertConfig>(&dir.join("sentence_bert_config.json"))
        .map(|c| c.max_seq_length)
        .unwrap_or(MAX_SEQ_LEN)
}

/// The model's tokenizer with its own fixed 128 padding removed and truncation set to `max_len`.
pub(crate) fn load_tokenizer(path: &Path, max_len: usize) -> Result<Tokenizer> {
    let mut tok = Tokenizer::from_file(path)
        .map_err(|e| CorpusError::Encoder(format!("loading {}: {e}", path.display())))?;
    tok.with_padding(None);
    tok.with_truncation(Some(TruncationParams {
        max_length: max_len,
        ..Default::default()
    }))
    .map_err(|e| CorpusError::Encoder(format!("tokenizer truncation: {e}")))?;
    Ok(tok)
}
