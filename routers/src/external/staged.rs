//! Protocol version 2: an external program that routes stage by stage. It answers the `fit`
//! request (which carries `"version": 2` and the fold's stages) with `{"ok": true, "version": 2}`;
//! then, per stage, one batched `stage` request carries the questions still open with the
//! signals the stage's arms just paid for, and the program replies per question `"continue"` or
//! `{"stop": ARM}`, the arm whose answer to deliver. A program that replies without `"version": 2`
//! is evaluated as a version-1 router instead.

use bench_core::{BenchError, Result, RoutingRow, RoutingSet};
use serde_json::{json, Value};

use super::{schema_json, ExternalRouter, ExternalSpec};
use crate::cascade::{
    decide, known, masked, probe_needs, stages, training_order, CascadeInput, Needs,
};
use crate::eval::{decided_rows, Decided};
use crate::eval::{scrub, Evaluation, Fold};

/// The protocol version a staged program answers with.
pub(crate) const STAGED_VERSION: u64 = 2;

/// Evaluates `spec` stage by stage on every fold when it speaks version 2; `Ok(None)` when its
/// first `fit` reply shows a version-1 program (evaluated the usual way instead). A failure of a
/// version-2 program is the evaluation's `failed` entry, not an error.
pub(crate) fn evaluate(
    spec: &ExternalSpec,
    input: &CascadeInput<'_>,
) -> Result<Option<Evaluation>> {
    let needs = probe_needs(input);
    let mut ev = Evaluation::default();
    for (fi, f) in input.folds.iter().enumerate() {
        let seed = crate::rng::mix64(input.seed ^ fi as u64);
        let mut router = ExternalRouter::new(spec.clone(), seed);
        let train = input.set.subset(&f.train);
        let plan = stages(&input.set.schema, &training_order(&train)?);
        let fitted = router.fit_staged(&train, &plan);
        let items = match fitted {
            Ok(false) if fi == 0 => return Ok(None),
            Ok(false) => {
                Err(router.err("answered version 2 on the first fold and version 1 on a later one"))
            }
            Ok(true) => walk(&router, input, &needs, f, &plan),
            Err(e) => Err(e),
        };
        match items {
            Ok(items) => {
                let part = decided_rows(input.set, fi as u32, &spec.name, None, &items);
                ev.rows.extend(part.rows);
                ev.predictions.extend(part.predictions);
            }
            Err(e) => {
                return Ok(Some(Evaluation {
                    failed: vec![(spec.name.clone(), e.to_string())],
                    ..Evaluation::default()
                }))
            }
        }
    }
    Ok(Some(ev))
}

/// The test rows of one fold, stage by stage, until each is delivered.
fn walk(
    router: &ExternalRouter,
    input: &CascadeInput<'_>,
    needs: &Needs,
    f: &Fold,
    plan: &[Vec<usize>],
) -> Result<Vec<Decided>> {
    let set = input.set;
    let mut open: Vec<usize> = (0..f.test.len()).collect();
    let mut done: Vec<Option<Decided>> = vec![None; f.test.len()];
    let mut ran: Vec<usize> = Vec::new();
    for (s, arms) in plan.iter().enumerate() {
        let before = ran.clone();
        ran.extend(arms.iter().copied());
        let rows: Vec<Value> = open
            .iter()
            .map(|&r| stage_row(set, &set.rows[f.test[r]], needs, (&before, &ran)))
            .collect();
        let msg = json!({
            "type": "stage",
            "stage": s,
            "last": s + 1 == plan.len(),
            "arms": class_names(set, arms),
            "played": class_names(set, &ran),
            "rows": rows,
        });
        let decisions = router.decisions(&msg, open.len())?;
        let mut still = Vec::new();
        for (&r, d) in open.iter().zip(decisions) {
            let i = f.test[r];
            let q = &set.rows[i].query_id;
            match d {
                None if s + 1 == plan.len() => {
                    return Err(router.err(format!(
                        "question {q}: \"continue\" at the last stage; stop with one of the arms played ({})",
                        class_names(set, &ran).join(", ")
                    )))
                }
                None => still.push(r),
                Some(arm) => {
                    let c = set.schema.classes.iter().position(|c| *c == arm);
                    let c = c.filter(|c| ran.contains(c)).ok_or_else(|| {
                        router.err(format!(
                            "question {q}: delivers {arm:?}, an arm it did not play (played: {})",
                            class_names(set, &ran).join(", ")
                        ))
                    })?;
                    done[r] = Some(decide(set, i, &ran, c, input.own_cost[i])?);
                }
            }
        }
        open = still;
        if open.is_empty() {
            break;
        }
    }
    Ok(done.into_iter().flatten().collect())
}

/// One open question of a stage request: the scrubbed row with the probe columns of signals not
/// yet paid for masked (as the built-in cascades read it), and the signals the last stage's arms
/// paid for by name (null where the question has none).
fn stage_row(
    set: &RoutingSet,
    row: &RoutingRow,
    needs: &Needs,
    (before, ran): (&[usize], &[usize]),
) -> Value {
    let shown = masked(&scrub(row), needs, ran);
    let fresh: serde_json::Map<String, Value> = needs
        .iter()
        .filter(|(_, n)| known(n, ran) && !known(n, before))
        .map(|(col, _)| {
            let name = set.schema.feature_names[*col].trim_start_matches("p:");
            let present = shown.features[col + 1] > 0.5;
            let v = if present {
                json!(shown.features[*col])
            } else {
                Value::Null
            };
            (name.to_string(), v)
        })
        .collect();
    json!({
        "query_id": shown.query_id,
        "corpus": shown.corpus,
        "text": shown.text,
        "qtype": shown.qtype,
        "features": shown.features,
        "signals": fresh,
    })
}

fn class_names(set: &RoutingSet, classes: &[usize]) -> Vec<String> {
    classes
        .iter()
        .map(|&c| set.schema.classes[c].clone())
        .collect()
}

impl ExternalRouter {
    /// Starts the program and sends the version-2 `fit`; whether it answered as version 2.
    fn fit_staged(&mut self, train: &RoutingSet, plan: &[Vec<usize>]) -> Result<bool> {
        let stages: Vec<Vec<&str>> = plan
            .iter()
            .map(|s| {
                s.iter()
                    .map(|&c| train.schema.classes[c].as_str())
                    .collect()
            })
            .collect();
        let reply = self.send_fit(json!({
            "type": "fit",
            "version": STAGED_VERSION,
            "seed": self.seed,
            "schema": schema_json(&train.schema),
            "stages": stages,
            "rows": train.rows,
        }))?;
        Ok(reply.get("version").and_then(Value::as_u64) == Some(STAGED_VERSION))
    }

    /// Sends a stage request; per row `None` (continue) or the arm to deliver.
    fn decisions(&self, msg: &Value, n: usize) -> Result<Vec<Option<String>>> {
        let mut p = self.proc_.lock().unwrap_or_else(|e| e.into_inner());
        let reply = self.request(&mut p, msg)?;
        let list = reply
            .get("decisions")
            .and_then(Value::as_array)
            .ok_or_else(|| self.err(format!("stage reply lacks \"decisions\": {reply}")))?;
        if list.len() != n {
            return Err(self.err(format!("{} decisions for {n} questions", list.len())));
        }
        list.iter()
            .enumerate()
            .map(|(i, d)| match d {
                Value::String(s) if s == "continue" => Ok(None),
                Value::Object(o) if o.len() == 1 => match o.get("stop") {
                    Some(Value::String(arm)) => Ok(Some(arm.clone())),
                    _ => Err(self.bad_decision(i, d)),
                },
                _ => Err(self.bad_decision(i, d)),
            })
            .collect()
    }

    fn bad_decision(&self, i: usize, d: &Value) -> BenchError {
        self.err(format!(
            "decision {i}: expected \"continue\" or {{\"stop\": ARM}}, got {d}"
        ))
    }
}
