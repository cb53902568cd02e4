//! `ragrouter route`: cross-validated router evaluation on the stored tuples (`eval`, the
//! protocol of `routers::protocol`) and the router catalogue (`list`).

use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use bench_core::{BenchError, Embedder};
use corpora::{MiniLm, VectorCache};
use routers::protocol::{evaluate_protocol, Protocol, ProtocolError, Resources, RouterChoice};
use routers::registry::registry;
use store::Store;

use crate::args::{EncoderArgs, StoreArgs};
pub use args::RouteEvalArgs;

mod args;

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

pub fn run(args: &RouteArgs) -> Result<()> {
    match &args.command {
        RouteCommand::List => {
            print!("{}", routers::table::render_list(&registry()));
            Ok(())
        }
        RouteCommand::Eval(a) => eval(a),
    }
}

/// The longest an external router may take per request: a day.
const MAX_EXTERNAL_TIMEOUT_S: f64 = 86_400.0;

/// `--external-timeout` as a duration: above 0 and at most a day (a larger value, NaN or
/// infinity is refused rather than overflowing the duration).
pub(crate) fn external_timeout(t: f64) -> Result<Duration, BenchError> {
    if !(t > 0.0 && t <= MAX_EXTERNAL_TIMEOUT_S) {
        return Err(BenchError::Invalid(format!(
            "--external-timeout must be a number of seconds above 0 and at most \
             {MAX_EXTERNAL_TIMEOUT_S} (a day), got {t:?}"
        )));
    }
    Ok(Duration::from_secs_f64(t))
}

/// The flags as the protocol's typed choices, checked before anything is loaded.
fn protocol(a: &RouteEvalArgs) -> Result<(Protocol, RouterChoice), BenchError> {
    let classes = (!a.classes.is_empty())
        .then(|| a.classes.iter().map(|c| c.trim().parse()).collect())
        .transpose()
        .map_err(|e| BenchError::Invalid(format!("--classes: {e}")))?;
    let protocol = Protocol {
        features: a.features.parse()?,
        split: routers::eval::Split::parse(&a.split, a.folds)?,
        policy: a.policy.as_deref().map(str::parse).transpose()?,
        classes,
        inputs: a.inputs.parse()?,
        random: a.random.parse()?,
        fallback: routers::eval::Fallback::parse(&a.fallback)?,
        seed: a.seed,
        corpora: a.corpora.clone(),
        runs: a.runs.clone(),
        pool_sources: a.pool_sources,
        data_routers: true,
    };
    let choice = RouterChoice {
        names: a.routers.clone(),
        external: a.external.clone(),
        external_timeout: external_timeout(a.external_timeout)?,
    };
    Ok((protocol, choice))
}

/// Why routers failed, on stderr and masked: an external router's message carries the tail of
/// its stderr, which may hold a password or a database URL.
fn print_failed(failed: &[(String, String)]) {
    for (r, why) in failed {
        eprintln!("failed {r}: {}", store::redact(why));
    }
}

fn eval(a: &RouteEvalArgs) -> Result<()> {
    // Every flag is checked before the store or the encoder is touched.
    let (proto, choice) = protocol(a)?;
    crate::checks::check_folder("--cache-dir", &a.cache_dir)?;
    a.encoder.check()?;
    let mut routers = choice.resolve()?;
    // Progress and warnings go to stderr, so stdout stays the table (or the JSON document).
    routers.notices = Some(Arc::new(|line: &str| eprintln!("{line}")));
    let client = crate::engines::router_llm(a.llm_model.as_deref(), a.llm_base_url.as_deref())?;
    let StoreArgs { db } = &a.store;
    if db.sqlite_path().is_some_and(|p| !p.exists()) {
        return Err(BenchError::Invalid(format!(
            "results database {db} does not exist: run `ragrouter bench <corpus>` or `ragrouter import` first"
        ))
        .into());
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        // Reading only: an empty or foreign file is refused, never given a schema.
        let store = Store::open_existing_db(db).await?;
        // The router LLM's replies are cached in the results store like the bench's.
        let llm = client.map(|c| routers::LlmAccess {
            llm: Arc::new(llm::CachedLlm::new(c, store.clone(), "route-eval/1")) as _,
            handle: tokio::runtime::Handle::current(),
        });
        let EncoderArgs { model_dir } = &a.encoder;
        let load = || -> Result<Arc<dyn Embedder>, routers::protocol::BoxError> {
            Ok(Arc::new(MiniLm::from_dir(model_dir.as_deref())?))
        };
        let resources = Resources {
            encoder: &load,
            vectors: Some(Arc::new(crate::engines::CachedQuestions(VectorCache::new(&a.cache_dir)))),
            llm,
        };
        let r = evaluate_protocol(&store, &proto, routers, resources)
            .await
            .map_err(|e| match e {
                // Bad input keeps its type for the exit code.
                ProtocolError::Bench(b) => anyhow::Error::from(b),
                other => other.into(),
            })?;
        let id = r.store(&store).await?;
        store.close().await; // checkpointed: the file alone holds the evaluation
        if a.json {
            println!("{}", serde_json::to_string_pretty(&r.to_json(id))?);
            print_failed(&r.evaluation.failed);
        } else {
            println!("{}\n{}", r.tuples_line(), r.rows_line(&proto));
            print!("{}", r.render_tables_with(a.wide));
            for (r, why) in &r.evaluation.skipped {
                println!("skipped {r}: {why}");
            }
            print_failed(&r.evaluation.failed);
            println!(
                "R.A routing accuracy, F1 macro F1, MRR mean reciprocal rank, C.R correct rate (cannot-answer plays the {} fallback); percent, mean over folds; cost in {}",
                proto.fallback.name(),
                r.cost_unit
            );
            println!("evaluation {id} stored in {db} ({:.1} s)", r.took.as_secs_f64());
        }
        match r.evaluation.failed.len() {
            0 => Ok(()),
            n => Err(anyhow::anyhow!(
                "{n} router(s) failed: {}",
                r.evaluation.failed.iter().map(|(r, _)| r.as_str()).collect::<Vec<_>>().join(", ")
            )),
        }
    })
}
