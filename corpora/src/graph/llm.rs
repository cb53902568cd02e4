//! The LLM triplet extractor of the paper (Appendix A.1, Figure 8): a JSON array of
//! [subject, relation, object] per chunk, temperature 0, 15 in flight, 60 s timeout, at most 3
//! attempts with exponential backoff.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bench_core::{BenchError, ChatMessage, ChatRequest, Llm, LlmErrorKind};
use serde_json::Value;

use super::extract::{Extraction, ExtractorId, TripletExtractor};
use super::types::Triplet;
use crate::error::{CorpusError, Result};

const SYSTEM: &str = "You turn text into knowledge-graph triplets. You answer with JSON only.";

const TRIPLET_PROMPT: &str = r#"Read the text below and list the facts it states as (subject, relation, object) triplets.
- Subject and object are entities the text names: people, places, organisations, works, events, dates, quantities, concepts.
- The relation is a short verb phrase taken from the text, such as "born in", "directed" or "capital of".
- Replace pronouns with the entity they refer to. Add nothing the text does not state.
Answer with a JSON array only: one array of three strings per triplet, for example
[["Marie Curie", "born in", "Warsaw"], ["Marie Curie", "won", "Nobel Prize in Physics"]]
If the text states no facts, answer [].

Text:
"#;

const ENTITY_PROMPT: &str = r#"List the entities named in the question below: people, places, organisations, works, events, dates and numbers, written as in the question.
Answer with a JSON array of strings only, for example ["Marie Curie", "Warsaw"]. If there are none, answer [].

Question:
"#;

/// Settings of the paper's Table 5.
#[derive(Debug, Clone)]
pub struct LlmExtractorOptions {
    /// Requests in flight.
    pub concurrency: usize,
    /// Per request.
    pub timeout: Duration,
    /// Attempts per chunk, the first included ("up to 3 attempts").
    pub max_attempts: u32,
    /// Wait before the second attempt; doubled for each further one.
    pub backoff: Duration,
    /// Completion tokens allowed per reply.
    pub max_tokens: u32,
}

impl Default for LlmExtractorOptions {
    fn default() -> Self {
        LlmExtractorOptions {
            concurrency: 15,
            timeout: Duration::from_secs(60),
            max_attempts: 3,
            backoff: Duration::from_secs(1),
            max_tokens: 4096,
        }
    }
}

/// Extraction through an [`Llm`].
#[derive(Clone)]
pub struct LlmExtractor {
    llm: Arc<dyn Llm>,
    options: LlmExtractorOptions,
}

impl std::fmt::Debug for LlmExtractor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmExtractor")
            .field("llm", &self.llm.identity())
            .field("options", &self.options)
            .finish()
    }
}

/// A reply and what the call cost.
struct Called {
    content: String,
    tokens_in: u64,
    tokens_out: u64,
}

impl LlmExtractor {
    /// An extractor with the paper's settings (the [`LlmExtractorOptions`] defaults).
    pub fn new(llm: Arc<dyn Llm>) -> Self {
        Self::with_options(llm, LlmExtractorOptions::default())
    }

    /// An extractor with other settings.
    pub fn with_options(llm: Arc<dyn Llm>, options: LlmExtractorOptions) -> Self {
        LlmExtractor { llm, options }
    }

    /// The settings it runs with.
    pub fn options(&self) -> &LlmExtractorOptions {
        &self.options
    }

    fn request(&self, template: &str, text: &str) -> ChatRequest {
        ChatRequest {
            messages: vec![
                ChatMessage::system(SYSTEM),
                ChatMessage::user(format!("{template}{text}")),
            ],
            temperature: 0.0,
            max_tokens: self.options.max_tokens,
            // JSON mode asks for an object; the reply here is an array.
            json: false,
        }
    }

    /// Sends `request`, retrying timeouts and retryable failures with exponential backoff.
    /// Returns the reply, or the last error together with the tokens spent so far.
    async fn call(&self, request: &ChatRequest) -> Result<Called> {
        let attempts = self.options.max_attempts.max(1);
        let mut wait = self.options.backoff;
        let mut last = String::new();
        for attempt in 1..=attempts {
            let outcome = tokio::time::timeout(self.options.timeout, self.llm.chat(request)).await;
            let retryable = match outcome {
                Ok(Ok(resp)) => {
                    let (tokens_in, tokens_out, _) = resp.token_bill(request);
                    return Ok(Called {
                        content: resp.content,
                        tokens_in,
                        tokens_out,
                    });
                }
                Ok(Err(e)) => {
                    last = e.to_string();
                    matches!(
                        e,
                        BenchError::Llm {
                            kind: LlmErrorKind::Retryable,
                            ..
                        }
                    )
                }
                Err(_) => {
                    last = format!("timed out after {:?}", self.options.timeout);
                    true
                }
            };
            if !retryable {
                break;
            }
            if attempt < attempts {
                tracing::debug!(attempt, error = %last, "extraction call failed; retrying");
                tokio::time::sleep(wait).await;
                wait *= 2;
            } else {
                last = format!("{last} (gave up after {attempts} attempts)");
            }
        }
        Err(CorpusError::Extraction {
            message: last,
            tokens_in: 0,
            tokens_out: 0,
        })
    }

    /// Entities of a question for graph retrieval, with the tokens spent (retrieval phase).
    pub async fn query_entities(&self, question: &str) -> Result<(Vec<String>, u64, u64)> {
        let (entities, tokens_in, tokens_out) = self.query_entities_or_reply(question).await?;
        match entities {
            Ok(e) => Ok((e, tokens_in, tokens_out)),
            Err(message) => Err(CorpusError::Extraction {
                message,
                tokens_in,
                tokens_out,
            }),
        }
    }

    /// [`LlmExtractor::query_entities`], with a reply that is not an entity list returned as
    /// `Err(why)` beside the tokens it cost instead of failing: the caller decides.
    pub async fn query_entities_or_reply(
        &self,
        question: &str,
    ) -> Result<(std::result::Result<Vec<String>, String>, u64, u64)> {
        let req = self.request(ENTITY_PROMPT, question);
        let c = self.call(&req).await?;
        let entities = parse_entities(&c.content)
            .ok_or_else(|| format!("unparseable entity list: {}", preview(&c.content)));
        Ok((entities, c.tokens_in, c.tokens_out))
    }
}

#[async_trait]
impl TripletExtractor for LlmExtractor {
    fn identity(&self) -> ExtractorId {
        ExtractorId {
            extractor: "llm".into(),
            model: self.llm.identity(),
            prompt_hash: bench_core::config::hash_parts([
                SYSTEM.as_bytes(),
                TRIPLET_PROMPT.as_bytes(),
                self.options.max_tokens.to_string().as_bytes(),
            ]),
        }
    }

    fn concurrency(&self) -> usize {
        self.options.concurrency.max(1)
    }

    async fn extract(&self, chunk_text: &str) -> Result<Extraction> {
        let req = self.request(TRIPLET_PROMPT, chunk_text);
        let c = self.call(&req).await?;
        match parse_triplets(&c.content) {
            Some(triplets) => Ok(Extraction {
                triplets,
                tokens_in: c.tokens_in,
                tokens_out: c.tokens_out,
            }),
            // Never guessed: the chunk is a failure, stored as such and retried next build.
            None => Err(CorpusError::Extraction {
                message: format!("unparseable reply: {}", preview(&c.content)),
                tokens_in: c.tokens_in,
                tokens_out: c.tokens_out,
            }),
        }
    }
}

fn preview(s: &str) -> String {
    let mut p: String = s.chars().take(120).collect();
    if p.len() < s.len() {
        p.push('…');
    }
    p
}

/// JSON values that start at each `[` or `{` of `reply`, in order; prose around them and code
/// fences are skipped because only a complete JSON value parses.
fn json_candidates(reply: &str) -> impl Iterator<Item = Value> + '_ {
    reply
        .char_indices()
        .filter(|&(_, c)| c == '[' || c == '{')
        .filter_map(move |(i, _)| {
            serde_json::Deserializer::from_str(&reply[i..])
                .into_iter::<Value>()
                .next()
                .and_then(|r| r.ok())
        })
}

/// The triplets of a reply: the first JSON array (or an object's array field) whose elements are
/// triplets. Malformed elements are dropped; `None` when no such array exists.
pub fn parse_triplets(reply: &str) -> Option<Vec<Triplet>> {
    for v in json_candidates(reply) {
        let arrays: Vec<&Vec<Value>> = match &v {
            Value::Array(a) => vec![a],
            Value::Object(o) => o.values().filter_map(Value::as_array).collect(),
            _ => continue,
        };
        for a in arrays {
            if a.is_empty() {
                return Some(Vec::new());
            }
            let found: Vec<Triplet> = a.iter().filter_map(triplet_of).collect();
            if !found.is_empty() {
                if found.len() < a.len() {
                    tracing::debug!(
                        dropped = a.len() - found.len(),
                        "malformed triplets dropped"
                    );
                }
                return Some(found);
            }
        }
    }
    None
}

/// The entity list of a reply: the first JSON array of strings (or numbers).
pub fn parse_entities(reply: &str) -> Option<Vec<String>> {
    json_candidates(reply).find_map(|v| {
        let a = v.as_array()?;
        let out: Vec<String> = a.iter().filter_map(scalar).collect();
        (a.is_empty() || !out.is_empty()).then_some(out)
    })
}

fn scalar(v: &Value) -> Option<String> {
    let s = match v {
        Value::String(s) => s.trim().to_string(),
        Value::Number(n) => n.to_string(),
        _ => return None,
    };
    (!s.is_empty()).then_some(s)
}

fn triplet_of(v: &Value) -> Option<Triplet> {
    let (s, r, o) = match v {
        Value::Array(a) if a.len() == 3 => (scalar(&a[0])?, scalar(&a[1])?, scalar(&a[2])?),
        Value::Object(m) => {
            let get = |names: &[&str]| {
                m.iter()
                    .find(|(k, _)| names.iter().any(|n| k.eq_ignore_ascii_case(n)))
                    .and_then(|(_, v)| scalar(v))
            };
            (
                get(&["subject", "head", "source"])?,
                get(&["relation", "predicate", "relationship"])?,
                get(&["object", "tail", "target"])?,
            )
        }
        _ => return None,
    };
    Some(Triplet {
        subject: s,
        relation: r,
        object: o,
    })
}

#[cfg(test)]
mod tests {
    use bench_core::Usage;
    use fixtures::{Scripted, ScriptedLlm};

    use super::*;

    fn t(s: &str, r: &str, o: &str) -> Triplet {
        Triplet {
            subject: s.into(),
            relation: r.into(),
            object: o.into(),
        }
    }

    fn reply(s: &str) -> Scripted {
        Scripted::Reply(s.into(), None)
    }

    fn fast(llm: Arc<ScriptedLlm>, attempts: u32) -> LlmExtractor {
        LlmExtractor::with_options(
            llm,
            LlmExtractorOptions {
                max_attempts: attempts,
                backoff: Duration::from_millis(1),
                ..Default::default()
            },
        )
    }

    #[test]
    fn parses_plain_fenced_prose_and_object_forms() {
        let want = vec![t("Marie Curie", "born in", "Warsaw")];
        assert_eq!(
            parse_triplets(r#"[["Marie Curie", "born in", "Warsaw"]]"#),
            Some(want.clone())
        );
        assert_eq!(
            parse_triplets("```json\n[[\"Marie Curie\", \"born in\", \"Warsaw\"]]\n```"),
            Some(want.clone())
        );
        assert_eq!(
            parse_triplets(
                "Here are the triplets [from the text]:\n[[\"Marie Curie\", \"born in\", \"Warsaw\"]] Hope this helps."
            ),
            Some(want.clone())
        );
        assert_eq!(
            parse_triplets(
                r#"{"triplets": [{"subject": "Marie Curie", "relation": "born in", "object": "Warsaw"}]}"#
            ),
            Some(want.clone())
        );
        assert_eq!(
            parse_triplets(r#"[["Curie", "born", 1867], ["only two", "items"]]"#),
            Some(vec![t("Curie", "born", "1867")])
        );
        assert_eq!(parse_triplets("[]"), Some(vec![]));
    }

    #[test]
    fn garbage_is_not_guessed() {
        assert_eq!(parse_triplets("I could not find any facts."), None);
        assert_eq!(parse_triplets(r#"[["a", "b", "c"],"#), None);
        assert_eq!(parse_triplets(r#"["a", "b", "c"]"#), None);
        assert_eq!(parse_triplets(r#"{"note": "none"}"#), None);
    }

    #[tokio::test]
    async fn extracts_with_temperature_zero_and_counts_tokens() {
        let llm = Arc::new(ScriptedLlm::new([Scripted::Reply(
            r#"[["Marie Curie", "born in", "Warsaw"]]"#.into(),
            Some(Usage {
                prompt_tokens: 120,
                completion_tokens: 14,
            }),
        )]));
        let x = fast(llm.clone(), 3);
        let e = x.extract("Marie Curie was born in Warsaw.").await.unwrap();
        assert_eq!(e.triplets, [t("Marie Curie", "born in", "Warsaw")]);
        assert_eq!((e.tokens_in, e.tokens_out), (120, 14));
        let reqs = llm.requests.lock().unwrap();
        assert_eq!(reqs[0].temperature, 0.0);
        assert!(reqs[0].messages[1]
            .content
            .ends_with("Marie Curie was born in Warsaw."));
        assert_eq!(x.concurrency(), 15);
        assert_eq!(x.identity().model, "scripted@test");
    }

    #[tokio::test]
    async fn unparseable_reply_is_a_failure_with_its_tokens() {
        let llm = Arc::new(ScriptedLlm::new([reply("Sorry, no.")]));
        let x = fast(llm.clone(), 3);
        match x.extract("text").await {
            Err(CorpusError::Extraction {
                message, tokens_in, ..
            }) => {
                assert!(message.contains("unparseable"), "{message}");
                assert!(tokens_in > 0);
            }
            other => panic!("expected a failure, got {other:?}"),
        }
        // Not retried: the same prompt at temperature 0 gives the same reply.
        assert_eq!(llm.calls(), 1);
    }

    #[tokio::test]
    async fn retryable_failure_is_retried_then_succeeds() {
        let llm = Arc::new(ScriptedLlm::new([
            Scripted::Fail(LlmErrorKind::Retryable, "429".into()),
            Scripted::Fail(LlmErrorKind::Retryable, "503".into()),
            reply(r#"[["A", "r", "B"]]"#),
        ]));
        let e = fast(llm.clone(), 3).extract("A r B").await.unwrap();
        assert_eq!(e.triplets, [t("A", "r", "B")]);
        assert_eq!(llm.calls(), 3);
    }

    #[tokio::test]
    async fn retry_limit_and_fatal_errors_are_respected() {
        let llm = Arc::new(ScriptedLlm::new([
            Scripted::Fail(LlmErrorKind::Retryable, "429".into()),
            Scripted::Fail(LlmErrorKind::Retryable, "429".into()),
            Scripted::Fail(LlmErrorKind::Retryable, "429".into()),
            reply(r#"[["A", "r", "B"]]"#),
        ]));
        let err = fast(llm.clone(), 3).extract("x").await.unwrap_err();
        assert!(
            err.to_string().contains("gave up after 3 attempts"),
            "{err}"
        );
        assert_eq!(llm.calls(), 3);

        let llm = Arc::new(ScriptedLlm::new([
            Scripted::Fail(LlmErrorKind::Fatal, "401".into()),
            reply("[]"),
        ]));
        assert!(fast(llm.clone(), 3).extract("x").await.is_err());
        assert_eq!(llm.calls(), 1, "a fatal error is not retried");
    }

    #[tokio::test]
    async fn query_entities_parse_a_string_array() {
        let llm = Arc::new(ScriptedLlm::new([reply(
            "```json\n[\"Marie Curie\", \"Warsaw\", 1867]\n```",
        )]));
        let (e, tin, _) = fast(llm, 1)
            .query_entities("Where was Marie Curie born in 1867?")
            .await
            .unwrap();
        assert_eq!(e, ["Marie Curie", "Warsaw", "1867"]);
        assert!(tin > 0);
    }
}
