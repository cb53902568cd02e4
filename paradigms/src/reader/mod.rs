//! Readers turn a question and its context into an answer: the offline BM25 reader or an LLM.

mod llm;
mod offline;

pub use llm::{LlmReader, PROMPT_VERSION};
pub use offline::OfflineReader;

/// A paradigm's trace with the reader's token-level confidence under `confidence`, when the
/// reader measured one (the answer probe reads it from the stored tuple).
pub fn with_confidence(
    mut trace: serde_json::Value,
    confidence: Option<bench_core::Confidence>,
) -> serde_json::Value {
    if let (Some(c), Some(map)) = (confidence, trace.as_object_mut()) {
        map.insert(
            "confidence".into(),
            serde_json::to_value(c).expect("a confidence serialises"),
        );
    }
    trace
}
