//! Store table of the LLM response cache: one successful, parsed reply per content-addressed key.
//!
//! The key is computed by the caller (the `llm` crate) from the endpoint identity, model,
//! messages, sampling parameters and prompt version; it never includes an API key, and neither
//! does any column here.

use sqlx::Row;

use bench_core::{ChatResponse, LlmCacheEntry, TokenLogprob, Usage};

use crate::error::{Result, StoreError};
use crate::Store;

impl Store {
    /// The cached reply under `key`, with `usage` as the endpoint reported it (`None` if it did not).
    pub async fn llm_cache_get(&self, key: &str) -> Result<Option<ChatResponse>> {
        let row = sqlx::query(
            "SELECT response, prompt_tokens, completion_tokens, usage_reported \
             FROM llm_cache WHERE key = $1",
        )
        .bind(key)
        .fetch_optional(self.pool())
        .await
        .map_err(|e| self.err(e))?;
        Ok(row.map(|r| {
            let reported: i64 = r.get("usage_reported");
            ChatResponse {
                content: r.get("response"),
                usage: (reported != 0).then(|| Usage {
                    prompt_tokens: r.get::<i64, _>("prompt_tokens") as u64,
                    completion_tokens: r.get::<i64, _>("completion_tokens") as u64,
                }),
            }
        }))
    }

    /// The token log-probabilities stored with the reply under `key` (`None`: no such reply,
    /// or it has none).
    pub async fn llm_cache_logprobs(&self, key: &str) -> Result<Option<Vec<TokenLogprob>>> {
        let json: Option<Option<String>> =
            sqlx::query_scalar("SELECT logprobs_json FROM llm_cache WHERE key = $1")
                .bind(key)
                .fetch_optional(self.pool())
                .await
                .map_err(|e| self.err(e))?;
        json.flatten()
            .map(|j| {
                serde_json::from_str(&j).map_err(|e| {
                    StoreError::Invalid(format!(
                        "results store {}: llm_cache.logprobs_json of {key}: {e}",
                        self.path()
                    ))
                })
            })
            .transpose()
    }

    /// Stores a reply unless a row under the same key exists, and says whether it did. The
    /// first writer wins: a server need not give the same reply to the same request (batching
    /// makes llama.cpp's temperature-0 replies vary), so a caller that lost the race must use
    /// the stored reply, or a rerun answered from the cache would differ from this run.
    pub async fn llm_cache_put(&self, entry: &LlmCacheEntry<'_>) -> Result<bool> {
        let done = sqlx::query(
            "INSERT INTO llm_cache \
             (key, identity, model, request_json, response, prompt_tokens, completion_tokens, usage_reported, \
              logprobs_json) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING",
        )
        .bind(entry.key)
        .bind(entry.identity)
        .bind(entry.model)
        .bind(entry.request_json)
        .bind(&entry.response.content)
        .bind(entry.prompt_tokens as i64)
        .bind(entry.completion_tokens as i64)
        .bind(entry.response.usage.is_some() as i64)
        .bind(
            entry
                .logprobs
                .map(|l| serde_json::to_string(l).expect("log-probabilities serialise")),
        )
        .execute(self.pool())
        .await
        .map_err(|e| self.err(e))?;
        Ok(done.rows_affected() == 1)
    }

    /// Rows in the cache.
    pub async fn llm_cache_len(&self) -> Result<u64> {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM llm_cache")
            .fetch_one(self.pool())
            .await
            .map_err(|e| self.err(e))?;
        Ok(n as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn put_then_get_keeps_usage_or_its_absence() {
        let store = Store::open_in_memory().await.unwrap();
        assert_eq!(store.llm_cache_get("k").await.unwrap(), None);
        let with = ChatResponse {
            content: "a".into(),
            usage: Some(Usage {
                prompt_tokens: 3,
                completion_tokens: 1,
            }),
        };
        let without = ChatResponse {
            content: "b".into(),
            usage: None,
        };
        let entry = |key, response| LlmCacheEntry {
            key,
            identity: "m@http://x",
            model: "m",
            request_json: "{}",
            response,
            prompt_tokens: 3,
            completion_tokens: 1,
            logprobs: None,
        };
        for (key, resp) in [("k1", &with), ("k2", &without)] {
            assert!(store.llm_cache_put(&entry(key, resp)).await.unwrap());
        }
        // A second reply under a stored key is refused and the first one stays.
        assert!(!store.llm_cache_put(&entry("k1", &without)).await.unwrap());
        assert_eq!(
            store.llm_cache_get("k1").await.unwrap().as_ref(),
            Some(&with)
        );
        assert_eq!(
            store.llm_cache_get("k2").await.unwrap().as_ref(),
            Some(&without)
        );
        assert_eq!(store.llm_cache_len().await.unwrap(), 2);
    }
}
