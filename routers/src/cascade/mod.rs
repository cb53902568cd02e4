//! Cascades: run the paradigms in cost order and stop as soon as a calibrated estimate of
//! P(correct | the question, the signals so far) of a paradigm already run clears a threshold τ
//! (swept like λ); the cost is every paradigm run. Beside it the rule baseline `cascade-agree`:
//! run LLM-only and NaiveRAG, stop when their answers agree (`agree.em`), else play the training
//! folds' best single paradigm.
//!
//! A signal is known after a stage when every paradigm whose answers it needs has run (its
//! `paradigms`); before that its columns read as missing (value 0, present 0). The estimate at
//! stage s is `util-lr`'s (cross-fitted, Platt-calibrated logistic regression per paradigm) fitted
//! on the training rows with the columns of stage s. Decisions read features only; the outcomes
//! of a test row are read after the decision, to score and bill it.

use std::collections::BTreeMap;

use bench_core::{BenchError, FeatureKind, ParadigmId, Result, Router, RoutingRow, RoutingSet};

use crate::eval::{scrub, Evaluation, Fold};
use crate::imported::{decided_rows, Decided};
use crate::rng::mix64;

mod stages;
pub(crate) use stages::arms_paid;
use stages::decide;
pub use stages::{cost_order, stages};

/// Thresholds of the sweep; above 1 the cascade never stops early (it runs every paradigm and
/// plays the one the last stage's estimate ranks first).
pub const THRESHOLDS: &[f64] = &[0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.01];

/// The learned cascade's row name.
pub const CASCADE: &str = "cascade-lr";
/// The agreement rule's row name.
pub const AGREE: &str = "cascade-agree";

/// What the cascades need besides the rows.
#[derive(Debug, Clone, Copy)]
pub struct CascadeInput<'a> {
    /// The rows, with probe features.
    pub set: &'a RoutingSet,
    /// The evaluation's folds.
    pub folds: &'a [Fold],
    /// Signal name → the paradigms whose answers it needs.
    pub signal_paradigms: &'a BTreeMap<String, Vec<ParadigmId>>,
    /// Per row, the signals' own cost (beyond the paradigms they need).
    pub own_cost: &'a [f64],
    /// Seeds the learned cascade's fits.
    pub seed: u64,
}

/// Per probe column pair (value column index), the classes its signal needs; a signal whose
/// paradigm has no class is never known.
fn probe_needs(input: &CascadeInput<'_>) -> Vec<(usize, Option<Vec<usize>>)> {
    let schema = &input.set.schema;
    let Some(block) = schema.block(FeatureKind::ProbeSignals) else {
        return Vec::new();
    };
    block
        .range()
        .step_by(2)
        .map(|col| {
            let name = schema.feature_names[col].trim_start_matches("p:");
            let needs = input
                .signal_paradigms
                .get(name)
                .map(|ps| {
                    ps.iter()
                        .map(|&p| schema.class_of(p))
                        .collect::<Option<Vec<_>>>()
                })
                .unwrap_or(Some(Vec::new()));
            (col, needs)
        })
        .collect()
}

/// `row` as known after running `ran`: the columns of signals not yet known read as missing.
fn masked(row: &RoutingRow, needs: &[(usize, Option<Vec<usize>>)], ran: &[usize]) -> RoutingRow {
    let mut r = row.clone();
    for (col, need) in needs {
        let known = need
            .as_ref()
            .is_some_and(|n| n.iter().all(|c| ran.contains(c)));
        if !known {
            r.features[*col] = 0.0;
            r.features[*col + 1] = 0.0;
        }
    }
    r
}

/// Evaluates `cascade-lr` over [`THRESHOLDS`] and `cascade-agree` on every fold.
pub fn evaluate_cascades(input: &CascadeInput<'_>) -> Result<Evaluation> {
    let set = input.set;
    let needs = probe_needs(input);
    let mut ev = Evaluation::default();
    for (fi, f) in input.folds.iter().enumerate() {
        let train = set.subset(&f.train);
        let order = cost_order(&train);
        if order.is_empty() {
            return Err(BenchError::Invalid(
                "cascade: no paradigm has training outcomes".into(),
            ));
        }
        // Per stage (after running order[..=s]): calibrated P(correct) per class, per test row.
        let mut stages: Vec<Vec<Vec<Option<f64>>>> = Vec::with_capacity(order.len());
        for s in 0..order.len() {
            let ran = &order[..=s];
            let train_s = RoutingSet {
                schema: set.schema.clone(),
                rows: train.rows.iter().map(|r| masked(r, &needs, ran)).collect(),
            };
            // Each stage's seed is its own: no other router shares this fit.
            let mut u = crate::utility::fallback_router(
                mix64(input.seed ^ ((fi as u64) << 8) ^ (s as u64 + 1)),
                &crate::entry::FitCache::default(),
            );
            u.fit(&train_s)?;
            let test: Vec<RoutingRow> = f
                .test
                .iter()
                .map(|&i| masked(&scrub(&set.rows[i]), &needs, ran))
                .collect();
            let fitted = u
                .fitted()
                .ok_or_else(|| BenchError::Other("cascade: no fit".into()))?;
            stages.push(fitted.p_correct(&test)?);
        }
        for &tau in THRESHOLDS {
            let items: Vec<Decided> = f
                .test
                .iter()
                .enumerate()
                .map(|(ti, &i)| {
                    let mut s = 0;
                    let pick = loop {
                        let ran = &order[..=s];
                        let p = &stages[s][ti];
                        let best = ran
                            .iter()
                            .copied()
                            .max_by(|&a, &b| {
                                p[a].unwrap_or(-1.0)
                                    .total_cmp(&p[b].unwrap_or(-1.0))
                                    .then(b.cmp(&a))
                            })
                            .unwrap_or(order[0]);
                        if s + 1 == order.len() || p[best].unwrap_or(0.0) >= tau {
                            break best;
                        }
                        s += 1;
                    };
                    decide(set, i, &order[..=s], pick, input.own_cost[i])
                })
                .collect::<Result<_>>()?;
            let part = decided_rows(set, fi as u32, CASCADE, Some(tau), &items);
            ev.rows.extend(part.rows);
            ev.predictions.extend(part.predictions);
        }
        if let Some(items) = agree_rule(input, f, &train).transpose()? {
            let part = decided_rows(set, fi as u32, AGREE, None, &items);
            ev.rows.extend(part.rows);
            ev.predictions.extend(part.predictions);
        }
    }
    Ok(ev)
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
    use super::*;
    use bench_core::{ClassOutcome, QueryType, RoutingSchema};
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
                    .map(|r| r.correct_rate * f64::from(r.n))
                    .sum::<f64>()
                    / n,
                rows.iter()
                    .map(|r| r.mean_tokens * f64::from(r.n))
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
