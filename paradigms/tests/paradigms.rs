//! NaiveRAG and LLM-only end to end on a tiny corpus, with the offline and a scripted LLM reader.

use std::sync::Arc;

use bench_core::config::{GenerationConfig, OfflineReaderConfig};
use bench_core::{
    Chunk, Embedder, Embeddings, Paradigm, ParadigmId, QueryType, Reader, TokenSource, Usage,
};
use corpora::FlatIndex;
use fixtures::{query, tiny_corpus, Scripted, ScriptedLlm};
use paradigms::{ChunkTable, DenseRetriever, LlmOnly, LlmReader, OfflineReader, RetrieveThenRead};

/// A 3-d "encoder" that maps texts to fixed axes by keyword, so rankings are known by hand.
struct AxisEmbedder;

impl Embedder for AxisEmbedder {
    fn name(&self) -> &str {
        "axis-test-encoder"
    }
    fn dim(&self) -> usize {
        3
    }
    fn embed(&self, texts: &[&str]) -> bench_core::Result<Embeddings> {
        let mut data = Vec::new();
        for t in texts {
            let t = t.to_lowercase();
            let v = [
                f32::from(u8::from(t.contains("bridge"))),
                f32::from(u8::from(t.contains("river"))),
                f32::from(u8::from(t.contains("mayor"))),
            ];
            let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
            data.extend(v.iter().map(|x| x / n));
        }
        Ok(Embeddings::new(3, data))
    }
}

fn chunks() -> Vec<Chunk> {
    tiny_corpus(
        &[
            ("a", "The old bridge was built in 1832 by Ada Brook."),
            ("b", "The river Alder floods every spring."),
            ("c", "The mayor is Tom Vale."),
        ],
        vec![],
    )
    .chunks
}

/// NaiveRAG over the tiny corpus with the given budget and reader.
fn naive(budget: u64, reader: Option<Arc<dyn Reader>>) -> (RetrieveThenRead, Arc<ChunkTable>) {
    let chunks = chunks();
    let reader = reader
        .unwrap_or_else(|| Arc::new(OfflineReader::new(&chunks, OfflineReaderConfig::default())));
    let embedder: Arc<dyn Embedder> = Arc::new(AxisEmbedder);
    let texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
    let index = Arc::new(FlatIndex::new(embedder.embed(&texts).unwrap()).unwrap());
    let table = Arc::new(ChunkTable::new(chunks));
    let p = RetrieveThenRead {
        id: ParadigmId::Naive,
        retriever: Arc::new(DenseRetriever {
            index,
            chunks: table.clone(),
            embedder,
            top_k: 100,
            min_similarity: 0.4,
        }),
        reader,
        chunks: table.clone(),
        budget,
    };
    (p, table)
}

fn vector(text: &str) -> Vec<f32> {
    AxisEmbedder.embed_one(text).unwrap()
}

#[tokio::test]
async fn naive_rag_retrieves_above_threshold_in_similarity_order_and_reads_offline() {
    let (p, table) = naive(8000, None);
    let q = query(
        "q1",
        "When was the bridge over the river built?",
        QueryType::Factual,
        "1832",
        &["a#0"],
    );
    let out = p.run(&q, &vector(&q.text)).await.unwrap();
    let ids: Vec<_> = out.context.iter().map(|c| c.chunk_id.as_str()).collect();
    // "bridge"+"river": a and b tie at cos 0.707 (lower row first); c is orthogonal (< 0.4).
    assert_eq!(ids, ["a#0", "b#0"]);
    assert_eq!(out.answer, "The old bridge was built in 1832 by Ada Brook.");
    let expected: u64 = ["a#0", "b#0"]
        .iter()
        .map(|id| u64::from(table.get(id).unwrap().tokens))
        .sum();
    assert_eq!(out.context_tokens, expected);
    assert_eq!(
        out.tokens.total(),
        0,
        "the offline reader spends no LLM tokens"
    );
}

#[tokio::test]
async fn the_budget_truncates_the_ranking() {
    let first = u64::from(chunks()[0].tokens);
    let (p, _) = naive(first, None);
    let q = query("q", "bridge river", QueryType::Factual, "x", &[]);
    let out = p.run(&q, &vector(&q.text)).await.unwrap();
    assert_eq!(out.context.len(), 1);
    assert_eq!(out.context_tokens, first);
}

#[tokio::test]
async fn a_query_without_a_vector_is_embedded_by_the_retriever() {
    use bench_core::RetrievalQuery;
    let (p, _) = naive(8000, None);
    let r = p
        .retriever
        .retrieve(RetrievalQuery {
            text: "who is the mayor",
            vector: None,
        })
        .await
        .unwrap();
    assert_eq!(r.ranked.len(), 1);
    assert_eq!(r.ranked[0].chunk_id, "c#0");
}

#[tokio::test]
async fn llm_reader_sends_numbered_context_and_bills_usage() {
    let llm = Arc::new(ScriptedLlm::new([Scripted::Reply(
        "1832".into(),
        Some(Usage {
            prompt_tokens: 120,
            completion_tokens: 2,
        }),
    )]));
    let reader = Arc::new(LlmReader::new(llm.clone(), &GenerationConfig::default()));
    let (p, _) = naive(8000, Some(reader));
    let q = query(
        "q",
        "When was the bridge built?",
        QueryType::Factual,
        "1832",
        &[],
    );
    let out = p.run(&q, &vector(&q.text)).await.unwrap();
    assert_eq!(out.answer, "1832");
    assert_eq!(
        (out.tokens.generation_in, out.tokens.generation_out),
        (120, 2)
    );
    assert_eq!(out.token_source, TokenSource::Usage);
    let req = &llm.requests.lock().unwrap()[0];
    assert_eq!(req.temperature, 0.3);
    assert!(req.messages[1]
        .content
        .contains("[1] The old bridge was built in 1832"));
}

#[tokio::test]
async fn llm_only_sends_no_context_at_its_own_temperature_and_offline_answers_nothing() {
    let llm = Arc::new(ScriptedLlm::new([Scripted::Reply("Paris".into(), None)]));
    let p = LlmOnly {
        reader: Arc::new(LlmReader::new(llm.clone(), &GenerationConfig::default())),
    };
    let q = query("q", "Capital of France?", QueryType::Factual, "Paris", &[]);
    let out = p.run(&q, &[]).await.unwrap();
    assert_eq!(out.answer, "Paris");
    // No usage reported: counted with cl100k over what was sent and received.
    assert_eq!(out.token_source, TokenSource::Cl100k);
    assert_eq!(out.tokens.generation_out, 1);
    let req = llm.requests.lock().unwrap()[0].clone();
    assert_eq!(req.temperature, 0.7);
    assert!(!req.messages[1].content.contains("Passages"));

    let offline = LlmOnly {
        reader: Arc::new(OfflineReader::new(
            &chunks(),
            OfflineReaderConfig::default(),
        )),
    };
    assert_eq!(offline.run(&q, &[]).await.unwrap().answer, "");
}

#[tokio::test]
async fn an_llm_failure_is_an_error_not_an_answer() {
    let llm = Arc::new(ScriptedLlm::new([Scripted::Fail(
        bench_core::LlmErrorKind::Retryable,
        "HTTP 500".into(),
    )]));
    let p = LlmOnly {
        reader: Arc::new(LlmReader::new(llm, &GenerationConfig::default())),
    };
    let q = query("q", "x?", QueryType::Factual, "y", &[]);
    let err = p.run(&q, &[]).await.unwrap_err().to_string();
    assert!(
        err.contains("HTTP 500") && err.contains("retryable"),
        "{err}"
    );
}
