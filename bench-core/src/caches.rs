//! The two caches the plug-ins reach through traits, so that `corpora` and `llm` need no
//! database: the extraction cache of the knowledge-graph build and the LLM response cache. The
//! `store` crate implements both on the results database; the binary wires them in.
//!
//! An extraction row is keyed by (chunk content hash, extractor, model, prompt hash), so the same
//! text extracted the same way is never extracted twice. Failed rows are kept (and reported)
//! but never reused: the next build retries them and replaces the row. A response-cache key is
//! computed by the caller (the `llm` crate) from the endpoint identity, model, messages, sampling
//! parameters and prompt version; it never includes an API key.

use std::collections::HashMap;

use async_trait::async_trait;

use crate::error::Result;
use crate::traits::{ChatResponse, TokenLogprob};

/// Who extracted: the extractor's name, the model it used and a hash of its prompt or rules.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExtractorKey {
    pub extractor: String,
    pub model: String,
    pub prompt_hash: String,
}

impl ExtractorKey {
    /// `extractor:model:prompt_hash`: how a run records the extractor its graph came from.
    pub fn label(&self) -> String {
        format!("{}:{}:{}", self.extractor, self.model, self.prompt_hash)
    }
}

/// Outcome of one chunk's extraction as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExtractionStatus {
    /// `triplets_json` holds the chunk's triplets.
    Ok,
    /// `error` says why; the row is retried by the next build.
    Failed,
}

impl ExtractionStatus {
    pub fn as_str(&self) -> &'static str {
        match self {
            ExtractionStatus::Ok => "ok",
            ExtractionStatus::Failed => "failed",
        }
    }
}

/// One stored extraction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtractionRow {
    pub chunk_hash: String,
    pub status: ExtractionStatus,
    /// JSON array of `{subject, relation, object}`; `[]` for failures.
    pub triplets_json: String,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub error: Option<String>,
}

/// One graph build, as recorded: the corpus's construction cost lives here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphBuildRecord {
    pub corpus: String,
    pub corpus_hash: String,
    pub extractor: ExtractorKey,
    pub chunks: u64,
    pub nodes: u64,
    pub edges: u64,
    pub relation_types: u64,
    pub triplets: u64,
    pub components: u64,
    pub failures: u64,
    pub tokens_in: u64,
    pub tokens_out: u64,
    /// What the graph was built from (`corpora`'s `BuildStats::signature`).
    pub signature: String,
}

/// One reply to store.
#[derive(Debug, Clone, Copy)]
pub struct LlmCacheEntry<'a> {
    pub key: &'a str,
    pub identity: &'a str,
    pub model: &'a str,
    /// The request as JSON (messages and sampling parameters), for inspection only.
    pub request_json: &'a str,
    pub response: &'a ChatResponse,
    /// The bill recorded with the reply: from `usage` when reported, else cl100k counts.
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// The reply's token log-probabilities, when the request asked for them and got them.
    pub logprobs: Option<&'a [TokenLogprob]>,
}

/// Where the knowledge-graph build keeps per-chunk extractions (`store::Store` implements it).
#[async_trait]
pub trait ExtractionCache: Send + Sync {
    /// Stored extractions (ok and failed) of the given chunk hashes under `key`, by hash.
    async fn cached_extractions(
        &self,
        key: &ExtractorKey,
        chunk_hashes: &[String],
    ) -> Result<HashMap<String, ExtractionRow>>;

    /// Writes one chunk's extraction, replacing an earlier (failed) attempt of the same key.
    async fn put_extraction(&self, key: &ExtractorKey, row: &ExtractionRow) -> Result<()>;

    /// Records a finished graph build (its counts and the corpus's construction tokens).
    async fn record_graph_build(&self, build: &GraphBuildRecord) -> Result<()>;
}

/// Where `llm`'s `CachedLlm` keeps replies (`store::Store` implements it).
#[async_trait]
pub trait ResponseCache: Send + Sync + std::fmt::Debug {
    /// The cached reply under `key`, with `usage` as the endpoint reported it (`None` if it did not).
    async fn get(&self, key: &str) -> Result<Option<ChatResponse>>;

    /// Stores a reply unless a row under the same key exists, and says whether it did. The
    /// first writer wins: a caller that lost the race must use the stored reply.
    async fn put(&self, entry: &LlmCacheEntry<'_>) -> Result<bool>;

    /// The token log-probabilities stored with the reply under `key` (`None`: no such reply,
    /// or it has none).
    async fn logprobs(&self, key: &str) -> Result<Option<Vec<TokenLogprob>>>;
}
