//! Facet "caches": the graph-extraction cache (per-chunk triplet extractions and graph builds) and
//! the LLM response cache (one successful, parsed reply per content-addressed key), and the store
//! as the plug-ins' `bench_core::ExtractionCache` and `bench_core::ResponseCache`, so `corpora`
//! and `llm` reach the database without naming it.
//!
//! The extraction row types and the keying rule are in `bench_core::caches`. An LLM reply's key is
//! computed by the caller (the `llm` crate) from the endpoint identity, model, messages, sampling
//! parameters and prompt version; it never includes an API key, and neither does any column here.

use std::collections::HashMap;

use async_trait::async_trait;
use sqlx::Row;

use bench_core::{
    ChatResponse, ExtractionCache, ExtractionRow, ExtractionStatus, ExtractorKey, GraphBuildRecord,
    LlmCacheEntry, ResponseCache, TokenLogprob, Usage,
};

use crate::error::{Result, StoreError};
use crate::Store;

impl Store {
    /// Stored extractions (ok and failed) of the given chunk hashes under `key`, in one query.
    pub async fn cached_extractions(
        &self,
        key: &ExtractorKey,
        chunk_hashes: &[String],
    ) -> Result<HashMap<String, ExtractionRow>> {
        // In slices: both backends cap the parameters of one statement (SQLite 32,766,
        // PostgreSQL 65,535).
        let mut out = HashMap::with_capacity(chunk_hashes.len());
        for slice in chunk_hashes.chunks(1000) {
            let list: Vec<String> = (0..slice.len()).map(|i| format!("${}", i + 4)).collect();
            let sql = format!(
                "SELECT chunk_hash, status, triplets_json, tokens_in, tokens_out, error
                 FROM extractions
                 WHERE extractor = $1 AND model = $2 AND prompt_hash = $3
                   AND chunk_hash IN ({})",
                list.join(", ")
            );
            let mut q = sqlx::query(&sql)
                .bind(&key.extractor)
                .bind(&key.model)
                .bind(&key.prompt_hash);
            for h in slice {
                q = q.bind(h);
            }
            for row in self.rows(q, row_from).await? {
                out.insert(row.chunk_hash.clone(), row);
            }
        }
        Ok(out)
    }

    /// Writes one chunk's extraction, replacing an earlier (failed) attempt of the same key.
    pub async fn put_extraction(&self, key: &ExtractorKey, row: &ExtractionRow) -> Result<()> {
        let statement = sqlx::query(
            "INSERT INTO extractions
                (chunk_hash, extractor, model, prompt_hash, status, triplets_json, tokens_in, tokens_out, error)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
             ON CONFLICT (chunk_hash, extractor, model, prompt_hash) DO UPDATE SET
                status = excluded.status, triplets_json = excluded.triplets_json,
                tokens_in = excluded.tokens_in, tokens_out = excluded.tokens_out,
                error = excluded.error, created_at = excluded.created_at",
        )
        .bind(&row.chunk_hash)
        .bind(&key.extractor)
        .bind(&key.model)
        .bind(&key.prompt_hash)
        .bind(row.status.as_str())
        .bind(&row.triplets_json)
        .bind(row.tokens_in as i64)
        .bind(row.tokens_out as i64)
        .bind(&row.error);
        self.exec(statement).await
    }

    /// Failed extractions under `key`: (chunk hash, error), by hash.
    pub async fn extraction_failures(&self, key: &ExtractorKey) -> Result<Vec<(String, String)>> {
        let sql = sqlx::query(
            "SELECT chunk_hash, coalesce(error, '') FROM extractions
             WHERE extractor = $1 AND model = $2 AND prompt_hash = $3 AND status = 'failed'
             ORDER BY chunk_hash",
        )
        .bind(&key.extractor)
        .bind(&key.model)
        .bind(&key.prompt_hash);
        self.rows(sql, |r| Ok((r.get(0), r.get(1)))).await
    }

    /// Records a finished graph build (its counts and the corpus's construction tokens).
    pub async fn record_graph_build(&self, b: &GraphBuildRecord) -> Result<()> {
        let mut statement = sqlx::query(
            "INSERT INTO graph_builds (corpus, corpus_hash, extractor, model, prompt_hash, chunks, nodes, edges,
                relation_types, triplets, components, failures, tokens_in, tokens_out, signature)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
        )
        .bind(&b.corpus)
        .bind(&b.corpus_hash)
        .bind(&b.extractor.extractor)
        .bind(&b.extractor.model)
        .bind(&b.extractor.prompt_hash);
        // The nine counts, in column order (`chunks` to `tokens_out`).
        for count in [
            b.chunks,
            b.nodes,
            b.edges,
            b.relation_types,
            b.triplets,
            b.components,
            b.failures,
            b.tokens_in,
            b.tokens_out,
        ] {
            statement = statement.bind(count as i64);
        }
        self.exec(statement.bind(&b.signature)).await
    }

    /// Construction tokens (in, out) of the latest graph build of this corpus content by this
    /// extractor; `None` when it was never built.
    pub async fn construction_tokens(
        &self,
        corpus: &str,
        corpus_hash: &str,
        key: &ExtractorKey,
    ) -> Result<Option<(u64, u64)>> {
        let t = self
            .run_construction_tokens(corpus, corpus_hash, &key.label())
            .await?;
        Ok(t.map(|(i, o)| (i.max(0) as u64, o.max(0) as u64)))
    }

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

fn row_from(r: &sqlx::any::AnyRow) -> Result<ExtractionRow> {
    let status: String = r.get(1);
    let status = match status.as_str() {
        "ok" => ExtractionStatus::Ok,
        "failed" => ExtractionStatus::Failed,
        other => {
            return Err(StoreError::Invalid(format!(
                "extractions: unknown status {other:?}"
            )))
        }
    };
    Ok(ExtractionRow {
        chunk_hash: r.get(0),
        status,
        triplets_json: r.get(2),
        tokens_in: r.get::<i64, _>(3) as u64,
        tokens_out: r.get::<i64, _>(4) as u64,
        error: r.get(5),
    })
}

#[async_trait]
impl ExtractionCache for Store {
    async fn cached_extractions(
        &self,
        key: &ExtractorKey,
        chunk_hashes: &[String],
    ) -> bench_core::Result<HashMap<String, ExtractionRow>> {
        Ok(Store::cached_extractions(self, key, chunk_hashes).await?)
    }

    async fn put_extraction(
        &self,
        key: &ExtractorKey,
        row: &ExtractionRow,
    ) -> bench_core::Result<()> {
        Ok(Store::put_extraction(self, key, row).await?)
    }

    async fn record_graph_build(&self, build: &GraphBuildRecord) -> bench_core::Result<()> {
        Ok(Store::record_graph_build(self, build).await?)
    }
}

#[async_trait]
impl ResponseCache for Store {
    async fn get(&self, key: &str) -> bench_core::Result<Option<ChatResponse>> {
        Ok(self.llm_cache_get(key).await?)
    }

    async fn put(&self, entry: &LlmCacheEntry<'_>) -> bench_core::Result<bool> {
        Ok(self.llm_cache_put(entry).await?)
    }

    async fn logprobs(&self, key: &str) -> bench_core::Result<Option<Vec<TokenLogprob>>> {
        Ok(self.llm_cache_logprobs(key).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> ExtractorKey {
        ExtractorKey {
            extractor: "offline".into(),
            model: "rules".into(),
            prompt_hash: "abc".into(),
        }
    }

    fn row(hash: &str, status: ExtractionStatus) -> ExtractionRow {
        ExtractionRow {
            chunk_hash: hash.into(),
            error: (status == ExtractionStatus::Failed).then(|| "boom".into()),
            status,
            triplets_json: "[]".into(),
            tokens_in: 3,
            tokens_out: 4,
        }
    }

    #[tokio::test]
    async fn put_get_replace_and_failures() {
        let store = Store::open_in_memory().await.unwrap();
        let k = key();
        store
            .put_extraction(&k, &row("h1", ExtractionStatus::Ok))
            .await
            .unwrap();
        store
            .put_extraction(&k, &row("h2", ExtractionStatus::Failed))
            .await
            .unwrap();
        let other = ExtractorKey {
            model: "other".into(),
            ..key()
        };
        store
            .put_extraction(&other, &row("h3", ExtractionStatus::Ok))
            .await
            .unwrap();

        let hashes: Vec<String> = ["h1", "h2", "h3", "h4"].map(String::from).to_vec();
        let got = store.cached_extractions(&k, &hashes).await.unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got["h1"], row("h1", ExtractionStatus::Ok));
        assert_eq!(got["h2"].status, ExtractionStatus::Failed);
        assert_eq!(
            store.extraction_failures(&k).await.unwrap(),
            vec![("h2".to_string(), "boom".to_string())]
        );

        // A retry that succeeds replaces the failed row.
        store
            .put_extraction(&k, &row("h2", ExtractionStatus::Ok))
            .await
            .unwrap();
        assert!(store.extraction_failures(&k).await.unwrap().is_empty());
        let got = store.cached_extractions(&k, &hashes).await.unwrap();
        assert_eq!(got["h2"].status, ExtractionStatus::Ok);
    }

    #[tokio::test]
    async fn construction_tokens_are_the_latest_build() {
        let store = Store::open_in_memory().await.unwrap();
        assert_eq!(
            store.construction_tokens("c", "x", &key()).await.unwrap(),
            None
        );
        let mut b = GraphBuildRecord {
            corpus: "c".into(),
            corpus_hash: "x".into(),
            extractor: key(),
            chunks: 2,
            nodes: 3,
            edges: 2,
            relation_types: 1,
            triplets: 2,
            components: 1,
            failures: 0,
            tokens_in: 10,
            tokens_out: 5,
            signature: "s".into(),
        };
        store.record_graph_build(&b).await.unwrap();
        b.tokens_in = 12;
        store.record_graph_build(&b).await.unwrap();
        assert_eq!(
            store.construction_tokens("c", "x", &key()).await.unwrap(),
            Some((12, 5))
        );
    }

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
