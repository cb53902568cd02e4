//! The LLM generator: the paper's generation prompts (factual from one chunk, reasoning by reverse substitution over a bridge entity, summary over an entity's documents).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use bench_core::{ChatMessage, ChatRequest, Llm, QueryType};

use super::{Candidate, Generator, Source};
use crate::error::Result;

/// Bumped whenever a prompt changes (the response cache keys on it).
pub const GENERATE_PROMPT_VERSION: &str = "generate-v1";

const SYSTEM: &str =
    "You write questions for a retrieval benchmark from the passages you are given. \
Questions are self-contained: they name people, places and things explicitly, use no pronoun that \
refers to a passage, and never mention \"the passage\" or \"the text\". Reply with one JSON object \
and nothing else.";

/// Generates candidates with an LLM (temperature 0.7 in the paper).
pub struct LlmGenerator {
    llm: Arc<dyn Llm>,
    temperature: f32,
    spent: AtomicU64,
}

impl LlmGenerator {
    /// A generator sampling `llm` at `temperature`.
    pub fn new(llm: Arc<dyn Llm>, temperature: f32) -> Self {
        LlmGenerator {
            llm,
            temperature,
            spent: AtomicU64::new(0),
        }
    }
}

impl std::fmt::Debug for LlmGenerator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmGenerator")
            .field("llm", &self.llm.identity())
            .finish()
    }
}

fn passages(source: &Source<'_>) -> String {
    source
        .chunks
        .iter()
        .enumerate()
        .map(|(i, c)| format!("Passage {}:\n{}", i + 1, c.text))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The reply's shape that the prompts ask for (outside the format strings: no braces to escape).
const REPLY: &str = r#"Reply as {"question": "...", "answer": "..."}."#;
/// The same with the bridge entity.
const REPLY_BRIDGE: &str = r#"Reply as {"question": "...", "answer": "...", "bridge": "..."}."#;
/// The reply that declines.
const NO_QUESTION: &str = r#"{"question": null}"#;

/// The user prompt of each type.
fn prompt(qtype: QueryType, source: &Source<'_>) -> Option<String> {
    let p = passages(source);
    Some(match qtype {
        QueryType::Factual | QueryType::Other => factual_prompt(&p),
        QueryType::Reasoning => reasoning_prompt(&p, &source.facts.first()?.2),
        QueryType::Summary => summary_prompt(&p, source.focus.as_deref()?),
    })
}

/// A factual question: one passage, a short span as the answer.
fn factual_prompt(p: &str) -> String {
    format!(
        "{p}\n\nWrite one factual question that this passage answers with a short span (a name, \
         a number, a date, a place), and that span as the answer.\n\
         {REPLY}"
    )
}

/// A reasoning question: two passages joined by `bridge`, which the question must not name.
fn reasoning_prompt(p: &str, bridge: &str) -> String {
    format!(
        "{p}\n\nThe passages are linked by the entity \"{bridge}\". Write one question that \
         needs both passages: take a fact of the last passage as the answer, then replace the \
         bridge entity in the question with a description drawn from the first passage \
         (reverse substitution), so that the question does not name \"{bridge}\" and no single \
         passage answers it. The answer is a short span.\n\
         {REPLY_BRIDGE}"
    )
}

/// A summary question about `focus`, gathered from two or more passages (or none when the
/// passages name different entities).
fn summary_prompt(p: &str, focus: &str) -> String {
    format!(
        "{p}\n\nThese passages mention \"{focus}\". First check that they refer to the same \
         entity rather than different ones with the same name; if not, reply \
         {NO_QUESTION}. Otherwise write one question about \"{focus}\" whose complete \
         answer gathers information from at least two passages, and a reference answer of one \
         or two sentences.\n{REPLY}"
    )
}

/// The (question, answer) of a reply; `Some(None)` for a deliberate `"question": null`; `None`
/// for an unreadable reply.
fn parse(reply: &str) -> Option<Option<(String, String)>> {
    let start = reply.find('{')?;
    let end = reply.rfind('}')?;
    let v: serde_json::Value = serde_json::from_str(reply.get(start..=end)?).ok()?;
    match v.get("question")? {
        serde_json::Value::Null => Some(None),
        serde_json::Value::String(q) if !q.trim().is_empty() => {
            let a = v.get("answer")?.as_str()?.trim();
            (!a.is_empty()).then(|| Some((q.trim().to_owned(), a.to_owned())))
        }
        _ => None,
    }
}

#[async_trait]
impl Generator for LlmGenerator {
    fn identity(&self) -> String {
        format!("llm:{} ({GENERATE_PROMPT_VERSION})", self.llm.identity())
    }

    async fn generate(&self, qtype: QueryType, source: &Source<'_>) -> Result<Option<Candidate>> {
        let Some(user) = prompt(qtype, source) else {
            return Ok(None);
        };
        let request = ChatRequest {
            messages: vec![ChatMessage::system(SYSTEM), ChatMessage::user(user)],
            temperature: self.temperature,
            max_tokens: 400,
            json: true,
        };
        let response = match self
            .llm
            .chat_readable(&request, &|r: &str| parse(r).is_some())
            .await
        {
            Ok(r) => r,
            // A reply still unreadable after the client's retries gives no candidate.
            Err(bench_core::BenchError::Llm {
                kind: bench_core::LlmErrorKind::Unparseable,
                ..
            }) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let (i, o, _) = response.token_bill(&request);
        self.spent.fetch_add(i + o, Ordering::Relaxed);
        let Some(Some((question, answer))) = parse(&response.content) else {
            return Ok(None);
        };
        Ok(Some(Candidate {
            qtype,
            question,
            answer,
            sources: source.chunks.iter().map(|c| c.index).collect(),
            named: Vec::new(),
        }))
    }

    fn spent(&self) -> u64 {
        self.spent.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_parse_or_say_why_not() {
        assert_eq!(
            parse("Sure: {\"question\": \"Who?\", \"answer\": \"Ada\"}"),
            Some(Some(("Who?".into(), "Ada".into())))
        );
        assert_eq!(parse("{\"question\": null}"), Some(None));
        assert_eq!(parse("{\"question\": \"Who?\"}"), None);
        assert_eq!(parse("{\"question\": \"\", \"answer\": \"x\"}"), None);
        assert_eq!(parse("no json"), None);
    }
}
