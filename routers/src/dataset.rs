//! The routing data set built from stored (query, corpus, paradigm, performance) tuples.
//!
//! One row per (query, corpus) of the chosen runs: the features are the one-hot query type, the
//! question's sentence embedding, its syntax features (`metrics::query`) and the six corpus
//! indicators stored by `ragrouter metrics`; the outcomes are each paradigm's stored result; the
//! label follows a [`LabelPolicy`]. A tuple recorded as failed (`error` set) counts as not
//! correct. Tokens of a tuple are `bench_core::cost_tokens`: in LLM mode everything the paradigm
//! was billed (construction share, retrieval, generation; the judge's tokens are an evaluation
//! cost and are left out), offline the context tokens it assembled (no LLM is billed offline).

use std::collections::BTreeSet;

use bench_core::{BenchError, Embedder, Mode, Result};
use metrics::labels::LabelPolicy;
use store::Store;

mod build;
mod parts;
pub(crate) use build::build_set;
pub(crate) use parts::{feature_blocks, RawCorpus, Tuple};
pub use parts::{BuildOptions, QuestionVectors, RoutingData};

/// The flat keys (`ragrouter metrics`' stored JSON) of the six indicators, in
/// [`INDICATOR_NAMES`](crate::features::INDICATOR_NAMES) order (`bench_core::CORPUS_INDICATORS`).
pub(crate) const INDICATOR_KEYS: [&str; 6] = {
    let mut keys = [""; 6];
    let mut i = 0;
    while i < 6 {
        keys[i] = bench_core::routing::CORPUS_INDICATORS[i].key;
        i += 1;
    }
    keys
};

pub use store::{RunRef, RunSelection, SplitUse};

/// The runs of a routing set: [`store::select_runs`]'s rule, then all must share one
/// mode and one cost unit (a routing set compares tuples of one kind).
pub async fn select_runs(store: &Store, sel: &RunSelection) -> Result<Vec<RunRef>> {
    select_runs_pooled(store, sel, false).await
}

/// [`select_runs`], where `pool_sources` lets runs imported from different sources (modes
/// `imported:A`, `imported:B`) share one data set; benched and imported runs never mix.
pub(crate) async fn select_runs_pooled(
    store: &Store,
    sel: &RunSelection,
    pool_sources: bool,
) -> Result<Vec<RunRef>> {
    let runs = store::select_runs(store, sel).await?;
    let modes: BTreeSet<&Mode> = runs.iter().map(|r| &r.mode).collect();
    let all_imported = modes.iter().all(|m| m.is_imported());
    if modes.len() > 1 && !(pool_sources && all_imported) {
        let hint = if all_imported {
            "runs of different imported sources are not pooled unless asked: choose corpora with --corpora, or pass --pool-sources"
        } else if sel.run_ids.is_empty() {
            "choose runs with --runs or corpora with --corpora"
        } else {
            "give --runs runs of one mode"
        };
        return Err(BenchError::Invalid(format!(
            "the selected runs mix modes ({}): a routing data set needs tuples of one mode; {hint}",
            runs.iter()
                .map(|r| format!("run {} of {}: {}", r.id, r.corpus, r.mode))
                .collect::<Vec<_>>()
                .join("; ")
        )));
    }
    let units: BTreeSet<String> = runs.iter().map(RunRef::cost_unit).collect();
    if units.len() > 1 {
        return Err(BenchError::Invalid(format!(
            "the selected runs count costs in different units ({}): choose runs of one unit",
            units.into_iter().collect::<Vec<_>>().join(", ")
        )));
    }
    Ok(runs)
}

/// Reads the questions, tuples and indicators of each run.
pub(crate) async fn load_raw(store: &Store, runs: &[RunRef]) -> Result<Vec<RawCorpus>> {
    let mut out = Vec::with_capacity(runs.len());
    for run in runs {
        let rows = store.routing_tuples(run.id).await?;
        let mut tuples = Vec::with_capacity(rows.len());
        for r in rows {
            let tokens = bench_core::cost_tokens(
                &run.mode,
                r.llm_tokens,
                r.context_tokens,
                r.cost.unwrap_or(0.0),
            );
            tuples.push(Tuple {
                query_id: r.query_id,
                paradigm: r.paradigm,
                judge: r.judge_label,
                semantic_f1: r.score,
                tokens,
                error: r.error,
            });
        }
        let with_tuples: BTreeSet<&str> = tuples.iter().map(|t| t.query_id.as_str()).collect();
        let mut queries = Vec::new();
        for q in store
            .stored_questions(&run.corpus, &run.corpus_hash)
            .await?
        {
            if !with_tuples.contains(q.id.as_str()) {
                continue;
            }
            queries.push((q.id, q.text, q.qtype));
        }
        let known: BTreeSet<&str> = queries.iter().map(|q| q.0.as_str()).collect();
        if let Some(t) = tuples.iter().find(|t| !known.contains(t.query_id.as_str())) {
            return Err(BenchError::Invalid(format!(
                "run {} of {} has a tuple for query {} that the queries table lacks",
                run.id, run.corpus, t.query_id
            )));
        }
        let indicators = indicators(store, run).await?;
        let signals = store.signals(run.id).await?;
        let published = store.published_choices(run.id).await?;
        out.push(RawCorpus {
            run: run.clone(),
            queries,
            tuples,
            indicators,
            signals,
            published,
        });
    }
    Ok(out)
}

/// The six indicators of a corpus from its stored metrics; `Err` says why there are none.
async fn indicators(store: &Store, run: &RunRef) -> Result<std::result::Result<[f64; 6], String>> {
    let Some((configuration, flat)) = store.corpus_metrics(&run.corpus, &run.corpus_hash).await?
    else {
        return Ok(Err(if run.mode.is_imported() {
            format!(
                "corpus {} was imported ({}) without documents, so it has no corpus indicators: use --features q",
                run.corpus, run.mode
            )
        } else {
            format!(
                "corpus {} has no stored corpus metrics for its content (hash {}): run `ragrouter metrics {}` first, or use --features q",
                run.corpus, run.corpus_hash, run.corpus
            )
        }));
    };
    let mut out = [0.0; 6];
    for (slot, key) in out.iter_mut().zip(INDICATOR_KEYS) {
        // A metrics record without a field (a run that built no graph stores no graph
        // indicators) leaves the corpus without indicators: an error only for features that
        // read them (C), not for Q or P.
        match flat
            .get(key)
            .and_then(serde_json::Value::as_f64)
            .filter(|v| v.is_finite())
        {
            Some(v) => *slot = v,
            None => {
                return Ok(Err(format!(
                    "stored corpus metrics of {} ({configuration}): field {key:?} is missing or not a finite number; rerun `ragrouter metrics {}`",
                    run.corpus, run.corpus
                )))
            }
        }
    }
    Ok(Ok(out))
}

/// Selects the runs, reads their tuples and builds the data set.
pub async fn load_routing_data(
    store: &Store,
    sel: &RunSelection,
    policy: LabelPolicy,
    embedder: &dyn Embedder,
    cache: Option<&dyn QuestionVectors>,
    opts: &BuildOptions,
) -> Result<RoutingData> {
    let runs = select_runs(store, sel).await?;
    let raw = load_raw(store, &runs).await?;
    build_set(&raw, policy, embedder, cache, opts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::{
        BenchConfig, FeatureKind, JudgeLabel, ParadigmId, ParadigmOutput, PhaseTokens,
        QualityMetrics, QueryType, ResultRecord,
    };
    use corpora::HashEmbedder;
    use store::RunSpec;

    /// Every run of the store, labelled by `policy`, no question-vector cache.
    async fn load_all(store: &Store, policy: LabelPolicy, emb: &HashEmbedder) -> RoutingData {
        let opts = BuildOptions {
            corpus_features: true,
            classes: None,
            probe_features: false,
        };
        load_routing_data(store, &RunSelection::default(), policy, emb, None, &opts)
            .await
            .unwrap()
    }

    fn record(
        q: &str,
        p: ParadigmId,
        judge: Option<JudgeLabel>,
        sf1: f64,
        tokens: u64,
    ) -> ResultRecord {
        ResultRecord {
            query_id: q.into(),
            paradigm: p,
            output: ParadigmOutput {
                answer: "a".into(),
                tokens: PhaseTokens {
                    construction_in: tokens / 2,
                    generation_out: tokens - tokens / 2,
                    ..PhaseTokens::default()
                },
                // Distinct from the LLM tokens, so the tests see which cost measure was used.
                context_tokens: 2 * tokens + 1,
                ..ParadigmOutput::default()
            },
            judge,
            quality: QualityMetrics {
                semantic_f1: Some(sf1),
                ..QualityMetrics::default()
            },
            judge_tokens_in: 1000,
            judge_tokens_out: 1000,
            mode: "offline".into(),
            config_hash: "h".into(),
            error: None,
            graph_build: None,
        }
    }

    async fn store_with_run(mode: &str, name: &str, metrics: bool) -> (Store, i64) {
        let store = Store::open_in_memory().await.unwrap();
        let id = add_run(&store, mode, name, metrics).await;
        (store, id)
    }

    async fn add_run(store: &Store, mode: &str, name: &str, metrics: bool) -> i64 {
        let mut corpus = fixtures::tiny_corpus(
            &[("d1", "Paris is the capital of France.")],
            vec![
                fixtures::query(
                    "q1",
                    "What is the capital of France?",
                    QueryType::Factual,
                    "Paris",
                    &[],
                ),
                fixtures::query(
                    "q2",
                    "Why did Rome fall?",
                    QueryType::Reasoning,
                    "many reasons",
                    &[],
                ),
            ],
        );
        corpus.name = name.into();
        store.upsert_corpus(&corpus).await.unwrap();
        let config = BenchConfig::default();
        let run = store
            .start_run(
                &RunSpec {
                    corpus: &corpus,
                    config: &config,
                    mode: Mode::parse(mode).expect("a mode label"),
                    reader: "r".into(),
                    judge: "j".into(),
                    embedder: "e".into(),
                    extractor: String::new(),
                    crate_version: "0".into(),
                    llm: None,
                },
                true,
            )
            .await
            .unwrap();
        use JudgeLabel::{Correct, Incorrect};
        use ParadigmId::{Graph, LlmOnly, Naive};
        let mut failed = record("q1", Graph, Some(Correct), 0.99, 10);
        failed.error = Some("timeout".into());
        for r in [
            record("q1", Naive, Some(Correct), 0.7, 300),
            record("q1", LlmOnly, Some(Correct), 0.6, 100),
            // A failed tuple is never correct, whatever else it says.
            failed,
            record("q2", Naive, Some(Incorrect), 0.2, 300),
            record("q2", LlmOnly, None, 0.0, 50),
        ] {
            store.write_result(run.id, &r).await.unwrap();
        }
        if metrics {
            let mut flat = serde_json::Map::new();
            for (i, k) in INDICATOR_KEYS.iter().enumerate() {
                flat.insert(k.to_string(), serde_json::json!(0.5 + i as f64));
            }
            store
                .put_corpus_metrics(
                    name,
                    &corpus.content_hash,
                    "cfg",
                    &serde_json::Value::Object(flat),
                )
                .await
                .unwrap();
        }
        run.id
    }

    #[tokio::test]
    async fn builds_rows_labels_and_features_from_tuples() {
        let (store, run) = store_with_run("offline", "tiny", true).await;
        let emb = HashEmbedder::new(8);
        let d = load_all(&store, LabelPolicy::JudgeThenSemanticF1, &emb).await;
        assert_eq!(d.runs, vec![("tiny".to_string(), run)]);
        assert_eq!(d.mode, "offline");
        assert_eq!(d.failed_tuples, 1);
        let s = &d.set.schema;
        assert_eq!(
            s.classes,
            vec!["llm-only", "naive", "graph", "cannot-answer"]
        );
        assert_eq!(s.n_features(), 4 + 8 + 9 + 6);
        let q1 = &d.set.rows[0];
        assert_eq!(q1.query_id, "q1");
        // Naive has the higher semantic F1 among correct ones; the failed graph tuple is out.
        assert_eq!(q1.label, 1);
        assert!(!q1.outcomes[2].unwrap().correct);
        // Offline the cost is the context the paradigm assembled (no LLM is billed).
        assert_eq!(q1.outcomes[1].unwrap().tokens, 601.0);
        // In LLM mode: construction + generation, the judge's excluded.
        let (store, _) = store_with_run("llm:m@http://127.0.0.1:1/v1", "tiny", true).await;
        let d = load_all(&store, LabelPolicy::JudgeThenSemanticF1, &emb).await;
        assert_eq!(d.set.rows[0].outcomes[1].unwrap().tokens, 300.0);
        assert_eq!(&q1.features[..4], &[1.0, 0.0, 0.0, 0.0]);
        assert_eq!(&q1.features[21..], &[0.5, 1.5, 2.5, 3.5, 4.5, 5.5]);
        let v = emb.vector("What is the capital of France?");
        assert!((q1.features[4] - f64::from(v[0])).abs() < 1e-6);
        let syn = metrics::query::query_features(&q1.text).to_vec();
        assert_eq!(q1.features[12], syn[0].1);
        // No correct paradigm: cannot-answer.
        assert_eq!(d.set.rows[1].label, 3);
        // The cheapest-correct policy picks llm-only for q1.
        let d = load_all(&store, LabelPolicy::CheapestCorrect, &emb).await;
        assert_eq!(d.set.rows[0].label, 0);
    }

    #[tokio::test]
    async fn clear_errors_for_missing_metrics_mixed_modes_and_bad_selections() {
        let emb = HashEmbedder::new(4);
        let policy = LabelPolicy::default();
        let (store, _) = store_with_run("offline", "tiny", false).await;
        let with_c = BuildOptions {
            corpus_features: true,
            classes: None,
            probe_features: false,
        };
        let e = load_routing_data(
            &store,
            &RunSelection::default(),
            policy,
            &emb,
            None,
            &with_c,
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(e.contains("ragrouter metrics tiny"), "{e}");
        // Query features alone need no corpus metrics.
        let q_only = load_routing_data(
            &store,
            &RunSelection::default(),
            policy,
            &emb,
            None,
            &BuildOptions::default(),
        )
        .await
        .unwrap();
        assert!(q_only
            .set
            .schema
            .block(FeatureKind::CorpusIndicators)
            .is_none());
        assert_eq!(q_only.set.schema.n_features(), 4 + 4 + 9);
        assert_eq!(q_only.cost_unit, "context tokens");

        let (store, _) = store_with_run("offline", "a", true).await;
        add_run(&store, "llm:gpt-x@http://x", "b", true).await;
        let e = select_runs(&store, &RunSelection::default())
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("mix modes") && e.contains("gpt-x"), "{e}");
        // Restricting to one corpus resolves it.
        let one = RunSelection {
            corpora: vec!["b".into()],
            ..RunSelection::default()
        };
        assert_eq!(
            select_runs(&store, &one).await.unwrap()[0].mode.label(),
            "llm:gpt-x@http://x"
        );
        let missing = RunSelection {
            corpora: vec!["zzz".into()],
            ..RunSelection::default()
        };
        let e = select_runs(&store, &missing).await.unwrap_err().to_string();
        assert!(e.contains("zzz") && e.contains("a, b"), "{e}");
        let bad = RunSelection {
            run_ids: vec![99],
            ..RunSelection::default()
        };
        assert!(select_runs(&store, &bad)
            .await
            .unwrap_err()
            .to_string()
            .contains("run 99"));
        // The latest run per corpus wins.
        let newer = add_run(&store, "offline", "a", true).await;
        let only_a = RunSelection {
            corpora: vec!["a".into()],
            ..RunSelection::default()
        };
        assert_eq!(select_runs(&store, &only_a).await.unwrap()[0].id, newer);
    }
}
