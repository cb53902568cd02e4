//! `OpenAiEmbedder`: the embedding endpoint through async-openai's client (one attempt per call).

use std::time::Duration;

use async_openai::config::OpenAIConfig;
use async_openai::error::OpenAIError;
use async_openai::types::embeddings::{CreateEmbeddingRequest, EmbeddingInput};
use async_openai::Client;
use bench_core::{BenchError, Embeddings, LlmErrorKind};

use crate::client::install_crypto_provider;
use crate::config::{ApiKey, EndpointConfig};
use crate::error::{llm_err, LlmError};

/// Embeds texts with an OpenAI-compatible `/embeddings` endpoint.
pub struct OpenAiEmbedder {
    cfg: EndpointConfig,
    key: Option<ApiKey>,
    client: Client<OpenAIConfig>,
}

impl std::fmt::Debug for OpenAiEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiEmbedder")
            .field("identity", &self.cfg.identity())
            .finish_non_exhaustive()
    }
}

impl OpenAiEmbedder {
    pub fn with_env(
        cfg: EndpointConfig,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, LlmError> {
        cfg.validate("embedding")?;
        let key = cfg.api_key(env)?;
        install_crypto_provider();
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(cfg.timeout_s))
            .build()
            .map_err(|e| LlmError::Config(format!("building the HTTP client: {e}")))?;
        let config = OpenAIConfig::new()
            .with_api_base(cfg.base_url.clone())
            .with_api_key(
                key.as_ref()
                    .map(|k| k.expose().to_owned())
                    .unwrap_or_default(),
            );
        Ok(OpenAiEmbedder {
            client: Client::build(http, config),
            cfg,
            key,
        })
    }

    pub fn identity(&self) -> String {
        self.cfg.identity()
    }

    /// Row `i` is the vector of `texts[i]`, as the endpoint returns it (not renormalised).
    pub async fn embed(&self, texts: &[String]) -> bench_core::Result<Embeddings> {
        let request = CreateEmbeddingRequest {
            model: self.cfg.model.clone(),
            input: EmbeddingInput::StringArray(texts.to_vec()),
            encoding_format: None,
            user: None,
            dimensions: None,
        };
        let mut resp = self
            .client
            .embeddings()
            .create(request)
            .await
            .map_err(|e| self.classify(e))?;
        resp.data.sort_by_key(|d| d.index);
        let dim = resp.data.first().map_or(0, |d| d.embedding.len());
        if resp.data.len() != texts.len()
            || dim == 0
            || resp.data.iter().any(|d| d.embedding.len() != dim)
        {
            return Err(llm_err(
                LlmErrorKind::Unparseable,
                format!(
                    "{}: {} vectors of uneven or zero length for {} texts",
                    self.identity(),
                    resp.data.len(),
                    texts.len()
                ),
            ));
        }
        Ok(Embeddings::new(
            dim,
            resp.data.into_iter().flat_map(|d| d.embedding).collect(),
        ))
    }

    fn classify(&self, e: OpenAIError) -> BenchError {
        let kind = match &e {
            OpenAIError::ApiError(r) => {
                let s = r.status_code;
                if s.as_u16() == 429 || s.as_u16() == 408 || s.is_server_error() {
                    LlmErrorKind::Retryable
                } else {
                    LlmErrorKind::Fatal
                }
            }
            OpenAIError::Reqwest(_) => LlmErrorKind::Retryable,
            OpenAIError::JSONDeserialize(..) => LlmErrorKind::Unparseable,
            _ => LlmErrorKind::Fatal,
        };
        let text = format!("{}: {e}", self.identity());
        llm_err(
            kind,
            match &self.key {
                Some(k) => k.redact(&text),
                None => text,
            },
        )
    }
}
