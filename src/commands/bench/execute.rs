//! The run loop: pending tuples answered, judged, scored and written as they finish, within the budget.
//!
//! Work is handed out in units. Offline (with sharing on) a unit is one question's pending
//! paradigms, run one after another on a blocking thread (the work is CPU-bound), so the
//! paradigms share their retrieval through the memoised retrievers and the question's answers are
//! encoded for semantic F1 and coverage in one batch; `concurrency` units run at once, at most one
//! per core. In LLM mode, or with `--share-nothing`, a unit is one tuple. Each tuple is still
//! written in its own statement as soon as its unit has scored it.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context as _, Result};
use bench_core::{Paradigm, ParadigmId, Query, ResultRecord};
use indicatif::ProgressBar;
use metrics::Judged;
use tokio::task::JoinSet;

use super::shared::Shared;

/// Runs every pending (query, paradigm) pair, at most `concurrency` units at once, writing each
/// tuple as it finishes. Returns how the loop ended.
pub(crate) async fn execute(
    shared: &Arc<Shared>,
    paradigms: &[Arc<dyn Paradigm>],
    queries: &[Query],
    vectors: &bench_core::Embeddings,
    done: &HashSet<(String, ParadigmId)>,
    concurrency: usize,
    budget: Budget,
) -> Result<Stop> {
    let (units, pending) = plan_units(shared, paradigms, queries, done);
    let concurrency = unit_concurrency(shared, concurrency);
    let bar = resume_bar(queries.len() * paradigms.len(), pending);
    let mut run = RunLoop {
        shared,
        queries: Arc::new(queries.to_vec()),
        vectors: Arc::new(vectors.clone()),
        tasks: JoinSet::new(),
        next: units.into_iter(),
        waiting: Vec::new(),
        bar,
        concurrency,
        interrupted: false,
        budget_hit: false,
        spent: budget.spent_before,
    };
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    if let Some(max) = budget.max_tokens {
        shared.budget.arm(max.saturating_sub(budget.spent_before));
    }
    loop {
        if let Err(e) = run.start_units().await {
            return Err(failed(&mut run.tasks, e).await);
        }
        if run.all_leased() && run.wait_for_leases(&mut ctrl_c).await {
            continue;
        }
        match run.join_next(&mut ctrl_c).await {
            Ok(true) => break,
            Ok(false) => {}
            Err(e) => return Err(failed(&mut run.tasks, e).await),
        }
    }
    run.bar.finish_and_clear();
    Ok(if run.interrupted {
        Stop::Interrupted
    } else if run.budget_hit {
        Stop::Budget { spent: run.spent }
    } else {
        Stop::Done
    })
}

/// The run loop's state between its steps.
struct RunLoop<'a> {
    shared: &'a Arc<Shared>,
    queries: Arc<Vec<Query>>,
    vectors: Arc<bench_core::Embeddings>,
    /// The units running; each yields its tuples written and their LLM tokens.
    tasks: JoinSet<Result<(u64, u64)>>,
    /// The units not yet started.
    next: std::vec::IntoIter<Unit>,
    /// Shared store: units whose items other workers hold, tried again when the queue is empty.
    waiting: Vec<Unit>,
    bar: ProgressBar,
    concurrency: usize,
    interrupted: bool,
    budget_hit: bool,
    /// LLM tokens of the run's tuples so far, those stored before included.
    spent: u64,
}

impl RunLoop<'_> {
    /// Nothing runs and every unit left waits on other workers' leases (the run not stopping).
    fn all_leased(&self) -> bool {
        self.tasks.is_empty() && !self.waiting.is_empty() && !self.interrupted && !self.budget_hit
    }

    /// Starts units until `concurrency` run, the queue is empty, or the run is stopping.
    async fn start_units(&mut self) -> Result<()> {
        while !self.interrupted && !self.budget_hit && self.tasks.len() < self.concurrency {
            let Some((qi, unit)) = self.next.next() else {
                break;
            };
            let unit = claim_unit(
                self.shared,
                &self.queries,
                (qi, unit),
                &mut self.waiting,
                &self.bar,
            )
            .await?;
            if unit.is_empty() {
                continue;
            }
            // Every LLM call reserves its bound in the budget before it is sent; once one was
            // refused, no new unit starts.
            if self.shared.budget.exhausted() {
                self.budget_hit = true;
                break;
            }
            spawn_unit(
                &mut self.tasks,
                self.shared,
                &self.queries,
                &self.vectors,
                (qi, unit),
            );
        }
        Ok(())
    }

    /// Everything left is leased by other workers: looks again once a lease may have run out
    /// (a dead worker's items come back then). True when the waiting units are queued again;
    /// false on an interrupt.
    async fn wait_for_leases<F>(&mut self, ctrl_c: &mut Pin<&mut F>) -> bool
    where
        F: Future<Output = std::io::Result<()>>,
    {
        tokio::select! {
            _ = tokio::time::sleep(LEASE_POLL) => {
                self.next = std::mem::take(&mut self.waiting).into_iter();
                true
            }
            _ = ctrl_c.as_mut() => {
                self.interrupted = true;
                self.bar.println("interrupt: stopping");
                false
            }
        }
    }

    /// Waits for the next unit to finish (counting its tuples and tokens) or for an interrupt;
    /// true when no unit is left.
    async fn join_next<F>(&mut self, ctrl_c: &mut Pin<&mut F>) -> Result<bool>
    where
        F: Future<Output = std::io::Result<()>>,
    {
        tokio::select! {
            joined = self.tasks.join_next() => match joined {
                None => return Ok(true),
                Some(res) => {
                    let (n, tokens) = res.context("a query task panicked").and_then(|r| r)?;
                    self.spent += tokens;
                    self.bar.inc(n);
                    self.budget_hit |= self.shared.budget.exhausted();
                }
            },
            _ = ctrl_c.as_mut(), if !self.interrupted => {
                self.interrupted = true;
                self.bar.println("interrupt: finishing the tuples in flight, then stopping");
            }
        }
        Ok(false)
    }
}

/// One question's index and the paradigms of it one task runs.
type Unit = (usize, Vec<Arc<dyn Paradigm>>);

/// The units of the pending pairs (one question's paradigms offline with sharing on, one pair
/// otherwise) and the count of pending pairs.
fn plan_units(
    shared: &Shared,
    paradigms: &[Arc<dyn Paradigm>],
    queries: &[Query],
    done: &HashSet<(String, ParadigmId)>,
) -> (Vec<Unit>, usize) {
    let per_question = shared.blocking && shared.share;
    let mut units: Vec<Unit> = Vec::new();
    let mut pending = 0usize;
    for (i, q) in queries.iter().enumerate() {
        let todo: Vec<Arc<dyn Paradigm>> = paradigms
            .iter()
            .filter(|p| !done.contains(&(q.id.clone(), p.id())))
            .cloned()
            .collect();
        pending += todo.len();
        if per_question {
            if !todo.is_empty() {
                units.push((i, todo));
            }
        } else {
            units.extend(todo.into_iter().map(|p| (i, vec![p])));
        }
    }
    (units, pending)
}

/// Units at once: `concurrency`, at most one per core when the units are CPU-bound.
fn unit_concurrency(shared: &Shared, concurrency: usize) -> usize {
    if shared.blocking {
        // CPU-bound units: more at once than cores only adds contention.
        concurrency.min(
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
        )
    } else {
        concurrency
    }
}

/// The progress bar of `total` tuples, `pending` of them still to answer; a resumed run says
/// how many were stored before.
fn resume_bar(total: usize, pending: usize) -> ProgressBar {
    let bar = crate::progress::bar(total as u64, "answering", "tuples")
        .with_position((total - pending) as u64);
    if pending < total {
        eprintln!(
            "resuming: {} of {} tuples already stored",
            total - pending,
            total
        );
    }
    bar
}

/// On a shared store, claims the unit's pairs: those another worker holds wait in `waiting`,
/// those already finished count on the bar, and the rest (returned) are this worker's.
async fn claim_unit(
    shared: &Shared,
    queries: &[Query],
    (qi, mut unit): Unit,
    waiting: &mut Vec<Unit>,
    bar: &ProgressBar,
) -> Result<Vec<Arc<dyn Paradigm>>> {
    let Some(lease) = &shared.lease else {
        return Ok(unit);
    };
    let ids: Vec<ParadigmId> = unit.iter().map(|p| p.id()).collect();
    let claimed = shared.store.claim(lease, &queries[qi].id, &ids).await?;
    bar.inc(claimed.gone.len() as u64);
    if !claimed.held.is_empty() {
        let held = unit
            .iter()
            .filter(|p| claimed.held.contains(&p.id()))
            .cloned()
            .collect();
        waiting.push((qi, held));
    }
    unit.retain(|p| claimed.mine.contains(&p.id()));
    Ok(unit)
}

/// Starts one unit: on a blocking thread when the work is CPU-bound, as a task otherwise.
fn spawn_unit(
    tasks: &mut JoinSet<Result<(u64, u64)>>,
    shared: &Arc<Shared>,
    queries: &Arc<Vec<Query>>,
    vectors: &Arc<bench_core::Embeddings>,
    (qi, unit): Unit,
) {
    let (shared, queries, vectors) = (shared.clone(), queries.clone(), vectors.clone());
    if shared.blocking {
        let handle = tokio::runtime::Handle::current();
        tasks.spawn_blocking(move || {
            handle.block_on(run_unit(&shared, &unit, &queries[qi], vectors.row(qi)))
        });
    } else {
        tasks.spawn(async move { run_unit(&shared, &unit, &queries[qi], vectors.row(qi)).await });
    }
}

/// Stops the units still running after one failed, and waits for them. A unit on a blocking
/// thread cannot be aborted: returned at once, the error would shut the runtime down under it,
/// and its next timer (a store write's, an LLM call's) would panic ("A Tokio 1.x context was
/// found, but it is being shutdown"). Their own errors are dropped: the first one is reported.
async fn drain<T: 'static>(tasks: &mut JoinSet<T>) {
    tasks.abort_all();
    while tasks.join_next().await.is_some() {}
}

/// `err`, once the units still running have stopped ([`drain`]).
pub(crate) async fn failed<T: 'static>(
    tasks: &mut JoinSet<T>,
    err: anyhow::Error,
) -> anyhow::Error {
    drain(tasks).await;
    err
}

/// Answers, judges, scores and writes the tuples of one unit (one question's paradigms); returns
/// how many tuples it wrote and the LLM tokens they spent.
async fn run_unit(
    shared: &Shared,
    unit: &[Arc<dyn Paradigm>],
    query: &Query,
    vector: &[f32],
) -> Result<(u64, u64)> {
    let mut records = Vec::with_capacity(unit.len());
    for p in unit {
        let (record, refused) =
            llm::budget::watch(answer_one(shared, p.as_ref(), query, vector)).await;
        // A tuple one of whose calls the budget refused is left unwritten: the same command
        // with a larger budget answers it. (After a refusal, a failed tuple may be one whose
        // refused call ran on another task: it is left for the rerun too.)
        let left_for_rerun = refused || (record.error.is_some() && shared.budget.exhausted());
        if !left_for_rerun {
            records.push(record);
        }
    }
    shared
        .evaluator
        .score_semantics(&mut records, query, shared.share);
    let mut tokens = 0;
    for record in &records {
        if let Some(delay) = shared.fault_delay {
            // Fault-injection knob: widens the window in which a kill lands mid-run.
            tokio::time::sleep(delay).await;
        }
        let t = Instant::now();
        shared.store.write_result(shared.run_id, record).await?;
        if let Some(lease) = &shared.lease {
            shared
                .store
                .release_done(lease, &record.query_id, record.paradigm)
                .await?;
        }
        shared
            .clock
            .storing
            .fetch_add(t.elapsed().as_micros() as u64, Ordering::Relaxed);
        shared.clock.add(record);
        tokens += record.output.tokens.total() + record.judge_tokens_in + record.judge_tokens_out;
    }
    Ok((records.len() as u64, tokens))
}

/// How often a worker on a shared store looks again at items other workers hold.
const LEASE_POLL: std::time::Duration = std::time::Duration::from_millis(500);

/// The token budget of `--max-tokens` (the calls reserve in `Shared::budget`).
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

/// Runs and judges one (query, paradigm) pair (semantic F1 and coverage come after, per unit);
/// a failure becomes a recorded error.
pub(crate) async fn answer_one(
    shared: &Shared,
    paradigm: &dyn Paradigm,
    query: &Query,
    vector: &[f32],
) -> ResultRecord {
    let id = paradigm.id();
    let (mut output, mut judged) = match paradigm.run(query, vector).await {
        Ok(o) => {
            let judged = match paradigms::context_chunks(&o.context, &shared.chunks) {
                Ok(ctx) => shared.evaluator.judge(id, query, &o, &ctx).await,
                Err(e) => Judged {
                    error: Some(format!("context: {e}")),
                    ..Judged::default()
                },
            };
            (o, judged)
        }
        Err(e) => (
            Default::default(),
            Judged {
                error: Some(e.to_string()),
                ..Judged::default()
            },
        ),
    };
    output.latency.judge_ms = judged.judge_ms;
    if let Some(rule) = judged.rule {
        // The offline judge has several rules (decisions.md): the trace says which one labelled.
        match &mut output.trace {
            serde_json::Value::Object(map) => {
                map.insert("judge_rule".into(), rule.into());
            }
            serde_json::Value::Null => output.trace = serde_json::json!({ "judge_rule": rule }),
            other => {
                *other = serde_json::json!({ "judge_rule": rule, "paradigm": other.take() });
            }
        }
    }
    ResultRecord {
        query_id: query.id.clone(),
        paradigm: id,
        output,
        judge: judged.label,
        quality: std::mem::take(&mut judged.quality),
        judge_tokens_in: judged.tokens_in,
        judge_tokens_out: judged.tokens_out,
        mode: shared.mode.clone(),
        config_hash: shared.config_hash.clone(),
        error: judged.error,
        graph_build: shared.graph_build.clone().filter(|_| id.uses_graph()),
    }
}
