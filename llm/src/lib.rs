//! The OpenAI-compatible LLM client of ragrouter-bench: endpoint settings per role, the client
//! with its limits, retries and error classes, the SQLite response cache, the endpoint probe of
//! `ragrouter check-llm`, and (feature `mock`) a scripted server for tests.
//!
//! API keys come from environment variables only; they never reach identities, the cache,
//! error messages or logs.
//!
//! The principal types: [`EndpointConfig`] and [`LlmSettings`] (one endpoint per role, from
//! `[llm]` tables and flags through [`resolve`]), [`OpenAiLlm`] (the client), [`CachedLlm`] (the
//! response cache around it), [`budget::TokenBudget`] (`bench --max-tokens`),
//! [`EndpointEmbedder`] and [`LlmError`].
//!
//! ```
//! use bench_core::{ChatMessage, ChatRequest};
//! use llm::budget::{bound, TokenBudget};
//! use llm::{extract_json, EndpointConfig};
//!
//! // An endpoint is recorded by model and URL, never by its key; a URL carrying credentials is
//! // refused, since it would be written into every result.
//! let endpoint = EndpointConfig::new("http://127.0.0.1:8080/v1", "qwen2.5-7b");
//! assert_eq!(endpoint.identity(), "qwen2.5-7b@http://127.0.0.1:8080/v1");
//! assert!(endpoint.validate("reader").is_ok());
//! assert!(EndpointConfig::new("http://user:pw@host/v1", "m").validate("reader").is_err());
//!
//! // Under a budget a call first reserves its bound: the prompt in cl100k tokens plus the
//! // `max_tokens` the endpoint may return.
//! let request = ChatRequest {
//!     messages: vec![ChatMessage::user("Who wrote Hamlet?")],
//!     temperature: 0.0,
//!     max_tokens: 32,
//!     json: true,
//! };
//! let (prompt, most) = bound(&request);
//! assert_eq!(most, prompt + 32);
//! let budget = TokenBudget::new();
//! budget.arm(1_000);
//! assert!(!budget.exhausted());
//!
//! // Replies asked for JSON often wrap it in prose or a code fence.
//! let reply = "Sure:\n```json\n{\"answer\": \"Shakespeare\"}\n```";
//! assert_eq!(extract_json(reply), Some("{\"answer\": \"Shakespeare\"}"));
//! ```
//!
//! # Modules
//!
//! - The OpenAI-compatible client (`OpenAiLlm`: limits, retries, error classes).
//! - Endpoint settings per role (`config`).
//! - The SQLite response cache (`CachedLlm`).
//! - The token budget that reserves each call's bound (cl100k prompt plus `max_tokens`) before it
//!   is sent (`budget`).
//! - The endpoint probe of `check-llm` (`check`).
//! - The synchronous `Embedder` over an embeddings endpoint (`embed`: a dedicated runtime thread,
//!   so it is safe from async code, `spawn_blocking` and rayon).
//! - A scripted mock server for tests (`mock`, feature `mock`).
//!
//! Why a crate of its own: heavy dependencies (async-openai, reqwest, rustls).

#![warn(missing_docs)]

pub mod budget;
mod cache;
mod check;
mod client;
mod config;
mod embed;
mod error;
mod json;
mod limiter;
#[cfg(feature = "mock")]
pub mod mock;

pub use cache::CachedLlm;
pub use check::{probe_chat, probe_embedding, CheckItem, CheckReport};
pub use client::{install_crypto_provider, ClientStats, OpenAiLlm};
pub use config::{
    resolve, ApiKey, EndpointConfig, LlmFileConfig, LlmFlags, LlmSettings, PartialEndpoint,
};
pub use embed::{EmbedUsage, EmbeddingReply, EndpointEmbedder, OpenAiEmbedder};
pub use error::LlmError;
pub use json::extract_json;
