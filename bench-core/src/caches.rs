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
    /// The extractor's name (`offline`, `llm`, ...).
    pub extractor: String,
    /// The model it ran (an LLM's `model@base_url`; the rules' version for the offline one).
    pub model: String,
    /// Hash of its prompt or rules: a changed prompt extracts anew.
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
    /// The stored name: `ok` or `failed`.
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
    /// sha256 of the chunk's text: extractions are keyed by content, not by position.
    pub chunk_hash: String,
    /// Whether the extraction succeeded.
    pub status: ExtractionStatus,
    /// JSON array of `{subject, relation, object}`; `[]` for failures.
    pub triplets_json: String,
    /// LLM tokens sent for the extraction (0 for rule-based extractors).
    pub tokens_in: u64,
    /// LLM tokens received.
    pub tokens_out: u64,
    /// Why the extraction failed; `None` when it succeeded.
    pub error: Option<String>,
}

/// One graph build, as recorded: the corpus's construction cost lives here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphBuildRecord {
    /// The corpus's registry name.
    pub corpus: String,
    /// The corpus's content hash ([`Corpus::content_hash`](crate::Corpus::content_hash)).
    pub corpus_hash: String,
    /// Who extracted the triplets.
    pub extractor: ExtractorKey,
    /// Chunks the graph covers.
    pub chunks: u64,
    /// Entity nodes.
    pub nodes: u64,
    /// Edges between nodes.
    pub edges: u64,
    /// Distinct relation names.
    pub relation_types: u64,
    /// Distinct triplets after normalisation.
    pub triplets: u64,
    /// Connected components (an isolated node is one).
    pub components: u64,
    /// Chunks whose extraction failed (left out of the graph, retried by the next build).
    pub failures: u64,
    /// Construction tokens sent, over every chunk's extraction (cached or not).
    pub tokens_in: u64,
    /// Construction tokens received.
    pub tokens_out: u64,
    /// What the graph was built from (`corpora`'s `BuildStats::signature`).
    pub signature: String,
}

/// One reply to store.
#[derive(Debug, Clone, Copy)]
pub struct LlmCacheEntry<'a> {
    /// The cache key the caller computed (never includes an API key).
    pub key: &'a str,
    /// The answering LLM's `model@base_url`.
    pub identity: &'a str,
    /// The model part of `identity`.
    pub model: &'a str,
    /// The request as JSON (messages and sampling parameters), for inspection only.
    pub request_json: &'a str,
    /// The reply.
    pub response: &'a ChatResponse,
    /// The bill recorded with the reply: from `usage` when reported, else cl100k counts.
    pub prompt_tokens: u64,
    /// Tokens of the reply, counted as `prompt_tokens` is.
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
