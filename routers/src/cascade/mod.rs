//! Cascades: run the paradigms in stages of rising cost and deliver the answer of an arm
//! already paid for. `cascade-lr` runs one paradigm per stage in cost order; `cascade-select`
//! runs LLM-only and NaiveRAG together first (the pair the `answers` probe compares), then the
//! others one per stage; both stop when the best arm played has a calibrated P(correct) of at
//! least τ and deliver, when they stop, the arm played that the estimate ranks first (ties to
//! the cheaper), not the last one run. `cascade-voi` walks `cascade-select`'s stages and goes on
//! when P̂(the selection after the next stage is right) beats the best arm played by more than λ
//! times the next stage's mean training cost (in units of the costliest arm's). Beside them the
//! rule baseline `cascade-agree`: run LLM-only and NaiveRAG, stop when their answers agree
//! (`agree.em`), else play the training folds' best single paradigm. A question's cost is every
//! arm run, each once, plus the signals' own cost.
//!
//! A signal is known after a stage when every paradigm whose answers it needs has run (its
//! `paradigms`); before that its columns read as missing (value 0, present 0). The estimate
//! after a stage is a utility router's (cross-fitted, Platt-calibrated, per paradigm) fitted on
//! the training rows with the columns known then: `util-lr`'s logistic regression for
//! `cascade-lr`, `util-gbt`'s boosted trees for `cascade-select` and `cascade-voi` (whose
//! next-stage estimate is `util-lr`'s). τ and λ are swept (the
//! sweep rows draw the curve) and fixed per fold on its training rows, from their held-out
//! estimates (the parameters act at decision time only, so nothing is refitted): the value with
//! the highest correct rate, ties to the lower mean cost, then the earlier value. The rows at
//! that value are the router's own (`param: None`). Decisions read features only; the outcomes
//! of a test row are read after the decision, to score and bill it.

use bench_core::{ParadigmId, Result, RoutingSet};

use crate::eval::{choose_operating_point, Evaluation, Fold, OperatingPoint};
use crate::eval::{decided_rows, Decided};

mod estimates;
mod input;
mod select;
mod stages;
mod voi;
pub use input::CascadeInput;
pub use stages::stages;
pub(crate) use stages::{decide, training_order};

use estimates::known_after;
pub(crate) use estimates::{known, masked, probe_needs, Needs};
use select::{walk_tau, walk_voi, Plan};

/// Thresholds of the τ sweep; above 1 the cascade never stops early (it runs every paradigm and
/// delivers the one the last stage's estimate ranks first).
pub const THRESHOLDS: &[f64] = &[0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.01];
/// λ values of `cascade-voi`'s sweep, per unit of the costliest arm's mean training cost; at
/// 1.01 it never goes past the first stage.
pub const LAMBDAS: &[f64] = &[0.0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1.01];

/// The learned cascade's row name.
pub const CASCADE: &str = "cascade-lr";
/// The staged selecting cascade's row name.
pub const SELECT: &str = "cascade-select";
/// The value-of-information cascade's row name.
pub const VOI: &str = "cascade-voi";
/// The agreement rule's row name.
pub const AGREE: &str = "cascade-agree";
/// Every cascade's row name.
pub const NAMES: &[&str] = &[CASCADE, SELECT, VOI, AGREE];

/// Which rows of a fold a walk decides: the training rows (held-out estimates) or the test rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Train,
    Test,
}

/// A walk of one question: (side, index in the fold's list, parameter) → (last stage, arm).
type Walk<'a> = dyn Fn(Side, usize, f64) -> (usize, usize) + 'a;

/// Evaluates `cascade-lr` and `cascade-select` over [`THRESHOLDS`], `cascade-voi` over
/// [`LAMBDAS`] and `cascade-agree` on every fold.
pub fn evaluate_cascades(input: &CascadeInput<'_>) -> Result<Evaluation> {
    let set = input.set;
    let needs = probe_needs(input);
    let k = set.schema.n_classes() - 1;
    let mut ev = Evaluation::default();
    for (fi, f) in input.folds.iter().enumerate() {
        let train = set.subset(&f.train);
        let order = training_order(&train)?;
        let single = Plan::new(order.iter().map(|&c| vec![c]).collect(), &order, k);
        let staged = Plan::new(stages(&set.schema, &order), &order, k);
        // cascade-lr keeps its linear estimate; the staged cascades read boosted trees, which
        // weigh the comparisons of three arms' answers better than one linear score per arm.
        let known = [
            known_after(input, &needs, (fi, f), &single.ran, crate::utility::LR)?,
            known_after(input, &needs, (fi, f), &staged.ran, crate::utility::GBT)?,
        ];
        let p_of = |(plan, kn): (&Plan, usize), side: Side, r: usize, s: usize| {
            let k = &known[kn][&plan.ran[s]];
            match side {
                Side::Train => k.train[r].as_slice(),
                Side::Test => k.test[r].as_slice(),
            }
        };
        let fold = Swept {
            set,
            fi,
            f,
            own: input.own_cost,
        };
        for (name, plan, kn) in [(CASCADE, &single, 0), (SELECT, &staged, 1)] {
            let walk = |side: Side, r: usize, tau: f64| {
                walk_tau(plan, &|s| p_of((plan, kn), side, r, s), tau)
            };
            fold.emit(&mut ev, name, THRESHOLDS, plan, &walk)?;
        }
        let next = voi::next_right(input, &needs, (fi, f), &staged, &known[1])?;
        let step = voi::step_costs(&staged, &stages::mean_costs(&train));
        let walk = |side: Side, r: usize, lambda: f64| {
            let q = |s: usize| match side {
                Side::Train => next.train[s][r],
                Side::Test => next.test[s][r],
            };
            walk_voi(
                &staged,
                &|s| p_of((&staged, 1), side, r, s),
                &q,
                &step,
                lambda,
            )
        };
        fold.emit(&mut ev, VOI, LAMBDAS, &staged, &walk)?;
        if let Some(items) = agree_rule(input, f, &train).transpose()? {
            let part = decided_rows(set, fi as u32, AGREE, None, &items);
            ev.rows.extend(part.rows);
            ev.predictions.extend(part.predictions);
        }
    }
    Ok(ev)
}

/// One fold of a swept cascade: where its decisions are scored.
struct Swept<'a> {
    set: &'a RoutingSet,
    fi: usize,
    f: &'a Fold,
    own: &'a [f64],
}

impl Swept<'_> {
    /// The decisions of every row of `side` at `value`.
    fn decide_all(
        &self,
        side: Side,
        plan: &Plan,
        walk: &Walk<'_>,
        value: f64,
    ) -> Result<Vec<Decided>> {
        let rows = match side {
            Side::Train => &self.f.train,
            Side::Test => &self.f.test,
        };
        rows.iter()
            .enumerate()
            .map(|(r, &i)| {
                let (s, pick) = walk(side, r, value);
                decide(self.set, i, &plan.arms_through(s), pick, self.own[i])
            })
            .collect()
    }

    /// Adds the test rows' rows and predictions at every value of `sweep`, then again at the
    /// value the training rows' held-out estimates choose, as `param: None`; records the point.
    fn emit(
        &self,
        ev: &mut Evaluation,
        name: &str,
        sweep: &[f64],
        plan: &Plan,
        walk: &Walk<'_>,
    ) -> Result<()> {
        let fold = self.fi as u32;
        let mut inner = Vec::with_capacity(sweep.len());
        for &v in sweep {
            let on_train = self.decide_all(Side::Train, plan, walk, v)?;
            let n = on_train.len().max(1) as f64;
            let correct = on_train.iter().filter(|d| d.correct).count() as f64 / n;
            let cost = on_train.iter().map(|d| d.cost).sum::<f64>() / n;
            inner.push((v, correct, cost));
            let items = self.decide_all(Side::Test, plan, walk, v)?;
            let part = decided_rows(self.set, fold, name, Some(v), &items);
            ev.rows.extend(part.rows);
            ev.predictions.extend(part.predictions);
        }
        let param = inner[choose_operating_point(&inner)].0;
        let items = self.decide_all(Side::Test, plan, walk, param)?;
        let part = decided_rows(self.set, fold, name, None, &items);
        ev.rows.extend(part.rows);
        ev.predictions.extend(part.predictions);
        ev.operating_points.push(OperatingPoint {
            router: name.to_string(),
            fold,
            param,
            inner,
        });
        Ok(())
    }
}

/// `cascade-agree` on one fold, when the set has LLM-only, NaiveRAG and the `agree.em` signal.
fn agree_rule(
    input: &CascadeInput<'_>,
    f: &Fold,
    train: &RoutingSet,
) -> Option<Result<Vec<Decided>>> {
    let set = input.set;
    let schema = &set.schema;
    let (lo, nv) = (
        schema.class_of(ParadigmId::LlmOnly)?,
        schema.class_of(ParadigmId::Naive)?,
    );
    let col = schema
        .feature_names
        .iter()
        .position(|n| n == "p:agree.em")?;
    // The training folds' best single paradigm (highest correct rate, lower class on ties).
    let k = schema.n_classes() - 1;
    let rate = |c: usize| {
        train
            .rows
            .iter()
            .filter(|r| r.outcomes[c].is_some_and(|o| o.correct))
            .count()
    };
    let best = (0..k).max_by(|&a, &b| rate(a).cmp(&rate(b)).then(b.cmp(&a)))?;
    Some(
        f.test
            .iter()
            .map(|&i| {
                let r = &set.rows[i];
                let agree = r.features[col + 1] > 0.5 && r.features[col] > 0.5;
                if agree {
                    decide(set, i, &[lo, nv], nv, input.own_cost[i])
                } else if best == lo || best == nv {
                    decide(set, i, &[lo, nv], best, input.own_cost[i])
                } else {
                    decide(set, i, &[lo, nv, best], best, input.own_cost[i])
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::stages::cost_order;
    use super::*;
    use bench_core::{ClassOutcome, FeatureKind, QueryType, RoutingRow, RoutingSchema};
    use std::collections::BTreeMap;
    use std::sync::Arc;

    fn set(rows: usize) -> RoutingSet {
        let schema = Arc::new(RoutingSchema::new(
            &[
                ParadigmId::LlmOnly,
                ParadigmId::Naive,
                ParadigmId::Iterative,
            ],
            vec![(
                FeatureKind::ProbeSignals,
                vec!["p:agree.em".into(), "p:agree.em:present".into()],
            )],
        ));
        let o = |correct, tokens| {
            Some(ClassOutcome {
                correct,
                semantic_f1: 0.0,
                tokens,
            })
        };
        RoutingSet {
            schema,
            rows: (0..rows)
                .map(|i| {
                    // Agreeing cheap arms are right; otherwise only multi-step is.
                    let agree = i % 2 == 0;
                    RoutingRow {
                        query_id: format!("q{i}"),
                        corpus: "c".into(),
                        text: String::new(),
                        qtype: QueryType::Other,
                        features: vec![f64::from(u8::from(agree)), 1.0],
                        label: if agree { 0 } else { 2 },
                        outcomes: vec![o(agree, 0.0), o(agree, 1.0), o(!agree || i % 4 == 0, 4.0)],
                    }
                })
                .collect(),
        }
    }

    #[test]
    fn runs_in_cost_order_and_stops_when_the_estimate_clears_the_threshold() {
        let s = set(240);
        // Costs 0, 1, 4: llm-only, naive, iterative, whatever the class order.
        assert_eq!(cost_order(&s), [0, 1, 2]);
        let folds = crate::eval::stratified_kfold(&s.labels(), 3, 7).unwrap();
        let sp: BTreeMap<String, Vec<ParadigmId>> = [(
            "agree.em".to_string(),
            vec![ParadigmId::LlmOnly, ParadigmId::Naive],
        )]
        .into_iter()
        .collect();
        let own = vec![0.0; s.rows.len()];
        let ev = evaluate_cascades(&CascadeInput {
            set: &s,
            folds: &folds,
            signal_paradigms: &sp,
            own_cost: &own,
            seed: 1,
        })
        .unwrap();
        let pooled = |router: &str, tau: Option<f64>| {
            let rows: Vec<_> = ev
                .rows
                .iter()
                .filter(|r| r.router == router && r.param == tau && r.corpus == "*")
                .collect();
            let n: f64 = rows.iter().map(|r| f64::from(r.n)).sum();
            (
                rows.iter()
                    .map(|r| r.measures.correct_rate * f64::from(r.n))
                    .sum::<f64>()
                    / n,
                rows.iter()
                    .map(|r| r.measures.mean_tokens * f64::from(r.n))
                    .sum::<f64>()
                    / n,
            )
        };
        // After llm-only nothing is known (agree.em needs naive too), P(llm-only) is 1/2: a
        // threshold of 0.9 goes on to naive, where agreement is known: the agreeing half stops
        // there (cost 0 + 1), the rest runs multi-step (0 + 1 + 4) and is right.
        let (cr, cost) = pooled(CASCADE, Some(0.9));
        assert!((cr - 1.0).abs() < 1e-9, "{cr}");
        assert!((cost - (0.5 * 1.0 + 0.5 * 5.0)).abs() < 1e-9, "{cost}");
        // Every prediction's cost is the sum over the paradigms run, its probe share what was
        // run but not played.
        for p in ev.predictions.iter().filter(|p| p.param == Some(0.9)) {
            match p.played.as_deref() {
                Some("iterative") => assert_eq!((p.cost, p.probe_cost), (5.0, 1.0)),
                Some(_) => assert_eq!(p.cost, 1.0),
                None => panic!("nothing played"),
            }
        }
        // A threshold of 0.2 stops after llm-only (its estimate 1/2 clears it): cost 0.
        let (cr, cost) = pooled(CASCADE, Some(0.2));
        assert!((cr - 0.5).abs() < 0.02, "{cr}");
        assert_eq!(cost, 0.0);
        // The rule: agree → naive (cost 1), else best single (iterative: 3/4 right) at 0+1+4.
        let (cr, cost) = pooled(AGREE, None);
        assert!((cr - 1.0).abs() < 1e-9, "{cr}");
        assert!((cost - 3.0).abs() < 1e-9, "{cost}");
    }
}

#[cfg(test)]
mod tests_staged;
