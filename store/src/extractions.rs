//! Store tables of the knowledge-graph build: per-chunk triplet extractions and graph builds
//! (`bench_core::ExtractionCache`'s storage; the row types and the keying rule are in
//! `bench_core::caches`).

use std::collections::HashMap;

use sqlx::Row;

use bench_core::{ExtractionRow, ExtractionStatus, ExtractorKey, GraphBuildRecord};

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
}
