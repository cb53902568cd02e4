//! A padding-free BERT encoder forward in plain Rust on `gemm`, with mean pooling and L2 norm.
//!
//! Why not candle's `BertModel`: it pads every batch to its longest text, runs attention as many
//! tiny batched matmuls, and its element-wise ops are single-threaded, which left one of the two
//! cores idle. Here the token rows of all texts in a chunk are stacked (no padding at all), the
//! dense layers are one large gemm each, and attention runs per text and head.

use gemm::Parallelism;
use rayon::prelude::*;
use safetensors::{Dtype, SafeTensors};
use serde::Deserialize;

use crate::error::{CorpusError, Result};

/// The subset of a Hugging Face BERT `config.json` the forward needs.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct BertConfig {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub max_position_embeddings: usize,
    pub layer_norm_eps: f64,
    #[serde(default = "default_act")]
    pub hidden_act: String,
}

fn default_act() -> String {
    "gelu".into()
}

#[derive(Debug)]
struct LayerNorm {
    w: Vec<f32>,
    b: Vec<f32>,
}

/// Dense weights are stored `[in, out]` row-major (transposed from PyTorch's `[out, in]`).
#[derive(Debug)]
struct Layer {
    /// Query, key and value fused into one `[H, 3H]` matrix: one gemm instead of three.
    qkv_w: Vec<f32>,
    qkv_b: Vec<f32>,
    o_w: Vec<f32>,
    o_b: Vec<f32>,
    ln1: LayerNorm,
    up_w: Vec<f32>,
    up_b: Vec<f32>,
    down_w: Vec<f32>,
    down_b: Vec<f32>,
    ln2: LayerNorm,
}

#[derive(Debug)]
pub(crate) struct Bert {
    pub cfg: BertConfig,
    word: Vec<f32>,
    pos: Vec<f32>,
    type0: Vec<f32>,
    emb_ln: LayerNorm,
    layers: Vec<Layer>,
}

fn take(t: &SafeTensors<'_>, name: &str, shape: &[usize]) -> Result<Vec<f32>> {
    // Some exports prefix every tensor with `bert.`.
    let tensor = t
        .tensor(name)
        .or_else(|_| t.tensor(&format!("bert.{name}")))
        .map_err(|_| CorpusError::Encoder(format!("weights lack tensor {name}")))?;
    if tensor.shape() != shape {
        return Err(CorpusError::Encoder(format!(
            "tensor {name} has shape {:?}, expected {shape:?}",
            tensor.shape()
        )));
    }
    // all-MiniLM-L6-v2 ships float32; another dtype would need a conversion this loader lacks.
    if tensor.dtype() != Dtype::F32 {
        return Err(CorpusError::Encoder(format!(
            "tensor {name} is {:?}, expected F32",
            tensor.dtype()
        )));
    }
    // Safetensors stores little-endian values, possibly unaligned within the file.
    Ok(tensor
        .data()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

/// `[out, in]` row-major to `[in, out]` row-major.
fn transpose(w: &[f32], out: usize, inp: usize) -> Vec<f32> {
    let mut t = vec![0.0; w.len()];
    for o in 0..out {
        for i in 0..inp {
            t[i * out + o] = w[o * inp + i];
        }
    }
    t
}

impl Bert {
    pub fn from_tensors(cfg: BertConfig, t: &SafeTensors<'_>) -> Result<Self> {
        if cfg.hidden_act != "gelu" {
            return Err(CorpusError::Encoder(format!(
                "unsupported hidden_act {:?} (only exact gelu)",
                cfg.hidden_act
            )));
        }
        let (h, i) = (cfg.hidden_size, cfg.intermediate_size);
        if cfg.num_attention_heads == 0 || h % cfg.num_attention_heads != 0 {
            return Err(CorpusError::Encoder(
                "hidden size not divisible by heads".into(),
            ));
        }
        let ln = |p: &str| -> Result<LayerNorm> {
            Ok(LayerNorm {
                w: take(t, &format!("{p}.weight"), &[h])?,
                b: take(t, &format!("{p}.bias"), &[h])?,
            })
        };
        let dense = |p: &str, out: usize, inp: usize| -> Result<(Vec<f32>, Vec<f32>)> {
            let w = take(t, &format!("{p}.weight"), &[out, inp])?;
            Ok((
                transpose(&w, out, inp),
                take(t, &format!("{p}.bias"), &[out])?,
            ))
        };
        let mut layers = Vec::with_capacity(cfg.num_hidden_layers);
        for l in 0..cfg.num_hidden_layers {
            let p = format!("encoder.layer.{l}");
            let (qw, qb) = dense(&format!("{p}.attention.self.query"), h, h)?;
            let (kw, kb) = dense(&format!("{p}.attention.self.key"), h, h)?;
            let (vw, vb) = dense(&format!("{p}.attention.self.value"), h, h)?;
            let mut qkv_w = Vec::with_capacity(3 * h * h);
            for r in 0..h {
                qkv_w.extend_from_slice(&qw[r * h..(r + 1) * h]);
                qkv_w.extend_from_slice(&kw[r * h..(r + 1) * h]);
                qkv_w.extend_from_slice(&vw[r * h..(r + 1) * h]);
            }
            let qkv_b = [qb, kb, vb].concat();
            let (o_w, o_b) = dense(&format!("{p}.attention.output.dense"), h, h)?;
            let (up_w, up_b) = dense(&format!("{p}.intermediate.dense"), i, h)?;
            let (down_w, down_b) = dense(&format!("{p}.output.dense"), h, i)?;
            layers.push(Layer {
                qkv_w,
                qkv_b,
                o_w,
                o_b,
                ln1: ln(&format!("{p}.attention.output.LayerNorm"))?,
                up_w,
                up_b,
                down_w,
                down_b,
                ln2: ln(&format!("{p}.output.LayerNorm"))?,
            });
        }
        let type_emb = take(t, "embeddings.token_type_embeddings.weight", &[2, h])
            .or_else(|_| take(t, "embeddings.token_type_embeddings.weight", &[1, h]))?;
        Ok(Bert {
            word: take(t, "embeddings.word_embeddings.weight", &[cfg.vocab_size, h])?,
            pos: take(
                t,
                "embeddings.position_embeddings.weight",
                &[cfg.max_position_embeddings, h],
            )?,
            type0: type_emb[..h].to_vec(),
            emb_ln: ln("embeddings.LayerNorm")?,
            layers,
            cfg,
        })
    }

    /// Encodes the token id sequences `seqs` (with their special tokens, already truncated) and
    /// writes one mean-pooled, L2-normalised row per sequence into `out` (`seqs.len() * H`).
    ///
    /// Every sequence only attends to itself, so the result for a text does not depend on what
    /// else is in the chunk (up to float summation order inside gemm).
    pub fn encode_into(&self, seqs: &[&[u32]], out: &mut [f32], par: Parallelism) -> Result<()> {
        let h = self.cfg.hidden_size;
        assert_eq!(out.len(), seqs.len() * h, "output buffer size");
        let x = self.last_hidden_state(seqs, par)?;

        let mut start = 0;
        for (s, o) in seqs.iter().zip(out.chunks_exact_mut(h)) {
            pool_into(&x[start * h..(start + s.len()) * h], o);
            start += s.len();
        }
        Ok(())
    }

    /// The last encoder layer's output for `seqs` (same checks and forward as [`Self::encode_into`]),
    /// before pooling: `total_tokens * H` row-major, the rows of each sequence in order, special
    /// tokens included. Token-level metrics (BERTScore-style semantic F1) read it.
    pub(crate) fn last_hidden_state(&self, seqs: &[&[u32]], par: Parallelism) -> Result<Vec<f32>> {
        self.check_sequences(seqs)?;
        let total: usize = seqs.iter().map(|s| s.len()).sum();
        let max_len = seqs.iter().map(|s| s.len()).max().unwrap_or(0);
        let mut x = self.embed_tokens(seqs, total);
        let mut scratch = Scratch::new(&self.cfg, total, max_len);
        let pairs = attention_pairs(seqs, self.cfg.num_attention_heads);
        for layer in &self.layers {
            self.encoder_layer(layer, &mut x, &mut scratch, &pairs, par);
        }
        Ok(x)
    }

    /// Refuses an empty sequence, one longer than the position table, or a token id outside the
    /// vocabulary.
    fn check_sequences(&self, seqs: &[&[u32]]) -> Result<()> {
        for s in seqs {
            if s.is_empty() || s.len() > self.cfg.max_position_embeddings {
                return Err(CorpusError::Encoder(format!(
                    "sequence of {} tokens (must be 1..={})",
                    s.len(),
                    self.cfg.max_position_embeddings
                )));
            }
            if let Some(&bad) = s.iter().find(|&&id| id as usize >= self.cfg.vocab_size) {
                return Err(CorpusError::Encoder(format!(
                    "token id {bad} outside the vocabulary"
                )));
            }
        }
        Ok(())
    }

    /// The embeddings of every token of `seqs` (`total` in all): word + position + token type 0,
    /// then LayerNorm; `total * H` row-major.
    fn embed_tokens(&self, seqs: &[&[u32]], total: usize) -> Vec<f32> {
        let h = self.cfg.hidden_size;
        let mut x = vec![0.0f32; total * h];
        let mut row = 0;
        for s in seqs {
            for (p, &id) in s.iter().enumerate() {
                let dst = &mut x[row * h..(row + 1) * h];
                let w = &self.word[id as usize * h..(id as usize + 1) * h];
                let pe = &self.pos[p * h..(p + 1) * h];
                for j in 0..h {
                    dst[j] = w[j] + pe[j] + self.type0[j];
                }
                row += 1;
            }
        }
        layer_norm_rows(&mut x, h, &self.emb_ln, self.cfg.layer_norm_eps as f32);
        x
    }

    /// One encoder layer, in place on `x` (`total * H`): self-attention, add and LayerNorm, then
    /// the feed-forward, add and LayerNorm. `s` holds the intermediate rows, reused by every layer.
    fn encoder_layer(
        &self,
        layer: &Layer,
        x: &mut [f32],
        s: &mut Scratch,
        pairs: &[(usize, usize, usize)],
        par: Parallelism,
    ) {
        let h = self.cfg.hidden_size;
        let inter = self.cfg.intermediate_size;
        let eps = self.cfg.layer_norm_eps as f32;
        let total = x.len() / h;
        // qkv = x Wqkv + b
        fill_rows(&mut s.qkv, &layer.qkv_b);
        matmul_acc(&mut s.qkv, x, &layer.qkv_w, total, 3 * h, h, par);
        self.attention(s, pairs, par);

        // y = LN(x + ctx Wo + bo)
        add_rows(&mut s.y, x, &layer.o_b);
        matmul_acc(&mut s.y, &s.ctx, &layer.o_w, total, h, h, par);
        layer_norm_rows(&mut s.y, h, &layer.ln1, eps);

        // x = LN(y + gelu(y Wup + bup) Wdown + bdown)
        fill_rows(&mut s.ff, &layer.up_b);
        matmul_acc(&mut s.ff, &s.y, &layer.up_w, total, inter, h, par);
        gelu_in_place(&mut s.ff);
        add_rows(x, &s.y, &layer.down_b);
        matmul_acc(x, &s.ff, &layer.down_w, total, h, inter, par);
        layer_norm_rows(x, h, &layer.ln2, eps);
    }

    /// Self-attention of every (text, head) pair over `s.qkv`, written into `s.ctx`.
    ///
    /// Each text attends to itself only: no mask needed since nothing is padded. Every pair is
    /// independent and its products are small (k = dh), so with threads to spare the pairs are
    /// shared out whole instead of splitting each tiny gemm; either way each pair runs the same
    /// single-threaded arithmetic.
    fn attention(&self, s: &mut Scratch, pairs: &[(usize, usize, usize)], par: Parallelism) {
        let h = self.cfg.hidden_size;
        let dh = h / self.cfg.num_attention_heads;
        let scale = 1.0 / (dh as f32).sqrt();
        let scores_len = s.scores.len();
        let qkv_ref = &s.qkv;
        let head = |scores: &mut Vec<f32>, &(start, l, hd): &(usize, usize, usize)| {
            attention_head(qkv_ref, start, l, hd, h, dh, scale, scores)
        };
        let outs: Vec<Vec<f32>> = if matches!(par, Parallelism::None) {
            pairs.iter().map(|p| head(&mut s.scores, p)).collect()
        } else {
            pairs
                .par_iter()
                .map_init(|| vec![0.0f32; scores_len], head)
                .collect()
        };
        for (&(start, l, hd), out) in pairs.iter().zip(&outs) {
            for r in 0..l {
                s.ctx[(start + r) * h + hd * dh..(start + r) * h + (hd + 1) * dh]
                    .copy_from_slice(&out[r * dh..(r + 1) * dh]);
            }
        }
    }
}

/// The intermediate rows of one forward pass, allocated once and reused by every layer.
struct Scratch {
    /// `total * 3H`: queries, keys and values.
    qkv: Vec<f32>,
    /// `total * H`: the attention's output.
    ctx: Vec<f32>,
    /// `total * H`: after attention, add and LayerNorm.
    y: Vec<f32>,
    /// `total * intermediate`: the feed-forward's hidden rows.
    ff: Vec<f32>,
    /// `max_len * max_len`: one head's attention scores (the single-threaded path's).
    scores: Vec<f32>,
}

impl Scratch {
    /// Buffers for `total` tokens whose longest sequence has `max_len`.
    fn new(cfg: &BertConfig, total: usize, max_len: usize) -> Self {
        let h = cfg.hidden_size;
        Scratch {
            qkv: vec![0.0f32; total * 3 * h],
            ctx: vec![0.0f32; total * h],
            y: vec![0.0f32; total * h],
            ff: vec![0.0f32; total * cfg.intermediate_size],
            scores: vec![0.0f32; max_len * max_len],
        }
    }
}

/// Every (first row, length, head) of the attention: one per text and head, the same in every
/// layer.
fn attention_pairs(seqs: &[&[u32]], heads: usize) -> Vec<(usize, usize, usize)> {
    let mut pairs = Vec::with_capacity(seqs.len() * heads);
    let mut start = 0;
    for s in seqs {
        for hd in 0..heads {
            pairs.push((start, s.len(), hd));
        }
        start += s.len();
    }
    pairs
}

/// One head's attention for one text (rows `start..start + l` of `qkv`): `softmax(Q K^T scale) V`
/// as `l x dh`, row-major; `scores` is scratch of at least `l * l`.
#[allow(clippy::too_many_arguments)]
fn attention_head(
    qkv: &[f32],
    start: usize,
    l: usize,
    hd: usize,
    h: usize,
    dh: usize,
    scale: f32,
    scores: &mut [f32],
) -> Vec<f32> {
    let base = start * 3 * h;
    let sc = &mut scores[..l * l];
    // scores = Q_h K_h^T * scale; K^T is read through its strides.
    gemm_strided(
        Dims { m: l, n: l, k: dh },
        Out {
            data: sc,
            rs: l,
            read: false,
        },
        In {
            data: &qkv[base + hd * dh..],
            rs: 3 * h,
            cs: 1,
        },
        In {
            data: &qkv[base + h + hd * dh..],
            rs: 1,
            cs: 3 * h,
        },
        scale,
        Parallelism::None,
    );
    softmax_rows(sc, l);
    // ctx_h = P V_h.
    let mut out = vec![0.0f32; l * dh];
    gemm_strided(
        Dims { m: l, n: dh, k: l },
        Out {
            data: &mut out,
            rs: dh,
            read: false,
        },
        In {
            data: sc,
            rs: l,
            cs: 1,
        },
        In {
            data: &qkv[base + 2 * h + hd * dh..],
            rs: 3 * h,
            cs: 1,
        },
        1.0,
        Parallelism::None,
    );
    out
}

/// Every row of `dst` (row length `bias.len()`) set to `bias`.
fn fill_rows(dst: &mut [f32], bias: &[f32]) {
    for r in dst.chunks_exact_mut(bias.len()) {
        r.copy_from_slice(bias);
    }
}

/// `dst = src + bias` row by row.
fn add_rows(dst: &mut [f32], src: &[f32], bias: &[f32]) {
    let n = bias.len();
    for (d, s) in dst.chunks_exact_mut(n).zip(src.chunks_exact(n)) {
        for j in 0..n {
            d[j] = s[j] + bias[j];
        }
    }
}

/// The sentence vector of one text's last-layer `rows` (`len * out.len()`): their mean (all rows
/// are real tokens, no padding), then L2 normalisation.
pub(crate) fn pool_into(rows: &[f32], out: &mut [f32]) {
    let h = out.len();
    out.fill(0.0);
    for r in rows.chunks_exact(h) {
        for (a, b) in out.iter_mut().zip(r) {
            *a += b;
        }
    }
    let inv = 1.0 / (rows.len() / h) as f32;
    out.iter_mut().for_each(|v| *v *= inv);
    let norm = out.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
    out.iter_mut().for_each(|v| *v /= norm);
}

/// Runs `f` compiled for the widest SIMD this CPU has (pulp picks AVX-512 or AVX2+FMA at run
/// time; the crate itself is built for baseline x86-64, i.e. 4-lane SSE). Each loop is the
/// `inline(always)` method of a small `WithSimd` struct calling only `inline(always)` helpers,
/// so all of it is compiled inside pulp's wide function: a closure, or a function passed in,
/// stayed a separate 4-lane function (measured with perf). No operation is fused
/// or reordered by this (Rust contracts no multiply-add on its own), so results are bit for bit
/// those of the baseline build.
#[inline(always)]
fn widest<Op: pulp::WithSimd>(f: Op) -> Op::Output {
    // Detecting the CPU's features costs about as much as a short loop: do it once.
    static ARCH: std::sync::OnceLock<pulp::Arch> = std::sync::OnceLock::new();
    ARCH.get_or_init(pulp::Arch::new).dispatch(f)
}

fn layer_norm_rows(x: &mut [f32], h: usize, ln: &LayerNorm, eps: f32) {
    struct Norm<'a>(&'a mut [f32], usize, &'a LayerNorm, f32);
    impl pulp::WithSimd for Norm<'_> {
        type Output = ();
        #[inline(always)]
        fn with_simd<S: pulp::Simd>(self, _: S) {
            let Norm(x, h, ln, eps) = self;
            for r in x.chunks_exact_mut(h) {
                let mean = sum8(r, |v| v) / h as f32;
                let var = sum8(r, |v| (v - mean) * (v - mean)) / h as f32;
                let inv = 1.0 / (var + eps).sqrt();
                for ((v, w), b) in r.iter_mut().zip(&ln.w).zip(&ln.b) {
                    *v = (*v - mean) * inv * w + b;
                }
            }
        }
    }
    widest(Norm(x, h, ln, eps))
}

/// Softmax of every `l`-long row of `x`.
fn softmax_rows(x: &mut [f32], l: usize) {
    struct Softmax<'a>(&'a mut [f32], usize);
    impl pulp::WithSimd for Softmax<'_> {
        type Output = ();
        #[inline(always)]
        fn with_simd<S: pulp::Simd>(self, _: S) {
            for r in self.0.chunks_exact_mut(self.1) {
                softmax(r);
            }
        }
    }
    widest(Softmax(x, l))
}

#[inline(always)]
fn softmax(r: &mut [f32]) {
    let max = max8(r);
    for v in r.iter_mut() {
        *v = exp_f32(*v - max);
    }
    let inv = 1.0 / sum8(r, |v| v);
    r.iter_mut().for_each(|v| *v *= inv);
}

/// Exact (erf) GELU, as BERT's `"gelu"`.
fn gelu_in_place(x: &mut [f32]) {
    struct Gelu<'a>(&'a mut [f32]);
    impl pulp::WithSimd for Gelu<'_> {
        type Output = ();
        #[inline(always)]
        fn with_simd<S: pulp::Simd>(self, _: S) {
            for v in self.0.iter_mut() {
                *v = 0.5 * *v * (1.0 + erf_f32(*v * std::f32::consts::FRAC_1_SQRT_2));
            }
        }
    }
    widest(Gelu(x))
}

/// `exp` written branch-free (Cephes expf polynomial, about 1 ulp) so loops over it vectorise;
/// libm's `expf` is a call per element and dominated the GELU and softmax time.
#[inline(always)]
fn exp_f32(x: f32) -> f32 {
    let x = x.clamp(-87.0, 88.0);
    // Round to nearest through the 1.5 * 2^23 trick (`round()` is a libm call without SSE4.1);
    // the integer then sits in the low mantissa bits of `t`, so 2^n is built with integer ops
    // (an `as i32` conversion saturates and would not vectorise).
    let t = x * std::f32::consts::LOG2_E + 12_582_912.0;
    let n = t - 12_582_912.0;
    let r = x - n * 0.693_359_4 - n * -2.121_944_4e-4;
    let mut p = 1.987_569_1e-4f32;
    p = p * r + 1.398_2e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 1.666_666_5e-1;
    p = p * r + 0.5; // Cephes: 5.0000001201e-1, which rounds to 0.5 in f32
    let e = p * r * r + r + 1.0;
    let scale = f32::from_bits(t.to_bits().wrapping_sub(0x4B40_0000).wrapping_add(127) << 23);
    e * scale
}

/// Sum with eight independent accumulators: a plain `sum()` must keep f32 addition order and
/// stays scalar.
#[inline(always)]
fn sum8(x: &[f32], f: impl Fn(f32) -> f32) -> f32 {
    let mut acc = [0.0f32; 8];
    let mut chunks = x.chunks_exact(8);
    for c in &mut chunks {
        for j in 0..8 {
            acc[j] += f(c[j]);
        }
    }
    let tail: f32 = chunks.remainder().iter().map(|&v| f(v)).sum();
    acc.iter().sum::<f32>() + tail
}

/// The largest value, with eight independent running maxima: a fold over `f32::max` is one
/// dependent chain (its NaN rule keeps it scalar) and was most of softmax's time on 256-token
/// rows. Max is exact, so the result is the fold's for any input without NaN.
#[inline(always)]
fn max8(x: &[f32]) -> f32 {
    let mut acc = [f32::NEG_INFINITY; 8];
    let mut chunks = x.chunks_exact(8);
    for c in &mut chunks {
        for j in 0..8 {
            acc[j] = if c[j] > acc[j] { c[j] } else { acc[j] };
        }
    }
    let tail = chunks
        .remainder()
        .iter()
        .copied()
        .fold(f32::NEG_INFINITY, f32::max);
    acc.iter().copied().fold(tail, f32::max)
}

/// erf by Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7), branch-free.
#[inline(always)]
fn erf_f32(x: f32) -> f32 {
    let a = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let poly = ((((1.061_405_4 * t - 1.453_152_1) * t + 1.421_413_8) * t - 0.284_496_72) * t
        + 0.254_829_6)
        * t;
    let y = 1.0 - poly * exp_f32(-a * a);
    y.copysign(x)
}

/// `c[m, n] += a[m, k] b[k, n]`, all row-major and contiguous.
fn matmul_acc(c: &mut [f32], a: &[f32], b: &[f32], m: usize, n: usize, k: usize, par: Parallelism) {
    gemm_strided(
        Dims { m, n, k },
        Out {
            data: c,
            rs: n,
            read: true,
        },
        In {
            data: a,
            rs: k,
            cs: 1,
        },
        In {
            data: b,
            rs: n,
            cs: 1,
        },
        1.0,
        par,
    );
}

struct Dims {
    m: usize,
    n: usize,
    k: usize,
}

/// Destination with unit column stride; `read` accumulates into its contents.
struct Out<'a> {
    data: &'a mut [f32],
    rs: usize,
    read: bool,
}

struct In<'a> {
    data: &'a [f32],
    rs: usize,
    cs: usize,
}

/// Number of elements a `rows x cols` view with these strides spans.
fn span(rows: usize, cols: usize, rs: usize, cs: usize) -> usize {
    if rows == 0 || cols == 0 {
        0
    } else {
        (rows - 1) * rs + (cols - 1) * cs + 1
    }
}

/// `dst = (dst if read) + beta * lhs[m, k] rhs[k, n]` through `gemm`, with every view checked
/// against its slice so the unsafe call cannot touch memory outside them.
#[allow(unsafe_code)]
fn gemm_strided(d: Dims, dst: Out<'_>, lhs: In<'_>, rhs: In<'_>, beta: f32, par: Parallelism) {
    let Dims { m, n, k } = d;
    assert!(
        span(m, n, dst.rs, 1) <= dst.data.len(),
        "gemm dst out of bounds"
    );
    assert!(n <= dst.rs || m <= 1, "gemm dst rows overlap");
    assert!(
        span(m, k, lhs.rs, lhs.cs) <= lhs.data.len(),
        "gemm lhs out of bounds"
    );
    assert!(
        span(k, n, rhs.rs, rhs.cs) <= rhs.data.len(),
        "gemm rhs out of bounds"
    );
    if m == 0 || n == 0 {
        return;
    }
    // SAFETY: the asserts above keep every accessed element inside its slice; dst is a unique
    // borrow with non-overlapping rows, so no element is written twice concurrently, and the
    // shared borrows of lhs/rhs cannot alias it.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.data.as_mut_ptr(),
            1,
            dst.rs as isize,
            dst.read,
            lhs.data.as_ptr(),
            lhs.cs as isize,
            lhs.rs as isize,
            rhs.data.as_ptr(),
            rhs.cs as isize,
            rhs.rs as isize,
            1.0,
            beta,
            false,
            false,
            false,
            par,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max8_is_the_fold_over_max() {
        for n in [1usize, 7, 8, 9, 17, 256] {
            let x: Vec<f32> = (0..n)
                .map(|i| ((i * 37 % 101) as f32 * 0.3).sin() * 5.0)
                .collect();
            let fold = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            assert_eq!(max8(&x).to_bits(), fold.to_bits(), "n={n}");
        }
        assert_eq!(max8(&[]), f32::NEG_INFINITY);
    }

    #[test]
    fn exp_matches_std() {
        let mut worst = 0.0f32;
        for i in -8000..=8000 {
            let x = i as f32 / 100.0;
            let rel = ((exp_f32(x) - x.exp()) / x.exp()).abs();
            worst = worst.max(rel);
        }
        assert!(worst < 1e-6, "worst relative error {worst}");
        assert_eq!(exp_f32(-1000.0), (-87.0f32).exp());
    }

    #[test]
    fn erf_matches_reference_points() {
        // erf values from tables (float64).
        for (x, e) in [
            (0.0, 0.0),
            (0.5, 0.520_499_9),
            (1.0, 0.842_700_8),
            (2.0, 0.995_322_3),
            (-1.0, -0.842_700_8),
        ] {
            assert!(
                (erf_f32(x) - e).abs() < 3e-7,
                "erf({x}) = {} != {e}",
                erf_f32(x)
            );
        }
    }

    #[test]
    fn strided_gemm_transposes_through_strides() {
        // a = [[1,2],[3,4]], b^T read from b = [[5,6],[7,8]] -> a b^T = [[17,23],[39,53]].
        let a = [1.0, 2.0, 3.0, 4.0];
        let b = [5.0, 6.0, 7.0, 8.0];
        let mut c = [0.0f32; 4];
        gemm_strided(
            Dims { m: 2, n: 2, k: 2 },
            Out {
                data: &mut c,
                rs: 2,
                read: false,
            },
            In {
                data: &a,
                rs: 2,
                cs: 1,
            },
            In {
                data: &b,
                rs: 1,
                cs: 2,
            },
            1.0,
            Parallelism::None,
        );
        assert_eq!(c, [17.0, 23.0, 39.0, 53.0]);
        let mut acc = [1.0f32; 4];
        matmul_acc(&mut acc, &a, &b, 2, 2, 2, Parallelism::None);
        assert_eq!(acc, [20.0, 23.0, 44.0, 51.0]);
    }

    #[test]
    #[should_panic(expected = "out of bounds")]
    fn gemm_rejects_views_past_the_slice() {
        let a = [1.0f32; 3];
        let mut c = [0.0f32; 4];
        matmul_acc(&mut c, &a, &a, 2, 2, 2, Parallelism::None);
    }
}
