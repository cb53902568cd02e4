//! Each (matrix, view): the routers' stored evaluations found again by key, the missing ones
//! evaluated in one call of the protocol `route eval` runs (best-single always among them) and
//! stored, and every router's numbers at its fixed operating point (its `param: None` rows).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use anyhow::Result;
use bench_core::{BenchError, Embedder, RouteEvalRow, RouteEvalTest, RoutePrediction};
use corpora::{MiniLm, VectorCache};
use routers::protocol::{
    evaluate_protocol, BoxError, Protocol, ProtocolError, Resources, RouteEvaluation, RouterChoice,
};
use routers::Family;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use store::Store;

use super::matrices::Plan;

/// The baselines every board carries, evaluated with every router (they are cheap).
pub const BASELINES: [&str; 4] = ["best-single", "oracle", "oracle-per-corpus", "random"];
/// The baseline of every Δ.
pub const BEST_SINGLE: &str = "best-single";
/// The reference every gap is measured to.
pub const ORACLE: &str = "oracle";

/// A router asked for, and what identifies its evaluation.
#[derive(Debug, Clone)]
pub struct Req {
    /// Its name on the board.
    pub name: String,
    /// `baseline`, `built-in`, `external` or `published`.
    pub kind: String,
    /// Its family (`external` for an external router).
    pub family: String,
    /// Its configuration: for a built-in its family and sweep, for an external router its
    /// command and the digest of every file its command names.
    pub config: Value,
    /// The `--external` spec, for an external router.
    pub external: Option<String>,
}

/// A router's numbers at its fixed operating point on one view.
#[derive(Debug, Clone)]
pub struct Measured {
    /// Test questions.
    pub n: u32,
    /// Correct rate, mean over folds.
    pub correct: f64,
    /// Mean cost, mean over folds.
    pub cost: f64,
    /// Its paired test against best-single (`None` for best-single itself).
    pub test: Option<RouteEvalTest>,
    /// Its per-question predictions.
    pub predictions: Vec<RoutePrediction>,
    /// The value fixed on each fold's training rows (empty without a sweep).
    pub operating_point: Vec<f64>,
}

/// How a router fared on one view.
#[derive(Debug, Clone)]
pub enum Status {
    Ok(Box<Measured>),
    Skipped(String),
    Failed(String),
}

/// One view of a matrix, evaluated.
#[derive(Debug, Clone)]
pub struct ViewResult {
    pub view: String,
    /// Why the view could not be evaluated at all.
    pub skipped: Option<String>,
    /// Per router name.
    pub routers: BTreeMap<String, Status>,
    /// Routers the data brought (published choices, cascades): (name, family).
    pub auto: Vec<(String, String)>,
}

/// The routers of the flags: the built-ins (with the baselines), then every external one.
pub fn requested(names: &[String], external: &[String]) -> Result<Vec<Req>> {
    let mut all: Vec<String> = names.to_vec();
    all.extend(BASELINES.iter().map(|s| s.to_string()));
    // One resolve over everything refuses unknown names and a name used twice.
    let choice = RouterChoice {
        names: all.clone(),
        external: external.to_vec(),
        external_timeout: std::time::Duration::from_secs(1),
    };
    let resolved = choice.resolve()?;
    let mut out = Vec::new();
    let builtin = RouterChoice {
        names: all,
        external: Vec::new(),
        ..choice.clone()
    }
    .resolve()?;
    for c in &builtin.candidates {
        out.push(Req {
            name: c.name.clone(),
            kind: if c.family == Family::Baseline { "baseline" } else { "built-in" }.into(),
            family: c.family.as_str().into(),
            config: json!({"name": c.name, "family": c.family.as_str(), "sweep": c.sweep, "version": env!("CARGO_PKG_VERSION")}),
            external: None,
        });
    }
    for (spec, c) in external
        .iter()
        .zip(&resolved.candidates[builtin.candidates.len()..])
    {
        let command = spec
            .split_once('=')
            .map_or(spec.as_str(), |(_, c)| c)
            .trim();
        out.push(Req {
            name: c.name.clone(),
            kind: "external".into(),
            family: "external".into(),
            config: json!({"name": c.name, "command": store::redact(command), "files": file_digests(command)}),
            external: Some(spec.clone()),
        });
    }
    Ok(out)
}

/// sha256 of every word of the command that names a file (the program, a script it runs).
fn file_digests(command: &str) -> BTreeMap<String, String> {
    let command = command.strip_prefix("external:").unwrap_or(command);
    command
        .split_whitespace()
        .filter(|w| Path::new(w).is_file())
        .filter_map(|w| {
            std::fs::read(w)
                .ok()
                .map(|b| (w.to_string(), hex::encode(Sha256::digest(b))))
        })
        .collect()
}

fn sha(v: &Value) -> String {
    hex::encode(Sha256::digest(v.to_string().as_bytes()))
}

/// The key of a (matrix, view) under its protocol: the matrix's content, the view, the split,
/// folds, seed and the crate version.
pub fn protocol_key(plan: &Plan, view: &str) -> String {
    let m = &plan.matrix;
    sha(
        &json!({"digest": m.digest, "view": view, "split": m.split, "folds": m.folds, "seed": m.seed,
        "corpora": plan.protocol.corpora, "version": env!("CARGO_PKG_VERSION")}),
    )
}

fn router_key(protocol_key: &str, config: &Value) -> String {
    sha(&json!({"protocol": protocol_key, "router": config}))
}

/// What the evaluations share: the encoder (loaded once), the vector cache and the counts.
pub struct Ctx {
    pub model_dir: Option<std::path::PathBuf>,
    pub cache_dir: std::path::PathBuf,
    pub external_timeout: std::time::Duration,
    /// `--refresh` names (`all`: every router).
    pub refresh: Vec<String>,
    pub encoder: std::sync::Mutex<Option<Arc<dyn Embedder>>>,
    /// Evaluations run and found cached, over the whole board.
    pub ran: usize,
    pub cached: usize,
}

impl Ctx {
    fn refreshed(&self, name: &str) -> bool {
        self.refresh.iter().any(|r| r == name || r == "all")
    }

    fn encoder(&self) -> Result<Arc<dyn Embedder>, BoxError> {
        let mut slot = self.encoder.lock().map_err(|_| "encoder lock poisoned")?;
        if let Some(e) = &*slot {
            return Ok(e.clone());
        }
        let e: Arc<dyn Embedder> = Arc::new(MiniLm::from_dir(self.model_dir.as_deref())?);
        *slot = Some(e.clone());
        Ok(e)
    }
}

/// A stored evaluation read back.
struct Loaded {
    rows: Vec<RouteEvalRow>,
    tests: Vec<RouteEvalTest>,
    predictions: Vec<RoutePrediction>,
    config: Value,
}

/// Evaluates one view of a matrix: what the store holds under the keys is reused, the rest is
/// evaluated in one protocol call and stored with its keys.
pub async fn view(
    store: &Store,
    plan: &Plan,
    view: &str,
    reqs: &[Req],
    ctx: &mut Ctx,
) -> Result<ViewResult> {
    let pk = protocol_key(plan, view);
    let stored = store.leaderboard_evaluations(&pk).await?;
    let (mut source, pending) = cached_or_pending(&stored, &pk, reqs, ctx);
    eprintln!(
        "leaderboard: {} {view}: {} evaluation(s) to run, {} cached",
        plan.matrix.id,
        pending.len(),
        source.len()
    );
    ctx.ran += pending.len();
    ctx.cached += source.len();
    let mut failed: BTreeMap<String, String> = BTreeMap::new();
    // The routers the data brings (cascades, published choices) come from the latest stored
    // evaluation that ran them; a view with routers cached evaluates only the new ones.
    let mut auto_from = auto_source(&stored);
    let with_data_routers = source.is_empty();
    if !pending.is_empty() {
        match run_pending(store, plan, (view, with_data_routers), &pk, &pending, ctx).await? {
            Ok((id, fails)) => {
                if let Some(id) = id {
                    for r in pending.iter().filter(|r| !fails.contains_key(&r.name)) {
                        source.insert(r.name.clone(), id);
                    }
                    if with_data_routers {
                        auto_from = Some(id);
                    }
                }
                failed = fails;
            }
            Err(why) => return Ok(skipped_view(view, reqs, why)),
        }
    }
    let loaded = load_all(store, source.values().chain(auto_from.iter())).await?;
    Ok(view_result(
        view, reqs, &failed, &source, &loaded, auto_from,
    ))
}

/// Splits the requested routers into those with a stored evaluation under their key (router
/// name to evaluation id), unless `--refresh` names them, and those still to evaluate.
fn cached_or_pending<'a>(
    stored: &[(i64, Value)],
    pk: &str,
    reqs: &'a [Req],
    ctx: &Ctx,
) -> (BTreeMap<String, i64>, Vec<&'a Req>) {
    let mut source: BTreeMap<String, i64> = BTreeMap::new();
    let mut pending = Vec::new();
    for r in reqs {
        let key = router_key(pk, &r.config);
        let hit = stored
            .iter()
            .find(|(_, c)| c["leaderboard"]["routers"][&r.name] == key.as_str());
        match hit {
            Some((id, _)) if !ctx.refreshed(&r.name) => {
                source.insert(r.name.clone(), *id);
            }
            _ => pending.push(r),
        }
    }
    (source, pending)
}

/// The stored evaluation the data's own routers are read from: the latest that ran any, else
/// the latest.
fn auto_source(stored: &[(i64, Value)]) -> Option<i64> {
    stored
        .iter()
        .find(|(_, c)| {
            c["leaderboard"]["auto"]
                .as_array()
                .is_some_and(|a| !a.is_empty())
        })
        .or(stored.first())
        .map(|(id, _)| *id)
}

/// Each of the evaluations `ids` read back once.
async fn load_all(store: &Store, ids: impl Iterator<Item = &i64>) -> Result<HashMap<i64, Loaded>> {
    let mut loaded: HashMap<i64, Loaded> = HashMap::new();
    for id in ids {
        if !loaded.contains_key(id) {
            loaded.insert(*id, load(store, *id).await?);
        }
    }
    Ok(loaded)
}

/// The view's result: each requested router's status (failed, or measured in the evaluation
/// `source` names), then the data's own routers measured in the evaluation `auto_from`.
fn view_result(
    view: &str,
    reqs: &[Req],
    failed: &BTreeMap<String, String>,
    source: &BTreeMap<String, i64>,
    loaded: &HashMap<i64, Loaded>,
    auto_from: Option<i64>,
) -> ViewResult {
    let mut out = ViewResult {
        view: view.to_string(),
        skipped: None,
        routers: BTreeMap::new(),
        auto: Vec::new(),
    };
    for r in reqs {
        let status = match (failed.get(&r.name), source.get(&r.name)) {
            (Some(why), _) => Status::Failed(store::redact(why)),
            (None, Some(id)) => measured(&loaded[id], &r.name),
            (None, None) => Status::Failed("not evaluated".into()),
        };
        out.routers.insert(r.name.clone(), status);
    }
    if let Some(l) = auto_from.and_then(|id| loaded.get(&id)) {
        for a in l.config["leaderboard"]["auto"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let (Some(name), Some(family)) = (a[0].as_str(), a[1].as_str()) else {
                continue;
            };
            out.routers.insert(name.to_string(), measured(l, name));
            out.auto.push((name.to_string(), family.to_string()));
        }
    }
    out
}

/// Every router of the view skipped for the same reason.
fn skipped_view(view: &str, reqs: &[Req], why: String) -> ViewResult {
    ViewResult {
        view: view.to_string(),
        routers: reqs
            .iter()
            .map(|r| (r.name.clone(), Status::Skipped(why.clone())))
            .collect(),
        skipped: Some(why),
        auto: Vec::new(),
    }
}

/// What [`run_pending`] gives back: the evaluation's id (none when storing failed) and the
/// routers that failed with why; or, when the data cannot be evaluated on the view, why.
type PendingRun = std::result::Result<(Option<i64>, BTreeMap<String, String>), String>;

/// Runs the protocol on the pending routers and stores the evaluation with its keys: the id (none
/// when storing failed, every pending router then failed) and the routers that failed; or, when
/// the data cannot be evaluated on this view, why.
async fn run_pending(
    store: &Store,
    plan: &Plan,
    (view, data_routers): (&str, bool),
    pk: &str,
    pending: &[&Req],
    ctx: &Ctx,
) -> Result<PendingRun> {
    let mut r = match evaluate_pending(store, plan, (view, data_routers), pending, ctx).await? {
        Ok(r) => r,
        Err(why) => return Ok(Err(why)),
    };
    let failed: BTreeMap<String, String> = r.evaluation.failed.iter().cloned().collect();
    let keys = leaderboard_keys(&r, pk, pending, &failed);
    r.spec.config["leaderboard"] = keys;
    match r.store(store).await {
        Ok(id) => Ok(Ok((Some(id), failed))),
        // What could not be stored cannot be read back or reused: the routers evaluated fail,
        // the rest of the board still builds.
        Err(e) => {
            let why = format!("storing the evaluation: {e}");
            Ok(Ok((
                None,
                pending
                    .iter()
                    .map(|p| (p.name.clone(), why.clone()))
                    .collect(),
            )))
        }
    }
}

/// One protocol call over the pending routers on the view; or, when the data cannot be routed
/// (one class, too few rows, no signals, a single label), why.
async fn evaluate_pending(
    store: &Store,
    plan: &Plan,
    (view, data_routers): (&str, bool),
    pending: &[&Req],
    ctx: &Ctx,
) -> Result<std::result::Result<RouteEvaluation, String>> {
    let protocol = Protocol {
        features: view.parse()?,
        data_routers,
        ..plan.protocol.clone()
    };
    let choice = RouterChoice {
        names: pending
            .iter()
            .filter(|r| r.external.is_none())
            .map(|r| r.name.clone())
            .collect(),
        external: pending.iter().filter_map(|r| r.external.clone()).collect(),
        external_timeout: ctx.external_timeout,
    };
    let routers = choice.resolve()?;
    let load = || ctx.encoder();
    let resources = Resources {
        encoder: &load,
        vectors: Some(Arc::new(crate::engines::CachedQuestions(VectorCache::new(
            &ctx.cache_dir,
        )))),
        llm: None,
    };
    let r = match evaluate_protocol(store, &protocol, routers, resources).await {
        Ok(r) => r,
        // The data, not the board, is at fault: one class, too few rows, no signals.
        Err(ProtocolError::Bench(e)) if e.is_bad_input() => return Ok(Err(e.to_string())),
        Err(ProtocolError::Bench(e)) => return Err(e.into()),
        Err(e) => return Err(e.into()),
    };
    let labels: std::collections::BTreeSet<usize> = r.set.rows.iter().map(|x| x.label).collect();
    if labels.len() < 2 {
        return Ok(Err(format!(
            "every question has the same label ({}): there is nothing to route",
            labels
                .iter()
                .next()
                .and_then(|l| r.set.schema.classes.get(*l))
                .map_or("none", |s| s.as_str())
        )));
    }
    Ok(Ok(r))
}

/// The `leaderboard` part of the stored configuration: the protocol key, each pending router's
/// key (those that did not fail), the data's own routers with their family and the skipped
/// routers with why.
fn leaderboard_keys(
    r: &RouteEvaluation,
    pk: &str,
    pending: &[&Req],
    failed: &BTreeMap<String, String>,
) -> Value {
    let pending_names: Vec<&str> = pending.iter().map(|p| p.name.as_str()).collect();
    let mut keys = serde_json::Map::new();
    for p in pending.iter().filter(|p| !failed.contains_key(&p.name)) {
        keys.insert(p.name.clone(), router_key(pk, &p.config).into());
    }
    let mut auto = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for row in &r.evaluation.rows {
        let f = r.family(&row.router);
        if !pending_names.contains(&row.router.as_str())
            && f != Family::Baseline
            && seen.insert(row.router.clone())
        {
            auto.push(json!([row.router, f.as_str()]));
        }
    }
    let skipped: BTreeMap<&str, &str> = r
        .evaluation
        .skipped
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    json!({"protocol_key": pk, "routers": keys, "auto": auto, "skipped": skipped})
}

async fn load(store: &Store, id: i64) -> Result<Loaded> {
    let config = store
        .route_evals()
        .await?
        .into_iter()
        .find(|(i, _)| *i == id)
        .map(|(_, s)| s.config)
        .ok_or_else(|| {
            BenchError::Other(format!("route evaluation {id} vanished from the store"))
        })?;
    Ok(Loaded {
        rows: store.route_eval_rows(id).await?,
        tests: store.route_eval_tests(id).await?,
        predictions: store.leaderboard_predictions(id).await?,
        config,
    })
}

/// A router's fixed-point numbers in a stored evaluation, or why it has none.
fn measured(l: &Loaded, name: &str) -> Status {
    if let Some(why) = l.config["leaderboard"]["skipped"][name].as_str() {
        return Status::Skipped(store::redact(why));
    }
    let rows: Vec<RouteEvalRow> = l
        .rows
        .iter()
        .filter(|r| r.router == name && r.param.is_none())
        .cloned()
        .collect();
    let summaries = routers::eval::summarize(&rows);
    let Some(s) = summaries
        .iter()
        .find(|s| s.corpus == "*")
        .or(summaries.first())
    else {
        return Status::Skipped("no rows at its fixed operating point".into());
    };
    let operating_point = l.config["operating_points"]["routers"][name]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default();
    Status::Ok(Box::new(Measured {
        n: s.n as u32,
        correct: s.mean.correct_rate,
        cost: s.mean.mean_tokens,
        test: l
            .tests
            .iter()
            .find(|t| t.router == name && t.param.is_none() && t.baseline == BEST_SINGLE)
            .cloned(),
        predictions: l
            .predictions
            .iter()
            .filter(|p| p.router == name && p.param.is_none())
            .cloned()
            .collect(),
        operating_point,
    }))
}
