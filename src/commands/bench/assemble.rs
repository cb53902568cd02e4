//! What every run of `bench` assembles before it answers: the offline parts, the paradigms
//! over the engines, and the knowledge graph when a chosen paradigm reads it.

use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use bench_core::{ExtractionCache, Paradigm};
use corpora::OfflineExtractor;
use paradigms::{ChunkTable, OfflineReader};

use super::invocation::Invocation;
use crate::engines::{
    build_graph_with_progress, Engines, GraphParts, ParadigmParts, SharedRetrievers,
};

/// What every run builds before its engines: the chunk table, the offline reader and the
/// offline extractor (offline runs read and extract with them; IterativeRAG's offline
/// evaluator too).
pub(super) struct OfflineParts {
    pub(super) chunks: Arc<ChunkTable>,
    pub(super) reader: Arc<OfflineReader>,
    pub(super) extractor: Arc<OfflineExtractor>,
}

impl Invocation<'_> {
    pub(super) fn offline_parts(&self) -> OfflineParts {
        OfflineParts {
            chunks: Arc::new(ChunkTable::new(self.corpus.chunks.clone())),
            reader: Arc::new(OfflineReader::new(
                &self.corpus.chunks,
                self.config.offline_reader.clone(),
            )),
            extractor: Arc::new(OfflineExtractor::new()),
        }
    }

    /// The toolkit the paradigms are built from, and the paradigms themselves.
    pub(super) fn paradigms(
        &self,
        offline: &OfflineParts,
        engines: &Engines,
        graph: Option<GraphParts>,
    ) -> Result<(ParadigmParts<'_>, Vec<Arc<dyn Paradigm>>)> {
        let share = !self.args.share_nothing && self.llm_settings.is_none();
        let parts = ParadigmParts {
            config: self.config,
            chunks: offline.chunks.clone(),
            index: self.embedded.index.clone(),
            embedder: self.embedded.embedder.clone(),
            reader: engines.reader.clone(),
            offline_reader: offline.reader.clone(),
            graph,
            extractor: offline.extractor.clone(),
            entities: engines.entities.clone(),
            llm_evaluator: engines.evaluator.clone(),
            // Offline only: LLM runs keep one retrieval per tuple (their retrieval bills
            // entity-extraction calls per paradigm, which the tests' token ledger checks).
            shared: share.then(SharedRetrievers::default),
        };
        let paradigms = self
            .paradigm_ids
            .iter()
            .map(|&id| parts.build(id))
            .collect::<Result<Vec<_>>>()?;
        Ok((parts, paradigms))
    }

    /// The knowledge graph when a chosen paradigm reads it (extracting only chunks not in
    /// `store`, the results store's extraction cache), its build's signature and the seconds
    /// it took.
    pub(super) async fn graph(
        &self,
        store: &dyn ExtractionCache,
        engines: &Engines,
    ) -> Result<(Option<GraphParts>, Option<String>, f64)> {
        let t = Instant::now();
        if !self.paradigm_ids.iter().any(|p| p.uses_graph()) {
            return Ok((None, None, 0.0));
        }
        let (g, index, signature) = build_graph_with_progress(
            self.corpus,
            engines.graph_extractor.clone(),
            store,
            self.embedded.embedder.as_ref(),
            &self.embedded.cache,
        )
        .await?;
        Ok((Some((g, index)), Some(signature), t.elapsed().as_secs_f64()))
    }
}
