//! `bench`'s probe step: per question, the signals of a cheap first look (`--probes`), written
//! through `Store::put_signals` after the tuples; a rerun computes only the (question, probe)
//! pairs the store lacks.
//!
//! Offline every probe costs 0 in the run's cost unit (context tokens: none is given to a
//! reader) and records its milliseconds; in LLM mode the entity probe's extraction is billed in
//! LLM tokens. A probe's wall time per question is shared equally among its signals, so the
//! signals' milliseconds add up to the probe's.

use std::collections::{BTreeSet, HashMap};
use std::time::Instant;

use anyhow::Result;
use bench_core::{Embeddings, Query, Signal};
use corpora::FlatIndex;
use paradigms::retrieval_signals::{self as p, Bm25Index, Components};
use paradigms::GraphRetriever;
use store::Store;

use super::invocation::Invocation;
use crate::checks::BadInput;
use crate::engines::ParadigmParts;

/// The zero-token probes, in the order they run.
pub(crate) const OFFLINE_PROBES: [&str; 4] = ["dense", "bm25", "entities", "ppr"];
/// Probes that need an LLM run.
pub(crate) const LLM_PROBES: [&str; 1] = ["answers"];
/// Probes that run only when named: `pairs` reads the stored answers of every arm of the run
/// (either mode), and its signals grow with the square of the arms.
pub(crate) const NAMED_PROBES: [&str; 1] = ["pairs"];

/// Log-probability alternatives the reader asks for per answer token when `answers` is on.
pub(crate) const TOP_LOGPROBS: u8 = 5;

/// The probes of an invocation, checked: those `--probes` named, or by default every probe but
/// the [`NAMED_PROBES`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Probes {
    pub(crate) names: Vec<&'static str>,
    /// Named on the command line (not the default list): a probe this run cannot compute is
    /// then said.
    pub(crate) explicit: bool,
}

impl Probes {
    /// What the LLM reader should ask for: log-probabilities when the answer probe is on.
    pub(crate) fn reader_logprobs(&self) -> Option<u8> {
        self.names.contains(&"answers").then_some(TOP_LOGPROBS)
    }

    /// Says once, before any work, that a probe named explicitly cannot run in this mode (the
    /// default list names every probe and runs those the mode allows, without a word).
    pub(crate) fn note_unrunnable(&self, llm: bool) {
        if self.explicit && !llm && self.names.contains(&"answers") {
            eprintln!(
                "probes: answers compares the LLM-only and NaiveRAG answers of an LLM run; this \
                 run is offline, so it records no answer signals"
            );
        }
    }
}

/// Dense scores kept per question (Adaptive-k's gap is looked for among them).
const DENSE_K: usize = 100;
/// Rankings compared by the BM25/dense overlap.
const OVERLAP_K: usize = 10;
/// Questions per store transaction: an interruption loses at most this many questions' signals.
const BATCH: usize = 100;

/// The probes `--probes` names, checked; `None` (not given): every probe but the
/// [`NAMED_PROBES`]. An empty list or
/// name, and `none` beside a probe, are refused: each would otherwise silently mean something.
pub(crate) fn parse(names: Option<&[String]>) -> Result<Probes> {
    let Some(names) = names else {
        let names = OFFLINE_PROBES.iter().chain(&LLM_PROBES).copied().collect();
        return Ok(Probes {
            names,
            explicit: false,
        });
    };
    let expected = || {
        format!(
            "expected a comma-separated list of {}, {}, {}, or none alone",
            OFFLINE_PROBES.join(", "),
            LLM_PROBES.join(", "),
            NAMED_PROBES.join(", ")
        )
    };
    let given = names.join(",");
    if names.iter().any(|n| n.trim().is_empty()) {
        return Err(BadInput(format!(
            "--probes {given:?}: {}; {}",
            if given.trim().is_empty() {
                "no probe named (for no probe, say none)"
            } else {
                "an empty name in the list"
            },
            expected()
        ))
        .into());
    }
    let names: Vec<&str> = names.iter().map(|n| n.trim()).collect();
    if names.contains(&"none") && names.len() > 1 {
        return Err(BadInput(format!(
            "--probes {given:?}: none means no probe, so it cannot be listed with others; {}",
            expected()
        ))
        .into());
    }
    let mut out = Vec::new();
    for n in names.into_iter().filter(|&n| n != "none") {
        let Some(&known) = OFFLINE_PROBES
            .iter()
            .chain(&LLM_PROBES)
            .chain(&NAMED_PROBES)
            .find(|&&k| k == n)
        else {
            return Err(BadInput(format!("--probes {n:?}: unknown probe; {}", expected())).into());
        };
        if !out.contains(&known) {
            out.push(known);
        }
    }
    Ok(Probes {
        names: out,
        explicit: true,
    })
}

/// What the probe step reads.
pub(crate) struct ProbeInputs<'a> {
    pub(crate) store: &'a Store,
    pub(crate) run_id: i64,
    pub(crate) probes: &'a [&'static str],
    pub(crate) queries: &'a [Query],
    pub(crate) vectors: &'a Embeddings,
    pub(crate) index: &'a FlatIndex,
    pub(crate) chunk_texts: Vec<&'a str>,
    /// `None` when no chosen paradigm reads the graph (then `entities` and `ppr` are skipped).
    pub(crate) graph: Option<GraphRetriever>,
}

/// Signals of one probe on one question, before naming the probe and sharing its time.
type Values = Vec<(&'static str, Option<f64>)>;

fn signals(probe: &str, values: Values, cost: f64, ms: f64) -> Vec<Signal> {
    let share = ms / values.len().max(1) as f64;
    values
        .into_iter()
        .enumerate()
        .map(|(i, (name, value))| Signal {
            name: name.to_string(),
            value,
            probe: probe.to_string(),
            paradigms: Vec::new(),
            // The probe's own bill sits on its first signal, so a router pays it once.
            cost: if i == 0 { cost } else { 0.0 },
            cost_ms: share,
        })
        .collect()
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// Which probes are due for which question: the probes this step runs and the (question,
/// probe) pairs stored by an earlier invocation.
struct Due<'a> {
    probes: Vec<&'a str>,
    done: &'a Done,
}

impl Due<'_> {
    /// The probe runs in this step.
    fn wants(&self, p: &str) -> bool {
        self.probes.contains(&p)
    }

    /// The question has no stored signals of the probe yet.
    fn pending(&self, q: &Query, probe: &str) -> bool {
        !self.done.contains(&(q.id.clone(), probe.to_string()))
    }

    /// The probe runs and the question still lacks its signals.
    fn due(&self, q: &Query, probe: &str) -> bool {
        self.wants(probe) && self.pending(q, probe)
    }
}

/// What the probes read across questions, computed once: the dense top-k of every pending
/// question (one batched search, its time shared evenly), the BM25 index, the graph's components.
struct Prepared {
    dense: Vec<Vec<corpora::Hit>>,
    dense_ms: f64,
    bm25: Option<Bm25Index>,
    components: Option<Components>,
}

/// The offline probes that can run: `entities` and `ppr` are skipped, with a word, without a
/// graph.
fn runnable<'a>(inputs: &ProbeInputs<'a>) -> Vec<&'a str> {
    let mut probes: Vec<&str> = inputs
        .probes
        .iter()
        .copied()
        .filter(|p| OFFLINE_PROBES.contains(p))
        .collect();
    if inputs.graph.is_none() && probes.iter().any(|p| matches!(*p, "entities" | "ppr")) {
        eprintln!("probes: entities and ppr need the knowledge graph, which no chosen paradigm reads: skipped");
        probes.retain(|p| !matches!(*p, "entities" | "ppr"));
    }
    probes
}

/// The shared work of the pending questions `todo` (indices into the inputs' questions).
fn prepare(inputs: &ProbeInputs<'_>, due: &Due<'_>, todo: &[usize]) -> Prepared {
    let needs_dense = due.wants("dense") || due.wants("bm25");
    let (dense, dense_ms) = if needs_dense {
        let t = Instant::now();
        let mut sub = Vec::with_capacity(todo.len() * inputs.vectors.dim);
        for &i in todo {
            sub.extend_from_slice(inputs.vectors.row(i));
        }
        let batch = Embeddings::new(inputs.vectors.dim, sub);
        let hits = inputs.index.search_batch(&batch, DENSE_K);
        (hits, ms(t) / todo.len() as f64)
    } else {
        (Vec::new(), 0.0)
    };
    let bm25 = if todo.iter().any(|&i| due.due(&inputs.queries[i], "bm25")) {
        let t = Instant::now();
        let index = Bm25Index::new(&inputs.chunk_texts);
        eprintln!(
            "probes: BM25 index over {} chunks in {:.1}s",
            inputs.chunk_texts.len(),
            t.elapsed().as_secs_f64()
        );
        Some(index)
    } else {
        None
    };
    let components = inputs
        .graph
        .as_ref()
        .map(|g| Components::new(&g.graph.adjacency));
    Prepared {
        dense,
        dense_ms,
        bm25,
        components,
    }
}

/// The (question, probe) pairs of the run's stored signals.
type Done = BTreeSet<(String, String)>;

/// Runs the pending probes and stores their signals; returns (questions probed, signals written).
/// `done` holds the pairs stored before the step.
pub(crate) async fn run(inputs: ProbeInputs<'_>, done: &Done) -> Result<(usize, usize)> {
    let probes = runnable(&inputs);
    let due = Due { probes, done };
    let todo: Vec<usize> = (0..inputs.queries.len())
        .filter(|&i| {
            due.probes
                .iter()
                .any(|p| due.pending(&inputs.queries[i], p))
        })
        .collect();
    if todo.is_empty() {
        return Ok((0, 0));
    }
    let bar = crate::progress::bar(todo.len() as u64, "probing", "");
    let prepared = prepare(&inputs, &due, &todo);

    let (mut questions, mut written) = (0, 0);
    let mut rows: Vec<(String, Signal)> = Vec::new();
    let mut ws = paradigms::PushWorkspace::default();
    for (n, &i) in todo.iter().enumerate() {
        let q = &inputs.queries[i];
        let mut out = cheap_signals(&prepared, &due, q, n);
        graph_signals(&inputs, &prepared, &due, i, &mut ws, &mut out).await?;
        if !out.is_empty() {
            questions += 1;
        }
        for s in out.into_values().flatten() {
            rows.push((q.id.clone(), s));
        }
        if (n + 1) % BATCH == 0 || n + 1 == todo.len() {
            inputs.store.put_signals(inputs.run_id, &rows).await?;
            written += rows.len();
            rows.clear();
        }
        bar.set_position(n as u64 + 1);
    }
    bar.finish_and_clear();
    Ok((questions, written))
}

/// The dense and BM25 signals of question `q`, the `n`-th pending one.
fn cheap_signals(
    prepared: &Prepared,
    due: &Due<'_>,
    q: &Query,
    n: usize,
) -> HashMap<&'static str, Vec<Signal>> {
    let mut out: HashMap<&str, Vec<Signal>> = HashMap::new();
    if due.due(q, "dense") {
        let t = Instant::now();
        let scores: Vec<f32> = prepared.dense[n].iter().map(|h| h.score).collect();
        let d = p::dense_signals(&scores);
        let values = vec![
            ("dense.top1", d.top1),
            ("dense.margin", d.margin),
            ("dense.mean5", d.mean5),
            ("dense.mean10", d.mean10),
            ("dense.gap_pos", d.gap_position),
        ];
        let took = prepared.dense_ms + ms(t);
        out.insert("dense", signals("dense", values, 0.0, took));
    }
    if let (Some(index), true) = (&prepared.bm25, due.pending(q, "bm25")) {
        let t = Instant::now();
        let hits = index.search(&q.text, OVERLAP_K);
        let dense_rows: Vec<u32> = prepared.dense[n].iter().map(|h| h.row).collect();
        let values = vec![
            ("bm25.top1", Some(hits.first().map_or(0.0, |h| h.1))),
            (
                "bm25.overlap10",
                p::top_overlap(&p::rows(&hits), &dense_rows, OVERLAP_K),
            ),
        ];
        out.insert("bm25", signals("bm25", values, 0.0, ms(t)));
    }
    out
}

/// The entity and PPR signals of question `i` into `out`, when the graph is read and either is
/// due. Linking and PPR run together: each probe is charged half the time; the extraction's LLM
/// tokens (0 offline) go to the entity probe.
async fn graph_signals(
    inputs: &ProbeInputs<'_>,
    prepared: &Prepared,
    due: &Due<'_>,
    i: usize,
    ws: &mut paradigms::PushWorkspace,
    out: &mut HashMap<&'static str, Vec<Signal>>,
) -> Result<()> {
    let q = &inputs.queries[i];
    let graph_due = ["entities", "ppr"].into_iter().any(|p| due.due(q, p));
    let (Some(g), Some(c), true) = (&inputs.graph, &prepared.components, graph_due) else {
        return Ok(());
    };
    let t = Instant::now();
    let s = p::graph_signals(g, c, &q.text, inputs.vectors.row(i), ws).await?;
    let took = ms(t);
    if due.due(q, "entities") {
        let values = vec![
            ("entity.mentions", Some(s.mentions)),
            ("entity.linked", Some(s.linked)),
            ("entity.hit_rate", s.hit_rate),
        ];
        out.insert(
            "entities",
            signals("entities", values, s.tokens as f64, took / 2.0),
        );
    }
    if due.due(q, "ppr") {
        let values = vec![
            ("ppr.seeds", Some(s.seeds)),
            ("ppr.top1", s.ppr_top1),
            ("ppr.top10_mass", s.ppr_top10_mass),
            ("ppr.entropy", s.ppr_entropy),
            ("ppr.seed_degree", s.seed_degree),
            ("ppr.seed_component", s.seed_component),
        ];
        out.insert("ppr", signals("ppr", values, 0.0, took / 2.0));
    }
    Ok(())
}

impl Invocation<'_> {
    /// The probe step of a finished run (`--probes`), reporting what it added.
    pub(super) async fn probe(
        &self,
        store: &Store,
        run_id: i64,
        parts: &ParadigmParts<'_>,
        has_graph: bool,
    ) -> Result<()> {
        let probes = parse(self.args.probes.as_deref())?.names;
        if probes.is_empty() {
            return Ok(());
        }
        let t = Instant::now();
        // Read once: `run` writes only the offline probes, so the set still holds for `answers`
        // and `pairs`, and `answers` writes none of `pairs`' signals.
        let done: Done = store
            .signals(run_id)
            .await?
            .into_iter()
            .map(|(q, s)| (q, s.probe))
            .collect();
        let inputs = ProbeInputs {
            store,
            run_id,
            probes: &probes,
            queries: self.queries,
            vectors: &self.embedded.query_vectors,
            index: &self.embedded.index,
            chunk_texts: self.corpus.chunks.iter().map(|c| c.text.as_str()).collect(),
            graph: has_graph.then(|| parts.graph_retriever()).transpose()?,
        };
        let (mut questions, mut written) = run(inputs, &done).await?;
        if self.llm_settings.is_some() && probes.contains(&"answers") {
            let (q, w) = answers(store, run_id, self.queries, &done).await?;
            questions = questions.max(q);
            written += w;
        }
        if probes.contains(&"pairs") {
            let (q, w) = pairs(store, run_id, self.queries, self.paradigm_ids, &done).await?;
            questions = questions.max(q);
            written += w;
        }
        if questions > 0 {
            let llm = self.llm_settings.is_some();
            let ran: Vec<&str> = probes
                .iter()
                .copied()
                .filter(|p| !LLM_PROBES.contains(p) || llm)
                .collect();
            eprintln!(
                "probes ({}): {written} signals for {questions} questions in {:.1}s",
                ran.join(", "),
                t.elapsed().as_secs_f64()
            );
        }
        Ok(())
    }
}

/// The questions of the run that already hold signals of `probe`.
fn probed<'a>(done: &'a Done, probe: &str) -> BTreeSet<&'a str> {
    done.iter()
        .filter(|(_, p)| p == probe)
        .map(|(q, _)| q.as_str())
        .collect()
}

/// One question's signals as rows, each billed an equal share of the time since `t`.
fn timed(q: &Query, out: Vec<Signal>, t: Instant) -> impl Iterator<Item = (String, Signal)> + '_ {
    let share = ms(t) / out.len().max(1) as f64;
    out.into_iter().map(move |mut s| {
        s.cost_ms = share;
        (q.id.clone(), s)
    })
}

/// The answer probe of an LLM run: the stored LLM-only and NaiveRAG answers compared (EM and
/// token F1 between them, lengths, refusals) and each one's token-level confidence (mean and
/// minimum log-probability, entropy; missing where the endpoint returned no log-probabilities).
/// Its signals cost nothing of their own: a router reading them pays the two paradigms, whose
/// LLM tokens the tuples already bill. Questions where either answer is missing (a failed tuple)
/// get no row, so the next invocation, which retries the tuple, probes them.
async fn answers(
    store: &Store,
    run_id: i64,
    queries: &[Query],
    done: &Done,
) -> Result<(usize, usize)> {
    use bench_core::ParadigmId::{LlmOnly, Naive};
    let done = probed(done, "answers");
    let of = |rows: Vec<(String, String, serde_json::Value)>| -> HashMap<String, (String, serde_json::Value)> {
        rows.into_iter().map(|(q, a, t)| (q, (a, t))).collect()
    };
    let direct = of(store.answered(run_id, LlmOnly.as_str()).await?);
    let naive = of(store.answered(run_id, Naive.as_str()).await?);
    if direct.is_empty() || naive.is_empty() {
        eprintln!("probes: answers needs the llm-only and naive tuples of the run: skipped");
        return Ok((0, 0));
    }
    let mut rows = Vec::new();
    let mut questions = 0;
    for q in queries.iter().filter(|q| !done.contains(q.id.as_str())) {
        let (Some((a, ta)), Some((b, tb))) = (direct.get(&q.id), naive.get(&q.id)) else {
            continue;
        };
        let t = Instant::now();
        let names = metrics::agreement::agreement_names(LlmOnly.as_str(), Naive.as_str());
        let values = metrics::agreement::agreement_signals(a, b);
        let mut out: Vec<Signal> = names
            .iter()
            .zip(values)
            .map(|(n, v)| Signal::free(n, Some(v), "answers", &[LlmOnly, Naive]))
            .collect();
        for (p, trace) in [(LlmOnly, ta), (Naive, tb)] {
            let c: Option<bench_core::Confidence> =
                serde_json::from_value(trace["confidence"].clone()).ok();
            for (what, v) in [
                ("mean", c.map(|c| c.mean_logprob)),
                ("min", c.map(|c| c.min_logprob)),
                ("entropy", c.map(|c| c.entropy)),
            ] {
                out.push(Signal::free(
                    &format!("logprob.{what}.{}", p.as_str()),
                    v,
                    "answers",
                    &[p],
                ));
            }
        }
        questions += 1;
        rows.extend(timed(q, out, t));
    }
    let written = rows.len();
    store.put_signals(run_id, &rows).await?;
    Ok((questions, written))
}

/// The post-arm probe (`pairs`): the stored answers of the run's arms (the LLM's in LLM mode,
/// the offline readers' offline) compared pairwise and shaped, by the function an import with
/// answers calls too. Like the answer probe it costs nothing of its own: each signal names the
/// arms it reads, which a router pays as their tuples bill them. A question lacking an answer of
/// any arm of the run (a failed tuple) gets no row, so the next invocation probes it; a run of
/// one arm has no pair to compare and is skipped with a word.
async fn pairs(
    store: &Store,
    run_id: i64,
    queries: &[Query],
    arms: &[bench_core::ParadigmId],
    done: &Done,
) -> Result<(usize, usize)> {
    if arms.len() < 2 {
        eprintln!(
            "probes: pairs compares the answers of two arms or more; this run has one: skipped"
        );
        return Ok((0, 0));
    }
    let done = probed(done, metrics::pairs::PROBE);
    let mut by_arm = Vec::with_capacity(arms.len());
    for &p in arms {
        let rows = store.answered(run_id, p.as_str()).await?;
        let answers: HashMap<String, String> = rows.into_iter().map(|(q, a, _)| (q, a)).collect();
        by_arm.push((p, answers));
    }
    let mut rows = Vec::new();
    let mut questions = 0;
    for q in queries.iter().filter(|q| !done.contains(q.id.as_str())) {
        let answers: Option<Vec<(bench_core::ParadigmId, &str)>> = by_arm
            .iter()
            .map(|(p, m)| m.get(&q.id).map(|a| (*p, a.as_str())))
            .collect();
        let Some(answers) = answers else {
            continue;
        };
        let t = Instant::now();
        let out = metrics::pairs::pairs_signals(&q.text, &answers);
        questions += 1;
        rows.extend(timed(q, out, t));
    }
    let written = rows.len();
    store.put_signals(run_id, &rows).await?;
    Ok((questions, written))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(s: &str) -> Vec<String> {
        s.split(',').map(str::to_owned).collect()
    }

    #[test]
    fn h24_probes_lists_are_checked() {
        let all = parse(None).unwrap();
        assert_eq!(all.names, ["dense", "bm25", "entities", "ppr", "answers"]);
        assert!(!all.explicit);
        let named = parse(Some(&list("bm25, dense,bm25"))).unwrap();
        assert_eq!((named.names, named.explicit), (vec!["bm25", "dense"], true));
        // `pairs` runs only when named.
        assert!(!all.names.contains(&"pairs"));
        assert_eq!(
            parse(Some(&list("pairs,answers"))).unwrap().names,
            ["pairs", "answers"]
        );
        let e = parse(Some(&list("pair"))).unwrap_err().to_string();
        assert!(e.contains("answers, pairs, or none alone"), "{e}");
        assert!(parse(Some(&list("none"))).unwrap().names.is_empty());
        for bad in [
            "",
            ",",
            "dense,,bm25",
            "none,dense",
            "dense,none",
            "none,none",
            "x",
        ] {
            let e = parse(Some(&list(bad))).unwrap_err().to_string();
            assert!(e.starts_with("--probes "), "{bad:?}: {e}");
        }
    }
}
