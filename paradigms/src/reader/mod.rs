//! Readers turn a question and its context into an answer: the offline BM25 reader or an LLM.

mod llm;
mod offline;

pub use llm::{LlmReader, PROMPT_VERSION};
pub use offline::{answer_spans, OfflineReader};
