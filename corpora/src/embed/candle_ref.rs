//! The plain candle `BertModel` encoder (pad to longest, fixed batches): baseline and cross-check.

use bench_core::{Embedder, Embeddings};
use candle_core::{DType, Device, Tensor};
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::Tokenizer;

use super::files::{ModelFiles, MODEL_NAME};
use super::minilm::{load_tokenizer, DIM, MAX_SEQ_LEN};
use crate::error::{CorpusError, Result};

/// all-MiniLM-L6-v2 run the straightforward way through candle: texts in input order, batches of
/// `batch` padded to their longest text. Slower than [`super::MiniLm`]; kept as the naive
/// baseline of `perf_encoder` and as an independent implementation to test against.
pub struct CandleMiniLm {
    model: BertModel,
    tokenizer: Tokenizer,
    name: String,
    batch: usize,
}

impl std::fmt::Debug for CandleMiniLm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CandleMiniLm")
            .field("name", &self.name)
            .field("batch", &self.batch)
            .finish()
    }
}

fn enc(e: impl std::fmt::Display) -> CorpusError {
    CorpusError::Encoder(format!("candle: {e}"))
}

impl CandleMiniLm {
    /// Loads the verified weights in `files`; `batch` texts go through each padded forward.
    pub fn load(files: &ModelFiles, batch: usize) -> Result<Self> {
        let text = std::fs::read_to_string(&files.config)
            .map_err(|e| CorpusError::io(format!("reading {}", files.config.display()), e))?;
        let config: Config = serde_json::from_str(&text).map_err(enc)?;
        let tensors = candle_core::safetensors::load(&files.weights, &Device::Cpu).map_err(enc)?;
        let vb = candle_nn::VarBuilder::from_tensors(tensors, DType::F32, &Device::Cpu);
        let model = BertModel::load(vb, &config).map_err(enc)?;
        let short = files.sha256.get(..8).unwrap_or(&files.sha256);
        Ok(CandleMiniLm {
            model,
            tokenizer: load_tokenizer(&files.tokenizer, MAX_SEQ_LEN)?,
            name: format!("{MODEL_NAME}@candle(sha256:{short})"),
            batch: batch.max(1),
        })
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<f32>> {
        let ids: Vec<Vec<u32>> = texts
            .iter()
            .map(|t| {
                self.tokenizer
                    .encode_fast(*t, true)
                    .map(|e| e.get_ids().to_vec())
                    .map_err(enc)
            })
            .collect::<Result<_>>()?;
        let longest = ids.iter().map(Vec::len).max().unwrap_or(0);
        let n = ids.len();
        let mut flat = vec![0u32; n * longest];
        let mut mask = vec![0f32; n * longest];
        for (i, s) in ids.iter().enumerate() {
            flat[i * longest..i * longest + s.len()].copy_from_slice(s);
            mask[i * longest..i * longest + s.len()].fill(1.0);
        }
        let dev = Device::Cpu;
        let input = Tensor::from_vec(flat, (n, longest), &dev).map_err(enc)?;
        let mask = Tensor::from_vec(mask, (n, longest), &dev).map_err(enc)?;
        let types = input.zeros_like().map_err(enc)?;
        let out = (|| {
            let hidden = self.model.forward(&input, &types, Some(&mask))?; // [n, L, H]
            let m = mask.unsqueeze(2)?; // [n, L, 1]
            let summed = hidden.broadcast_mul(&m)?.sum(1)?; // [n, H]
            let counts = m.sum(1)?; // [n, 1]
            let mean = summed.broadcast_div(&counts)?;
            let norm = mean.sqr()?.sum_keepdim(1)?.sqrt()?;
            mean.broadcast_div(&norm)?.flatten_all()?.to_vec1::<f32>()
        })()
        .map_err(enc)?;
        Ok(out)
    }
}

impl Embedder for CandleMiniLm {
    fn name(&self) -> &str {
        &self.name
    }

    fn dim(&self) -> usize {
        DIM
    }

    fn embed(&self, texts: &[&str]) -> bench_core::Result<Embeddings> {
        let mut data = Vec::with_capacity(texts.len() * DIM);
        for batch in texts.chunks(self.batch) {
            data.extend(self.embed_batch(batch)?);
        }
        Ok(Embeddings::new(DIM, data))
    }
}
