//! LLM-only: the retrieval-free baseline (paper §3.2 (i)).

use std::sync::Arc;
use std::time::Instant;

use crate::toolkit::{CallBounds, Registered};
use async_trait::async_trait;
use bench_core::{Paradigm, ParadigmId, ParadigmOutput, PhaseLatency, PhaseTokens, Query, Reader};

/// LLM-only in the registry: one reader call on the question alone.
pub const LLM_ONLY: Registered = Registered {
    id: ParadigmId::LlmOnly,
    faithfulness: false,
    build: |kit| {
        Ok(Arc::new(LlmOnly {
            reader: kit.reader(),
        }))
    },
    cost: |s| CallBounds::one_read(s.direct, s),
};

/// Asks the reader with no context. The offline reader answers nothing, by design.
pub struct LlmOnly {
    /// Answers without context.
    pub reader: Arc<dyn Reader>,
}

impl std::fmt::Debug for LlmOnly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmOnly")
            .field("reader", &self.reader.identity())
            .finish()
    }
}

#[async_trait]
impl Paradigm for LlmOnly {
    fn id(&self) -> ParadigmId {
        ParadigmId::LlmOnly
    }

    async fn run(&self, query: &Query, _vector: &[f32]) -> bench_core::Result<ParadigmOutput> {
        let t = Instant::now();
        let g = self.reader.answer(&query.text, query.qtype, &[]).await?;
        Ok(ParadigmOutput {
            answer: g.text,
            context: Vec::new(),
            context_tokens: 0,
            tokens: PhaseTokens {
                generation_in: g.tokens_in,
                generation_out: g.tokens_out,
                ..PhaseTokens::default()
            },
            token_source: g.token_source,
            latency: PhaseLatency {
                retrieval_ms: 0.0,
                generation_ms: t.elapsed().as_secs_f64() * 1e3,
                judge_ms: 0.0,
            },
            // No retrieval to trace: the record says who answered, and from what.
            trace: crate::reader::with_confidence(
                serde_json::json!({
                    "reader": self.reader.identity(),
                    "context": "none: parametric knowledge only",
                }),
                g.confidence,
            ),
        })
    }
}
