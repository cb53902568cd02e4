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
use routers::dataset::{build_set, load_raw, select_runs, RunSelection};
use routers::eval::{evaluate, summarize, Candidate, Split};
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
    Eval(Box<RouteEvalArgs>),
    /// List the built-in routers.
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
    /// Features the routers see: q (query), c (corpus indicators) or q+c.
    #[arg(long, default_value = "q+c")]
    pub features: String,
    /// Number of folds of the stratified k-fold split.
    #[arg(long, default_value_t = 5)]
    pub folds: usize,
    /// kfold (stratified by label) or loco (leave one corpus out).
    #[arg(long, default_value = "kfold")]
    pub split: String,
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
    /// Results database.
    #[arg(long, default_value = ".ragrouter/results.sqlite")]
    pub db: PathBuf,
    /// Directory for cached vectors (question embeddings).
    #[arg(long, default_value = ".ragrouter/cache")]
    pub cache_dir: PathBuf,
    /// Directory of the encoder's weights.
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
            format!("{:?}", e.family),
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

fn eval(a: &RouteEvalArgs) -> Result<()> {
    // Every flag is checked before the store or the encoder is touched.
    let features: FeatureSet = a.features.parse()?;
    let split = Split::parse(&a.split, a.folds)?;
    let policy: Option<LabelPolicy> = a.policy.as_deref().map(str::parse).transpose()?;
    let cands = candidates(a)?;
    let endpoint = llm_settings(a)?;
    let client = endpoint
        .map(|cfg| {
            llm::OpenAiLlm::new(cfg).map_err(|e| BenchError::Invalid(format!("router LLM: {e}")))
        })
        .transpose()?;
    if !a.db.exists() {
        return Err(BenchError::Invalid(format!(
            "results database {} does not exist: run `ragrouter bench <corpus>` first",
            a.db.display()
        ))
        .into());
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let store = Store::open(&a.db).await?;
        let sel = RunSelection {
            run_ids: a.runs.clone(),
            corpora: a.corpora.clone(),
        };
        let runs = select_runs(&store, &sel).await?;
        let raw = load_raw(&store, &runs).await?;
        let n_tuples: usize = raw.iter().map(|c| c.tuples.len()).sum();
        println!(
            "tuples: {n_tuples} from {} run(s) ({}), mode {}",
            runs.len(),
            runs.iter()
                .map(|r| format!("{} #{}", r.corpus, r.id))
                .collect::<Vec<_>>()
                .join(", "),
            runs.first().map_or("", |r| r.mode.as_str())
        );
        let policy = policy.unwrap_or(default_policy(runs.first().map(|r| r.mode.as_str())));
        let encoder: Arc<MiniLm> = Arc::new(
            MiniLm::from_dir(a.model_dir.as_deref()).context("loading the sentence encoder")?,
        );
        let cache = VectorCache::new(&a.cache_dir);
        let enc = Arc::clone(&encoder);
        let data = tokio::task::spawn_blocking(move || {
            build_set(&raw, policy, enc.as_ref() as &dyn Embedder, Some(&cache))
        })
        .await??;
        let set = features.apply(&data.set);
        let folds = split.folds(&set, a.seed)?;
        println!(
            "routing rows: {} ({} classes: {}), features {} ({} columns), {} {} folds, policy {}, seed {}{}",
            set.rows.len(),
            set.schema.n_classes(),
            set.schema.classes.join(", "),
            features,
            set.schema.n_features(),
            folds.len(),
            split.name(),
            policy,
            a.seed,
            if data.failed_tuples > 0 {
                format!(", {} failed tuples counted as not correct", data.failed_tuples)
            } else {
                String::new()
            }
        );
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
        let families: Vec<(String, Family)> =
            cands.iter().map(|c| (c.name.clone(), c.family)).collect();
        let config = serde_json::json!({
            "routers": cands.iter().map(|c| serde_json::json!({
                "name": c.name,
                "family": format!("{:?}", c.family),
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
        });
        let t = Instant::now();
        let set_for_eval = set.clone();
        let (ev, folds) = tokio::task::spawn_blocking(move || {
            evaluate(&set_for_eval, &cands, &folds, &ctx).map(|ev| (ev, folds))
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
        let id = store.put_route_eval(&spec, &ev.rows).await?;
        let family = |name: &str| {
            families
                .iter()
                .find(|(n, _)| n == name)
                .map_or(Family::External, |(_, f)| *f)
        };
        print!("{}", routers::table::render(&summarize(&ev.rows), &family));
        for (r, why) in &ev.skipped {
            println!("skipped {r}: {why}");
        }
        println!(
            "R.A routing accuracy, F1 macro F1, MRR mean reciprocal rank, C.R correct rate (cannot-answer falls back to the training folds' most frequent optimal paradigm); percent, mean over folds"
        );
        println!(
            "evaluation {id} stored in {} ({:.1} s)",
            a.db.display(),
            took.as_secs_f64()
        );
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
    }
}
