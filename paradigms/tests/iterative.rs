//! Algorithm 3's four stopping rules, with a scripted LLM as reader and evaluator.

use std::sync::Arc;

use async_trait::async_trait;
use bench_core::config::GenerationConfig;
use bench_core::{
    Paradigm, ParadigmId, QueryType, Retrieval, RetrievalQuery, RetrievedChunk, Retriever, Usage,
};
use fixtures::{query, tiny_corpus, Scripted, ScriptedLlm};
use paradigms::{ChunkTable, Iterative, LlmEvaluator, LlmReader};

/// Returns chunk `a#0` for the original question and `b#0` for anything else.
struct KeyedRetriever;

#[async_trait]
impl Retriever for KeyedRetriever {
    fn name(&self) -> &str {
        "keyed"
    }
    async fn retrieve(&self, q: RetrievalQuery<'_>) -> bench_core::Result<Retrieval> {
        let id = if q.text == "Who built the bridge?" {
            "a#0"
        } else {
            "b#0"
        };
        Ok(Retrieval {
            ranked: vec![RetrievedChunk {
                chunk_id: id.into(),
                score: 0.9,
            }],
            ..Default::default()
        })
    }
}

fn reply(s: &str) -> Scripted {
    Scripted::Reply(
        s.into(),
        Some(Usage {
            prompt_tokens: 10,
            completion_tokens: 1,
        }),
    )
}

fn eval(sufficient: bool, sub: Option<&str>) -> Scripted {
    let sub = sub.map_or("null".to_owned(), |s| format!("\"{s}\""));
    reply(&format!(
        "Here you go:\n```json\n{{\"sufficient\": {sufficient}, \"reason\": \"r\", \"sub_question\": {sub}}}\n```"
    ))
}

/// Runs Algorithm 3 with the given script; returns the output and the number of LLM calls.
async fn check(script: Vec<Scripted>) -> (bench_core::Result<bench_core::ParadigmOutput>, usize) {
    let corpus = tiny_corpus(
        &[
            ("a", "Ada Brook built the bridge."),
            ("b", "Ada Brook was born in Varnholt."),
        ],
        vec![],
    );
    let llm = Arc::new(ScriptedLlm::new(script));
    let p = Iterative {
        id: ParadigmId::Iterative,
        retriever: Arc::new(KeyedRetriever),
        reader: Arc::new(LlmReader::new(llm.clone(), &GenerationConfig::default())),
        evaluator: Arc::new(LlmEvaluator {
            llm: llm.clone(),
            temperature: 0.1,
        }),
        chunks: Arc::new(ChunkTable::new(corpus.chunks)),
        budget: 8000,
        max_rounds: 3,
    };
    let q = query(
        "q",
        "Who built the bridge?",
        QueryType::Factual,
        "Ada Brook",
        &[],
    );
    let out = p.run(&q, &[1.0]).await;
    (out, llm.calls())
}

fn stop(out: &bench_core::ParadigmOutput) -> &str {
    out.trace["stop"].as_str().unwrap()
}

#[tokio::test]
async fn a_sufficient_direct_answer_stops_at_round_zero() {
    let (out, calls) = check(vec![reply("Ada Brook"), eval(true, None)]).await;
    let out = out.unwrap();
    assert_eq!((stop(&out), calls), ("sufficient", 2));
    assert_eq!(out.answer, "Ada Brook");
    assert!(out.context.is_empty());
    assert_eq!(out.trace["rounds"].as_array().unwrap().len(), 1);
    assert_eq!(
        (out.tokens.generation_in, out.tokens.retrieval_in),
        (10, 10)
    );
}

#[tokio::test]
async fn retrieval_rounds_answer_the_original_question_until_sufficient() {
    let (out, calls) = check(vec![
        reply("I don't know"),
        eval(false, None), // no sub-question at round 0: retrieve for the question itself
        reply("Ada Brook"),
        eval(true, None),
    ])
    .await;
    let out = out.unwrap();
    assert_eq!((stop(&out), calls), ("sufficient", 4));
    assert_eq!(out.answer, "Ada Brook");
    let ids: Vec<_> = out.context.iter().map(|c| c.chunk_id.as_str()).collect();
    assert_eq!(ids, ["a#0"]);
    let rounds = out.trace["rounds"].as_array().unwrap();
    assert_eq!(rounds[1]["query"], "Who built the bridge?");
    // Generation: two reader calls; retrieval: two evaluator calls.
    assert_eq!(
        (out.tokens.generation_in, out.tokens.retrieval_in),
        (20, 20)
    );
}

#[tokio::test]
async fn a_missing_sub_question_stops_the_loop() {
    let (out, calls) = check(vec![
        reply("?"),
        eval(false, Some("Where was Ada Brook born?")),
        reply("Varnholt"),
        eval(false, None),
    ])
    .await;
    let out = out.unwrap();
    assert_eq!((stop(&out), calls), ("no-sub-question", 4));
    // The sub-question retrieved b#0.
    assert_eq!(out.context[0].chunk_id, "b#0");
}

#[tokio::test]
async fn a_repeated_sub_question_stops_the_loop() {
    let (out, calls) = check(vec![
        reply("?"),
        eval(false, Some("Where was Ada Brook born?")),
        reply("?"),
        eval(false, Some("Who built the bridge?")), // the original question is in the history
    ])
    .await;
    assert_eq!((stop(&out.unwrap()), calls), ("repeated-sub-question", 4));
}

#[tokio::test]
async fn max_rounds_ends_with_the_last_answer_and_accumulated_context() {
    let (out, calls) = check(vec![
        reply("?"),
        eval(false, None),
        reply("a1"),
        eval(false, Some("s1")),
        reply("a2"),
        eval(false, Some("s2")),
        reply("a3"),
        eval(false, Some("s3")),
    ])
    .await;
    let out = out.unwrap();
    assert_eq!((stop(&out), calls), ("max-rounds", 8));
    assert_eq!(out.answer, "a3");
    let mut ids: Vec<_> = out.context.iter().map(|c| c.chunk_id.as_str()).collect();
    ids.sort();
    assert_eq!(
        ids,
        ["a#0", "b#0"],
        "chunks accumulate across rounds, once each"
    );
}

/// An unreadable self-evaluation ends the loop with the answer so far, never a guessed verdict;
/// the reply's error is in the trace. A failed call (not a reply) is still an error.
#[tokio::test]
async fn an_unreadable_evaluation_stops_the_loop_with_the_answer_so_far() {
    let (out, calls) = check(vec![reply("Ada"), reply("I think it is fine")]).await;
    let out = out.unwrap();
    assert_eq!((stop(&out), calls), ("evaluation-unreadable", 2));
    assert_eq!(out.answer, "Ada");
    assert!(out.context.is_empty());
    let reason = out.trace["rounds"][0]["evaluation"]["reason"]
        .as_str()
        .unwrap();
    assert!(reason.contains("I think it is fine"), "{reason}");

    // In a retrieval round: the round's answer and context are kept.
    let (out, calls) = check(vec![
        reply("?"),
        eval(false, None),
        reply("Ada Brook"),
        reply("{\"sufficient\": \"maybe\"}"),
    ])
    .await;
    let out = out.unwrap();
    assert_eq!((stop(&out), calls), ("evaluation-unreadable", 4));
    assert_eq!(out.answer, "Ada Brook");
    assert_eq!(out.context[0].chunk_id, "a#0");

    let (out, _) = check(vec![
        reply("?"),
        Scripted::Fail(bench_core::LlmErrorKind::Retryable, "503".into()),
    ])
    .await;
    let err = out.unwrap_err().to_string();
    assert!(err.contains("503"), "{err}");
}
