//! The evaluation of one tuple, on a word-count encoder whose values can be worked out by hand.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use bench_core::{
    ContextChunk, Embedder, Embeddings, GoldAnswer, Judge, JudgeLabel, ParadigmId, ParadigmOutput,
    Query, QueryType, ResultRecord, RetrievedChunk, TokenEncoder, Verdict,
};
use metrics::{generation_quality, generation_quality_batch, FaithfulnessCache, TupleEvaluator};

const DIM: usize = 32;

/// One-hot token rows by a hash of the lower-cased word; a sentence is its normalised row sum.
/// Counts the texts it embeds, so caching shows.
#[derive(Default)]
struct Words {
    embedded: AtomicUsize,
}

fn row(word: &str) -> Vec<f32> {
    let h = word
        .to_lowercase()
        .bytes()
        .fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
    let mut v = vec![0.0; DIM];
    v[(h % DIM as u64) as usize] = 1.0;
    v
}

fn words(text: &str) -> Vec<&str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect()
}

fn pooled(text: &str) -> Vec<f32> {
    let mut v = [0.0f32; DIM];
    for w in words(text) {
        for (a, b) in v.iter_mut().zip(row(w)) {
            *a += b;
        }
    }
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    v.iter().map(|x| x / n).collect()
}

impl Embedder for Words {
    fn name(&self) -> &str {
        "words"
    }
    fn dim(&self) -> usize {
        DIM
    }
    fn embed(&self, texts: &[&str]) -> bench_core::Result<Embeddings> {
        self.embedded.fetch_add(texts.len(), Ordering::Relaxed);
        Ok(Embeddings::new(
            DIM,
            texts.iter().flat_map(|t| pooled(t)).collect(),
        ))
    }
}

impl TokenEncoder for Words {
    fn tokens_and_sentences(
        &self,
        texts: &[&str],
    ) -> bench_core::Result<Vec<(Embeddings, Vec<f32>)>> {
        Ok(texts
            .iter()
            .map(|t| {
                let data = words(t).into_iter().flat_map(row).collect();
                (Embeddings::new(DIM, data), pooled(t))
            })
            .collect())
    }
}

/// Correct when the response holds the gold answer; fails on a response saying "fail".
struct Contains;

#[async_trait]
impl Judge for Contains {
    fn identity(&self) -> String {
        "contains".into()
    }
    async fn judge(&self, query: &Query, response: &str) -> bench_core::Result<Verdict> {
        if response.contains("fail") {
            return Err(bench_core::BenchError::Other("judge down".into()));
        }
        let label = if response.contains(&query.gold.answer) {
            JudgeLabel::Correct
        } else {
            JudgeLabel::Incorrect
        };
        Ok(Verdict {
            label,
            tokens_in: 10,
            tokens_out: 2,
        })
    }
}

fn query(gold: &str) -> Query {
    Query {
        id: "q".into(),
        text: "Where is the tower?".into(),
        qtype: QueryType::Factual,
        gold: GoldAnswer {
            answer: gold.into(),
            aliases: vec![],
        },
        evidence: vec![],
        gold_chunks: vec!["a#0".into(), "b#0".into()],
        gold_documents: vec!["a".into(), "z".into()],
        statements: Vec::new(),
    }
}

fn evaluator(faithfulness: bool) -> (TupleEvaluator, Arc<Words>) {
    let enc = Arc::new(Words::default());
    let e = TupleEvaluator {
        judge: Arc::new(Contains),
        encoder: enc.clone(),
        faithfulness: faithfulness.then(FaithfulnessCache::new),
        // As paradigms' registry declares it: NaiveRAG and GraphRAG.
        faithful: vec![ParadigmId::Naive, ParadigmId::Graph],
        reader_recall: Some(0.8),
    };
    (e, enc)
}

fn output(answer: &str, chunks: &[&str]) -> ParadigmOutput {
    ParadigmOutput {
        answer: answer.into(),
        context: chunks
            .iter()
            .map(|c| RetrievedChunk {
                chunk_id: (*c).into(),
                score: 1.0,
            })
            .collect(),
        ..Default::default()
    }
}

#[test]
fn the_batch_equals_pair_by_pair_and_identity_scores_one() {
    let enc = Words::default();
    let pairs = [
        ("Paris is in France. It is large.", "Paris"),
        ("Paris", "Paris"),
        ("", "Paris"),
        ("Berlin. Rome!", "Paris is big. Rome is old."),
    ];
    let batch = generation_quality_batch(&enc, &pairs).unwrap();
    for (&(r, g), b) in pairs.iter().zip(&batch) {
        let one = generation_quality(&enc, r, g).unwrap();
        assert!(
            (one.0 - b.0).abs() < 1e-9 && (one.1 - b.1).abs() < 1e-6,
            "{r:?}: {one:?} {b:?}"
        );
    }
    assert!((batch[1].0 - 1.0).abs() < 1e-9 && (batch[1].1 - 1.0).abs() < 1e-6);
    assert_eq!(batch[2], (0.0, 0.0));
    // Coverage of two gold sentences, one of them ("Rome is old") only half there: the
    // response's "Rome!" sentence matches it at 1/sqrt(3) by cosine.
    assert!(
        (batch[3].1 - (0.0 + 1.0 / 3f64.sqrt()) / 2.0).abs() < 1e-6,
        "{:?}",
        batch[3]
    );
}

#[tokio::test]
async fn judging_records_label_tokens_recall_and_faithfulness_where_it_applies() {
    let (e, enc) = evaluator(true);
    let q = query("Paris");
    let ctx = [
        ContextChunk {
            chunk_id: "a#0",
            text: "The tower is in Paris. It is tall.",
            rank: 0,
        },
        ContextChunk {
            chunk_id: "c#0",
            text: "Rome is old.",
            rank: 1,
        },
    ];
    let out = output("The tower is in Paris.", &["a#0", "c#0"]);
    let j = e.judge(ParadigmId::Naive, &q, &out, &ctx).await;
    assert_eq!(j.error, None);
    assert_eq!(j.label, Some(JudgeLabel::Correct));
    assert_eq!((j.tokens_in, j.tokens_out), (10, 2));
    assert_eq!(
        j.quality.evidence_recall,
        Some(0.5),
        "one of two gold chunks delivered"
    );
    assert_eq!(j.quality.reader_correct, Some(true));
    // The answer's one sentence equals a context sentence: fully faithful.
    assert_eq!(j.quality.faithfulness_hard, Some(1.0));
    // Chunk sentences are cached: a second judgment embeds only the answer.
    let before = enc.embedded.load(Ordering::Relaxed);
    e.judge(ParadigmId::Graph, &q, &out, &ctx).await;
    assert_eq!(enc.embedded.load(Ordering::Relaxed) - before, 1);
    // Faithfulness is NaiveRAG's and GraphRAG's only.
    let j = e.judge(ParadigmId::Hybrid, &q, &out, &ctx).await;
    assert_eq!(j.quality.faithfulness_hard, None);
    // A judge that fails is the tuple's error, with no label.
    let j = e
        .judge(ParadigmId::Naive, &q, &output("fail", &[]), &[])
        .await;
    assert_eq!(
        (j.label, j.error.as_deref()),
        (None, Some("judge: judge down"))
    );
}

#[test]
fn semantics_skip_failed_tuples_and_batching_changes_nothing() {
    let (e, _) = evaluator(false);
    let q = query("Paris is big");
    let record = |answer: &str, error: Option<&str>| ResultRecord {
        query_id: "q".into(),
        paradigm: ParadigmId::Naive,
        output: output(answer, &[]),
        judge: Some(JudgeLabel::Correct),
        quality: Default::default(),
        judge_tokens_in: 0,
        judge_tokens_out: 0,
        mode: "offline".into(),
        config_hash: "c".into(),
        error: error.map(str::to_owned),
        graph_build: None,
    };
    let make = || {
        vec![
            record("Paris is big", None),
            record("x", Some("timeout")),
            record("Rome", None),
        ]
    };
    let (mut batched, mut single) = (make(), make());
    e.score_semantics(&mut batched, &q, true);
    e.score_semantics(&mut single, &q, false);
    assert_eq!(
        batched[1].quality.semantic_f1, None,
        "a failed tuple is not scored"
    );
    assert!((batched[0].quality.semantic_f1.unwrap() - 1.0).abs() < 1e-9);
    assert_eq!(batched[2].quality.semantic_f1, Some(0.0));
    for (b, s) in batched.iter().zip(&single) {
        assert_eq!(
            b.quality.semantic_f1.map(|x| (x * 1e9).round()),
            s.quality.semantic_f1.map(|x| (x * 1e9).round())
        );
        assert_eq!(
            b.quality.coverage.map(|x| (x * 1e6).round()),
            s.quality.coverage.map(|x| (x * 1e6).round())
        );
    }
}
