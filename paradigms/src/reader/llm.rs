//! The LLM reader: one generation prompt for every paradigm, and a direct prompt for LLM-only.

use std::sync::Arc;

use async_trait::async_trait;
use bench_core::{ChatMessage, ChatRequest, ContextChunk, Generation, Llm, QueryType, Reader};

/// Version of the prompts below; stored in the reader's identity so cached or stored results
/// never mix prompt versions.
pub const PROMPT_VERSION: &str = "gen-v1";

const SYSTEM_WITH_CONTEXT: &str = "You answer questions from the numbered passages you are \
given. Use only facts stated in them. If they do not contain the answer, say that you cannot \
answer. Be brief: a short phrase for factual questions, a few sentences for summaries.";

const SYSTEM_DIRECT: &str = "You answer questions from your own knowledge. Be brief: a short \
phrase for factual questions, a few sentences for summaries.";

/// A `Reader` backed by any chat LLM.
#[derive(Clone)]
pub struct LlmReader {
    llm: Arc<dyn Llm>,
    /// Temperature with context (0.3) and without (LLM-only, 0.7).
    pub temperature: f32,
    /// Temperature of answers without context.
    pub direct_temperature: f32,
    /// Largest answer, in tokens.
    pub max_tokens: u32,
    /// Ask for each answer token's log-probability and this many alternatives (the answer
    /// probe's token-level confidence); `None`: plain requests.
    pub logprobs: Option<u8>,
}

impl std::fmt::Debug for LlmReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmReader")
            .field("llm", &self.llm.identity())
            .field("temperature", &self.temperature)
            .finish()
    }
}

impl LlmReader {
    /// A reader calling `llm` with the generation settings `cfg`.
    pub fn new(llm: Arc<dyn Llm>, cfg: &bench_core::config::GenerationConfig) -> Self {
        LlmReader {
            llm,
            temperature: cfg.temperature,
            direct_temperature: cfg.llm_only_temperature,
            max_tokens: cfg.max_tokens,
            logprobs: None,
        }
    }

    /// This reader asking for `top` log-probability alternatives per answer token (`None`:
    /// plain requests).
    pub fn with_logprobs(mut self, top: Option<u8>) -> Self {
        self.logprobs = top;
        self
    }

    /// The request for a question and its context (empty context: the direct prompt).
    pub fn request(
        &self,
        question: &str,
        qtype: QueryType,
        context: &[ContextChunk<'_>],
    ) -> ChatRequest {
        let kind = format!("Question type: {qtype}.");
        if context.is_empty() {
            return ChatRequest {
                messages: vec![
                    ChatMessage::system(SYSTEM_DIRECT),
                    ChatMessage::user(format!("{kind}\nQuestion: {question}\nAnswer:")),
                ],
                temperature: self.direct_temperature,
                max_tokens: self.max_tokens,
                json: false,
            };
        }
        let mut passages = String::new();
        for c in context {
            passages.push_str(&format!("[{}] {}\n\n", c.rank + 1, c.text.trim()));
        }
        ChatRequest {
            messages: vec![
                ChatMessage::system(SYSTEM_WITH_CONTEXT),
                ChatMessage::user(format!(
                    "Passages:\n{passages}{kind}\nQuestion: {question}\nAnswer:"
                )),
            ],
            temperature: self.temperature,
            max_tokens: self.max_tokens,
            json: false,
        }
    }
}

#[async_trait]
impl Reader for LlmReader {
    fn identity(&self) -> String {
        format!("llm-reader[{PROMPT_VERSION}]:{}", self.llm.identity())
    }

    async fn answer(
        &self,
        question: &str,
        qtype: QueryType,
        context: &[ContextChunk<'_>],
    ) -> bench_core::Result<Generation> {
        let request = self.request(question, qtype, context);
        let (response, logprobs) = match self.logprobs {
            None => (self.llm.chat(&request).await?, None),
            Some(top) => self.llm.chat_logprobs(&request, top).await?,
        };
        let (tokens_in, tokens_out, token_source) = response.token_bill(&request);
        Ok(Generation {
            text: response.content.trim().to_owned(),
            tokens_in,
            tokens_out,
            token_source,
            confidence: logprobs.as_deref().and_then(bench_core::Confidence::of),
        })
    }
}
