//! The evaluation of one tuple: judge label, EM/F1, evidence recall, semantic F1, coverage, faithfulness.
//!
//! The binary runs a paradigm and hands its output here; what comes back is written as is.
//! Semantic F1 and coverage are scored per question ([`TupleEvaluator::score_semantics`]), so
//! that the answers of a question's paradigms share one encoder pass.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use bench_core::{
    ContextChunk, Embeddings, Judge, JudgeLabel, ParadigmId, ParadigmOutput, QualityMetrics, Query,
    Result, ResultRecord, TokenEncoder,
};

use crate::answer::{answer_quality, document_recall, evidence_recall, offline_label};
use crate::generation::{faithfulness, semantic_f1, soft_coverage, split_sentences, Faithfulness};

/// Faithfulness threshold tau of eq. 14.
const TAU: f64 = 0.7;

/// What judging one answered tuple gives (semantic F1 and coverage come later, per question).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Judged {
    /// The answer metrics measured so far (EM, F1, faithfulness, ...).
    pub quality: QualityMetrics,
    /// The judge's label; `None` when judging failed.
    pub label: Option<JudgeLabel>,
    /// Prompt tokens the judge spent.
    pub tokens_in: u64,
    /// Reply tokens the judge spent.
    pub tokens_out: u64,
    /// The first step that failed, as recorded with the tuple.
    pub error: Option<String>,
    /// Wall time of judging, in milliseconds.
    pub judge_ms: f64,
    /// Which of the judge's rules labelled the tuple (`Judge::rule`), for its trace.
    pub rule: Option<&'static str>,
}

/// Scores tuples against the gold answer: one per run, shared by its tasks.
pub struct TupleEvaluator {
    /// The judge that labels each answer.
    pub judge: Arc<dyn Judge>,
    /// The local encoder: semantic F1 (token embeddings) and coverage (sentence vectors).
    pub encoder: Arc<dyn TokenEncoder>,
    /// Sentence vectors of context chunks for faithfulness; `None`: not computed (offline).
    pub faithfulness: Option<FaithfulnessCache>,
    /// The paradigms whose faithfulness is measured (their registry entries declare it).
    pub faithful: Vec<ParadigmId>,
    /// Offline: the sentence judge's recall threshold for "reader correct"; `None` in LLM mode.
    pub reader_recall: Option<f64>,
}

impl std::fmt::Debug for TupleEvaluator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TupleEvaluator")
            .field("judge", &self.judge.identity())
            .field("encoder", &self.encoder.name())
            .field("faithfulness", &self.faithfulness.is_some())
            .field("reader_recall", &self.reader_recall)
            .finish()
    }
}

impl TupleEvaluator {
    /// Judges an answered tuple: EM / F1, evidence recall, faithfulness (the paradigms in
    /// `faithful`, when enabled), the offline reader's own label and the judge's label over `context` (the
    /// delivered chunks in context order).
    pub async fn judge(
        &self,
        paradigm: ParadigmId,
        query: &Query,
        output: &ParadigmOutput,
        context: &[ContextChunk<'_>],
    ) -> Judged {
        let mut j = Judged {
            quality: answer_quality(&output.answer, &query.gold),
            ..Judged::default()
        };
        let ids = || output.context.iter().map(|c| c.chunk_id.as_str());
        j.quality.evidence_recall = evidence_recall(&query.gold_chunks, ids());
        j.quality.document_recall = document_recall(&query.gold_documents, ids());
        let t = Instant::now();
        if let Some(cache) = self
            .faithfulness
            .as_ref()
            .filter(|_| self.faithful.contains(&paradigm))
        {
            match cache.faithfulness(self.encoder.as_ref(), &output.answer, context) {
                Ok(f) => {
                    j.quality.faithfulness_hard = Some(f.hard);
                    j.quality.faithfulness_soft = Some(f.soft);
                }
                Err(e) => j.error = Some(format!("faithfulness: {e}")),
            }
        }
        j.quality.reader_correct = self
            .reader_recall
            .map(|r| offline_label(&output.answer, &query.gold, r) == JudgeLabel::Correct);
        match self
            .judge
            .judge_in_context(query, &output.answer, context)
            .await
        {
            Ok(v) => {
                j.rule = self.judge.rule(query);
                j.label = Some(v.label);
                j.tokens_in = v.tokens_in;
                j.tokens_out = v.tokens_out;
            }
            Err(e) => j.error = Some(format!("judge: {e}")),
        }
        j.judge_ms = t.elapsed().as_secs_f64() * 1e3;
        j
    }

    /// Semantic F1 and coverage of a question's tuples that have no error: one batched encoder
    /// pass when `batch`, else one per tuple. The pass's time is split evenly over the tuples'
    /// judging time; a failure becomes the tuple's error (and drops its label).
    pub fn score_semantics(&self, records: &mut [ResultRecord], query: &Query, batch: bool) {
        let gold = query.gold.answer.as_str();
        let ok: Vec<usize> = (0..records.len())
            .filter(|&i| records[i].error.is_none())
            .collect();
        if ok.is_empty() {
            return;
        }
        let t = Instant::now();
        let scores: Vec<std::result::Result<(f64, f64), String>> = if batch {
            let pairs: Vec<(&str, &str)> = ok
                .iter()
                .map(|&i| (records[i].output.answer.as_str(), gold))
                .collect();
            match generation_quality_batch(self.encoder.as_ref(), &pairs) {
                Ok(v) => v.into_iter().map(Ok).collect(),
                Err(e) => vec![Err(e.to_string()); ok.len()],
            }
        } else {
            ok.iter()
                .map(|&i| {
                    generation_quality(self.encoder.as_ref(), &records[i].output.answer, gold)
                        .map_err(|e| e.to_string())
                })
                .collect()
        };
        let share_ms = t.elapsed().as_secs_f64() * 1e3 / ok.len() as f64;
        for (&i, score) in ok.iter().zip(scores) {
            let r = &mut records[i];
            match score {
                Ok((f1, coverage)) => {
                    r.quality.semantic_f1 = Some(f1);
                    r.quality.coverage = Some(coverage);
                }
                Err(e) => {
                    r.error = Some(format!("semantic metrics: {e}"));
                    r.judge = None;
                }
            }
            r.output.latency.judge_ms += share_ms;
        }
    }
}

/// Semantic F1 and soft coverage of many (response, gold) pairs with one encoder forward: each
/// distinct non-empty text is encoded once, its token embeddings and its sentence vectors from the
/// same pass (a sentence equal to the whole text reuses the text's pooled vector). The values
/// equal [`generation_quality`]'s per pair up to float summation order inside gemm.
pub fn generation_quality_batch(
    encoder: &dyn TokenEncoder,
    pairs: &[(&str, &str)],
) -> Result<Vec<(f64, f64)>> {
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut texts: Vec<&str> = Vec::new();
    for &(response, gold) in pairs {
        if response.trim().is_empty() || gold.trim().is_empty() {
            continue;
        }
        for t in [response, gold] {
            index.entry(t).or_insert_with(|| {
                texts.push(t);
                texts.len() - 1
            });
        }
    }
    // Sequences to run: every text, then every sentence that is not its whole text.
    let mut seqs: Vec<&str> = texts.clone();
    let mut sentence_rows: Vec<Vec<usize>> = Vec::with_capacity(texts.len());
    for (i, t) in texts.iter().enumerate() {
        let rows = split_sentences(t)
            .into_iter()
            .map(|s| {
                if s == *t {
                    i
                } else {
                    seqs.push(s);
                    seqs.len() - 1
                }
            })
            .collect();
        sentence_rows.push(rows);
    }
    let out = if seqs.is_empty() {
        Vec::new()
    } else {
        encoder.tokens_and_sentences(&seqs)?
    };
    let dim = out.first().map_or(encoder.dim(), |(_, v)| v.len());
    // Per text: its token rows and its sentences' vectors.
    let encoded: Vec<(&Embeddings, Embeddings)> = (0..texts.len())
        .map(|i| {
            let mut data = Vec::new();
            for &r in &sentence_rows[i] {
                data.extend_from_slice(&out[r].1);
            }
            (&out[i].0, Embeddings::new(dim, data))
        })
        .collect();
    Ok(pairs
        .iter()
        .map(|&(response, gold)| {
            if response.trim().is_empty() || gold.trim().is_empty() {
                return (0.0, 0.0);
            }
            let (r, g) = (&encoded[index[response]], &encoded[index[gold]]);
            (semantic_f1(r.0, g.0).f1, soft_coverage(&g.1, &r.1))
        })
        .collect())
}

/// Semantic F1 (eq. 10-12, token embeddings of the local encoder) and soft coverage (eq. 13,
/// its sentence vectors) of a response against the gold answer; both 0 for an empty response.
pub fn generation_quality(
    encoder: &dyn TokenEncoder,
    response: &str,
    gold: &str,
) -> Result<(f64, f64)> {
    if response.trim().is_empty() || gold.trim().is_empty() {
        return Ok((0.0, 0.0));
    }
    let tokens = encoder.tokens_and_sentences(&[response, gold])?;
    let f1 = semantic_f1(&tokens[0].0, &tokens[1].0).f1;
    let (pred, gt) = (split_sentences(response), split_sentences(gold));
    let mut texts: Vec<&str> = gt.clone();
    texts.extend(&pred);
    let v = encoder.embed(&texts)?;
    let dim = v.dim;
    let gt_rows = Embeddings::new(dim, v.data[..gt.len() * dim].to_vec());
    let pred_rows = Embeddings::new(dim, v.data[gt.len() * dim..].to_vec());
    Ok((f1, soft_coverage(&gt_rows, &pred_rows)))
}

/// Sentence vectors of context chunks, computed once per chunk and kept for the run, so that
/// faithfulness (eq. 14-15) costs the answer's sentences after the first use of a chunk.
#[derive(Debug, Default)]
pub struct FaithfulnessCache {
    vectors: Mutex<HashMap<String, Arc<Embeddings>>>,
}

impl FaithfulnessCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    fn chunk_sentences(
        &self,
        encoder: &dyn TokenEncoder,
        chunk: &ContextChunk<'_>,
    ) -> Result<Arc<Embeddings>> {
        if let Some(v) = self
            .vectors
            .lock()
            .expect("not poisoned")
            .get(chunk.chunk_id)
        {
            return Ok(v.clone());
        }
        let sentences = split_sentences(chunk.text);
        let v = Arc::new(if sentences.is_empty() {
            Embeddings::default()
        } else {
            encoder.embed(&sentences)?
        });
        self.vectors
            .lock()
            .expect("not poisoned")
            .insert(chunk.chunk_id.to_owned(), v.clone());
        Ok(v)
    }

    /// Faithfulness of `answer` to the sentences of the context chunks, tau = 0.7.
    pub fn faithfulness(
        &self,
        encoder: &dyn TokenEncoder,
        answer: &str,
        context: &[ContextChunk<'_>],
    ) -> Result<Faithfulness> {
        let answer_sentences = split_sentences(answer);
        if answer_sentences.is_empty() || context.is_empty() {
            return Ok(Faithfulness::default());
        }
        let mut data = Vec::new();
        let mut dim = 0;
        for c in context {
            let v = self.chunk_sentences(encoder, c)?;
            if !v.is_empty() {
                dim = v.dim;
                data.extend_from_slice(&v.data);
            }
        }
        if data.is_empty() {
            return Ok(Faithfulness::default());
        }
        let ctx = Embeddings::new(dim, data);
        let ans = encoder.embed(&answer_sentences)?;
        Ok(faithfulness(&ans, &ctx, TAU))
    }
}
