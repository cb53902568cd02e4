//! The embedding endpoint: `OpenAiEmbedder` (async) and `EndpointEmbedder`, the synchronous `bench_core::Embedder` over it.
//!
//! `OpenAiEmbedder` POSTs one batch to `/embeddings` through [`OpenAiLlm`]'s transport, so the
//! endpoint's calls share the chat client's rpm/tpm limits, in-flight cap, retries with
//! `Retry-After`, error classes and key redaction. `EndpointEmbedder` splits texts into batches
//! (at most `batch_size` texts and [`MAX_REQUEST_TOKENS`] cl100k tokens per request),
//! L2-normalises the vectors, checks every reply against the dimension discovered from the first
//! reply, and counts the tokens (the reply's `usage`, else cl100k).

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bench_core::{BenchError, Embedder, Embeddings, LlmErrorKind, TokenSource};
use serde::{Deserialize, Serialize};

use crate::client::{AttemptError, ClientStats, OpenAiLlm};
use crate::config::EndpointConfig;
use crate::error::{llm_err, LlmError};

/// Texts per request when `batch_size` is not configured.
pub const DEFAULT_EMBED_BATCH: usize = 64;
/// cl100k tokens per request at most: below OpenAI's 300k per request, so one long batch is split
/// rather than refused.
pub const MAX_REQUEST_TOKENS: u64 = 200_000;
/// The text of the request that discovers the dimension when none is recorded.
const PROBE_TEXT: &str = "dimension probe";

/// One reply of the endpoint: row `i` is the vector of text `i`, as sent (not renormalised).
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddingReply {
    /// The vectors, one row per text sent.
    pub vectors: Embeddings,
    /// The reply's `usage.prompt_tokens`, else the texts' cl100k count.
    pub tokens: u64,
    /// Whether `tokens` was reported by the endpoint or counted here.
    pub source: TokenSource,
}

/// Embeds texts with an OpenAI-compatible `/embeddings` endpoint, one request per call.
pub struct OpenAiEmbedder {
    client: OpenAiLlm,
}

impl std::fmt::Debug for OpenAiEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiEmbedder")
            .field("identity", &self.identity())
            .finish_non_exhaustive()
    }
}

impl OpenAiEmbedder {
    /// An embedder whose key is looked up with `env` in `cfg.api_key_env`.
    pub fn with_env(
        cfg: EndpointConfig,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, LlmError> {
        cfg.validate("embedding")?;
        Ok(OpenAiEmbedder {
            client: OpenAiLlm::with_env(cfg, env)?,
        })
    }

    /// `model@base_url`; never a key.
    pub fn identity(&self) -> String {
        self.client.config().identity()
    }

    /// The endpoint this embedder calls.
    pub fn config(&self) -> &EndpointConfig {
        self.client.config()
    }

    /// HTTP attempts and retries so far.
    pub fn stats(&self) -> &ClientStats {
        &self.client.stats
    }

    /// Row `i` is the vector of `texts[i]`, as the endpoint returns it (not renormalised).
    pub async fn embed(&self, texts: &[String]) -> bench_core::Result<Embeddings> {
        let counts: Vec<u64> = texts.iter().map(|t| bench_core::tokens::count(t)).collect();
        Ok(self.embed_counted(texts, &counts).await?.vectors)
    }

    /// One request for `texts`, whose cl100k counts are `counts` (the tpm cost, and the bill
    /// when the reply has no usage).
    pub async fn embed_counted(
        &self,
        texts: &[String],
        counts: &[u64],
    ) -> bench_core::Result<EmbeddingReply> {
        let body = serde_json::json!({"model": self.config().model, "input": texts});
        let counted: u64 = counts.iter().sum();
        let n = texts.len();
        let (vectors, usage) = self
            .client
            .post_with_retries("/embeddings", &body, counted as f64, &|bytes| {
                parse_embeddings(bytes, n)
            })
            .await?;
        Ok(match usage {
            Some(tokens) => EmbeddingReply {
                vectors,
                tokens,
                source: TokenSource::Usage,
            },
            None => EmbeddingReply {
                vectors,
                tokens: counted,
                source: TokenSource::Cl100k,
            },
        })
    }
}

#[derive(Deserialize)]
struct WireList {
    data: Vec<WireEmbedding>,
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct WireEmbedding {
    index: usize,
    embedding: Vec<f32>,
}

#[derive(Deserialize)]
struct WireUsage {
    prompt_tokens: Option<u64>,
}

/// A 2xx body to `n` vectors in input order and the reported prompt tokens. Anything but one
/// vector per input, of one non-zero length, is unparseable (and retried as such).
fn parse_embeddings(bytes: &[u8], n: usize) -> Result<(Embeddings, Option<u64>), AttemptError> {
    let bad = |m: String| AttemptError::new(LlmErrorKind::Unparseable, m);
    let mut wire: WireList = serde_json::from_slice(bytes).map_err(|e| {
        let start: String = String::from_utf8_lossy(bytes).chars().take(200).collect();
        bad(format!(
            "the response body is not an embedding list ({e}): {start}"
        ))
    })?;
    wire.data.sort_by_key(|d| d.index);
    if wire.data.len() != n || wire.data.iter().enumerate().any(|(i, d)| d.index != i) {
        return Err(bad(format!(
            "{} vectors (indices {:?}) for {n} texts",
            wire.data.len(),
            wire.data
                .iter()
                .map(|d| d.index)
                .take(8)
                .collect::<Vec<_>>()
        )));
    }
    let dim = wire.data.first().map_or(0, |d| d.embedding.len());
    if dim == 0 || wire.data.iter().any(|d| d.embedding.len() != dim) {
        return Err(bad(format!(
            "vectors of uneven or zero length for {n} texts"
        )));
    }
    if wire
        .data
        .iter()
        .any(|d| d.embedding.iter().any(|x| !x.is_finite()))
    {
        return Err(bad("a vector holds a non-finite number".into()));
    }
    let data = wire.data.into_iter().flat_map(|d| d.embedding).collect();
    Ok((
        Embeddings::new(dim, data),
        wire.usage.and_then(|u| u.prompt_tokens),
    ))
}

/// Consecutive ranges of at most `max_texts` texts and `max_tokens` tokens (a single text over
/// the token cap goes alone: the endpoint judges it).
fn plan_batches(counts: &[u64], max_texts: usize, max_tokens: u64) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let (mut start, mut tokens) = (0usize, 0u64);
    for (i, &c) in counts.iter().enumerate() {
        let full = i - start >= max_texts || (i > start && tokens + c > max_tokens);
        if full {
            out.push(start..i);
            start = i;
            tokens = 0;
        }
        tokens += c;
    }
    if start < counts.len() {
        out.push(start..counts.len());
    }
    out
}

/// What the embedding endpoint was sent and billed; a run records it (see docs/llm.md).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmbedUsage {
    /// Successful replies (retried attempts are not counted again).
    pub requests: u64,
    /// Texts embedded by those replies.
    pub texts: u64,
    /// `usage_tokens + counted_tokens`.
    pub tokens: u64,
    /// Tokens of replies that reported `usage`.
    pub usage_tokens: u64,
    /// Tokens of replies without `usage`, counted with cl100k.
    pub counted_tokens: u64,
}

impl EmbedUsage {
    /// Where the tokens come from: usage, cl100k, or mixed.
    pub fn source(&self) -> TokenSource {
        match (self.usage_tokens > 0, self.counted_tokens > 0) {
            (true, true) => TokenSource::Mixed,
            (false, true) => TokenSource::Cl100k,
            _ => TokenSource::Usage,
        }
    }

    fn minus(&self, o: &EmbedUsage) -> EmbedUsage {
        EmbedUsage {
            requests: self.requests - o.requests,
            texts: self.texts - o.texts,
            tokens: self.tokens - o.tokens,
            usage_tokens: self.usage_tokens - o.usage_tokens,
            counted_tokens: self.counted_tokens - o.counted_tokens,
        }
    }
}

#[derive(Default)]
struct Counters {
    requests: AtomicU64,
    texts: AtomicU64,
    usage_tokens: AtomicU64,
    counted_tokens: AtomicU64,
}

impl Counters {
    fn add(&self, r: &EmbeddingReply) {
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.texts
            .fetch_add(r.vectors.len() as u64, Ordering::Relaxed);
        match r.source {
            TokenSource::Usage => &self.usage_tokens,
            _ => &self.counted_tokens,
        }
        .fetch_add(r.tokens, Ordering::Relaxed);
    }

    fn snapshot(&self) -> EmbedUsage {
        let usage_tokens = self.usage_tokens.load(Ordering::Relaxed);
        let counted_tokens = self.counted_tokens.load(Ordering::Relaxed);
        EmbedUsage {
            requests: self.requests.load(Ordering::Relaxed),
            texts: self.texts.load(Ordering::Relaxed),
            tokens: usage_tokens + counted_tokens,
            usage_tokens,
            counted_tokens,
        }
    }
}

type Reply = bench_core::Result<EmbeddingReply>;

/// One batch for the worker, and where its reply goes.
struct Job {
    texts: Vec<String>,
    counts: Vec<u64>,
    reply: std::sync::mpsc::SyncSender<Reply>,
}

/// A synchronous [`Embedder`] over the embedding endpoint.
///
/// The async client lives on a dedicated thread that owns a current-thread tokio runtime; a
/// caller sends its batches over a channel and blocks on a std channel for the replies. This is
/// the one bridge that works from every caller the bench has: a task on the multi-thread
/// runtime (`Handle::block_on` there panics, "cannot start a runtime from within a runtime"),
/// a current-thread runtime (`block_in_place` panics there), `spawn_blocking` threads and rayon
/// threads (no runtime context at all, so `Handle::current` panics). It cannot deadlock: the
/// requests are driven by the worker's runtime, which no caller ever blocks, so progress never
/// waits on a blocked caller thread. A blocked tokio worker stalls only itself for the call.
pub struct EndpointEmbedder {
    name: String,
    dim: usize,
    /// Where the dimension came from, for error messages.
    dim_origin: String,
    batch_size: usize,
    jobs: Option<tokio::sync::mpsc::UnboundedSender<Job>>,
    counters: Arc<Counters>,
    client: Arc<OpenAiEmbedder>,
    recorded: Mutex<EmbedUsage>,
}

impl std::fmt::Debug for EndpointEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EndpointEmbedder")
            .field("identity", &self.name)
            .field("dim", &self.dim)
            .finish_non_exhaustive()
    }
}

impl EndpointEmbedder {
    /// Starts the worker and learns the dimension: from the file this endpoint's identity
    /// recorded under `dims_dir` (so a run served from the vector cache sends nothing), else
    /// from the reply to one probe request, which is then recorded there.
    pub fn connect(
        cfg: EndpointConfig,
        env: &dyn Fn(&str) -> Option<String>,
        dims_dir: Option<&Path>,
    ) -> Result<Self, LlmError> {
        let batch_size = cfg.batch_size.unwrap_or(DEFAULT_EMBED_BATCH);
        let client = Arc::new(OpenAiEmbedder::with_env(cfg, env)?);
        let name = client.identity();
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Job>();
        let worker_client = client.clone();
        std::thread::Builder::new()
            .name("embedding-endpoint".into())
            .spawn(move || worker(worker_client, rx))
            .map_err(|e| LlmError::Config(format!("starting the embedding worker: {e}")))?;
        let mut me = EndpointEmbedder {
            name,
            dim: 0,
            dim_origin: String::new(),
            batch_size,
            jobs: Some(tx),
            counters: Arc::new(Counters::default()),
            client,
            recorded: Mutex::new(EmbedUsage::default()),
        };
        let file = dims_dir.map(|d| dim_file(d, &me.name));
        match file
            .as_deref()
            .and_then(|f| Some((f, read_dim(f, &me.name)?)))
        {
            Some((f, dim)) => {
                me.dim = dim;
                me.dim_origin = format!("recorded in {} by an earlier run", f.display());
            }
            None => {
                let reply = me
                    .submit(vec![PROBE_TEXT.to_owned()])?
                    .recv()
                    .map_err(|_| LlmError::Core(me.worker_gone()))??;
                me.counters.add(&reply);
                me.dim = reply.vectors.dim;
                me.dim_origin = "discovered from its first reply".into();
                if let Some(f) = &file {
                    write_dim(f, &me.name, me.dim)?;
                }
            }
        }
        Ok(me)
    }

    /// `model@base_url`.
    pub fn identity(&self) -> &str {
        &self.name
    }

    /// Texts per request.
    pub fn batch_size(&self) -> usize {
        self.batch_size
    }

    /// HTTP attempts and retries so far (the probe included).
    pub fn client_stats(&self) -> &ClientStats {
        self.client.stats()
    }

    /// Everything sent and billed since the embedder started.
    pub fn usage(&self) -> EmbedUsage {
        self.counters.snapshot()
    }

    /// What was sent and billed since the previous call (the first call: since the start).
    pub fn take_unrecorded(&self) -> EmbedUsage {
        let now = self.counters.snapshot();
        let mut last = self.recorded.lock().expect("usage lock");
        let delta = now.minus(&last);
        *last = now;
        delta
    }

    fn worker_gone(&self) -> BenchError {
        llm_err(
            LlmErrorKind::Fatal,
            format!("{}: the embedding worker stopped", self.name),
        )
    }

    fn submit(&self, texts: Vec<String>) -> bench_core::Result<std::sync::mpsc::Receiver<Reply>> {
        let counts = texts.iter().map(|t| bench_core::tokens::count(t)).collect();
        self.submit_counted(texts, counts)
    }

    fn submit_counted(
        &self,
        texts: Vec<String>,
        counts: Vec<u64>,
    ) -> bench_core::Result<std::sync::mpsc::Receiver<Reply>> {
        let (reply, rx) = std::sync::mpsc::sync_channel(1);
        self.jobs
            .as_ref()
            .and_then(|j| {
                j.send(Job {
                    texts,
                    counts,
                    reply,
                })
                .ok()
            })
            .ok_or_else(|| self.worker_gone())?;
        Ok(rx)
    }

    /// Checks a reply against the dimension and appends its rows, unit length, to `out`.
    fn accept(&self, reply: &EmbeddingReply, out: &mut Vec<f32>) -> bench_core::Result<()> {
        let got = reply.vectors.dim;
        if got != self.dim {
            return Err(llm_err(
                LlmErrorKind::Fatal,
                format!(
                    "embedding endpoint {} (model {}) returned vectors of dimension {got}, but its \
                     vectors have dimension {} ({}); refusing to mix vector sizes in one index",
                    self.name,
                    self.client.config().model,
                    self.dim,
                    self.dim_origin
                ),
            ));
        }
        for (i, row) in reply.vectors.rows().enumerate() {
            let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm == 0.0 || !norm.is_finite() {
                return Err(llm_err(
                    LlmErrorKind::Unparseable,
                    format!(
                        "embedding endpoint {} returned a vector of norm {norm} for input {i} of a batch",
                        self.name
                    ),
                ));
            }
            out.extend(row.iter().map(|x| x / norm));
        }
        Ok(())
    }
}

impl Drop for EndpointEmbedder {
    fn drop(&mut self) {
        // Closing the channel ends the worker once its jobs are answered; it is not joined, so
        // a drop inside async code never blocks.
        self.jobs.take();
    }
}

impl Embedder for EndpointEmbedder {
    fn name(&self) -> &str {
        &self.name
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> bench_core::Result<Embeddings> {
        let counts: Vec<u64> = texts.iter().map(|t| bench_core::tokens::count(t)).collect();
        // Every batch is queued before the first reply is awaited: they run concurrently, up to
        // the endpoint's `max_in_flight`.
        let pending = plan_batches(&counts, self.batch_size, MAX_REQUEST_TOKENS)
            .into_iter()
            .map(|r| {
                let batch = texts[r.clone()].iter().map(|t| (*t).to_owned()).collect();
                self.submit_counted(batch, counts[r].to_vec())
            })
            .collect::<bench_core::Result<Vec<_>>>()?;
        let mut data = Vec::with_capacity(texts.len() * self.dim);
        for rx in pending {
            let reply = rx.recv().map_err(|_| self.worker_gone())??;
            self.counters.add(&reply);
            self.accept(&reply, &mut data)?;
        }
        Ok(Embeddings {
            dim: self.dim,
            data,
        })
    }
}

/// The worker thread: a current-thread runtime answering each job on a task of its own.
fn worker(client: Arc<OpenAiEmbedder>, mut jobs: tokio::sync::mpsc::UnboundedReceiver<Job>) {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let message = format!("{}: starting the embedding runtime: {e}", client.identity());
            while let Some(job) = jobs.blocking_recv() {
                let _ = job
                    .reply
                    .send(Err(llm_err(LlmErrorKind::Fatal, message.clone())));
            }
            return;
        }
    };
    rt.block_on(async move {
        let mut tasks = tokio::task::JoinSet::new();
        loop {
            tokio::select! {
                job = jobs.recv() => match job {
                    Some(job) => {
                        let client = client.clone();
                        tasks.spawn(async move {
                            let r = client.embed_counted(&job.texts, &job.counts).await;
                            // The caller may have stopped waiting after an earlier batch failed.
                            let _ = job.reply.send(r);
                        });
                    }
                    None => break,
                },
                Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
            }
        }
        while tasks.join_next().await.is_some() {}
    });
}

/// `<dir>/endpoint-dims/<readable identity>-<fnv64>.json`.
fn dim_file(dir: &Path, identity: &str) -> PathBuf {
    let readable: String = identity
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(48)
        .collect();
    // FNV-1a: a stable name (no process-seeded hasher) that tells similar identities apart.
    let h = identity.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    dir.join("endpoint-dims")
        .join(format!("{readable}-{h:016x}.json"))
}

#[derive(Serialize, Deserialize)]
struct DimRecord {
    identity: String,
    dim: usize,
    /// [`dim_check`] of the two fields: a record changed after it was written is not used.
    /// Absent in records of earlier versions, which are probed again once.
    #[serde(default)]
    check: Option<String>,
}

/// FNV-1a over the identity and the dimension, hex: the record's body digest (a few bytes, so
/// any stable hash does; a cryptographic one would guard nothing more here).
fn dim_check(identity: &str, dim: usize) -> String {
    let h = format!("{identity}\n{dim}")
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
    format!("{h:016x}")
}

fn read_dim(file: &Path, identity: &str) -> Option<usize> {
    let text = std::fs::read_to_string(file).ok()?;
    match serde_json::from_str::<DimRecord>(&text) {
        Ok(r) if r.identity == identity && r.dim > 0 => match r.check {
            Some(c) if c == dim_check(&r.identity, r.dim) => Some(r.dim),
            Some(_) => {
                tracing::warn!(file = %file.display(), "embedding dimension record does not match its digest: probing the endpoint again");
                None
            }
            None => None,
        },
        _ => {
            tracing::warn!(file = %file.display(), "ignoring an unreadable embedding dimension record");
            None
        }
    }
}

/// Written to a temporary sibling and renamed, so a reader never sees half a record.
fn write_dim(file: &Path, identity: &str, dim: usize) -> Result<(), LlmError> {
    let io = |e: std::io::Error| {
        LlmError::Core(BenchError::Io {
            context: format!("recording the embedding dimension in {}", file.display()),
            source: e,
        })
    };
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    let tmp = file.with_extension(format!("tmp{}", std::process::id()));
    let body = serde_json::to_string(&DimRecord {
        identity: identity.to_owned(),
        dim,
        check: Some(dim_check(identity, dim)),
    })
    .expect("a record serialises");
    std::fs::write(&tmp, body).map_err(io)?;
    std::fs::rename(&tmp, file).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_respect_the_text_and_token_caps() {
        assert_eq!(plan_batches(&[], 3, 100), Vec::<Range<usize>>::new());
        assert_eq!(plan_batches(&[1; 7], 3, 100), vec![0..3, 3..6, 6..7]);
        // 40 + 50 fits in 100, the next 30 does not; a lone 500 goes alone.
        assert_eq!(
            plan_batches(&[40, 50, 30, 500, 10], 10, 100),
            vec![0..2, 2..3, 3..4, 4..5]
        );
    }

    #[test]
    fn replies_are_ordered_by_index_and_checked() {
        let body = br#"{"data":[{"index":1,"embedding":[0,2]},{"index":0,"embedding":[3,4]}],"usage":{"prompt_tokens":7,"total_tokens":7}}"#;
        let (e, usage) = parse_embeddings(body, 2).unwrap();
        assert_eq!(
            (e.dim, e.row(0), e.row(1)),
            (2, &[3.0, 4.0][..], &[0.0, 2.0][..])
        );
        assert_eq!(usage, Some(7));
        let no_usage = br#"{"data":[{"index":0,"embedding":[1]}]}"#;
        assert_eq!(parse_embeddings(no_usage, 1).unwrap().1, None);
        for bad in [
            &b"<html>"[..],
            br#"{"data":[{"index":0,"embedding":[1]}]}"#, // one vector for two texts
            br#"{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]}"#,
            br#"{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1]}]}"#,
            br#"{"data":[{"index":0,"embedding":[]},{"index":1,"embedding":[]}]}"#,
        ] {
            assert_eq!(
                parse_embeddings(bad, 2).unwrap_err().kind,
                LlmErrorKind::Unparseable
            );
        }
    }

    #[test]
    fn dimension_records_round_trip_and_ignore_other_identities() {
        let dir = tempfile::tempdir().unwrap();
        let f = dim_file(dir.path(), "m@http://h:1/v1");
        assert_ne!(f, dim_file(dir.path(), "m@http://h:2/v1"));
        assert_eq!(read_dim(&f, "m@http://h:1/v1"), None);
        write_dim(&f, "m@http://h:1/v1", 384).unwrap();
        assert_eq!(read_dim(&f, "m@http://h:1/v1"), Some(384));
        assert_eq!(read_dim(&f, "other@http://h:1/v1"), None);
        // A changed dimension fails its digest; a record without one (an earlier version's)
        // is probed again.
        let text = std::fs::read_to_string(&f).unwrap();
        std::fs::write(&f, text.replace("384", "385")).unwrap();
        assert_eq!(read_dim(&f, "m@http://h:1/v1"), None);
        std::fs::write(&f, r#"{"identity":"m@http://h:1/v1","dim":384}"#).unwrap();
        assert_eq!(read_dim(&f, "m@http://h:1/v1"), None);
    }

    #[test]
    fn usage_deltas_and_sources() {
        let u = EmbedUsage {
            requests: 3,
            texts: 10,
            tokens: 50,
            usage_tokens: 50,
            counted_tokens: 0,
        };
        assert_eq!(u.source(), TokenSource::Usage);
        let mixed = EmbedUsage {
            counted_tokens: 5,
            tokens: 55,
            ..u
        };
        assert_eq!(mixed.source(), TokenSource::Mixed);
        assert_eq!(mixed.minus(&u).tokens, 5);
    }
}
