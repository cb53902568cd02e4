//! The ends of a bench run: a run whose every tuple failed is not called finished; and the corpus indicators are computed and
//! stored when none are, so `route eval` works right after the first run.

use anyhow::Result;
use bench_core::{Corpus, Embedder};
use corpora::{ExtractorId, KnowledgeGraph, VectorCache};
use metrics::corpus::{embedding_metrics, CorpusMetrics};
use serde_json::Value;
use store::Store;

use crate::indicators::{configuration, knowledge_graph_metrics};

/// An error when tuples ran and every one of them failed: such a run measured nothing, so it
/// is left unfinished and the command exits non-zero (the same command retries the tuples).
pub(crate) fn all_failed(
    o: &store::RunOutcome,
    run_id: i64,
    db: &store::DbTarget,
) -> Option<anyhow::Error> {
    (o.tuples > 0 && o.ok == 0).then(|| {
        anyhow::anyhow!(
            "every one of run {run_id}'s {} tuples failed, so the run is not marked finished; \
             first error: {}; the rows are in {} (column `error`); fix the cause and run the same \
             command again to retry them",
            o.tuples,
            o.first_error.as_deref().unwrap_or("(none recorded)"),
            db
        )
    })
}

/// Computes and stores the corpus indicators when none are stored for this content: the graph
/// metrics when the run built the graph, the embedding metrics from the (cached) chunk vectors.
/// What cannot be computed is left out with a note; nothing here fails the run.
pub(crate) async fn ensure_corpus_metrics(
    store: &Store,
    corpus: &Corpus,
    graph: Option<(&KnowledgeGraph, ExtractorId)>,
    cache: &VectorCache,
    embedder: &dyn Embedder,
) -> Result<()> {
    if store
        .corpus_metrics(&corpus.name, &corpus.content_hash)
        .await?
        .is_some()
    {
        return Ok(());
    }
    let texts: Vec<&str> = corpus.chunks.iter().map(|c| c.text.as_str()).collect();
    // The run embedded these already: a cache hit, no encoder pass.
    let embeddings = cache
        .get_or_embed(
            &format!("{}:chunks", corpus.name),
            &texts,
            embedder,
            &|_, _| {},
        )
        .map_err(anyhow::Error::from)
        .and_then(|v| Ok(embedding_metrics(&v.data, v.dim)?));
    let embeddings = match embeddings {
        Ok(m) => Some(m),
        Err(e) => {
            eprintln!(
                "note: embedding indicators of {} not computed: {e:#}",
                corpus.name
            );
            None
        }
    };
    let metrics = CorpusMetrics {
        graph: graph.as_ref().map(|(g, _)| knowledge_graph_metrics(g)),
        embeddings,
    };
    if metrics.graph.is_none() {
        eprintln!(
            "note: this run built no knowledge graph, so the graph indicators of {} are not stored; \
             `ragrouter metrics {}` computes all six",
            corpus.name, corpus.name
        );
    }
    if metrics.graph.is_none() && metrics.embeddings.is_none() {
        return Ok(());
    }
    let configuration = configuration(graph.as_ref().map(|(_, id)| id), embedder.name());
    store
        .put_corpus_metrics(
            &corpus.name,
            &corpus.content_hash,
            &configuration,
            &Value::Object(metrics.flat_map()),
        )
        .await?;
    Ok(())
}
