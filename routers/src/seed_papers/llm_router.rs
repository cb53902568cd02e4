//! The LLM router of R2Adapter's router analysis (seed 000, after Han et al. 2025): an LLM labels
//! each question fact-based or reasoning-based; fact → dense passage RAG, reasoning → graph RAG.
//!
//! The seed routes reasoning questions to graph-based RAG, so reasoning goes to `graph` (not to
//! `iterative`); lanes fall back as in [`super::PASSAGE`] / [`super::GRAPH`]. The prompt is this
//! project's own (the seed's template is not reproduced), versioned by [`PROMPT_VERSION`] and
//! named in the router's identity. A reply that says neither label (or both) is not guessed: the
//! row goes to the passage lane, the cheap default that EA-GraphRAG's error handling also uses,
//! and the decision is recorded as [`Decision::Fallback`] with the reply. Every call's tokens are
//! charged through `Router::cost`; a failed call (transport, endpoint) is an error, not a route.

use std::collections::BTreeMap;
use std::sync::Mutex;

use bench_core::{
    BenchError, ChatMessage, ChatRequest, Result, Router, RoutingCost, RoutingRow, RoutingSchema,
    RoutingSet,
};

use super::{charged, chat_blocking, ranked, resolve, row_key, GRAPH, PASSAGE};
use crate::entry::{Family, LlmAccess, RouterContext, RouterEntry};

/// The router's registry name.
pub const NAME: &str = "llm-router";

/// Version of the classification prompt below, stored with every evaluation that ran the router.
pub const PROMPT_VERSION: &str = "route-fact-reasoning-v1";

const SYSTEM: &str = "You sort questions for a retrieval system. A fact question asks for one \
piece of information that a single passage can state: a name, a date, a number, a definition. A \
reasoning question needs several facts to be connected, compared or combined across passages: a \
chain of relations, a comparison, a cause and its effect, a summary. Reply with one word: fact \
or reasoning.";

/// The registry entry.
pub fn entry() -> RouterEntry {
    RouterEntry {
        name: NAME,
        about: "LLM labels fact vs reasoning: fact → naive, reasoning → graph (LLM mode only)",
        family: Family::Seed,
        needs_llm: true,
        sees_outcomes: false,
        lanes: &[("passage", super::PASSAGE), ("graph", super::GRAPH)],
        sweep: &[],
        make: |ctx: &RouterContext, _param| {
            let access = ctx.llm.clone().ok_or_else(|| {
                BenchError::Invalid(
                    "router llm-router needs an LLM: configure an endpoint (LLM mode)".into(),
                )
            })?;
            Ok(Box::new(LlmRouter::new(access)))
        },
    }
}

/// What the LLM said about one question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// A fact question: the passage lane.
    Fact,
    /// A reasoning question: the graph lane.
    Reasoning,
    /// The reply named neither label or both; the row went to the passage lane.
    Fallback {
        /// The LLM's reply as given.
        reply: String,
    },
}

/// Parses a reply: exactly one of the two labels must occur (case and punctuation ignored).
pub fn parse_reply(reply: &str) -> Decision {
    let lower = reply.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let fact = words.iter().any(|w| *w == "fact" || *w == "factual");
    let reasoning = words.contains(&"reasoning");
    match (fact, reasoning) {
        (true, false) => Decision::Fact,
        (false, true) => Decision::Reasoning,
        _ => Decision::Fallback {
            reply: reply.chars().take(200).collect(),
        },
    }
}

/// The LLM router. Decisions and their costs are kept per row, so scoring a row twice calls the
/// LLM once and `cost` reports what that call spent.
#[derive(Debug)]
pub struct LlmRouter {
    access: LlmAccess,
    decided: Mutex<BTreeMap<String, (Decision, RoutingCost)>>,
}

impl LlmRouter {
    /// A router asking `access`'s LLM, with no decision yet.
    pub fn new(access: LlmAccess) -> Self {
        LlmRouter {
            access,
            decided: Mutex::new(BTreeMap::new()),
        }
    }

    /// `llm-router[<prompt version>]:<model@endpoint>`, the name a log or a test gives this
    /// router; a stored evaluation records the prompt version and the model apart.
    #[allow(dead_code)]
    pub fn identity(&self) -> String {
        format!(
            "llm-router[{PROMPT_VERSION}]:{}",
            self.access.llm.identity()
        )
    }

    /// The request for one question.
    pub fn request(question: &str) -> ChatRequest {
        ChatRequest {
            messages: vec![
                ChatMessage::system(SYSTEM),
                ChatMessage::user(format!("Question: {question}\nLabel:")),
            ],
            temperature: 0.0,
            max_tokens: 5,
            json: false,
        }
    }

    /// The decision on a row (calling the LLM the first time).
    pub fn decide(&self, row: &RoutingRow) -> Result<Decision> {
        let key = row_key(row);
        if let Some((d, _)) = self.decided.lock().unwrap().get(&key) {
            return Ok(d.clone());
        }
        let (reply, cost) = chat_blocking(&self.access, &Self::request(&row.text))?;
        let d = parse_reply(&reply);
        self.decided.lock().unwrap().insert(key, (d.clone(), cost));
        Ok(d)
    }

    /// Rows decided so far whose reply was unparseable, as (row key, reply); only the tests
    /// call it so far.
    #[allow(dead_code)]
    pub fn fallbacks(&self) -> Vec<(String, String)> {
        self.decided
            .lock()
            .unwrap()
            .iter()
            .filter_map(|(k, (d, _))| match d {
                Decision::Fallback { reply } => Some((k.clone(), reply.clone())),
                _ => None,
            })
            .collect()
    }
}

impl Router for LlmRouter {
    fn name(&self) -> &str {
        "llm-router"
    }

    fn fit(&mut self, train: &RoutingSet) -> Result<()> {
        resolve(&train.schema, PASSAGE, "llm-router", "passage")?;
        resolve(&train.schema, GRAPH, "llm-router", "graph")?;
        Ok(())
    }

    fn scores(&self, schema: &RoutingSchema, row: &RoutingRow) -> Result<Vec<f64>> {
        let passage = resolve(schema, PASSAGE, "llm-router", "passage")?;
        let graph = resolve(schema, GRAPH, "llm-router", "graph")?;
        let order = match self.decide(row)? {
            Decision::Reasoning => [graph, passage],
            Decision::Fact | Decision::Fallback { .. } => [passage, graph],
        };
        Ok(ranked(schema.n_classes(), &order))
    }

    fn cost(&self, row: &RoutingRow) -> RoutingCost {
        charged(&self.decided, row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed_papers::testutil::{row, schema};
    use bench_core::{ParadigmId as P, Usage};
    use fixtures::{Scripted, ScriptedLlm};
    use std::sync::Arc;

    #[test]
    fn replies_parse_to_one_label_or_a_fallback() {
        assert_eq!(parse_reply("fact"), Decision::Fact);
        assert_eq!(parse_reply(" Reasoning.\n"), Decision::Reasoning);
        assert_eq!(parse_reply("Fact-based"), Decision::Fact);
        assert!(matches!(
            parse_reply("fact or reasoning"),
            Decision::Fallback { .. }
        ));
        assert!(matches!(parse_reply("factoid"), Decision::Fallback { .. }));
        assert_eq!(
            parse_reply("banana"),
            Decision::Fallback {
                reply: "banana".into()
            }
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn routes_fact_reasoning_and_garbage_and_charges_tokens() {
        let llm = Arc::new(ScriptedLlm::new([
            Scripted::Reply(
                "fact".into(),
                Some(Usage {
                    prompt_tokens: 90,
                    completion_tokens: 1,
                }),
            ),
            Scripted::Reply("Reasoning".into(), None),
            Scripted::Reply("I am not sure.".into(), None),
        ]));
        let ctx = RouterContext {
            fits: Default::default(),
            seed: 1,
            llm: Some(LlmAccess {
                llm: llm.clone(),
                handle: tokio::runtime::Handle::current(),
            }),
        };
        let s = schema(&[P::Naive, P::Graph, P::Iterative], 1);
        let rows: Vec<RoutingRow> = ["Who wrote Hamlet?", "Why did the empire fall?", "Hmm?"]
            .iter()
            .enumerate()
            .map(|(i, q)| row(&s, &format!("q{i}"), q, vec![0.0]))
            .collect();
        let (preds, costs, fallbacks, identity) = tokio::task::spawn_blocking(move || {
            assert_eq!((entry().make)(&ctx, None).unwrap().name(), "llm-router");
            let mut r = LlmRouter::new(ctx.llm.clone().unwrap());
            r.fit(&RoutingSet {
                schema: Arc::clone(&s),
                rows: vec![],
            })
            .unwrap();
            let preds: Vec<String> = rows
                .iter()
                .map(|x| s.classes[r.predict(&s, x).unwrap()].clone())
                .collect();
            // Scoring again is answered from the router's memory, not by a fourth call.
            r.scores(&s, &rows[0]).unwrap();
            let costs: Vec<RoutingCost> = rows.iter().map(|x| r.cost(x)).collect();
            (preds, costs, r.fallbacks(), r.identity())
        })
        .await
        .unwrap();
        assert_eq!(preds, vec!["naive", "graph", "naive"]);
        assert_eq!(llm.calls(), 3);
        // Usage when reported; cl100k counts of the request and reply otherwise.
        assert_eq!(
            costs[0],
            RoutingCost {
                tokens_in: 90,
                tokens_out: 1
            }
        );
        let req = LlmRouter::request("Why did the empire fall?");
        let sent: u64 = req
            .messages
            .iter()
            .map(|m| bench_core::tokens::count(&m.content))
            .sum();
        assert_eq!(
            costs[1],
            RoutingCost {
                tokens_in: sent,
                tokens_out: bench_core::tokens::count("Reasoning")
            }
        );
        assert!(
            costs[2].tokens_in > 0
                && costs[2].tokens_out == bench_core::tokens::count("I am not sure.")
        );
        assert_eq!(
            fallbacks,
            vec![("c\u{1f}q2".to_string(), "I am not sure.".to_string())]
        );
        assert!(identity.contains(PROMPT_VERSION) && identity.ends_with("scripted@test"));
        let sent_requests = llm.requests.lock().unwrap();
        assert!(sent_requests[2].messages[1].content.contains("Hmm?"));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn garbage_is_a_recorded_fallback_and_a_failed_call_an_error() {
        let llm = Arc::new(ScriptedLlm::new([
            Scripted::Reply("¯\\_(ツ)_/¯".into(), None),
            Scripted::Fail(bench_core::LlmErrorKind::Retryable, "503".into()),
        ]));
        let access = LlmAccess {
            llm: llm.clone(),
            handle: tokio::runtime::Handle::current(),
        };
        let s = schema(&[P::Naive, P::Graph], 1);
        let (fallbacks, failed) = tokio::task::spawn_blocking(move || {
            let r = LlmRouter::new(access);
            let a = row(
                &s,
                "a",
                "Who was Ada Brook's tutor and Tom Vale's?",
                vec![0.0],
            );
            assert_eq!(r.predict(&s, &a).unwrap(), s.class_of(P::Naive).unwrap());
            let b = row(&s, "b", "Next?", vec![0.0]);
            let failed = r.scores(&s, &b).unwrap_err().to_string();
            assert_eq!(r.cost(&b), RoutingCost::default());
            (r.fallbacks(), failed)
        })
        .await
        .unwrap();
        assert_eq!(fallbacks.len(), 1);
        assert!(fallbacks[0].0.ends_with('a') && fallbacks[0].1.contains("ツ"));
        assert!(failed.contains("503"), "{failed}");
    }

    #[test]
    fn offline_make_is_a_clear_error() {
        let err = (entry().make)(&RouterContext::new(0), None).unwrap_err();
        assert!(err.to_string().contains("needs an LLM"), "{err}");
        assert!(entry().needs_llm);
    }
}
