//! The named steps of [`super::evaluate_protocol`]: choose the routers, select and check the
//! runs, label and build the data set, record the configuration, evaluate and test.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use bench_core::{
    BenchError, FeatureKind, ParadigmId, PublishedChoice, RouteEvalSpec, RouteEvalTest, RoutingSet,
};
use metrics::labels::LabelPolicy;
use store::Store;

use super::checks;
use super::options::{
    default_policy, Inputs, LoadEncoder, Protocol, ProtocolError, RandomBaseline,
};
use crate::dataset::{
    build_set, load_raw, select_runs_pooled, BuildOptions, QuestionVectors, RawCorpus, RoutingData,
    RunRef, RunSelection, SplitUse,
};
use crate::entry::{Family, RouterContext};
use crate::eval::{evaluate_with, Candidate, EvalOptions, Evaluation, Fold, Notices, Split};

/// The routers to run: Random over every class where asked, and best-single always, since
/// the research claim is measured against it.
pub(super) fn candidates(mut cands: Vec<Candidate>, protocol: &Protocol) -> Vec<Candidate> {
    let (random, best_single) = (
        crate::baselines::random_entry().name,
        crate::baselines::best_single_entry().name,
    );
    if protocol.random == RandomBaseline::AllClasses {
        for c in cands.iter_mut().filter(|c| c.name == random) {
            *c = crate::baselines::random_all_classes_candidate();
        }
    }
    if !cands.iter().any(|c| c.name == best_single) {
        cands.push(Candidate::from(crate::baselines::best_single_entry()));
    }
    cands
}

/// Selects the runs, reads their tuples and checks them: the signal count where probe
/// features are read, and the leakage warnings, told through `tell`.
pub(super) async fn select(
    store: &Store,
    protocol: &Protocol,
    tell: &dyn Fn(&str),
) -> Result<(Vec<RunRef>, Vec<RawCorpus>), ProtocolError> {
    let sel = RunSelection {
        run_ids: protocol.runs.clone(),
        corpora: protocol.corpora.clone(),
        splits: if protocol.split == Split::Given {
            SplitUse::Given
        } else {
            SplitUse::Pooled
        },
    };
    let runs = select_runs_pooled(store, &sel, protocol.pool_sources).await?;
    let raw = load_raw(store, &runs).await?;
    if protocol.features.has_probe() {
        checks::check_signal_count(&raw)?;
    }
    for w in checks::leakage_warnings(&raw, protocol) {
        tell(&format!("warning: {w}"));
    }
    Ok((runs, raw))
}

/// The label policy: the protocol's, else the default of the first run's mode.
pub(super) fn label_policy(protocol: &Protocol, runs: &[RunRef]) -> LabelPolicy {
    protocol
        .policy
        .unwrap_or(default_policy(runs.first().map(|r| &r.mode)))
}

/// Loads the encoder (only now, so a bad selection is reported first) and builds the labelled,
/// featurised data set on a blocking thread.
pub(super) async fn build(
    raw: Vec<RawCorpus>,
    protocol: &Protocol,
    policy: LabelPolicy,
    encoder: LoadEncoder<'_>,
    vectors: Option<Arc<dyn QuestionVectors + Send>>,
) -> Result<RoutingData, ProtocolError> {
    let encoder = encoder().map_err(ProtocolError::Encoder)?;
    let features = protocol.features;
    let opts = BuildOptions {
        corpus_features: features.has_corpus(),
        classes: protocol.classes.clone(),
        probe_features: features.has_probe(),
    };
    let data = tokio::task::spawn_blocking(move || {
        build_set(
            &raw,
            policy,
            encoder.as_ref(),
            vectors.as_deref().map(|v| v as &dyn QuestionVectors),
            &opts,
        )
    })
    .await
    .map_err(joined)??;
    Ok(data)
}

/// Each evaluated row's family: the candidates, the published routers, and the cascades when
/// probe features are read.
pub(super) fn families(
    cands: &[Candidate],
    data: &RoutingData,
    cascades: bool,
) -> Vec<(String, Family)> {
    let mut families: Vec<(String, Family)> =
        cands.iter().map(|c| (c.name.clone(), c.family)).collect();
    families.extend(
        data.published
            .iter()
            .map(|(n, _)| (n.clone(), Family::Published)),
    );
    if cascades {
        families.extend(
            crate::cascade::NAMES
                .iter()
                .map(|n| (n.to_string(), Family::Utility)),
        );
    }
    families
}

/// What the stored configuration records besides the protocol's own fields.
pub(super) struct Recorded<'a> {
    pub cands: &'a [Candidate],
    pub data: &'a RoutingData,
    pub set: &'a RoutingSet,
    pub external: &'a [String],
    pub external_timeout: Duration,
    pub llm_identity: Option<String>,
}

/// The evaluation's configuration as stored with it.
pub(super) fn config(protocol: &Protocol, r: &Recorded<'_>) -> serde_json::Value {
    serde_json::json!({
        "routers": r.cands.iter().map(|c| serde_json::json!({
            "name": c.name,
            "family": c.family.as_str(),
            "sweep": c.sweep,
        })).collect::<Vec<_>>(),
        "external": r.external,
        "external_timeout_s": r.external_timeout.as_secs_f64(),
        "encoder": r.data.encoder,
        "router_llm": r.llm_identity,
        // The LLM router's answers depend on its prompt as much as on the model.
        "llm_router_prompt": r.cands
            .iter()
            .any(|c| c.name == crate::seed_papers::llm_router::NAME)
            .then_some(crate::seed_papers::llm_router::PROMPT_VERSION),
        "classes": r.set.schema.classes,
        "n_features": r.set.schema.n_features(),
        "rows": r.set.rows.len(),
        "failed_tuples": r.data.failed_tuples,
        "cost_unit": r.data.cost_unit,
        "inputs": protocol.inputs.as_str(),
        "random": protocol.random.as_str(),
        "fallback": protocol.fallback.name(),
    })
}

/// Everything the evaluation needs on its blocking thread.
pub(super) struct EvalJob {
    pub set: RoutingSet,
    pub cands: Vec<Candidate>,
    pub folds: Vec<Fold>,
    pub ctx: RouterContext,
    pub opts: EvalOptions,
    pub notices: Option<Notices>,
    pub paper_inputs: bool,
    pub cascades: bool,
    /// Probe features are read: an external program may decide stage by stage.
    pub staged: bool,
    pub seed: u64,
    pub own_cost: Vec<f64>,
    pub published: Vec<(String, Vec<Option<PublishedChoice>>)>,
    pub signal_paradigms: BTreeMap<String, Vec<ParadigmId>>,
    /// The external programs: with probe features, one answering `fit` as version 2 is
    /// evaluated stage by stage.
    pub external: Vec<crate::external::ExternalSpec>,
}

impl EvalJob {
    /// The job of evaluating `cands` on `set` over `folds`, with the data set's probe bills,
    /// published routers and signals, and the cascades when `cascades`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        protocol: &Protocol,
        data: &RoutingData,
        set: RoutingSet,
        cands: Vec<Candidate>,
        folds: Vec<Fold>,
        ctx: RouterContext,
        notices: Option<Notices>,
        cascades: bool,
    ) -> Self {
        EvalJob {
            set,
            cands,
            folds,
            ctx,
            opts: EvalOptions {
                fallback: protocol.fallback,
                bills: Arc::new(data.bills.clone()),
                progress: notices.clone(),
            },
            notices,
            paper_inputs: protocol.inputs == Inputs::Paper,
            cascades,
            staged: protocol.features.has_probe(),
            seed: protocol.seed,
            own_cost: data.bills.iter().map(|b| b.own).collect(),
            published: data.published.clone(),
            signal_paradigms: data.signal_paradigms.clone(),
            external: Vec::new(),
        }
    }

    /// Evaluates every router (the ML ones on the paper's inputs where asked, then cascades
    /// and published routers), then pairs each with best-single.
    pub(super) fn run(mut self) -> bench_core::Result<(Evaluation, Vec<RouteEvalTest>, Vec<Fold>)> {
        let ev = self.evaluate()?;
        let tests = crate::significance::compare_to(
            &ev.predictions,
            crate::baselines::best_single_entry().name,
            crate::significance::RESAMPLES,
            self.seed,
        )
        .unwrap_or_default();
        Ok((ev, tests, self.folds))
    }

    /// Every router's rows and predictions over the folds.
    fn evaluate(&mut self) -> bench_core::Result<Evaluation> {
        let paper_inputs = self.paper_inputs;
        let (ml, rest): (Vec<Candidate>, Vec<Candidate>) = std::mem::take(&mut self.cands)
            .into_iter()
            .partition(|c| paper_inputs && c.family == Family::Ml);
        let (staged, rest) = self.staged_externals(rest)?;
        let (set, folds) = (&self.set, &self.folds);
        let mut ev = evaluate_with(set, &rest, folds, &self.ctx, &self.opts)?;
        merge(&mut ev, staged);
        if !ml.is_empty() {
            let narrow = paper_ml_inputs(set);
            merge(
                &mut ev,
                evaluate_with(&narrow, &ml, folds, &self.ctx, &self.opts)?,
            );
        }
        if self.cascades {
            merge(
                &mut ev,
                crate::cascade::evaluate_cascades(&self.cascade_input())?,
            );
            if let Some(n) = &self.notices {
                n("route eval: cascades done");
            }
        }
        for (name, choices) in &self.published {
            merge(
                &mut ev,
                crate::imported::evaluate_published(set, folds, name, choices),
            );
        }
        Ok(ev)
    }
}

impl EvalJob {
    /// What a cascade, built in or an external program's, reads besides its routers.
    fn cascade_input(&self) -> crate::cascade::CascadeInput<'_> {
        crate::cascade::CascadeInput {
            set: &self.set,
            folds: &self.folds,
            signal_paradigms: &self.signal_paradigms,
            own_cost: &self.own_cost,
            seed: self.seed,
        }
    }

    /// With probe features, the external programs that answer `fit` as version 2, evaluated
    /// stage by stage, and the candidates left for the usual evaluation.
    fn staged_externals(
        &self,
        cands: Vec<Candidate>,
    ) -> bench_core::Result<(Evaluation, Vec<Candidate>)> {
        let mut ev = Evaluation::default();
        if !self.staged {
            return Ok((ev, cands));
        }
        let mut staged = Vec::new();
        let input = self.cascade_input();
        for spec in &self.external {
            if let Some(part) = crate::external::staged::evaluate(spec, &input)? {
                staged.push(spec.name.clone());
                merge(&mut ev, part);
            }
        }
        let rest = cands
            .into_iter()
            .filter(|c| !staged.contains(&c.name))
            .collect();
        Ok((ev, rest))
    }
}

/// What is stored of the protocol: split, folds, seed, features, policy, mode, runs and the
/// configuration.
pub(super) fn spec(
    protocol: &Protocol,
    n_folds: usize,
    policy: LabelPolicy,
    data: &RoutingData,
    config: serde_json::Value,
) -> RouteEvalSpec {
    RouteEvalSpec {
        split: protocol.split.name().to_string(),
        folds: n_folds as u32,
        seed: protocol.seed,
        features: protocol.features.as_str().to_string(),
        policy: policy.as_str().to_string(),
        mode: data.mode.clone(),
        runs: data.runs.clone(),
        config,
    }
}

/// Adds `other`'s rows, predictions, skipped and failed routers to `into`.
fn merge(into: &mut Evaluation, other: Evaluation) {
    into.rows.extend(other.rows);
    into.predictions.extend(other.predictions);
    into.skipped.extend(other.skipped);
    into.failed.extend(other.failed);
    into.operating_points.extend(other.operating_points);
}

/// The Appendix D.2 inputs of the traditional ML routers: the query-type one-hot and, with
/// corpus features, the indicators.
fn paper_ml_inputs(set: &RoutingSet) -> RoutingSet {
    set.project(|k| matches!(k, FeatureKind::QueryType | FeatureKind::CorpusIndicators))
}

/// A worker thread's failure as the core error.
pub(super) fn joined(e: tokio::task::JoinError) -> BenchError {
    BenchError::Other(format!("route evaluation worker: {e}"))
}
