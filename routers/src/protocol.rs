//! The protocol of `route eval` as one call: select the runs, label and featurise their tuples,
//! split, evaluate the routers (best-single always among them, the traditional ML routers on
//! Appendix D.2's inputs when asked, cascades and published routers when the data carries them),
//! pair every router with best-single, and return what to print and what to store.
//!
//! The binary parses flags into a [`Protocol`] and a [`RouterChoice`], opens the store, and hands
//! the encoder and the router LLM in through [`Resources`]; every decision of the protocol is
//! taken here, so a library caller gets the same evaluation as `ragrouter route eval`.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bench_core::{BenchError, RouteEvalSpec, RouteEvalTest, RoutingSet};
use metrics::labels::LabelPolicy;
use store::Store;

use crate::dataset::{QuestionVectors, RunRef};
use crate::entry::{Family, LlmAccess, RouterContext};
use crate::eval::{summarize, Candidate, Evaluation};
use crate::external::ExternalSpec;
use crate::registry::lookup;
use bench_core::table3::Table3;

mod checks;
mod options;
mod steps;

pub use crate::eval::Notices;
pub use options::{
    default_policy, BoxError, Inputs, LoadEncoder, Protocol, ProtocolError, RandomBaseline,
    MAX_SIGNALS,
};

/// The routers to evaluate: registry names (`all` for every one) and external programs.
#[derive(Debug, Clone, PartialEq)]
pub struct RouterChoice {
    /// Registry names, or `all`.
    pub names: Vec<String>,
    /// External routers as `NAME='PROGRAM ARGS...'` or `external:PROGRAM`.
    pub external: Vec<String>,
    /// How long an external router may take per request.
    pub external_timeout: Duration,
}

/// The routers of a [`RouterChoice`], resolved: what [`evaluate_protocol`] runs.
#[derive(Clone)]
pub struct Routers {
    /// One candidate per name, in the order given.
    pub candidates: Vec<Candidate>,
    /// The external routers as given (recorded in the stored configuration).
    pub external: Vec<String>,
    /// Their per-request timeout (recorded too).
    pub external_timeout: Duration,
    /// The external routers parsed, each with that timeout: what the evaluation starts.
    pub specs: Vec<ExternalSpec>,
    /// Told progress lines and warnings as the evaluation goes (`None`: nothing is said).
    pub notices: Option<Notices>,
}

impl fmt::Debug for Routers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Routers")
            .field("candidates", &self.candidates)
            .field("external", &self.external)
            .field("external_timeout", &self.external_timeout)
            .field("specs", &self.specs)
            .finish_non_exhaustive()
    }
}

impl RouterChoice {
    /// Resolves the names into candidates: unknown names, a bad external spec, a name used
    /// twice and an empty choice are refused.
    pub fn resolve(&self) -> Result<Routers, BenchError> {
        let mut out: Vec<Candidate> = Vec::new();
        let mut seen = BTreeSet::new();
        let mut specs = Vec::with_capacity(self.external.len());
        for name in self
            .names
            .iter()
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
        {
            let entries = if name == "all" {
                crate::registry::default_routers()
            } else {
                vec![lookup(name)?]
            };
            for e in entries {
                if seen.insert(e.name.to_string()) {
                    out.push(Candidate::from(e));
                }
            }
        }
        for s in &self.external {
            let mut spec = ExternalSpec::parse(s)?;
            spec.timeout = self.external_timeout;
            if !seen.insert(spec.name.clone()) {
                return Err(BenchError::Invalid(format!(
                    "router name {:?} is used twice: name the external router differently",
                    spec.name
                )));
            }
            out.push(spec.candidate());
            specs.push(spec);
        }
        if out.is_empty() {
            return Err(BenchError::Invalid(
                "no routers to evaluate: give --routers a,b (or all) or --external".into(),
            ));
        }
        Ok(Routers {
            candidates: out,
            external: self.external.clone(),
            external_timeout: self.external_timeout,
            specs,
            notices: None,
        })
    }
}

/// What the protocol reads besides the store: the encoder, the question-vector cache and the
/// router LLM.
pub struct Resources<'a> {
    /// Loads the question encoder.
    pub encoder: LoadEncoder<'a>,
    /// The question-vector cache (`None`: embed every question).
    pub vectors: Option<Arc<dyn QuestionVectors + Send>>,
    /// The router LLM (`None`: routers that need one are skipped).
    pub llm: Option<LlmAccess>,
}

impl fmt::Debug for Resources<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resources")
            .field("llm", &self.llm)
            .finish_non_exhaustive()
    }
}

/// Everything `route eval` prints and stores.
#[derive(Debug, Clone)]
pub struct RouteEvaluation {
    /// The runs the tuples came from.
    pub runs: Vec<RunRef>,
    /// Tuples read from those runs.
    pub n_tuples: usize,
    /// The label policy applied.
    pub policy: LabelPolicy,
    /// The routing set with the chosen features.
    pub set: RoutingSet,
    /// Number of folds.
    pub n_folds: usize,
    /// Failed tuples counted as not correct.
    pub failed_tuples: usize,
    /// The cost unit of the tuples.
    pub cost_unit: String,
    /// Per fold, per corpus measurements and every per-question prediction.
    pub evaluation: Evaluation,
    /// Each router paired with best-single.
    pub tests: Vec<RouteEvalTest>,
    /// What to store: the protocol and its configuration.
    pub spec: RouteEvalSpec,
    /// Each evaluated row's family.
    pub families: Vec<(String, Family)>,
    /// How long the evaluation took.
    pub took: Duration,
}

impl RouteEvaluation {
    /// The family of a router's rows (an unknown name is an external router).
    pub fn family(&self, name: &str) -> Family {
        self.families
            .iter()
            .find(|(n, _)| n == name)
            .map_or(Family::External, |(_, f)| *f)
    }

    /// The first header line: tuples, runs and mode.
    pub fn tuples_line(&self) -> String {
        format!(
            "tuples: {} from {} run(s) ({}), mode {}",
            self.n_tuples,
            self.runs.len(),
            self.runs
                .iter()
                .map(|r| format!(
                    "{}{} #{}",
                    r.corpus,
                    r.split.map(|s| format!("/{s}")).unwrap_or_default(),
                    r.id
                ))
                .collect::<Vec<_>>()
                .join(", "),
            self.runs.first().map_or(String::new(), |r| r.mode.label())
        )
    }

    /// The second header line: rows, classes, features, split, policy, fallback, cost, seed.
    pub fn rows_line(&self, protocol: &Protocol) -> String {
        let set = &self.set;
        format!(
            "routing rows: {} ({} classes: {}), features {} ({} columns), {} {} fold(s), policy {}, fallback {}, cost in {}, seed {}{}",
            set.rows.len(),
            set.schema.n_classes(),
            set.schema.classes.join(", "),
            protocol.features,
            set.schema.n_features(),
            self.n_folds,
            protocol.split.name(),
            self.policy,
            protocol.fallback.name(),
            self.cost_unit,
            protocol.seed,
            if self.failed_tuples > 0 {
                format!(", {} failed tuples counted as not correct", self.failed_tuples)
            } else {
                String::new()
            }
        )
    }

    /// Table 3, the paired tests against best-single and the reading of the signals: what
    /// `route eval` prints between its header and its notes (Table 3 within 100 columns).
    pub fn render_tables(&self) -> String {
        self.render_tables_with(false)
    }

    /// Table 3's model: the evaluation's rows grouped by family, in its cost unit.
    pub fn table3(&self) -> Table3 {
        Table3::build(
            &self.evaluation.rows,
            &[],
            &|n: &str| self.family(n),
            &self.cost_unit,
        )
    }

    /// [`RouteEvaluation::render_tables`], with every corpus's four measures when `wide`
    /// (`route eval --wide`).
    pub fn render_tables_with(&self, wide: bool) -> String {
        let summaries = summarize(&self.evaluation.rows);
        let family = |n: &str| self.family(n);
        let mut out = crate::table::render(&self.table3(), wide);
        out.push_str(&crate::table::render_tests(
            &summaries,
            &self.tests,
            &self.cost_unit,
            &family,
        ));
        out.push_str(&crate::signal_reading::render(
            &self.set,
            &summaries,
            &self.evaluation.predictions,
            &family,
        ));
        // The signals read together (util-lr's cross-fitted P(correct)), under the per-signal
        // AUROCs; a fit that fails is said, not fatal to the tables already computed.
        match crate::signal_reading::render_combined(&self.set, self.spec.seed) {
            Ok(line) => out.push_str(&line),
            Err(e) => out.push_str(&format!(
                "all features (util-lr, cross-fitted): not computed: {e}\n"
            )),
        }
        out
    }

    /// The whole evaluation as one JSON document, under its stored id.
    pub fn to_json(&self, id: i64) -> serde_json::Value {
        crate::table::to_json(
            id,
            &self.spec,
            &self.cost_unit,
            &summarize(&self.evaluation.rows),
            &self.tests,
            &self.evaluation.skipped,
            &self.evaluation.failed,
            &|n| self.family(n),
        )
    }

    /// Stores the evaluation whole (one transaction) and returns its id.
    pub async fn store(&self, store: &Store) -> Result<i64, BenchError> {
        store
            .put_route_eval_full(
                &self.spec,
                &self.evaluation.rows,
                &self.evaluation.predictions,
                &self.tests,
            )
            .await
            .map_err(BenchError::from)
    }
}

/// Runs the protocol on the store's tuples: the evaluation, its paired tests and the
/// configuration to store (not stored yet: [`RouteEvaluation::store`]). Must be called inside
/// a multi-threaded tokio runtime (fitting runs on blocking threads).
pub async fn evaluate_protocol(
    store: &Store,
    protocol: &Protocol,
    routers: Routers,
    resources: Resources<'_>,
) -> Result<RouteEvaluation, ProtocolError> {
    let cands = steps::candidates(routers.candidates, protocol);
    let tell = |line: &str| {
        if let Some(n) = &routers.notices {
            n(line)
        }
    };
    let (runs, raw) = steps::select(store, protocol, &tell).await?;
    let n_tuples: usize = raw.iter().map(|c| c.tuples.len()).sum();
    let policy = steps::label_policy(protocol, &runs);
    let mut data =
        steps::build(raw, protocol, policy, resources.encoder, resources.vectors).await?;
    let cascades = data_routers(&mut data, protocol);
    let set = protocol.features.apply(&data.set);
    let folds = protocol.split.folds(&set, protocol.seed, &data.splits)?;
    // Always-p rows for every paradigm of the data set, first among the baselines.
    let fixed = crate::baselines::fixed_candidates(&set.schema);
    let cands: Vec<Candidate> = fixed.into_iter().chain(cands).collect();
    let families = steps::families(&cands, &data, cascades);
    let mut config = steps::config(
        protocol,
        &steps::Recorded {
            cands: &cands,
            data: &data,
            set: &set,
            external: &routers.external,
            external_timeout: routers.external_timeout,
            llm_identity: resources.llm.as_ref().map(|l| l.llm.identity()),
        },
    );
    let t = Instant::now();
    tell(&format!(
        "route eval: {} routing rows, {} feature columns, {} fold(s); evaluating the routers",
        set.rows.len(),
        set.schema.n_features(),
        folds.len()
    ));
    let ctx = RouterContext {
        fits: Default::default(),
        seed: protocol.seed,
        llm: resources.llm,
    };
    let mut job = steps::EvalJob::new(
        protocol,
        &data,
        set.clone(),
        cands,
        folds,
        ctx,
        routers.notices,
        cascades,
    );
    job.external = routers.specs;
    let (evaluation, tests, folds) = tokio::task::spawn_blocking(move || job.run())
        .await
        .map_err(steps::joined)??;
    // The operating points chosen on the training folds are part of what was evaluated.
    config["operating_points"] = operating_points_json(&evaluation.operating_points);
    let spec = steps::spec(protocol, folds.len(), policy, &data, config);
    Ok(RouteEvaluation {
        runs,
        n_tuples,
        policy,
        set,
        n_folds: folds.len(),
        failed_tuples: data.failed_tuples,
        cost_unit: data.cost_unit,
        evaluation,
        tests,
        spec,
        families,
        took: t.elapsed(),
    })
}

/// Whether the cascades run: only with probe features and the data's own routers. Without the
/// data's routers neither the published choices nor the cascades are evaluated, so the
/// published choices are cleared here, before the families list them.
fn data_routers(data: &mut crate::dataset::RoutingData, protocol: &Protocol) -> bool {
    if !protocol.data_routers {
        data.published.clear();
    }
    protocol.features.has_probe() && protocol.data_routers
}

/// Per router, the value chosen on each outer fold's training rows, in fold order, with the
/// rule that chose it.
fn operating_points_json(points: &[crate::eval::OperatingPoint]) -> serde_json::Value {
    let mut per: std::collections::BTreeMap<&str, Vec<(u32, f64)>> = Default::default();
    for p in points {
        per.entry(&p.router).or_default().push((p.fold, p.param));
    }
    let routers: serde_json::Map<String, serde_json::Value> = per
        .into_iter()
        .map(|(r, mut v)| {
            v.sort_by_key(|x| x.0);
            (r.to_string(), v.into_iter().map(|x| x.1).collect())
        })
        .collect();
    serde_json::json!({
        "rule": format!(
            "per outer fold, the sweep value with the highest correct rate over {} stratified inner folds of its training rows; ties to the lower mean cost, then the earlier value",
            crate::eval::INNER_FOLDS
        ),
        "routers": routers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::Mode;

    #[test]
    fn offline_runs_default_to_the_cheapest_delivering_paradigm() {
        assert_eq!(
            default_policy(Some(&Mode::Offline)),
            LabelPolicy::CheapestCorrect
        );
        assert_eq!(
            default_policy(Mode::parse("llm:m@http://x").as_ref()),
            LabelPolicy::JudgeThenSemanticF1
        );
        // An imported run's policy is its own explicit choice, not a catch-all's.
        assert_eq!(
            default_policy(Some(&Mode::Imported {
                source: "adaptive-rag/flan_t5_xl".into()
            })),
            LabelPolicy::JudgeThenSemanticF1
        );
        assert_eq!(default_policy(None), LabelPolicy::JudgeThenSemanticF1);
    }

    #[test]
    fn protocol_choices_parse_and_refuse_unknown_spellings() {
        assert_eq!("paper".parse::<Inputs>().unwrap(), Inputs::Paper);
        assert_eq!(" harness".parse::<Inputs>().unwrap(), Inputs::Harness);
        assert!(matches!(
            "papers".parse::<Inputs>(),
            Err(BenchError::Invalid(m)) if m.contains("harness or paper")
        ));
        assert_eq!(
            "all-classes".parse::<RandomBaseline>().unwrap(),
            RandomBaseline::AllClasses
        );
        assert!("all".parse::<RandomBaseline>().is_err());
    }

    #[test]
    fn router_choice_refuses_an_empty_choice_and_a_name_used_twice() {
        let choice = |names: &[&str], external: &[&str]| RouterChoice {
            names: names.iter().map(|s| s.to_string()).collect(),
            external: external.iter().map(|s| s.to_string()).collect(),
            external_timeout: Duration::from_secs(1),
        };
        let refused = |c: RouterChoice, needle: &str| match c.resolve() {
            Err(BenchError::Invalid(m)) => assert!(m.contains(needle), "{m}"),
            other => panic!("{other:?}"),
        };
        refused(choice(&[" "], &[]), "no routers to evaluate");
        refused(choice(&["lr"], &["lr=/bin/true"]), "is used twice");
        let c = choice(&["lr", "all"], &[]).resolve().unwrap().candidates;
        assert_eq!(
            c.len(),
            crate::registry::registry().len() - crate::registry::OPT_IN.len()
        );
        assert_eq!(c[0].name, "lr");
        // `all` leaves the opt-in routers out; named, they run, after `all`'s or before.
        assert!(c.iter().all(|r| r.name != "util-tfidf"));
        for names in [&["all", "util-tfidf"][..], &["util-tfidf", "all"]] {
            let c = choice(names, &[]).resolve().unwrap().candidates;
            assert_eq!(c.len(), crate::registry::registry().len(), "{names:?}");
        }
    }
}
