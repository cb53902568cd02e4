//! One invocation of `bench` ([`Invocation`]) and its main line: open the store, assemble the
//! paradigms, start or resume the run, execute, run the signals step and report. The other steps
//! (`assemble`, `retrieval`, `signals_step`) add their methods to [`Invocation`] in their files.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use bench_core::{BenchConfig, Mode, ParadigmId, Query};
use corpora::KnowledgeGraph;
use llm::LlmSettings;
use metrics::{FaithfulnessCache, TupleEvaluator};
use paradigms::ChunkTable;
use store::{RunSpec, Store};

use super::execute::{execute, Budget, Stop};
use super::finish;
use super::shared::{statements_line, EmbeddedCorpus, Shared, StageClock};
use crate::cli::BenchArgs;
use crate::engines::{record_embedding_usage, Engines, LlmClients};
use crate::table;

/// One invocation of `bench`: its inputs, read by every step (the run it resumes or starts
/// may span several invocations).
pub(super) struct Invocation<'a> {
    pub(super) args: &'a BenchArgs,
    pub(super) config: &'a BenchConfig,
    pub(super) corpus: &'a bench_core::Corpus,
    pub(super) queries: &'a [Query],
    pub(super) paradigm_ids: &'a [ParadigmId],
    pub(super) llm_settings: Option<&'a LlmSettings>,
    pub(super) mode: &'a Mode,
    pub(super) embedded: &'a EmbeddedCorpus,
    /// The top log-probabilities per token the LLM reader asks for (`--probes` with an answer
    /// probe); `None`: plain requests.
    pub(super) reader_logprobs: Option<u8>,
}

impl Invocation<'_> {
    /// Opens the store, assembles the paradigms, answers the pending tuples and reports.
    pub(super) async fn answer(&self, llm_clients: Option<LlmClients>) -> Result<()> {
        if self.args.retrieval_only {
            return self.retrieval_only().await;
        }
        let store = Store::open_db(&self.args.store.db).await?;
        store.upsert_corpus(self.corpus).await?;
        let offline = self.offline_parts();
        let engines = match llm_clients {
            None => Engines::offline(
                self.config,
                offline.reader.clone(),
                offline.extractor.clone(),
            ),
            Some(clients) => Engines::llm(self.config, clients, &store, self.reader_logprobs),
        };

        let (graph, graph_build, graph_secs) = self.graph(&store, &engines).await?;
        let (parts, paradigms) = self.paradigms(&offline, &engines, graph.clone())?;
        let chunks = offline.chunks.clone();
        let (run, shared) = self.start(&store, &engines, chunks, graph_build).await?;
        let t_answer = Instant::now();
        let budget = Budget {
            max_tokens: self.args.max_tokens,
            spent_before: store.run_tokens(run.id).await?,
        };
        let done = store.finished_pairs(run.id).await?;
        let stop = execute(
            &shared,
            &paradigms,
            self.queries,
            &self.embedded.query_vectors,
            &done,
            self.config.concurrency,
            budget,
        )
        .await?;
        let used = shared.budget.spent();
        if used.counted > 0 && !matches!(stop, Stop::Budget { .. }) {
            eprintln!(
                "llm tokens of this invocation: {} counted with cl100k; {}",
                used.counted,
                reported_line(&used)
            );
        }
        // Query-time embeddings (graph entities of questions) are billed too.
        let endpoint = self.embedded.endpoint_embedder.as_deref();
        record_embedding_usage(&store, run.id, endpoint).await?;
        if !self.goes_on(stop, &shared, run.id)? {
            return Ok(());
        }
        let answer_secs = t_answer.elapsed().as_secs_f64();
        self.probe(&store, run.id, &parts, graph.is_some()).await?;
        // The probe step's embeddings (its entity linking of the questions) are the run's bill too.
        record_embedding_usage(&store, run.id, self.embedded.endpoint_embedder.as_deref()).await?;
        let graph_used = graph
            .as_ref()
            .map(|(g, _)| (g.as_ref(), engines.graph_extractor.identity()));
        self.report(
            &store,
            run,
            &engines,
            graph_used,
            &shared,
            [graph_secs, answer_secs],
        )
        .await?;
        // Checkpointed: the file alone holds the run (an early return is, when the store drops).
        store.close().await;
        Ok(())
    }

    /// Says how the run loop stopped short, if it did: `true` when it finished and the run goes
    /// on to the signals step and the report; `false` at the token budget (said, not an error);
    /// an error when interrupted.
    fn goes_on(&self, stop: Stop, shared: &Shared, run_id: i64) -> Result<bool> {
        match stop {
            Stop::Done => Ok(true),
            Stop::Budget { spent } => {
                let s = shared.budget.spent();
                println!(
                    "stopped at the token budget (--max-tokens {}): this invocation's LLM calls cost \
                     {} tokens counted with cl100k (each call's bound, prompt + max_tokens, was reserved \
                     before it was sent; {} call(s) the budget could not hold were not sent); {}; \
                     run {} holds {spent} tokens as recorded. Finished tuples are stored in {}; run \
                     again with a larger budget to continue",
                    self.args.max_tokens.unwrap_or_default(),
                    s.counted,
                    s.refused,
                    reported_line(&s),
                    run_id,
                    self.args.store.db
                );
                Ok(false)
            }
            Stop::Interrupted => anyhow::bail!(
                "interrupted: finished tuples are stored in {}; run the same command again to resume run {}",
                self.args.store.db,
                run_id
            ),
        }
    }

    /// Resumes or starts the run (recording the LLM and embedding settings, and dropping tuples
    /// answered on another graph build) and makes what every task shares.
    async fn start(
        &self,
        store: &Store,
        engines: &Engines,
        chunks: Arc<ChunkTable>,
        graph_build: Option<String>,
    ) -> Result<(store::RunHandle, Arc<Shared>)> {
        let spec = RunSpec {
            corpus: self.corpus,
            config: self.config,
            mode: self.mode.clone(),
            reader: engines.reader.identity(),
            judge: engines.judge.identity(),
            embedder: self.embedded.embedder.name().to_owned(),
            extractor: if graph_build.is_some() {
                engines.graph_extractor.identity().label()
            } else {
                String::new()
            },
            crate_version: env!("CARGO_PKG_VERSION").to_owned(),
            llm: self.llm_settings.map(LlmSettings::record_json),
        };
        let run = store.start_run(&spec, self.args.fresh).await?;
        let endpoint = self.embedded.endpoint_embedder.as_deref();
        record_embedding_usage(store, run.id, endpoint).await?;
        if let Some(signature) = &graph_build {
            let on_graph: Vec<ParadigmId> = self
                .paradigm_ids
                .iter()
                .copied()
                .filter(|p| p.uses_graph())
                .collect();
            let dropped = store
                .drop_other_graph_builds(run.id, &on_graph, signature)
                .await?;
            if dropped > 0 {
                eprintln!(
                    "{dropped} tuples were answered on another build of the graph (an earlier \
                     attempt's, with failed extractions): answered again on this one"
                );
            }
        }
        let lease = match store.backend() {
            store::Backend::Sqlite => None,
            store::Backend::Postgres => {
                let started_ms = store.clock_ms().await?;
                Some(store::Lease {
                    run_id: run.id,
                    worker: worker_name(started_ms),
                    lease_ms: (self.args.lease.max(1) * 1000) as i64,
                    started_ms,
                })
            }
        };
        let llm = self.llm_settings.is_some();
        let shared = Arc::new(Shared {
            store: store.clone(),
            run_id: run.id,
            evaluator: TupleEvaluator {
                judge: engines.judge.clone(),
                encoder: self.embedded.encoder.clone(),
                faithfulness: llm.then(FaithfulnessCache::new),
                faithful: paradigms::registry::faithful_paradigms(),
                reader_recall: (!llm).then_some(self.config.judge.correct_recall),
            },
            mode: self.mode.label(),
            config_hash: spec.config_hash(),
            fault_delay: fault_delay(),
            clock: StageClock::default(),
            share: !self.args.share_nothing && !llm,
            blocking: !llm,
            chunks,
            graph_build,
            lease,
            budget: engines.budget.clone(),
        });
        Ok((run, shared))
    }

    /// The end of a finished run: the table, the counts of unreadable replies, the corpus
    /// indicators and the time by stage.
    async fn report(
        &self,
        store: &Store,
        run: store::RunHandle,
        engines: &Engines,
        graph_used: Option<(&KnowledgeGraph, corpora::ExtractorId)>,
        shared: &Shared,
        [graph_secs, answer_secs]: [f64; 2],
    ) -> Result<()> {
        let outcome = store.run_outcome(run.id).await?;
        if let Some(err) = finish::all_failed(&outcome, run.id, &self.args.store.db) {
            print!("{}", table::render(&store.summary(run.id).await?));
            return Err(err);
        }
        store.finish_run(run.id).await?;
        let rows = store.summary(run.id).await?;
        println!(
            "\nrun {} ({}) on {}: {} tuples in {}",
            run.id,
            if run.resumed { "resumed" } else { "new" },
            self.corpus.name,
            store.count_results(run.id).await?,
            self.args.store.db
        );
        println!("mode: {}", self.mode.label());
        // Approximate search changes which chunks every retrieving paradigm sees: say so here.
        let dense = self.embedded.index.describe();
        if dense != "exact" {
            println!("dense index: {dense} (approximate)");
        }
        if self.llm_settings.is_none() {
            println!("{}", table::OFFLINE_CORRECT);
        }
        println!();
        for line in [engines.cache_line(), engines.retry_line()]
            .into_iter()
            .flatten()
        {
            eprintln!("{line}");
        }
        print!("{}", table::render(&rows));
        if let Some(line) = statements_line(self.corpus, Some(&self.args.cache_dir)) {
            println!("{line}");
        }
        for (paradigm, n, of) in store.count_stops(run.id, "evaluation-unreadable").await? {
            println!(
                "{paradigm}: {n} of {of} loops stopped at an unreadable self-evaluation \
                 (the answer so far was kept; the reply is in the trace)"
            );
        }
        for (paradigm, n, of) in store.count_unreadable_entities(run.id).await? {
            println!(
                "{paradigm}: {n} of {of} graph retrievals used the question itself: the entity \
                 list was unreadable (the reply is in the trace)"
            );
        }
        finish::ensure_corpus_metrics(
            store,
            self.corpus,
            graph_used,
            &self.embedded.cache,
            self.embedded.embedder.as_ref(),
        )
        .await?;
        if let Some((configuration, metrics)) = store
            .corpus_metrics(&self.corpus.name, &self.corpus.content_hash)
            .await?
        {
            println!("\ncorpus indicators ({configuration}):");
            print!("{}", crate::indicators::render_indicators(&metrics));
        }
        // This invocation's work only: a resumed run does not count the tuples stored before.
        let [retrieval, reading, judging, storing] = shared.clock.seconds();
        eprintln!(
            "\nwall time by stage: embedding {:.1}s, graph {graph_secs:.1}s, answering {answer_secs:.1}s \
             (summed over the {} tuples answered now: retrieval {retrieval:.1}s, reading {reading:.1}s, \
             judging {judging:.1}s, storing {storing:.1}s)",
            self.embedded.secs,
            shared.clock.tuples.load(Ordering::Relaxed),
        );
        Ok(())
    }
}

/// What the endpoint reported for the calls of this invocation, beside the cl100k count.
fn reported_line(s: &llm::budget::Spent) -> String {
    let missing = if s.unreported > 0 {
        format!(" ({} call(s) reported no usage)", s.unreported)
    } else {
        String::new()
    };
    format!("the endpoint reported {} tokens{missing}", s.reported)
}

/// `RAGROUTER_FAULT_DELAY_MS`: a pause before each write (at most a minute), which widens the
/// window in which the crash-and-resume tests kill a run. A test hook: debug builds only.
#[cfg(debug_assertions)]
fn fault_delay() -> Option<std::time::Duration> {
    std::env::var("RAGROUTER_FAULT_DELAY_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map(|ms| std::time::Duration::from_millis(ms.min(60_000)))
}

/// Release builds have no test hooks.
#[cfg(not(debug_assertions))]
fn fault_delay() -> Option<std::time::Duration> {
    None
}

/// A worker's name in the claims table: host, process and start (database clock).
fn worker_name(started_ms: i64) -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "host".into());
    format!("{host}/{}/{started_ms}", std::process::id())
}
