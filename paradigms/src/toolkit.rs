//! What a paradigm is registered with and built from: the [`Toolkit`] the binary (or a test)
//! implements, the iterative paradigms' [`Evaluator`], the dry-run cost model's
//! [`PromptSizes`] and [`CallBounds`], and the [`Registered`] entry. A leaf: every paradigm
//! names it and it names none of them.

use std::sync::Arc;

use async_trait::async_trait;
use bench_core::{BenchConfig, ContextChunk, Paradigm, ParadigmId, Reader, Result, Retriever};
use serde::{Deserialize, Serialize};

use crate::chunks::ChunkTable;

/// The evaluator's verdict on an answer (the paper's {sufficient, reason, sub_question}).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evaluation {
    /// Whether the answer suffices.
    pub sufficient: bool,
    /// Why (the evaluator's words).
    pub reason: String,
    /// The next question to retrieve for, when it does not.
    pub sub_question: Option<String>,
    /// Prompt tokens the evaluation spent.
    #[serde(skip)]
    pub tokens_in: u64,
    /// Reply tokens the evaluation spent.
    #[serde(skip)]
    pub tokens_out: u64,
}

/// Judges whether an answer suffices and proposes the next sub-question.
#[async_trait]
pub trait Evaluator: Send + Sync {
    /// The evaluator's identity (recorded in traces).
    fn identity(&self) -> String;
    /// Judges `answer` to `question` given `context`.
    async fn evaluate(
        &self,
        question: &str,
        answer: &str,
        context: &[ContextChunk<'_>],
    ) -> bench_core::Result<Evaluation>;
}

/// What paradigms are assembled from. The binary implements it over a run's engines (shared,
/// memoised retrievers; offline or LLM reader); tests over the fixture corpus.
pub trait Toolkit {
    /// The run's configuration.
    fn config(&self) -> &BenchConfig;
    /// The reader paradigms answer with.
    fn reader(&self) -> Arc<dyn Reader>;
    /// The corpus's chunks.
    fn chunks(&self) -> Arc<ChunkTable>;
    /// Dense top-K retrieval.
    fn dense(&self) -> Arc<dyn Retriever>;
    /// Graph retrieval; an error when the knowledge graph was not built.
    fn graph(&self) -> Result<Arc<dyn Retriever>>;
    /// The self-evaluator of the iterative paradigms.
    fn evaluator(&self) -> Arc<dyn Evaluator>;
    /// The question-complexity score the weighted fusion reads.
    fn complexity(&self) -> fn(&str) -> f64;
}

/// Token sizes the cost models read, per question: a prompt without context, one with a full
/// context, an answer, a short reply (an entity list, a self-evaluation); rounds of the loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptSizes {
    /// Prompt tokens without context.
    pub direct: u64,
    /// Prompt tokens with a full context.
    pub with_context: u64,
    /// Tokens of an answer.
    pub answer: u64,
    /// Tokens of a short reply.
    pub short_reply: u64,
    /// Rounds of the iterative loop.
    pub rounds: u64,
}

/// LLM calls and token bounds of one question, judge not included (`--dry-run`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallBounds {
    /// Fewest LLM calls per question.
    pub min_calls: u64,
    /// Most LLM calls per question.
    pub max_calls: u64,
    /// Bound on prompt tokens per question.
    pub input: u64,
    /// Bound on reply tokens per question.
    pub output: u64,
}

impl CallBounds {
    /// One reader call on `input` prompt tokens.
    pub fn one_read(input: u64, s: &PromptSizes) -> CallBounds {
        CallBounds {
            min_calls: 1,
            max_calls: 1,
            input,
            output: s.answer,
        }
    }

    /// An entity-list call on the question, then one reader call with the context.
    pub fn entities_then_read(s: &PromptSizes) -> CallBounds {
        CallBounds {
            min_calls: 2,
            max_calls: 2,
            input: s.direct + s.with_context,
            output: s.short_reply + s.answer,
        }
    }
}

/// One registered paradigm.
#[derive(Clone, Copy)]
pub struct Registered {
    /// The paradigm.
    pub id: ParadigmId,
    /// Whether the tuple's faithfulness (eq. 14-15) is measured: the answer is read in one
    /// pass from the retrieved context (NaiveRAG, GraphRAG); `metrics` is told through
    /// [`crate::registry::faithful_paradigms`], so it names no paradigm itself.
    pub faithfulness: bool,
    /// Builds the paradigm from a toolkit.
    pub build: fn(&dyn Toolkit) -> Result<Arc<dyn Paradigm>>,
    /// The paradigm's LLM calls and token bounds per question (`--dry-run`).
    pub cost: fn(&PromptSizes) -> CallBounds,
}

impl std::fmt::Debug for Registered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registered").field("id", &self.id).finish()
    }
}
