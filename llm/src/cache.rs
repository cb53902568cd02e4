//! `CachedLlm`: a content-addressed response cache in the results database, around any `Llm`.
//!
//! Key: sha256 of the endpoint identity, model, messages, temperature, `max_tokens`, the JSON
//! flag and a prompt version the caller names (bump it when a prompt template changes). The API
//! key is in none of these. Only successful replies that the caller could read are stored
//! (`Llm::chat_readable`), so a rerun makes no call for what it already has and retries what
//! failed; a hit returns the stored usage, so the token
//! bill of a rerun equals the first run's.
//!
//! Identical requests in flight at once are sent once (the others wait for the cached reply),
//! and a reply that lost the race to another writer is replaced by the stored one: a server's
//! replies to one request may differ, and the run must use what a rerun will read.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use bench_core::{ChatRequest, ChatResponse, Llm, LlmCacheEntry, ResponseCache, TokenLogprob};

/// An `Llm` that answers from the cache when it can.
#[derive(Debug)]
pub struct CachedLlm<L: Llm> {
    inner: L,
    store: Arc<dyn ResponseCache>,
    prompt_version: String,
    /// Calls answered from the cache.
    pub hits: AtomicU64,
    /// Calls passed to the inner LLM.
    pub misses: AtomicU64,
    /// One lock per key being answered, so identical concurrent requests are sent once.
    in_flight: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl<L: Llm> CachedLlm<L> {
    /// `store`: where replies are kept (the binary passes the results database, `store::Store`).
    pub fn new(
        inner: L,
        store: impl ResponseCache + 'static,
        prompt_version: impl Into<String>,
    ) -> Self {
        CachedLlm {
            inner,
            store: Arc::new(store),
            prompt_version: prompt_version.into(),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            in_flight: Mutex::new(HashMap::new()),
        }
    }

    /// The wrapped LLM.
    pub fn inner(&self) -> &L {
        &self.inner
    }

    /// Replies served from the cache so far.
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }

    /// Requests that went to the endpoint so far.
    pub fn misses(&self) -> u64 {
        self.misses.load(Ordering::Relaxed)
    }

    /// The cache key of `request` asked with `top` log-probability alternatives: another
    /// entry than the plain request's, so a plain reply never stands in for one with them.
    pub fn logprobs_key(&self, request: &ChatRequest, top: u8) -> String {
        bench_core::config::hash_parts([
            b"llm-cache-logprobs-v1".as_slice(),
            self.key(request).as_bytes(),
            &[top],
        ])
    }

    /// The cache key of `request` for this LLM.
    pub fn key(&self, request: &ChatRequest) -> String {
        let identity = self.inner.identity();
        let model = model_of(&identity);
        let messages = serde_json::to_string(&request.messages).expect("messages serialise");
        bench_core::config::hash_parts([
            b"llm-cache-v1".as_slice(),
            identity.as_bytes(),
            model.as_bytes(),
            messages.as_bytes(),
            &request.temperature.to_bits().to_le_bytes(),
            &request.max_tokens.to_le_bytes(),
            &[u8::from(request.json)],
            self.prompt_version.as_bytes(),
        ])
    }
}

/// The model part of a `model@base_url` identity.
fn model_of(identity: &str) -> &str {
    identity.rsplit_once('@').map_or(identity, |(m, _)| m)
}

#[async_trait]
impl<L: Llm> Llm for CachedLlm<L> {
    fn identity(&self) -> String {
        self.inner.identity()
    }

    async fn chat(&self, request: &ChatRequest) -> bench_core::Result<ChatResponse> {
        self.chat_readable(request, &|_| true).await
    }

    async fn chat_logprobs(
        &self,
        request: &ChatRequest,
        top: u8,
    ) -> bench_core::Result<(ChatResponse, Option<Vec<TokenLogprob>>)> {
        let key = self.logprobs_key(request, top);
        self.one_at_a_time(&key, self.answer_logprobs(&key, request, top))
            .await
    }

    async fn chat_readable(
        &self,
        request: &ChatRequest,
        readable: &bench_core::traits::ReplyCheck,
    ) -> bench_core::Result<ChatResponse> {
        let key = self.key(request);
        self.one_at_a_time(&key, self.answer(&key, request, readable))
            .await
    }
}

impl<L: Llm> CachedLlm<L> {
    /// Runs `work` for `key` while no other caller runs work for the same key: a second caller
    /// waits, then finds the first one's reply in the cache instead of sending the request again.
    async fn one_at_a_time<T>(&self, key: &str, work: impl std::future::Future<Output = T>) -> T {
        let lock = Arc::clone(
            self.in_flight
                .lock()
                .expect("in-flight map")
                .entry(key.to_owned())
                .or_default(),
        );
        let guard = lock.lock().await;
        let answer = work.await;
        drop(guard);
        let mut map = self.in_flight.lock().expect("in-flight map");
        // Two references left: the map's and ours, so no one else waits on this key.
        if Arc::strong_count(&lock) == 2 {
            map.remove(key);
        }
        answer
    }
    /// A reply with its log-probabilities, from the cache (both stored together) or the LLM.
    async fn answer_logprobs(
        &self,
        key: &str,
        request: &ChatRequest,
        top: u8,
    ) -> bench_core::Result<(ChatResponse, Option<Vec<TokenLogprob>>)> {
        if let Some(hit) = self.store.get(key).await? {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Ok((hit, self.store.logprobs(key).await?));
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let (response, logprobs) = self.inner.chat_logprobs(request, top).await?;
        let identity = self.inner.identity();
        let (prompt_tokens, completion_tokens, _) = response.token_bill(request);
        let mut request_json = serde_json::to_value(request).expect("request serialises");
        request_json["top_logprobs"] = serde_json::json!(top);
        let stored = self
            .store
            .put(&LlmCacheEntry {
                key,
                identity: &identity,
                model: model_of(&identity),
                request_json: &request_json.to_string(),
                response: &response,
                prompt_tokens,
                completion_tokens,
                logprobs: logprobs.as_deref(),
            })
            .await?;
        if !stored {
            if let Some(first) = self.store.get(key).await? {
                return Ok((first, self.store.logprobs(key).await?));
            }
        }
        Ok((response, logprobs))
    }

    async fn answer(
        &self,
        key: &str,
        request: &ChatRequest,
        readable: &bench_core::traits::ReplyCheck,
    ) -> bench_core::Result<ChatResponse> {
        if let Some(hit) = self.store.get(key).await? {
            // A stored reply this caller cannot read (stored by a plain `chat`) is asked again.
            if readable(&hit.content) {
                self.hits.fetch_add(1, Ordering::Relaxed);
                return Ok(hit);
            }
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        // Errors (an unreadable reply among them) propagate before anything is written:
        // failures are never cached.
        let response = self.inner.chat_readable(request, readable).await?;
        let identity = self.inner.identity();
        let (prompt_tokens, completion_tokens, _) = response.token_bill(request);
        let request_json = serde_json::to_string(request).expect("request serialises");
        let stored = self
            .store
            .put(&LlmCacheEntry {
                key,
                identity: &identity,
                model: model_of(&identity),
                request_json: &request_json,
                response: &response,
                prompt_tokens,
                completion_tokens,
                logprobs: None,
            })
            .await?;
        if !stored {
            // Another writer (a worker process) stored its reply first: use that one.
            if let Some(first) = self.store.get(key).await? {
                if readable(&first.content) {
                    return Ok(first);
                }
            }
        }
        Ok(response)
    }
}
