//! The OpenAI-compatible LLM client of ragrouter-bench: endpoint settings per role, the client
//! with its limits, retries and error classes, the SQLite response cache, the endpoint probe of
//! `ragrouter check-llm`, and (feature `mock`) a scripted server for tests.
//!
//! API keys come from environment variables only; they never reach identities, the cache,
//! error messages or logs.

pub mod budget;
pub mod cache;
pub mod check;
pub mod client;
pub mod config;
pub mod embed;
pub mod error;
pub mod json;
pub mod limiter;
#[cfg(feature = "mock")]
pub mod mock;

pub use cache::CachedLlm;
pub use client::{install_crypto_provider, OpenAiLlm};
pub use config::{resolve, ApiKey, EndpointConfig, LlmFileConfig, LlmFlags, LlmSettings};
pub use embed::{EmbedUsage, EndpointEmbedder, OpenAiEmbedder};
pub use error::LlmError;
pub use json::extract_json;
