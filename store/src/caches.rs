//! The store as the plug-ins' caches: `bench_core::ExtractionCache` (the knowledge-graph build's
//! extractions) and `bench_core::ResponseCache` (the LLM replies), so `corpora` and `llm` reach
//! the database without naming it.

use std::collections::HashMap;

use async_trait::async_trait;
use bench_core::{
    ChatResponse, ExtractionCache, ExtractionRow, ExtractorKey, GraphBuildRecord, LlmCacheEntry,
    ResponseCache, TokenLogprob,
};

use crate::Store;

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
