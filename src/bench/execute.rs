//! The run loop: pending tuples answered, judged, scored and written as they finish, within the budget.

use super::*;

/// Runs every pending (query, paradigm) pair, at most `concurrency` at once, writing each
/// tuple as it finishes. Returns whether Ctrl-C stopped it early.
pub(crate) async fn execute(
    shared: &Arc<Shared>,
    paradigms: &[Arc<dyn Paradigm>],
    queries: &[Query],
    vectors: &bench_core::Embeddings,
    done: &HashSet<(String, ParadigmId)>,
    concurrency: usize,
    budget: Budget,
) -> Result<Stop> {
    let mut pending = Vec::new();
    for (i, q) in queries.iter().enumerate() {
        for p in paradigms {
            if !done.contains(&(q.id.clone(), p.id())) {
                pending.push((i, p.clone()));
            }
        }
    }
    let total = queries.len() * paradigms.len();
    let bar = ProgressBar::new(total as u64).with_position((total - pending.len()) as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{msg:>20} {bar:40} {pos}/{len} tuples [{elapsed_precise}, eta {eta}]",
        )
        .expect("valid template"),
    );
    bar.set_message("answering");
    if pending.len() < total {
        eprintln!(
            "resuming: {} of {} tuples already stored",
            total - pending.len(),
            total
        );
    }

    let queries: Arc<Vec<Query>> = Arc::new(queries.to_vec());
    let vectors = Arc::new(vectors.clone());
    let mut tasks = JoinSet::new();
    let mut next = pending.into_iter();
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    let mut interrupted = false;
    let mut budget_hit = false;
    let (mut spent, mut finished) = (budget.spent_before, 0u64);
    loop {
        while !interrupted && !budget_hit && tasks.len() < concurrency {
            if let Some(max) = budget.max_tokens {
                // The next tuple is expected to cost what finished ones did on average; the
                // tuples in flight are counted at that rate too.
                let per_tuple = (spent - budget.spent_before)
                    .checked_div(finished)
                    .unwrap_or(0);
                if spent + per_tuple * (tasks.len() as u64 + 1) > max {
                    budget_hit = true;
                    break;
                }
            }
            let Some((qi, paradigm)) = next.next() else {
                break;
            };
            let (shared, queries, vectors) = (shared.clone(), queries.clone(), vectors.clone());
            tasks.spawn(async move {
                let record =
                    answer_one(&shared, paradigm.as_ref(), &queries[qi], vectors.row(qi)).await;
                if let Some(delay) = shared.fault_delay {
                    // Fault-injection knob: widens the window in which a kill lands mid-run.
                    tokio::time::sleep(delay).await;
                }
                let t = Instant::now();
                let written = shared.store.write_result(shared.run_id, &record).await;
                shared
                    .store_micros
                    .fetch_add(t.elapsed().as_micros() as u64, Ordering::Relaxed);
                written.map(|()| {
                    record.output.tokens.total() + record.judge_tokens_in + record.judge_tokens_out
                })
            });
        }
        tokio::select! {
            joined = tasks.join_next() => match joined {
                None => break,
                Some(res) => {
                    spent += res.context("a query task panicked")??;
                    finished += 1;
                    bar.inc(1);
                }
            },
            _ = &mut ctrl_c, if !interrupted => {
                interrupted = true;
                bar.println("interrupt: finishing the tuples in flight, then stopping");
            }
        }
    }
    bar.finish_and_clear();
    Ok(if interrupted {
        Stop::Interrupted
    } else if budget_hit {
        Stop::Budget { spent }
    } else {
        Stop::Done
    })
}

/// The token budget of `--max-tokens`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    pub(crate) max_tokens: Option<u64>,
    /// LLM tokens of the run's tuples stored before this invocation.
    pub(crate) spent_before: u64,
}

/// How `execute` ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    Done,
    Interrupted,
    Budget { spent: u64 },
}

/// Runs, judges and scores one (query, paradigm) pair; a failure becomes a recorded error.
pub(crate) async fn answer_one(
    shared: &Shared,
    paradigm: &dyn Paradigm,
    query: &Query,
    vector: &[f32],
) -> ResultRecord {
    let (output, error) = match paradigm.run(query, vector).await {
        Ok(o) => (o, None),
        Err(e) => (Default::default(), Some(e.to_string())),
    };
    let mut output = output;
    let mut judge = None;
    let mut quality = QualityMetrics::default();
    let mut judge_tokens = (0, 0);
    let mut error = error;
    if error.is_none() {
        quality = answer_quality(&output.answer, &query.gold);
        quality.evidence_recall = evidence_recall(
            &query.gold_chunks,
            output.context.iter().map(|c| c.chunk_id.as_str()),
        );
        let t = Instant::now();
        match generation_quality(&shared.encoder, &output.answer, &query.gold.answer) {
            Ok((semantic_f1, coverage)) => {
                quality.semantic_f1 = Some(semantic_f1);
                quality.coverage = Some(coverage);
            }
            Err(e) => error = Some(format!("semantic metrics: {e}")),
        }
        if let Some(cache) = shared
            .faithfulness
            .as_ref()
            .filter(|_| matches!(paradigm.id(), ParadigmId::Naive | ParadigmId::Graph))
        {
            match cache.faithfulness(&shared.encoder, &output.answer, &output.context) {
                Ok(f) => {
                    quality.faithfulness_hard = Some(f.hard);
                    quality.faithfulness_soft = Some(f.soft);
                }
                Err(e) => error = Some(format!("faithfulness: {e}")),
            }
        }
        match shared.judge.judge(query, &output.answer).await {
            Ok(v) => {
                judge = Some(v.label);
                judge_tokens = (v.tokens_in, v.tokens_out);
            }
            Err(e) => error = Some(format!("judge: {e}")),
        }
        output.latency.judge_ms = t.elapsed().as_secs_f64() * 1e3;
    }
    ResultRecord {
        query_id: query.id.clone(),
        paradigm: paradigm.id(),
        output,
        judge,
        quality,
        judge_tokens_in: judge_tokens.0,
        judge_tokens_out: judge_tokens.1,
        mode: shared.mode.clone(),
        config_hash: shared.config_hash.clone(),
        error,
    }
}

/// Semantic F1 (eq. 10-12, token embeddings of the local encoder) and soft coverage (eq. 13,
/// its sentence vectors) of a response against the gold answer; both 0 for an empty response.
pub(crate) fn generation_quality(
    encoder: &MiniLm,
    response: &str,
    gold: &str,
) -> Result<(f64, f64)> {
    use metrics::generation::{semantic_f1, soft_coverage, split_sentences};
    if response.trim().is_empty() || gold.trim().is_empty() {
        return Ok((0.0, 0.0));
    }
    let tokens = encoder.token_embeddings_many(&[response, gold])?;
    let f1 = semantic_f1(&tokens[0].vectors, &tokens[1].vectors).f1;
    let (pred, gt) = (split_sentences(response), split_sentences(gold));
    let mut texts: Vec<&str> = gt.clone();
    texts.extend(&pred);
    let v = encoder.embed(&texts)?;
    let dim = v.dim;
    let gt_rows = bench_core::Embeddings::new(dim, v.data[..gt.len() * dim].to_vec());
    let pred_rows = bench_core::Embeddings::new(dim, v.data[gt.len() * dim..].to_vec());
    Ok((f1, soft_coverage(&gt_rows, &pred_rows)))
}

/// Sentence vectors of context chunks, computed once per chunk and kept for the run, so that
/// faithfulness (eq. 14-15) costs the answer's sentences after the first use of a chunk.
pub(crate) struct FaithfulnessCache {
    chunks: Arc<ChunkTable>,
    vectors: std::sync::Mutex<std::collections::HashMap<String, Arc<bench_core::Embeddings>>>,
}

impl FaithfulnessCache {
    pub(crate) fn new(chunks: Arc<ChunkTable>) -> Self {
        FaithfulnessCache {
            chunks,
            vectors: std::sync::Mutex::new(std::collections::HashMap::new()),
        }
    }

    fn chunk_sentences(
        &self,
        encoder: &MiniLm,
        chunk_id: &str,
    ) -> Result<Arc<bench_core::Embeddings>> {
        if let Some(v) = self.vectors.lock().expect("not poisoned").get(chunk_id) {
            return Ok(v.clone());
        }
        let text = &self.chunks.get(chunk_id)?.text;
        let sentences = metrics::generation::split_sentences(text);
        let v = Arc::new(if sentences.is_empty() {
            bench_core::Embeddings::default()
        } else {
            encoder.embed(&sentences)?
        });
        self.vectors
            .lock()
            .expect("not poisoned")
            .insert(chunk_id.to_owned(), v.clone());
        Ok(v)
    }

    /// Faithfulness of `answer` to the sentences of the context chunks, tau = 0.7.
    pub(crate) fn faithfulness(
        &self,
        encoder: &MiniLm,
        answer: &str,
        context: &[bench_core::RetrievedChunk],
    ) -> Result<metrics::generation::Faithfulness> {
        let answer_sentences = metrics::generation::split_sentences(answer);
        if answer_sentences.is_empty() || context.is_empty() {
            return Ok(metrics::generation::Faithfulness::default());
        }
        let mut data = Vec::new();
        let mut dim = 0;
        for c in context {
            let v = self.chunk_sentences(encoder, &c.chunk_id)?;
            if !v.is_empty() {
                dim = v.dim;
                data.extend_from_slice(&v.data);
            }
        }
        if data.is_empty() {
            return Ok(metrics::generation::Faithfulness::default());
        }
        let ctx = bench_core::Embeddings::new(dim, data);
        let ans = encoder.embed(&answer_sentences)?;
        Ok(metrics::generation::faithfulness(&ans, &ctx, 0.7))
    }
}
