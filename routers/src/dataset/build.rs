//! `build_set` in named steps: the classes, the checks, the schema, then per corpus its
//! questions' vectors and per question its label, outcomes and features.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use bench_core::{
    BenchError, ClassOutcome, Embedder, FeatureKind, ParadigmId, PublishedChoice, QueryType,
    Result, RoutingRow, RoutingSchema, RoutingSet, Signal, SplitTag,
};
use metrics::labels::{routing_label, LabelPolicy, Outcome, RoutingLabel};

use super::parts::{feature_blocks, BuildOptions, QuestionVectors, RawCorpus, RoutingData, Tuple};
use crate::probe_columns::{self, ProbeBill};

/// Builds the data set: classes are the paradigms present in the tuples (or `opts.classes`),
/// rows follow the runs' order and each corpus's stored query order. Questions are embedded in
/// batches (through `cache` when given, keyed by corpus, split and encoder).
pub(crate) fn build_set(
    raw: &[RawCorpus],
    policy: LabelPolicy,
    embedder: &dyn Embedder,
    cache: Option<&dyn QuestionVectors>,
    opts: &BuildOptions,
) -> Result<RoutingData> {
    let paradigms = classes(raw, opts)?;
    let signal_names =
        probe_columns::names(raw.iter().flat_map(|c| c.signals.iter().map(|(_, s)| s)));
    check_inputs(raw, opts, &signal_names)?;
    let dim = embedder.dim();
    let mut blocks: Vec<_> = feature_blocks(dim)
        .into_iter()
        .filter(|(k, _)| opts.corpus_features || k.is_query())
        .collect();
    if opts.probe_features {
        blocks.push((
            FeatureKind::ProbeSignals,
            probe_columns::columns(&signal_names),
        ));
    }
    let routers: BTreeSet<&str> = raw
        .iter()
        .flat_map(|c| c.published.iter().map(|(_, p)| p.router.as_str()))
        .collect();
    let mut acc = Rows {
        schema: RoutingSchema::new(&paradigms, blocks),
        policy,
        opts,
        signal_names: &signal_names,
        dim,
        rows: Vec::new(),
        splits: Vec::new(),
        bills: Vec::new(),
        published: routers
            .iter()
            .map(|r| (r.to_string(), Vec::new()))
            .collect(),
        failed_tuples: 0,
    };
    for c in raw {
        let texts: Vec<&str> = c.queries.iter().map(|q| q.1.as_str()).collect();
        let cache_name = match c.run.split {
            Some(s) => format!("{}@{s}", c.run.corpus),
            None => c.run.corpus.clone(),
        };
        let vectors = embed_questions(&cache_name, &texts, embedder, cache)?;
        acc.corpus(c, &CorpusIndex::of(c, &paradigms), &vectors)?;
    }
    acc.finish(raw, embedder)
}

/// The classes: the paradigms with tuples, or those of `opts.classes` (each must have tuples).
fn classes(raw: &[RawCorpus], opts: &BuildOptions) -> Result<Vec<ParadigmId>> {
    let present: BTreeSet<ParadigmId> = raw
        .iter()
        .flat_map(|c| c.tuples.iter().map(|t| t.paradigm))
        .collect();
    match &opts.classes {
        None => Ok(present.into_iter().collect()),
        Some(keep) => {
            if let Some(p) = keep.iter().find(|p| !present.contains(p)) {
                return Err(BenchError::Invalid(format!(
                    "--classes names {p}, which has no tuple in the selected runs (paradigms with tuples: {})",
                    present.iter().map(|p| p.as_str()).collect::<Vec<_>>().join(", ")
                )));
            }
            Ok(present.into_iter().filter(|p| keep.contains(p)).collect())
        }
    }
}

/// Corpus features need every corpus's indicators, probe features some stored signal.
fn check_inputs(raw: &[RawCorpus], opts: &BuildOptions, signal_names: &[String]) -> Result<()> {
    if opts.corpus_features {
        if let Some(why) = raw.iter().find_map(|c| c.indicators.as_ref().err()) {
            return Err(BenchError::Invalid(why.clone()));
        }
    }
    if opts.probe_features && signal_names.is_empty() {
        return Err(BenchError::Invalid(format!(
            "the selected runs ({}) have no stored probe signals: use features without p",
            raw.iter()
                .map(|c| format!("{} #{}", c.run.corpus, c.run.id))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok(())
}

/// One corpus's tuples, signals and published choices, by question.
struct CorpusIndex<'a> {
    /// The tuples of the chosen classes.
    by_query: BTreeMap<&'a str, Vec<&'a Tuple>>,
    /// Every tuple's tokens, for the probe's bill.
    all_tuples: BTreeMap<(&'a str, ParadigmId), f64>,
    signals_of: BTreeMap<&'a str, Vec<&'a Signal>>,
    choices: BTreeMap<(&'a str, &'a str), &'a PublishedChoice>,
}

impl<'a> CorpusIndex<'a> {
    /// Indexes `c`'s tuples of `paradigms` (and all its tuples' tokens) by question.
    fn of(c: &'a RawCorpus, paradigms: &[ParadigmId]) -> Self {
        let mut by_query: BTreeMap<&str, Vec<&Tuple>> = BTreeMap::new();
        for t in c.tuples.iter().filter(|t| paradigms.contains(&t.paradigm)) {
            by_query.entry(t.query_id.as_str()).or_default().push(t);
        }
        let mut all_tuples = BTreeMap::new();
        for t in &c.tuples {
            all_tuples.insert((t.query_id.as_str(), t.paradigm), t.tokens);
        }
        let mut signals_of: BTreeMap<&str, Vec<&Signal>> = BTreeMap::new();
        for (q, s) in &c.signals {
            signals_of.entry(q.as_str()).or_default().push(s);
        }
        let mut choices = BTreeMap::new();
        for (q, p) in &c.published {
            choices.insert((q.as_str(), p.router.as_str()), p);
        }
        CorpusIndex {
            by_query,
            all_tuples,
            signals_of,
            choices,
        }
    }
}

/// The rows built so far, with what building them needs.
struct Rows<'o> {
    schema: RoutingSchema,
    policy: LabelPolicy,
    opts: &'o BuildOptions,
    signal_names: &'o [String],
    dim: usize,
    rows: Vec<RoutingRow>,
    splits: Vec<Option<SplitTag>>,
    bills: Vec<ProbeBill>,
    published: Vec<(String, Vec<Option<PublishedChoice>>)>,
    failed_tuples: usize,
}

impl Rows<'_> {
    /// Adds one row per question of `c`, in stored order; `vectors` are its questions' embeddings.
    fn corpus(&mut self, c: &RawCorpus, index: &CorpusIndex<'_>, vectors: &[f32]) -> Result<()> {
        for (qi, (id, text, qtype)) in c.queries.iter().enumerate() {
            let tuples = index
                .by_query
                .get(id.as_str())
                .map_or(&[][..], |v| v.as_slice());
            let (outcomes, label) = self.label(tuples)?;
            let mut features = Vec::with_capacity(self.schema.n_features());
            features.extend(
                QueryType::ALL
                    .iter()
                    .map(|t| f64::from(u8::from(t == qtype))),
            );
            features.extend(
                vectors[qi * self.dim..(qi + 1) * self.dim]
                    .iter()
                    .map(|&v| f64::from(v)),
            );
            features.extend(
                metrics::query::query_features(text)
                    .to_vec()
                    .into_iter()
                    .map(|(_, v)| v),
            );
            if self.opts.corpus_features {
                if let Ok(ind) = &c.indicators {
                    features.extend(ind);
                }
            }
            if self.opts.probe_features {
                let sig = index
                    .signals_of
                    .get(id.as_str())
                    .map_or(&[][..], |v| v.as_slice());
                features.extend(probe_columns::row_features(self.signal_names, sig));
                self.bills.push(ProbeBill::of(sig, &self.schema, &|p| {
                    index
                        .all_tuples
                        .get(&(id.as_str(), p))
                        .copied()
                        .unwrap_or(0.0)
                }));
            }
            for (router, col) in &mut self.published {
                col.push(
                    index
                        .choices
                        .get(&(id.as_str(), router.as_str()))
                        .map(|p| (*p).clone()),
                );
            }
            self.rows.push(RoutingRow {
                query_id: id.clone(),
                corpus: c.run.corpus.clone(),
                text: text.clone(),
                qtype: *qtype,
                features,
                label,
                outcomes,
            });
            self.splits.push(c.run.split);
        }
        Ok(())
    }

    /// One question's outcome per class and its label under the policy; a failed tuple counts
    /// as not correct (and is counted).
    fn label(&mut self, tuples: &[&Tuple]) -> Result<(Vec<Option<ClassOutcome>>, usize)> {
        let k = self.schema.n_classes();
        let mut outcomes: Vec<Option<ClassOutcome>> = vec![None; k - 1];
        let mut labelled = Vec::with_capacity(tuples.len());
        for t in tuples {
            let failed = t.error.is_some();
            self.failed_tuples += usize::from(failed);
            let judge = if failed { None } else { t.judge };
            let semantic_f1 = t.semantic_f1.filter(|v| v.is_finite()).unwrap_or(0.0);
            let o = Outcome {
                judge,
                semantic_f1,
                cost: t.tokens,
            };
            let class = self.schema.class_of(t.paradigm).ok_or_else(|| {
                BenchError::Other(format!("paradigm {} missing from classes", t.paradigm))
            })?;
            outcomes[class] = Some(ClassOutcome {
                correct: o.is_correct(),
                semantic_f1,
                tokens: t.tokens,
            });
            labelled.push((t.paradigm, o));
        }
        let label = match routing_label(&labelled, self.policy) {
            RoutingLabel::Paradigm(p) => self.schema.class_of(p).unwrap_or(k - 1),
            RoutingLabel::CannotAnswer => self.schema.cannot_answer(),
        };
        Ok((outcomes, label))
    }

    /// The checked set with where it came from.
    fn finish(self, raw: &[RawCorpus], embedder: &dyn Embedder) -> Result<RoutingData> {
        let set = RoutingSet {
            schema: Arc::new(self.schema),
            rows: self.rows,
        };
        set.validate()?;
        Ok(RoutingData {
            set,
            runs: raw
                .iter()
                .map(|c| (c.run.corpus.clone(), c.run.id))
                .collect(),
            mode: raw.first().map(|c| c.run.mode.label()).unwrap_or_default(),
            encoder: embedder.name().to_string(),
            failed_tuples: self.failed_tuples,
            cost_unit: raw
                .first()
                .map_or_else(|| "tokens".to_string(), |c| c.run.cost_unit()),
            splits: self.splits,
            bills: self.bills,
            published: self.published,
            signal_paradigms: raw
                .iter()
                .flat_map(|c| {
                    c.signals
                        .iter()
                        .map(|(_, s)| (s.name.clone(), s.paradigms.clone()))
                })
                .collect(),
        })
    }
}

/// Row-major question vectors of one corpus.
fn embed_questions(
    corpus: &str,
    texts: &[&str],
    embedder: &dyn Embedder,
    cache: Option<&dyn QuestionVectors>,
) -> Result<Vec<f32>> {
    if texts.is_empty() {
        return Ok(Vec::new());
    }
    let data = match cache {
        Some(cache) => {
            cache
                .get_or_embed(&format!("{corpus}:routing-questions"), texts, embedder)?
                .data
        }
        None => {
            let mut data = Vec::with_capacity(texts.len() * embedder.dim());
            for batch in texts.chunks(256) {
                data.extend(embedder.embed(batch)?.data);
            }
            data
        }
    };
    if data.len() != texts.len() * embedder.dim() {
        return Err(BenchError::Embedding(format!(
            "encoder {} returned {} values for {} questions of dimension {}",
            embedder.name(),
            data.len(),
            texts.len(),
            embedder.dim()
        )));
    }
    Ok(data)
}
