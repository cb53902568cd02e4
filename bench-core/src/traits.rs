//! The plug-in traits: each has one or two required methods and defaults for the rest.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::record::{JudgeLabel, ParadigmOutput, RetrievedChunk, TokenSource};
use crate::types::{ParadigmId, Query, QueryType};

/// Row-major matrix of embedding vectors.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Embeddings {
    /// Length of each vector (the number of columns).
    pub dim: usize,
    /// The vectors one after another: row `i` is `data[i * dim..(i + 1) * dim]`.
    pub data: Vec<f32>,
}

impl Embeddings {
    /// The matrix of `data` cut into rows of `dim`. Panics when `dim` is 0 or does not divide
    /// `data`'s length.
    pub fn new(dim: usize, data: Vec<f32>) -> Self {
        assert!(
            dim > 0 && data.len().is_multiple_of(dim),
            "data is not a multiple of dim"
        );
        Embeddings { dim, data }
    }

    /// Number of vectors (rows).
    pub fn len(&self) -> usize {
        self.data.len().checked_div(self.dim).unwrap_or(0)
    }

    /// Whether there are no vectors.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Vector `i`; panics when `i` is out of range.
    pub fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.dim..(i + 1) * self.dim]
    }

    /// The vectors in row order.
    pub fn rows(&self) -> impl Iterator<Item = &[f32]> {
        self.data.chunks_exact(self.dim.max(1))
    }
}

/// A sentence encoder: text in, L2-normalised vectors out.
pub trait Embedder: Send + Sync {
    /// Identity recorded with results and used in cache keys (model and weights hash).
    fn name(&self) -> &str;
    /// Length of the vectors it returns.
    fn dim(&self) -> usize;
    /// Embeds a batch; row `i` is the vector of `texts[i]`, unit length.
    fn embed(&self, texts: &[&str]) -> Result<Embeddings>;

    /// Embeds one text.
    fn embed_one(&self, text: &str) -> Result<Vec<f32>> {
        Ok(self.embed(&[text])?.data)
    }
}

/// An embedder whose per-token outputs are available: semantic F1 reads token embeddings, and
/// coverage the sentence vectors of the same forward pass.
pub trait TokenEncoder: Embedder {
    /// Per text: one unnormalised row per wordpiece (specials dropped) and its pooled, unit
    /// sentence vector, both from one pass.
    fn tokens_and_sentences(&self, texts: &[&str]) -> Result<Vec<(Embeddings, Vec<f32>)>>;
}

/// A question as a retriever sees it: its text and, when already computed, its vector.
#[derive(Debug, Clone, Copy)]
pub struct RetrievalQuery<'a> {
    /// The question text.
    pub text: &'a str,
    /// Its sentence embedding, when the caller has it (a dense retriever embeds `text` if not).
    pub vector: Option<&'a [f32]>,
}

/// Ranked chunks plus whatever the retrieval itself cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Retrieval {
    /// Best first; `chunk_id` values are `Chunk::id`.
    pub ranked: Vec<RetrievedChunk>,
    /// LLM tokens spent while retrieving (entity extraction and the like).
    pub tokens_in: u64,
    /// LLM tokens received while retrieving.
    pub tokens_out: u64,
    /// Retriever-specific trace (seeds, scores, ...) for the tuple's record; `null` when none.
    pub trace: serde_json::Value,
}

/// A retriever primitive (NaiveRetriever, GraphRetriever, fusions of them).
#[async_trait]
pub trait Retriever: Send + Sync {
    /// A stable name, recorded in traces.
    fn name(&self) -> &str;
    /// The chunks ranked for `query`, best first, with what retrieving cost.
    async fn retrieve(&self, query: RetrievalQuery<'_>) -> Result<Retrieval>;
}

/// A chunk handed to a reader.
#[derive(Debug, Clone, Copy)]
pub struct ContextChunk<'a> {
    /// The chunk's [`Chunk::id`](crate::Chunk::id).
    pub chunk_id: &'a str,
    /// The chunk's text.
    pub text: &'a str,
    /// 0-based position in the context.
    pub rank: usize,
}

/// A reader's answer and its cost.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Generation {
    /// The answer.
    pub text: String,
    /// Tokens sent to produce it (0 for the offline reader).
    pub tokens_in: u64,
    /// Tokens received.
    pub tokens_out: u64,
    /// Where the counts came from.
    pub token_source: TokenSource,
    /// Token-level confidence, when the reader asked for log-probabilities and got them.
    pub confidence: Option<Confidence>,
}

/// One generated token's log-probability and those of the endpoint's top alternatives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenLogprob {
    /// The generated token's log-probability (natural log).
    pub logprob: f64,
    /// The top alternatives' log-probabilities (the chosen token among them), best first.
    pub top: Vec<f64>,
}

/// Token-level confidence of one generation: the mean and minimum log-probability of the
/// generated tokens, and the mean entropy (nats) of each position's top alternatives
/// renormalised to sum 1 (an approximation from the `top_logprobs` the endpoint returns).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Confidence {
    /// Mean log-probability of the generated tokens.
    pub mean_logprob: f64,
    /// Lowest log-probability of a generated token.
    pub min_logprob: f64,
    /// Mean entropy (nats) of the positions' renormalised top alternatives.
    pub entropy: f64,
    /// Generated tokens measured.
    pub tokens: u64,
}

impl Confidence {
    /// The confidence of `tokens`; `None` for an empty generation.
    pub fn of(tokens: &[TokenLogprob]) -> Option<Confidence> {
        if tokens.is_empty() {
            return None;
        }
        let n = tokens.len() as f64;
        let entropy = |t: &TokenLogprob| {
            let max = t.top.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if !max.is_finite() {
                return 0.0;
            }
            let z: f64 = t.top.iter().map(|l| (l - max).exp()).sum();
            -t.top
                .iter()
                .map(|l| (l - max).exp() / z)
                .filter(|&p| p > 0.0)
                .map(|p| p * p.ln())
                .sum::<f64>()
        };
        Some(Confidence {
            mean_logprob: tokens.iter().map(|t| t.logprob).sum::<f64>() / n,
            min_logprob: tokens
                .iter()
                .map(|t| t.logprob)
                .fold(f64::INFINITY, f64::min),
            entropy: tokens.iter().map(entropy).sum::<f64>() / n,
            tokens: tokens.len() as u64,
        })
    }
}

/// The answering step: question and context in, answer out (an LLM or the offline reader).
#[async_trait]
pub trait Reader: Send + Sync {
    /// Identity recorded with results.
    fn identity(&self) -> String;
    /// Answers `question` from `context`; an empty context means answer from parametric knowledge.
    async fn answer(
        &self,
        question: &str,
        qtype: QueryType,
        context: &[ContextChunk<'_>],
    ) -> Result<Generation>;
}

/// A judge's verdict and its cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The label.
    pub label: JudgeLabel,
    /// Tokens the judge sent (0 for the offline judge).
    pub tokens_in: u64,
    /// Tokens the judge received.
    pub tokens_out: u64,
}

/// Labels a response against the gold answers.
#[async_trait]
pub trait Judge: Send + Sync {
    /// Identity recorded with results.
    fn identity(&self) -> String;
    /// Labels `response` to `query` against its gold answers.
    async fn judge(&self, query: &Query, response: &str) -> Result<Verdict>;

    /// Labels a response given the context the paradigm delivered (its chunks in context order,
    /// after the budget cut). Judges of the response alone ignore the context (the default); the
    /// offline "answer delivered" judge looks only at the context.
    async fn judge_in_context(
        &self,
        query: &Query,
        response: &str,
        _context: &[ContextChunk<'_>],
    ) -> Result<Verdict> {
        self.judge(query, response).await
    }

    /// Which of the judge's rules labels this query's tuples (the offline judge has several:
    /// decisions.md), recorded in each tuple's trace; `None` for a judge with one rule.
    fn rule(&self, _query: &Query) -> Option<&'static str> {
        None
    }
}

/// A RAG paradigm: runs one query end to end (retrieve, read), never judging itself.
#[async_trait]
pub trait Paradigm: Send + Sync {
    /// Which paradigm this is.
    fn id(&self) -> ParadigmId;
    /// `vector` is the query's embedding, computed once per query by the harness.
    async fn run(&self, query: &Query, vector: &[f32]) -> Result<ParadigmOutput>;

    /// Settings that change this paradigm's behaviour beyond the shared configuration.
    fn settings(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
}

/// Chat roles of the OpenAI-compatible API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions that frame the conversation.
    System,
    /// The caller's turn.
    User,
    /// The model's turn.
    Assistant,
}

/// One message of a chat request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: String,
}

impl ChatMessage {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        ChatMessage {
            role: Role::System,
            content: content.into(),
        }
    }
    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        ChatMessage {
            role: Role::User,
            content: content.into(),
        }
    }
}

/// One chat completion request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The conversation, in order.
    pub messages: Vec<ChatMessage>,
    /// Sampling temperature.
    pub temperature: f32,
    /// Largest reply, in tokens.
    pub max_tokens: u32,
    /// Ask for a JSON reply.
    pub json: bool,
}

/// Token usage as an endpoint reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens of the request.
    pub prompt_tokens: u64,
    /// Tokens of the reply.
    pub completion_tokens: u64,
}

/// One chat completion reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// The reply's text.
    pub content: String,
    /// `None` when the endpoint reported no usage (then callers count with cl100k).
    pub usage: Option<Usage>,
}

impl ChatResponse {
    /// Tokens in and out, from `usage` when present, else counted over the request and reply.
    pub fn token_bill(&self, request: &ChatRequest) -> (u64, u64, TokenSource) {
        match self.usage {
            Some(u) => (u.prompt_tokens, u.completion_tokens, TokenSource::Usage),
            None => {
                let sent: u64 = request
                    .messages
                    .iter()
                    .map(|m| crate::tokens::count(&m.content))
                    .sum();
                (
                    sent,
                    crate::tokens::count(&self.content),
                    TokenSource::Cl100k,
                )
            }
        }
    }
}

/// A caller's check that a reply's content is one it can read (see `Llm::chat_readable`).
pub type ReplyCheck = dyn for<'s> Fn(&'s str) -> bool + Sync;

/// A chat-completion LLM (the OpenAI-compatible client, or a scripted one in tests).
#[async_trait]
pub trait Llm: Send + Sync {
    /// `model@base_url`: recorded with results; never contains a key.
    fn identity(&self) -> String;
    /// Sends `request` and returns the reply (with `usage` when the endpoint reports it).
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse>;

    /// `chat`, also asking the endpoint for each generated token's log-probability and its
    /// `top` best alternatives (OpenAI's `logprobs` / `top_logprobs`); `None` when the endpoint
    /// returns none. An LLM that cannot ask for them answers as `chat` does.
    async fn chat_logprobs(
        &self,
        request: &ChatRequest,
        top: u8,
    ) -> Result<(ChatResponse, Option<Vec<TokenLogprob>>)> {
        let _ = top;
        Ok((self.chat(request).await?, None))
    }

    /// `chat`, taking only a reply whose content `readable` accepts (the caller's own parser);
    /// any other is an error of kind `Unparseable`. A client that retries counts such a reply as
    /// a failed attempt, and a cache stores only readable replies, so a garbled reply is
    /// retried, never kept. Wrappers must forward this method, not only `chat`.
    async fn chat_readable(
        &self,
        request: &ChatRequest,
        readable: &ReplyCheck,
    ) -> Result<ChatResponse> {
        let response = self.chat(request).await?;
        if readable(&response.content) {
            Ok(response)
        } else {
            Err(crate::BenchError::Llm {
                kind: crate::LlmErrorKind::Unparseable,
                message: unreadable_message(&response.content),
            })
        }
    }
}

/// The error text of a reply its caller cannot read: the reply's first 200 characters.
pub fn unreadable_message(content: &str) -> String {
    let head: String = content.chars().take(200).collect();
    let more = if head.len() < content.len() {
        "…"
    } else {
        ""
    };
    format!("the reply is not in the form asked for: {head:?}{more}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_bill_prefers_usage_and_counts_otherwise() {
        let req = ChatRequest {
            messages: vec![ChatMessage::user("hello world")],
            temperature: 0.0,
            max_tokens: 10,
            json: false,
        };
        let with = ChatResponse {
            content: "hi".into(),
            usage: Some(Usage {
                prompt_tokens: 7,
                completion_tokens: 3,
            }),
        };
        assert_eq!(with.token_bill(&req), (7, 3, TokenSource::Usage));
        let without = ChatResponse {
            content: "hello world".into(),
            usage: None,
        };
        assert_eq!(without.token_bill(&req), (2, 2, TokenSource::Cl100k));
    }

    #[test]
    fn embeddings_rows() {
        let e = Embeddings::new(2, vec![1.0, 0.0, 0.0, 1.0, 0.6, 0.8]);
        assert_eq!(e.len(), 3);
        assert_eq!(e.row(2), &[0.6, 0.8]);
        assert_eq!(e.rows().count(), 3);
    }
}
