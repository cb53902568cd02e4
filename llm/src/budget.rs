//! A token budget shared by a run's LLM clients (`bench --max-tokens`): each call reserves its
//! bound before it is sent, so the budget, counted the same way, is never passed.
//!
//! A call's bound is its prompt counted with cl100k plus its `max_tokens`; the endpoint cannot
//! return more than `max_tokens` tokens, so the call cannot cost more than its bound counted
//! this way. When it comes back the reservation is replaced by what it cost, counted the same way
//! (the prompt, plus the reply's cl100k count capped at `max_tokens`); a call that failed keeps
//! its whole bound (a garbled or late reply may still have been billed). The endpoint's own
//! `usage` is summed beside it, since another tokenizer counts differently: callers show both.
//! A call the budget cannot hold is refused without being sent, and the refusal is recorded in
//! the budget and in the task's [`watch`] scope, so the caller can leave that tuple unwritten.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use bench_core::traits::ReplyCheck;
use bench_core::{BenchError, ChatRequest, ChatResponse, Llm, LlmErrorKind, TokenLogprob};

/// What the calls of this budget have cost so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spent {
    /// Settled calls, counted as the bound is (cl100k prompt + capped cl100k reply).
    pub counted: u64,
    /// Bounds of the calls in flight.
    pub reserved: u64,
    /// Tokens the endpoint reported (`usage`) for the settled calls that had it.
    pub reported: u64,
    /// Calls that came back without `usage`.
    pub unreported: u64,
    /// Calls refused for want of budget.
    pub refused: u64,
}

/// The budget: unlimited until [`TokenBudget::arm`] sets a limit.
#[derive(Debug, Default)]
pub struct TokenBudget {
    limit: Mutex<Option<u64>>,
    spent: Mutex<Spent>,
}

impl TokenBudget {
    /// A new, unlimited budget, shared by the clients that reserve in it.
    pub fn new() -> Arc<Self> {
        Arc::new(TokenBudget::default())
    }

    /// From now on at most `limit` tokens, counted as above; what was spent before is forgotten.
    pub fn arm(&self, limit: u64) {
        *self.limit.lock().expect("budget lock") = Some(limit);
        *self.spent.lock().expect("budget lock") = Spent::default();
    }

    /// The limit set by [`TokenBudget::arm`], if any.
    pub fn limit(&self) -> Option<u64> {
        *self.limit.lock().expect("budget lock")
    }

    /// What the calls have cost so far.
    pub fn spent(&self) -> Spent {
        *self.spent.lock().expect("budget lock")
    }

    /// Whether a call has been refused since the budget was armed.
    pub fn exhausted(&self) -> bool {
        self.spent().refused > 0
    }

    /// Reserves `bound`; false (and a refusal recorded) when it would pass the limit.
    fn reserve(&self, bound: u64) -> bool {
        let limit = self.limit();
        let mut s = self.spent.lock().expect("budget lock");
        if limit.is_some_and(|l| s.counted + s.reserved + bound > l) {
            s.refused += 1;
            return false;
        }
        s.reserved += bound;
        true
    }

    fn settle(&self, bound: u64, counted: u64, reported: Option<u64>) {
        let mut s = self.spent.lock().expect("budget lock");
        s.reserved -= bound;
        s.counted += counted.min(bound);
        match reported {
            Some(r) => s.reported += r,
            None => s.unreported += 1,
        }
    }
}

tokio::task_local! {
    static REFUSED: Arc<AtomicBool>;
}

/// Runs `f` and says whether a budgeted call inside it (on this task) was refused.
pub async fn watch<F: Future>(f: F) -> (F::Output, bool) {
    let flag = Arc::new(AtomicBool::new(false));
    let out = REFUSED.scope(flag.clone(), f).await;
    (out, flag.load(Ordering::Relaxed))
}

/// An LLM whose calls are reserved in a [`TokenBudget`] before they are sent.
#[derive(Debug)]
pub struct Budgeted<L> {
    inner: L,
    budget: Arc<TokenBudget>,
}

impl<L: Llm> Budgeted<L> {
    /// `inner` with its calls reserved in `budget`.
    pub fn new(inner: L, budget: Arc<TokenBudget>) -> Self {
        Budgeted { inner, budget }
    }

    /// The wrapped LLM.
    pub fn inner(&self) -> &L {
        &self.inner
    }
}

/// A call's bound: its prompt counted with cl100k plus its `max_tokens`.
pub fn bound(request: &ChatRequest) -> (u64, u64) {
    let prompt: u64 = request
        .messages
        .iter()
        .map(|m| bench_core::tokens::count(&m.content))
        .sum();
    (prompt, prompt + u64::from(request.max_tokens))
}

#[async_trait]
impl<L: Llm> Llm for Budgeted<L> {
    fn identity(&self) -> String {
        self.inner.identity()
    }

    async fn chat(&self, request: &ChatRequest) -> bench_core::Result<ChatResponse> {
        self.chat_readable(request, &|_| true).await
    }

    async fn chat_readable(
        &self,
        request: &ChatRequest,
        readable: &ReplyCheck,
    ) -> bench_core::Result<ChatResponse> {
        self.reserved(request, self.inner.chat_readable(request, readable))
            .await
    }

    async fn chat_logprobs(
        &self,
        request: &ChatRequest,
        top: u8,
    ) -> bench_core::Result<(ChatResponse, Option<Vec<TokenLogprob>>)> {
        let mut logprobs = None;
        let answer = self
            .reserved(request, async {
                let (r, l) = self.inner.chat_logprobs(request, top).await?;
                logprobs = l;
                Ok(r)
            })
            .await?;
        Ok((answer, logprobs))
    }
}

impl<L: Llm> Budgeted<L> {
    /// Runs `call` inside a reservation of `request`'s bound, settled with what it cost.
    async fn reserved(
        &self,
        request: &ChatRequest,
        call: impl Future<Output = bench_core::Result<ChatResponse>>,
    ) -> bench_core::Result<ChatResponse> {
        let (prompt, bound) = bound(request);
        if !self.budget.reserve(bound) {
            let _ = REFUSED.try_with(|f| f.store(true, Ordering::Relaxed));
            return Err(BenchError::Llm {
                kind: LlmErrorKind::Fatal,
                message: format!(
                    "token budget reached: this call may cost {bound} tokens ({prompt} prompt + \
                     {} max_tokens) and the budget cannot hold it; not sent",
                    request.max_tokens
                ),
            });
        }
        let answer = call.await;
        match &answer {
            Ok(r) => {
                let reply =
                    bench_core::tokens::count(&r.content).min(u64::from(request.max_tokens));
                let reported = r.usage.map(|u| u.prompt_tokens + u.completion_tokens);
                self.budget.settle(bound, prompt + reply, reported);
            }
            Err(_) => self.budget.settle(bound, bound, None),
        }
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::{ChatMessage, Usage};

    /// Replies with a fixed text and reports 7 tokens per call.
    struct Fixed;

    #[async_trait]
    impl Llm for Fixed {
        fn identity(&self) -> String {
            "fixed@test".into()
        }
        async fn chat(&self, _: &ChatRequest) -> bench_core::Result<ChatResponse> {
            Ok(ChatResponse {
                content: "one two three".into(),
                usage: Some(Usage {
                    prompt_tokens: 4,
                    completion_tokens: 3,
                }),
            })
        }
    }

    fn request(max_tokens: u32) -> ChatRequest {
        ChatRequest {
            messages: vec![ChatMessage::user("hello there world")],
            temperature: 0.0,
            max_tokens,
            json: false,
        }
    }

    #[tokio::test]
    async fn calls_are_refused_before_the_budget_could_be_passed() {
        let budget = TokenBudget::new();
        let llm = Budgeted::new(Fixed, budget.clone());
        let (prompt, b) = bound(&request(10));
        assert_eq!(b, prompt + 10);
        // Unarmed: unlimited.
        llm.chat(&request(10)).await.unwrap();
        // Room for two bounds (26): each call costs 3 + 3 = 6 counted, so three are sent and
        // the fourth (18 + 13 > 26) is refused.
        assert_eq!((prompt, b), (3, 13));
        budget.arm(2 * b);
        let (r, refused) = watch(async {
            for _ in 0..3 {
                llm.chat(&request(10)).await.unwrap();
            }
            llm.chat(&request(10)).await
        })
        .await;
        assert!(r.is_err() && refused);
        let s = budget.spent();
        assert_eq!(
            (s.counted, s.reserved, s.reported, s.refused),
            (18, 0, 21, 1)
        );
        // A call whose bound alone passes the budget is never sent.
        budget.arm(b - 1);
        let (r, refused) = watch(llm.chat(&request(10))).await;
        let e = r.unwrap_err().to_string();
        assert!(refused && e.contains("token budget reached"), "{e}");
        assert_eq!(budget.spent().counted, 0);
        assert!(budget.exhausted());
    }
}
