//! IterativeRAG, the paper's Algorithm 3: answer directly, self-evaluate, then retrieve for a
//! sub-question, answer the original question from the accumulated context, and repeat until
//! the answer is sufficient, no sub-question comes, a sub-question repeats, or rounds run out.
//! A self-evaluation whose reply cannot be read (after the client's retries) also ends the loop,
//! keeping the answer so far: the loop's condition cannot be evaluated, and failing the tuple
//! would drop the paradigm from routing data for a weakness of the evaluator alone. The stop
//! reason `evaluation-unreadable` and the reply's error are in the trace, and `bench` counts them.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use bench_core::{
    ChatMessage, ChatRequest, ContextChunk, Generation, Llm, Paradigm, ParadigmId, ParadigmOutput,
    PhaseLatency, PhaseTokens, Query, Reader, Retrieval, RetrievalQuery, RetrievedChunk, Retriever,
    TokenSource,
};
use serde::{Deserialize, Serialize};

use crate::chunks::{context_chunks, fit_budget, ChunkTable};
use crate::reader::OfflineReader;
use crate::toolkit::{CallBounds, Evaluation, Evaluator, Registered, Toolkit};

/// Entities of a text (the offline extractor's rule, supplied by the caller).
pub type EntityFn = Arc<dyn Fn(&str) -> Vec<String> + Send + Sync>;

/// The offline evaluator of decisions.md.
pub struct OfflineEvaluator {
    /// The offline reader, whose IDF weights measure how much of the question an answer covers.
    pub reader: Arc<OfflineReader>,
    /// Finds the entities of a text (the offline extractor's rule).
    pub entities: EntityFn,
    /// Share of the question's IDF mass the answer must cover.
    pub min_coverage: f64,
}

impl std::fmt::Debug for OfflineEvaluator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OfflineEvaluator")
            .field("min_coverage", &self.min_coverage)
            .finish()
    }
}

fn lower_set(v: Vec<String>) -> std::collections::HashSet<String> {
    v.into_iter().map(|e| e.to_lowercase()).collect()
}

impl OfflineEvaluator {
    /// The context entity the question lacks that the most chunks mention (then most
    /// mentions, then first seen): the "most central" one.
    fn central_missing_entity(
        &self,
        question: &str,
        context: &[ContextChunk<'_>],
    ) -> Option<String> {
        let asked = lower_set((self.entities)(question));
        let mut stats: HashMap<String, (usize, usize, usize, String)> = HashMap::new();
        let mut order = 0;
        for c in context {
            let mut in_chunk = std::collections::HashSet::new();
            for e in (self.entities)(c.text) {
                let key = e.to_lowercase();
                if asked.contains(&key) || question.to_lowercase().contains(&key) {
                    continue;
                }
                let s = stats.entry(key.clone()).or_insert_with(|| {
                    order += 1;
                    (0, 0, order, e.clone())
                });
                s.1 += 1;
                if in_chunk.insert(key) {
                    s.0 += 1;
                }
            }
        }
        stats
            .into_values()
            .max_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)).then(b.2.cmp(&a.2)))
            .map(|s| s.3)
    }
}

#[async_trait]
impl Evaluator for OfflineEvaluator {
    fn identity(&self) -> String {
        format!("offline-evaluator(coverage>={})", self.min_coverage)
    }

    async fn evaluate(
        &self,
        question: &str,
        answer: &str,
        context: &[ContextChunk<'_>],
    ) -> bench_core::Result<Evaluation> {
        let coverage = self.reader.idf_coverage(question, answer);
        let asked = lower_set((self.entities)(question));
        let new_entity = (self.entities)(answer)
            .into_iter()
            .find(|e| !asked.contains(&e.to_lowercase()));
        let sufficient =
            !answer.trim().is_empty() && coverage >= self.min_coverage && new_entity.is_some();
        let sub_question = if sufficient {
            None
        } else {
            Some(match self.central_missing_entity(question, context) {
                Some(e) => format!("{question} {e}"),
                None => question.to_owned(),
            })
        };
        Ok(Evaluation {
            sufficient,
            reason: format!(
                "coverage {coverage:.2} (need {}), new entity: {}",
                self.min_coverage,
                new_entity.as_deref().unwrap_or("none")
            ),
            sub_question,
            tokens_in: 0,
            tokens_out: 0,
        })
    }
}

/// Version of the self-evaluation prompt.
pub const EVAL_PROMPT_VERSION: &str = "eval-v1";

const EVAL_SYSTEM: &str = "You check whether an answer fully and correctly answers a question, \
given the passages it was based on. Reply with one JSON object and nothing else: \
{\"sufficient\": true or false, \"reason\": \"one sentence\", \"sub_question\": \"the one \
question whose answer is still missing, or null\"}.";

/// The LLM self-evaluator (paper Figure 16, in this project's words).
pub struct LlmEvaluator {
    /// The endpoint that evaluates.
    pub llm: Arc<dyn Llm>,
    /// Sampling temperature of its calls.
    pub temperature: f32,
}

impl std::fmt::Debug for LlmEvaluator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmEvaluator")
            .field("llm", &self.llm.identity())
            .finish()
    }
}

/// The first JSON object in a reply, tolerating code fences and prose around it.
pub fn extract_json_object(reply: &str) -> Option<serde_json::Value> {
    let start = reply.find('{')?;
    let end = reply.rfind('}')?;
    if end < start {
        return None;
    }
    serde_json::from_str(&reply[start..=end]).ok()
}

#[async_trait]
impl Evaluator for LlmEvaluator {
    fn identity(&self) -> String {
        format!(
            "llm-evaluator[{EVAL_PROMPT_VERSION}]:{}",
            self.llm.identity()
        )
    }

    async fn evaluate(
        &self,
        question: &str,
        answer: &str,
        context: &[ContextChunk<'_>],
    ) -> bench_core::Result<Evaluation> {
        let mut passages = String::new();
        for c in context {
            passages.push_str(&format!("[{}] {}\n\n", c.rank + 1, c.text.trim()));
        }
        let request = ChatRequest {
            messages: vec![
                ChatMessage::system(EVAL_SYSTEM),
                ChatMessage::user(format!(
                    "Passages:\n{passages}Question: {question}\nAnswer: {answer}\nJSON:"
                )),
            ],
            temperature: self.temperature,
            max_tokens: 300,
            json: true,
        };
        // Only a reply that states `sufficient` is taken (and cached); another is retried.
        let readable = |c: &str| {
            extract_json_object(c)
                .is_some_and(|v| v.get("sufficient").is_some_and(|s| s.is_boolean()))
        };
        let response = self.llm.chat_readable(&request, &readable).await?;
        let (tokens_in, tokens_out, _) = response.token_bill(&request);
        let unparseable = || bench_core::BenchError::Llm {
            kind: bench_core::LlmErrorKind::Unparseable,
            message: format!(
                "self-evaluation reply is not the expected JSON: {:?}",
                response.content.chars().take(200).collect::<String>()
            ),
        };
        let v = extract_json_object(&response.content).ok_or_else(unparseable)?;
        let sufficient = v
            .get("sufficient")
            .and_then(serde_json::Value::as_bool)
            .ok_or_else(unparseable)?;
        Ok(Evaluation {
            sufficient,
            reason: v
                .get("reason")
                .and_then(|r| r.as_str())
                .unwrap_or_default()
                .to_owned(),
            sub_question: v
                .get("sub_question")
                .and_then(|s| s.as_str())
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
            tokens_in,
            tokens_out,
        })
    }
}

/// Why the loop stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    /// The evaluator judged the answer sufficient.
    Sufficient,
    /// The evaluator proposed no sub-question.
    NoSubQuestion,
    /// The evaluator proposed a sub-question already asked.
    RepeatedSubQuestion,
    /// The round limit was reached.
    MaxRounds,
    /// The evaluator's reply could not be read.
    EvaluationUnreadable,
}

/// The evaluator's verdict, or for an unreadable reply a not-sufficient verdict whose reason is
/// the error and `true` (the loop stops there). Other failures stay errors.
async fn evaluate_or_stop(
    evaluator: &dyn Evaluator,
    question: &str,
    answer: &str,
    context: &[ContextChunk<'_>],
) -> bench_core::Result<(Evaluation, bool)> {
    match evaluator.evaluate(question, answer, context).await {
        Ok(e) => Ok((e, false)),
        Err(bench_core::BenchError::Llm {
            kind: bench_core::LlmErrorKind::Unparseable,
            message,
        }) => Ok((
            Evaluation {
                sufficient: false,
                reason: format!("unreadable self-evaluation: {message}"),
                sub_question: None,
                tokens_in: 0,
                tokens_out: 0,
            },
            true,
        )),
        Err(e) => Err(e),
    }
}

/// One round of the trace.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Round {
    /// The round's number, from 0.
    pub round: usize,
    /// The query retrieved for (round 0 retrieves nothing).
    pub query: String,
    /// Ids of the chunks this round added.
    pub new_chunks: Vec<String>,
    /// Chunks in the context after this round.
    pub context_chunks: usize,
    /// The answer of this round.
    pub answer: String,
    /// The evaluator's verdict on it.
    pub evaluation: Evaluation,
    /// Prompt tokens the round spent.
    pub tokens_in: u64,
    /// Reply tokens the round spent.
    pub tokens_out: u64,
}

/// IterativeRAG in the registry, over dense retrieval. Round 0 answers directly and
/// self-evaluates; each later round reads the context and self-evaluates over it.
pub const ITERATIVE: Registered = Registered {
    id: ParadigmId::Iterative,
    faithfulness: false,
    build: |kit| Ok(iterate_with(kit, ParadigmId::Iterative, kit.dense())),
    cost: |s| {
        let (d, c, m, sh, r) = (s.direct, s.with_context, s.answer, s.short_reply, s.rounds);
        CallBounds {
            min_calls: 2,
            max_calls: 2 + 2 * r,
            input: d + (d + m) + r * (c + c + m),
            output: m + sh + r * (m + sh),
        }
    },
};

/// The iterative loop over graph retrieval: each later round also extracts the sub-question's
/// entities.
pub const ITERATIVE_GRAPH: Registered = Registered {
    id: ParadigmId::IterativeGraph,
    faithfulness: false,
    build: |kit| Ok(iterate_with(kit, ParadigmId::IterativeGraph, kit.graph()?)),
    cost: |s| {
        let (d, c, m, sh, r) = (s.direct, s.with_context, s.answer, s.short_reply, s.rounds);
        CallBounds {
            min_calls: 2,
            max_calls: 2 + 3 * r,
            input: d + (d + m) + r * (d + c + c + m),
            output: m + sh + r * (sh + m + sh),
        }
    },
};

fn iterate_with(
    kit: &dyn Toolkit,
    id: ParadigmId,
    retriever: Arc<dyn Retriever>,
) -> Arc<dyn Paradigm> {
    Arc::new(Iterative {
        id,
        retriever,
        reader: kit.reader(),
        evaluator: kit.evaluator(),
        chunks: kit.chunks(),
        budget: kit.config().retrieval.context_budget,
        max_rounds: kit.config().iterative.max_rounds,
    })
}

/// Algorithm 3 over any base retriever (`iterative`: dense; `iterative-graph`: graph).
pub struct Iterative {
    /// Which paradigm this is (Iterative or Iterative-Graph).
    pub id: ParadigmId,
    /// Retrieves for the question and each sub-question.
    pub retriever: Arc<dyn Retriever>,
    /// Answers from the context gathered so far.
    pub reader: Arc<dyn Reader>,
    /// Judges each answer and proposes the next sub-question.
    pub evaluator: Arc<dyn Evaluator>,
    /// The corpus's chunks.
    pub chunks: Arc<ChunkTable>,
    /// Context token budget.
    pub budget: u64,
    /// At most this many rounds.
    pub max_rounds: usize,
}

impl std::fmt::Debug for Iterative {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Iterative")
            .field("id", &self.id)
            .field("retriever", &self.retriever.name())
            .field("max_rounds", &self.max_rounds)
            .finish()
    }
}

/// Union of the accumulated and new chunks, best score first (ties: earlier first).
fn merge(accum: &mut Vec<RetrievedChunk>, new: &[RetrievedChunk]) -> Vec<String> {
    let mut added = Vec::new();
    for c in new {
        match accum.iter_mut().find(|a| a.chunk_id == c.chunk_id) {
            Some(a) => a.score = a.score.max(c.score),
            None => {
                added.push(c.chunk_id.clone());
                accum.push(c.clone());
            }
        }
    }
    // Stable sort keeps earlier rounds first among equal scores.
    accum.sort_by(|a, b| b.score.total_cmp(&a.score));
    added
}

/// What one run accumulates: its cost, the latest answer and its context, and the rounds.
#[derive(Default)]
struct RunState {
    tokens: PhaseTokens,
    source: Option<TokenSource>,
    latency: PhaseLatency,
    rounds: Vec<Round>,
    answer: String,
    context: Vec<RetrievedChunk>,
    context_tokens: u64,
}

/// What a round's self-evaluation decides about the next one.
struct Verdict {
    sufficient: bool,
    unreadable: bool,
    sub_question: Option<String>,
}

impl Iterative {
    /// Generate: answers `q` from `ctx`, timed from `started`, counting its tokens.
    async fn generate(
        &self,
        st: &mut RunState,
        query: &Query,
        ctx: &[ContextChunk<'_>],
        started: Instant,
    ) -> bench_core::Result<Generation> {
        let a = self.reader.answer(&query.text, query.qtype, ctx).await?;
        st.latency.generation_ms += started.elapsed().as_secs_f64() * 1e3;
        st.tokens.generation_in += a.tokens_in;
        st.tokens.generation_out += a.tokens_out;
        st.source = Some(
            st.source
                .map_or(a.token_source, |s| s.merge(a.token_source)),
        );
        Ok(a)
    }

    /// Self-evaluate: judges `answer` to `q` from `ctx` (counted as retrieval, as the paper
    /// does); the flag says the reply could not be read.
    async fn self_evaluate(
        &self,
        st: &mut RunState,
        q: &str,
        answer: &str,
        ctx: &[ContextChunk<'_>],
    ) -> bench_core::Result<(Evaluation, bool)> {
        let t = Instant::now();
        let (e, unreadable) = evaluate_or_stop(self.evaluator.as_ref(), q, answer, ctx).await?;
        st.latency.retrieval_ms += t.elapsed().as_secs_f64() * 1e3;
        st.tokens.retrieval_in += e.tokens_in;
        st.tokens.retrieval_out += e.tokens_out;
        Ok((e, unreadable))
    }

    /// Retrieve: the chunks for `q_curr` merged into `accum`; returns the retrieval, the ids
    /// it added, and the accumulated chunks that fit the budget with their tokens.
    async fn retrieve_into(
        &self,
        st: &mut RunState,
        query: &Query,
        vector: &[f32],
        q_curr: &str,
        accum: &mut Vec<RetrievedChunk>,
    ) -> bench_core::Result<(Retrieval, Vec<String>, Vec<RetrievedChunk>, u64)> {
        let t = Instant::now();
        let r = self
            .retriever
            .retrieve(RetrievalQuery {
                text: q_curr,
                // The harness embedded the original question; sub-questions get embedded.
                vector: (q_curr == query.text).then_some(vector),
            })
            .await?;
        st.tokens.retrieval_in += r.tokens_in;
        st.tokens.retrieval_out += r.tokens_out;
        let added = merge(accum, &r.ranked);
        let (kept, used) = fit_budget(accum, &self.chunks, self.budget)?;
        st.latency.retrieval_ms += t.elapsed().as_secs_f64() * 1e3;
        Ok((r, added, kept, used))
    }

    /// Round 0: the direct answer, no retrieval, and its self-evaluation.
    async fn direct_round(&self, st: &mut RunState, query: &Query) -> bench_core::Result<Verdict> {
        let q = query.text.as_str();
        let a0 = self.generate(st, query, &[], Instant::now()).await?;
        let (e0, unreadable) = self.self_evaluate(st, q, &a0.text, &[]).await?;
        st.answer = a0.text.clone();
        let verdict = Verdict {
            sufficient: e0.sufficient,
            unreadable,
            sub_question: e0.sub_question.clone(),
        };
        st.rounds.push(Round {
            round: 0,
            query: String::new(),
            new_chunks: vec![],
            context_chunks: 0,
            answer: a0.text,
            tokens_in: a0.tokens_in + e0.tokens_in,
            tokens_out: a0.tokens_out + e0.tokens_out,
            evaluation: e0,
        });
        Ok(verdict)
    }

    /// Round `round`: retrieves for `q_curr`, answers the ORIGINAL question from the
    /// accumulated context (which becomes the run's), and self-evaluates that answer.
    async fn retrieval_round(
        &self,
        st: &mut RunState,
        (query, vector): (&Query, &[f32]),
        round: usize,
        q_curr: &str,
        accum: &mut Vec<RetrievedChunk>,
    ) -> bench_core::Result<Verdict> {
        let q = query.text.as_str();
        let (r, added, kept, used) = self.retrieve_into(st, query, vector, q_curr, accum).await?;
        let t = Instant::now();
        let ctx = context_chunks(&kept, &self.chunks)?;
        let a = self.generate(st, query, &ctx, t).await?;
        let (e, unreadable) = self.self_evaluate(st, q, &a.text, &ctx).await?;
        st.answer = a.text.clone();
        st.context = kept;
        st.context_tokens = used;
        let verdict = Verdict {
            sufficient: e.sufficient,
            unreadable,
            sub_question: e.sub_question.clone(),
        };
        st.rounds.push(Round {
            round,
            query: q_curr.to_owned(),
            new_chunks: added,
            context_chunks: st.context.len(),
            answer: a.text,
            tokens_in: a.tokens_in + e.tokens_in + r.tokens_in,
            tokens_out: a.tokens_out + e.tokens_out + r.tokens_out,
            evaluation: e,
        });
        Ok(verdict)
    }

    /// Sub-question rounds from `q_curr` until a verdict ends the loop or rounds run out;
    /// returns why it stopped.
    async fn sub_question_rounds(
        &self,
        st: &mut RunState,
        query: &Query,
        vector: &[f32],
        mut q_curr: String,
    ) -> bench_core::Result<StopReason> {
        let mut history = vec![query.text.clone()];
        let mut accum: Vec<RetrievedChunk> = Vec::new();
        for round in 1..=self.max_rounds {
            let v = self
                .retrieval_round(st, (query, vector), round, &q_curr, &mut accum)
                .await?;
            if v.sufficient {
                return Ok(StopReason::Sufficient);
            }
            if v.unreadable {
                return Ok(StopReason::EvaluationUnreadable);
            }
            let Some(next) = v.sub_question else {
                return Ok(StopReason::NoSubQuestion);
            };
            if history.contains(&next) {
                return Ok(StopReason::RepeatedSubQuestion);
            }
            history.push(next.clone());
            q_curr = next;
        }
        Ok(StopReason::MaxRounds)
    }
}

#[async_trait]
impl Paradigm for Iterative {
    fn id(&self) -> ParadigmId {
        self.id
    }

    async fn run(&self, query: &Query, vector: &[f32]) -> bench_core::Result<ParadigmOutput> {
        let mut st = RunState::default();
        let first = self.direct_round(&mut st, query).await?;
        let stop = if first.sufficient {
            StopReason::Sufficient
        } else if first.unreadable {
            StopReason::EvaluationUnreadable
        } else {
            let q_curr = first.sub_question.unwrap_or_else(|| query.text.clone());
            self.sub_question_rounds(&mut st, query, vector, q_curr)
                .await?
        };
        Ok(ParadigmOutput {
            answer: st.answer,
            context: st.context,
            context_tokens: st.context_tokens,
            tokens: st.tokens,
            token_source: st.source.unwrap_or_default(),
            latency: st.latency,
            trace: serde_json::json!({
                "retriever": self.retriever.name(),
                "evaluator": self.evaluator.identity(),
                "stop": stop,
                "rounds": st.rounds,
            }),
        })
    }

    fn settings(&self) -> serde_json::Value {
        serde_json::json!({
            "retriever": self.retriever.name(),
            "max_rounds": self.max_rounds,
            "budget": self.budget,
        })
    }
}
