//! `ragrouter route`: cross-validated router evaluation on the stored tuples (`eval`) and the
//! router catalogue (`list`).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use bench_core::{BenchError, Embedder, RouteEvalSpec, Store};
use corpora::embed::{MiniLm, VectorCache};
use metrics::labels::LabelPolicy;
use routers::dataset::{build_set, load_raw, BuildOptions, RunSelection, SplitUse};
use routers::eval::{
    evaluate_with, summarize, Candidate, EvalOptions, Evaluation, Fallback, Split,
};
use routers::external::ExternalSpec;
use routers::registry::{lookup, registry, Family};
use routers::{FeatureSet, RouterContext};

#[derive(clap::Args, Debug)]
pub struct RouteArgs {
    #[command(subcommand)]
    pub command: RouteCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum RouteCommand {
    /// Cross-validate routers on the stored tuples and print a Table-3 style table.
    #[command(after_help = "Examples:
  ragrouter route eval                        # every router, Q+C features, 5 folds
  ragrouter route eval --features q --folds 10 --routers util-lr,safe-lr,knn
  ragrouter route eval --split loco --json    # leave one corpus out, as one JSON document")]
    Eval(Box<RouteEvalArgs>),
    /// List the built-in routers.
    #[command(after_help = "Example:\n  ragrouter route list")]
    List,
}

#[derive(clap::Args, Debug)]
pub struct RouteEvalArgs {
    /// Comma-separated router names (see `ragrouter route list`), or `all`.
    #[arg(long, value_delimiter = ',', default_value = "all")]
    pub routers: Vec<String>,
    /// An external router speaking docs/router-protocol.md: NAME='PROGRAM ARGS...' or
    /// external:PROGRAM (repeatable; the argv is split on whitespace, no shell).
    #[arg(long = "external", value_name = "NAME=PROGRAM ARGS")]
    pub external: Vec<String>,
    /// Seconds an external router may take per request before it is killed.
    #[arg(long, default_value_t = 60.0)]
    pub external_timeout: f64,
    /// Features the routers see: q (query), c (corpus indicators), p (probe signals) or a
    /// combination (q+c, q+p, c+p, q+c+p). A router that reads p pays the probe's cost.
    #[arg(long, default_value = "q+c")]
    pub features: String,
    /// Allow runs of different imported sources in one data set (by default `route eval`
    /// refuses to pool, e.g., the FLAN-T5 and the LLaMA-8B Adaptive-RAG imports).
    #[arg(long)]
    pub pool_sources: bool,
    /// Number of folds of the stratified k-fold split.
    #[arg(long, default_value_t = 5)]
    pub folds: usize,
    /// kfold (stratified by label), loco (leave one corpus out) or given (train on runs tagged
    /// train, test on runs tagged test, e.g. imported with --split).
    #[arg(long, default_value = "kfold")]
    pub split: String,
    /// Restrict the label space to these paradigms (comma-separated; default every paradigm
    /// with tuples). The paper's Table 3: llm-only,naive,graph,hybrid,iterative.
    #[arg(long, value_delimiter = ',')]
    pub classes: Vec<String>,
    /// Inputs of the traditional ML routers: harness (every query feature) or paper (Appendix
    /// D.2: the query-type one-hot, plus the corpus indicators under q+c).
    #[arg(long, default_value = "harness")]
    pub inputs: String,
    /// Random baseline: paradigms (uniform over the paradigms) or all-classes (uniform over
    /// every class, cannot-answer included, as the paper's).
    #[arg(long, default_value = "paradigms")]
    pub random: String,
    /// What a cannot-answer prediction plays: utility (per question, the paradigm a calibrated
    /// estimate fitted on the training folds ranks first) or most-frequent (the paper's).
    #[arg(long, default_value = "utility")]
    pub fallback: String,
    /// Print the tables as one JSON document instead.
    #[arg(long)]
    pub json: bool,
    /// Seeds the folds and every router.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Label policy: judge-then-semantic-f1 (the paper's) or cheapest-correct. Default: for
    /// offline runs cheapest-correct (the paradigm with the fewest context tokens whose
    /// delivered context holds the answer; decisions.md, "Labels for routing"), for LLM runs
    /// judge-then-semantic-f1.
    #[arg(long)]
    pub policy: Option<String>,
    /// Restrict to these corpora (comma-separated; default every corpus with results).
    #[arg(long, value_delimiter = ',')]
    pub corpora: Vec<String>,
    /// Use these run ids (comma-separated, one per corpus) instead of each corpus's latest run.
    #[arg(long, value_delimiter = ',')]
    pub runs: Vec<i64>,
    /// Results database; a file or postgres://USER@HOST[:PORT]/DB.
    #[arg(
        long,
        env = "RAGROUTER_DB",
        default_value = ".ragrouter/results.sqlite",
        value_parser = crate::cli::DbParser
    )]
    pub db: bench_core::DbTarget,
    /// Directory for cached vectors (question embeddings).
    #[arg(long, default_value = ".ragrouter/cache")]
    pub cache_dir: PathBuf,
    /// Directory of the encoder's weights [default: ~/.cache/ragrouter/models/all-MiniLM-L6-v2,
    /// under $XDG_CACHE_HOME when set].
    #[arg(long, env = "RAGROUTER_MODEL_DIR")]
    pub model_dir: Option<PathBuf>,
    /// Model of the OpenAI-compatible endpoint for routers that call an LLM (`llm-router`);
    /// without it they are skipped. The API key is read from $OPENAI_API_KEY, never a flag.
    #[arg(long)]
    pub llm_model: Option<String>,
    /// Base URL of that endpoint (else $OPENAI_BASE_URL, else OpenAI's).
    #[arg(long)]
    pub llm_base_url: Option<String>,
}

/// The router LLM's endpoint settings, when a model is named (checked before anything runs).
fn llm_settings(a: &RouteEvalArgs) -> Result<Option<llm::EndpointConfig>> {
    let flags = llm::LlmFlags {
        base_url: a.llm_base_url.clone(),
        model: a.llm_model.clone(),
    };
    if flags.model.is_none() {
        if flags.base_url.is_some() {
            return Err(BenchError::Invalid(
                "--llm-base-url needs --llm-model (the router LLM's model)".into(),
            )
            .into());
        }
        return Ok(None);
    }
    let settings = llm::resolve(None, &flags, &|k| std::env::var(k).ok())
        .map_err(|e| BenchError::Invalid(format!("router LLM: {e}")))?;
    Ok(settings.map(|s| s.answer))
}

pub fn run(args: &RouteArgs) -> Result<()> {
    match &args.command {
        RouteCommand::List => {
            print!("{}", list());
            Ok(())
        }
        RouteCommand::Eval(a) => eval(a),
    }
}

fn list() -> String {
    let mut out = format!(
        "{:<18} {:<11} {:<5} {:<18} about\n",
        "router", "family", "llm", "sweep"
    );
    for e in registry() {
        let fmt = |v: &f64| routers::table::format_param(*v);
        let sweep = if e.sweep.len() > 3 {
            format!(
                "{} values {}..{}",
                e.sweep.len(),
                fmt(&e.sweep[0]),
                fmt(&e.sweep[e.sweep.len() - 1])
            )
        } else {
            e.sweep.iter().map(fmt).collect::<Vec<_>>().join(",")
        };
        out.push_str(&format!(
            "{:<18} {:<11} {:<5} {:<18} {}\n",
            e.name,
            e.family.as_str(),
            if e.needs_llm { "yes" } else { "no" },
            if sweep.is_empty() {
                "-".to_string()
            } else {
                sweep
            },
            e.about
        ));
    }
    out.push_str(
        "\nexternal routers: --external NAME='PROGRAM ARGS...' (protocol: docs/router-protocol.md)\n",
    );
    out
}

/// The routers named on the command line, checked before anything is loaded.
fn candidates(a: &RouteEvalArgs) -> Result<Vec<Candidate>, BenchError> {
    let mut out: Vec<Candidate> = Vec::new();
    let mut seen = BTreeSet::new();
    for name in a.routers.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
        let entries = if name == "all" {
            registry()
        } else {
            vec![lookup(name)?]
        };
        for e in entries {
            if seen.insert(e.name.to_string()) {
                out.push(Candidate::from(e));
            }
        }
    }
    if a.external_timeout.is_nan() || a.external_timeout <= 0.0 || a.external_timeout.is_infinite()
    {
        return Err(BenchError::Invalid(format!(
            "--external-timeout must be a positive number of seconds, got {}",
            a.external_timeout
        )));
    }
    for s in &a.external {
        let mut spec = ExternalSpec::parse(s)?;
        spec.timeout = Duration::from_secs_f64(a.external_timeout);
        if !seen.insert(spec.name.clone()) {
            return Err(BenchError::Invalid(format!(
                "router name {:?} is used twice: name the external router differently",
                spec.name
            )));
        }
        out.push(spec.candidate());
    }
    if out.is_empty() {
        return Err(BenchError::Invalid(
            "no routers to evaluate: give --routers a,b (or all) or --external".into(),
        ));
    }
    Ok(out)
}

/// The protocol choices of `route eval`, parsed and checked before anything is loaded.
struct Protocol {
    features: FeatureSet,
    split: Split,
    /// `None`: the mode's default (`default_policy`).
    policy: Option<LabelPolicy>,
    classes: Option<Vec<bench_core::ParadigmId>>,
    paper_inputs: bool,
    random_all: bool,
    fallback: Fallback,
}

fn protocol(a: &RouteEvalArgs) -> Result<Protocol, BenchError> {
    let classes = if a.classes.is_empty() {
        None
    } else {
        Some(
            a.classes
                .iter()
                .map(|c| c.trim().parse::<bench_core::ParadigmId>())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| BenchError::Invalid(format!("--classes: {e}")))?,
        )
    };
    let paper_inputs = match a.inputs.trim() {
        "harness" => false,
        "paper" => true,
        other => {
            return Err(BenchError::Invalid(format!(
                "--inputs {other:?}: expected harness or paper"
            )))
        }
    };
    let random_all = match a.random.trim() {
        "paradigms" => false,
        "all-classes" => true,
        other => {
            return Err(BenchError::Invalid(format!(
                "--random {other:?}: expected paradigms or all-classes"
            )))
        }
    };
    Ok(Protocol {
        features: a.features.parse()?,
        split: Split::parse(&a.split, a.folds)?,
        policy: a.policy.as_deref().map(str::parse).transpose()?,
        classes,
        paper_inputs,
        random_all,
        fallback: Fallback::parse(&a.fallback)?,
    })
}

/// The Appendix D.2 inputs of the traditional ML routers: the query-type one-hot and, with
/// corpus features, the indicators.
fn paper_ml_inputs(set: &bench_core::RoutingSet) -> bench_core::RoutingSet {
    set.project(|k| {
        matches!(
            k,
            bench_core::FeatureKind::QueryType | bench_core::FeatureKind::CorpusIndicators
        )
    })
}

fn merge(into: &mut Evaluation, other: Evaluation) {
    into.rows.extend(other.rows);
    into.predictions.extend(other.predictions);
    into.skipped.extend(other.skipped);
    into.failed.extend(other.failed);
}

fn eval(a: &RouteEvalArgs) -> Result<()> {
    // Every flag is checked before the store or the encoder is touched.
    let proto = protocol(a)?;
    super::check_folder("--cache-dir", &a.cache_dir)?;
    if let Some(dir) = &a.model_dir {
        super::check_folder("--model-dir", dir)?;
    }
    let (features, split) = (proto.features, proto.split);
    let mut cands = candidates(a)?;
    if proto.random_all {
        for c in cands.iter_mut().filter(|c| c.name == "random") {
            *c = routers::baselines::random_all_classes_candidate();
        }
    }
    // The research claim is measured against best-single: it is always evaluated.
    if !cands.iter().any(|c| c.name == "best-single") {
        cands.push(Candidate::from(routers::baselines::best_single_entry()));
    }
    let endpoint = llm_settings(a)?;
    let client = endpoint
        .map(|cfg| {
            llm::OpenAiLlm::new(cfg).map_err(|e| BenchError::Invalid(format!("router LLM: {e}")))
        })
        .transpose()?;
    if a.db.sqlite_path().is_some_and(|p| !p.exists()) {
        return Err(BenchError::Invalid(format!(
            "results database {} does not exist: run `ragrouter bench <corpus>` or `ragrouter import` first",
            a.db
        ))
        .into());
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        // Reading only: an empty or foreign file is refused, never given a schema.
        let store = Store::open_existing_db(&a.db).await?;
        let sel = RunSelection {
            run_ids: a.runs.clone(),
            corpora: a.corpora.clone(),
            splits: if split == Split::Given {
                SplitUse::Given
            } else {
                SplitUse::Pooled
            },
        };
        let runs = routers::dataset::select_runs_pooled(&store, &sel, a.pool_sources).await?;
        let raw = load_raw(&store, &runs).await?;
        let n_tuples: usize = raw.iter().map(|c| c.tuples.len()).sum();
        if !a.json {
            println!(
                "tuples: {n_tuples} from {} run(s) ({}), mode {}",
                runs.len(),
                runs.iter()
                    .map(|r| format!(
                        "{}{} #{}",
                        r.corpus,
                        r.split.map(|s| format!("/{s}")).unwrap_or_default(),
                        r.id
                    ))
                    .collect::<Vec<_>>()
                    .join(", "),
                runs.first().map_or("", |r| r.mode.as_str())
            );
        }
        let policy = proto
            .policy
            .unwrap_or(default_policy(runs.first().map(|r| r.mode.as_str())));
        let encoder: Arc<MiniLm> = Arc::new(
            MiniLm::from_dir(a.model_dir.as_deref()).context("loading the sentence encoder")?,
        );
        let cache = VectorCache::new(&a.cache_dir);
        let enc = Arc::clone(&encoder);
        let opts = BuildOptions {
            corpus_features: features.has_corpus(),
            classes: proto.classes.clone(),
            probe_features: features.has_probe(),
        };
        let data = tokio::task::spawn_blocking(move || {
            build_set(
                &raw,
                policy,
                enc.as_ref() as &dyn Embedder,
                Some(&CachedQuestions(cache)),
                &opts,
            )
        })
        .await??;
        let set = features.apply(&data.set);
        let folds = split.folds(&set, a.seed, &data.splits)?;
        if !a.json {
            println!(
                "routing rows: {} ({} classes: {}), features {} ({} columns), {} {} fold(s), policy {}, fallback {}, cost in {}, seed {}{}",
                set.rows.len(),
                set.schema.n_classes(),
                set.schema.classes.join(", "),
                features,
                set.schema.n_features(),
                folds.len(),
                split.name(),
                policy,
                proto.fallback.name(),
                data.cost_unit,
                a.seed,
                if data.failed_tuples > 0 {
                    format!(", {} failed tuples counted as not correct", data.failed_tuples)
                } else {
                    String::new()
                }
            );
        }
        // Always-p rows for every paradigm of the data set, first among the baselines.
        let mut all = routers::baselines::fixed_candidates(&set.schema);
        all.extend(cands);
        let cands = all;
        // The router LLM's replies are cached in the results store like the bench's.
        let llm_access = client.map(|c| routers::LlmAccess {
            llm: Arc::new(llm::CachedLlm::new(c, store.clone(), "route-eval/1"))
                as Arc<dyn bench_core::Llm>,
            handle: tokio::runtime::Handle::current(),
        });
        let llm_identity = llm_access.as_ref().map(|l| l.llm.identity());
        let ctx = RouterContext {
            seed: a.seed,
            llm: llm_access,
        };
        let mut families: Vec<(String, Family)> =
            cands.iter().map(|c| (c.name.clone(), c.family)).collect();
        families.extend(data.published.iter().map(|(n, _)| (n.clone(), Family::Published)));
        let config = serde_json::json!({
            "routers": cands.iter().map(|c| serde_json::json!({
                "name": c.name,
                "family": c.family.as_str(),
                "sweep": c.sweep,
            })).collect::<Vec<_>>(),
            "external": a.external,
            "external_timeout_s": a.external_timeout,
            "encoder": data.encoder,
            "router_llm": llm_identity,
            "classes": set.schema.classes,
            "n_features": set.schema.n_features(),
            "rows": set.rows.len(),
            "failed_tuples": data.failed_tuples,
            "cost_unit": data.cost_unit,
            "inputs": if proto.paper_inputs { "paper" } else { "harness" },
            "random": if proto.random_all { "all-classes" } else { "paradigms" },
            "fallback": proto.fallback.name(),
        });
        let t = Instant::now();
        let set_for_eval = set.clone();
        let eval_opts = EvalOptions {
            fallback: proto.fallback,
            bills: Arc::new(data.bills.clone()),
        };
        let published = data.published.clone();
        let signal_paradigms = data.signal_paradigms.clone();
        let own_cost: Vec<f64> = data.bills.iter().map(|b| b.own).collect();
        let cascades = features.has_probe();
        if cascades {
            families.push((routers::cascade::CASCADE.to_string(), Family::Utility));
            families.push((routers::cascade::AGREE.to_string(), Family::Utility));
        }
        let paper_inputs = proto.paper_inputs;
        let seed = a.seed;
        let (ev, tests, folds) = tokio::task::spawn_blocking(move || -> bench_core::Result<_> {
            let (ml, rest): (Vec<Candidate>, Vec<Candidate>) = cands
                .into_iter()
                .partition(|c| paper_inputs && c.family == Family::Ml);
            let mut ev = evaluate_with(&set_for_eval, &rest, &folds, &ctx, &eval_opts)?;
            if !ml.is_empty() {
                let narrow = paper_ml_inputs(&set_for_eval);
                merge(&mut ev, evaluate_with(&narrow, &ml, &folds, &ctx, &eval_opts)?);
            }
            if cascades {
                merge(
                    &mut ev,
                    routers::cascade::evaluate_cascades(&routers::cascade::CascadeInput {
                        set: &set_for_eval,
                        folds: &folds,
                        signal_paradigms: &signal_paradigms,
                        own_cost: &own_cost,
                        seed,
                    })?,
                );
            }
            for (name, choices) in &published {
                merge(
                    &mut ev,
                    routers::imported::evaluate_published(&set_for_eval, &folds, name, choices),
                );
            }
            let tests = routers::significance::compare_to(
                &ev.predictions,
                "best-single",
                routers::significance::RESAMPLES,
                seed,
            )
            .unwrap_or_default();
            Ok((ev, tests, folds))
        })
        .await??;
        let took = t.elapsed();
        let spec = RouteEvalSpec {
            split: split.name().to_string(),
            folds: folds.len() as u32,
            seed: a.seed,
            features: features.as_str().to_string(),
            policy: policy.as_str().to_string(),
            mode: data.mode.clone(),
            runs: data.runs.clone(),
            config,
        };
        let id = store
            .put_route_eval_full(&spec, &ev.rows, &ev.predictions, &tests)
            .await?;
        let family = |name: &str| {
            families
                .iter()
                .find(|(n, _)| n == name)
                .map_or(Family::External, |(_, f)| *f)
        };
        let summaries = summarize(&ev.rows);
        if a.json {
            println!(
                "{}",
                serde_json::to_string_pretty(&routers::table::to_json(
                    id,
                    &spec,
                    &data.cost_unit,
                    &summaries,
                    &tests,
                    &ev.skipped,
                    &ev.failed,
                    &family
                ))?
            );
        } else {
            print!("{}", routers::table::render(&summaries, &family));
            print!(
                "{}",
                routers::table::render_tests(&summaries, &tests, &data.cost_unit, &family)
            );
            print!(
                "{}",
                routers::reading::render(&set, &summaries, &ev.predictions, &family)
            );
            print!("{}", routers::reading::render_combined(&set, spec.seed)?);
            for (r, why) in &ev.skipped {
                println!("skipped {r}: {why}");
            }
            for (r, why) in &ev.failed {
                println!("failed {r}: {why}");
            }
            println!(
                "R.A routing accuracy, F1 macro F1, MRR mean reciprocal rank, C.R correct rate (cannot-answer plays the {} fallback); percent, mean over folds; cost in {}",
                proto.fallback.name(),
                data.cost_unit
            );
            println!(
                "evaluation {id} stored in {} ({:.1} s)",
                a.db,
                took.as_secs_f64()
            );
        }
        if !ev.failed.is_empty() {
            return Err(anyhow::anyhow!(
                "{} router(s) failed: {}",
                ev.failed.len(),
                ev.failed
                    .iter()
                    .map(|(r, _)| r.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Ok(())
    })
}

/// The label policy when `--policy` is not given: offline runs label the cheapest paradigm (by
/// context tokens) whose context delivered the answer; LLM runs use the paper's policy.
pub fn default_policy(mode: Option<&str>) -> LabelPolicy {
    match mode {
        Some("offline") => LabelPolicy::CheapestCorrect,
        _ => LabelPolicy::JudgeThenSemanticF1,
    }
}

/// The vector cache as the routers' source of question vectors.
struct CachedQuestions(VectorCache);

impl routers::dataset::QuestionVectors for CachedQuestions {
    fn get_or_embed(
        &self,
        key: &str,
        texts: &[&str],
        embedder: &dyn Embedder,
    ) -> bench_core::Result<bench_core::Embeddings> {
        Ok(self.0.get_or_embed(key, texts, embedder, &|_, _| {})?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offline_runs_default_to_the_cheapest_delivering_paradigm() {
        assert_eq!(
            default_policy(Some("offline")),
            LabelPolicy::CheapestCorrect
        );
        assert_eq!(
            default_policy(Some("llm:m@http://x")),
            LabelPolicy::JudgeThenSemanticF1
        );
        assert_eq!(default_policy(None), LabelPolicy::JudgeThenSemanticF1);
    }

    #[test]
    fn list_names_every_router() {
        let l = list();
        for e in registry() {
            assert!(l.contains(e.name));
        }
        // Families in the command-line spelling, not Rust's.
        assert!(l.contains(" ml ") && l.contains(" cost-aware "), "{l}");
        assert!(!l.contains("CostAware") && !l.contains(" Ml "), "{l}");
    }
}
