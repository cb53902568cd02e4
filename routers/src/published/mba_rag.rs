//! MBA-RAG (Tang et al., COLING 2025): routing as a contextual multi-armed bandit over the
//! paradigms, rewarded for a correct answer and penalised for its cost.
//!
//! Here a disjoint LinUCB (Li et al., 2010) on the standardised features plus a bias: per
//! paradigm a ridge model `A_a = I + sum x x^T`, `b_a = sum r x`. Training is one online pass
//! over the training rows in a seeded random order: at each row the arm with the highest upper
//! confidence bound `theta_a . x + ALPHA sqrt(x^T A_a^-1 x)` is pulled, and only that arm's
//! reward `1[correct] - MU cost / T` is observed (T: the mean training cost), as a deployed
//! bandit would see it. Routing is greedy: the highest `theta_a . x`. `A_a^-1` is kept by
//! Sherman-Morrison updates. MBA-RAG's own encoder (DistilBERT) and epsilon-greedy exploration
//! are replaced by these features and UCB exploration.

use bench_core::{BenchError, Result, Router, RoutingRow, RoutingSchema, RoutingSet};
use ndarray::{Array1, Array2};

use crate::cost::CostModel;
use crate::entry::{Family, RouterContext, RouterEntry};
use crate::models::prep::Standardizer;
use crate::models::{seed_for, ABSENT};
use crate::rng::SplitMix64;
use crate::seed_papers::outcome_of_class;

/// Exploration weight of the upper confidence bound.
pub const ALPHA: f64 = 0.5;
/// Cost penalty of the reward, per mean training cost.
pub const MU: f64 = 0.1;

/// The registry entry.
pub fn entry() -> RouterEntry {
    RouterEntry {
        name: "mba-rag",
        about: "MBA-RAG-style contextual bandit: LinUCB, one online pass, reward correct − 0.1·cost/mean cost",
        family: Family::Published,
        needs_llm: false,
        sees_outcomes: false,
        lanes: &[],
        sweep: &[],
        make: |ctx: &RouterContext, _param| Ok(Box::new(MbaRag::new(seed_for(ctx.seed, "mba-rag")))),
    }
}

#[derive(Debug)]
struct Arm {
    a_inv: Array2<f64>,
    b: Array1<f64>,
    pulls: usize,
    /// `A^-1 b`, set when training ends.
    theta: Array1<f64>,
}

/// The bandit's state.
#[derive(Debug)]
pub struct MbaRag {
    seed: u64,
    fitted: Option<(Standardizer, Vec<Option<Arm>>)>,
}

impl MbaRag {
    /// An unfitted bandit seeded by `seed`.
    pub fn new(seed: u64) -> Self {
        MbaRag { seed, fitted: None }
    }
}

fn design(st: &Standardizer, row: &RoutingRow) -> Array1<f64> {
    let mut out = vec![0f32; st.n_out()];
    st.write(&row.features, &mut out);
    let mut x: Vec<f64> = out.into_iter().map(f64::from).collect();
    x.push(1.0);
    Array1::from(x)
}

impl Router for MbaRag {
    fn name(&self) -> &str {
        "mba-rag"
    }

    fn fit(&mut self, train: &RoutingSet) -> Result<()> {
        if train.rows.is_empty() {
            return Err(BenchError::Invalid(
                "router mba-rag: no training rows".into(),
            ));
        }
        let st = Standardizer::fit_all(&train.rows, &train.schema);
        let d = st.n_out() + 1;
        let k = train.schema.n_classes() - 1;
        let has: Vec<bool> = (0..k)
            .map(|c| train.rows.iter().any(|r| outcome_of_class(r, c).is_some()))
            .collect();
        let mut arms: Vec<Option<Arm>> = has
            .iter()
            .map(|&h| {
                h.then(|| Arm {
                    a_inv: Array2::eye(d),
                    b: Array1::zeros(d),
                    pulls: 0,
                    theta: Array1::zeros(d),
                })
            })
            .collect();
        let scale = CostModel::fit(train).scale;
        let mut order: Vec<usize> = (0..train.rows.len()).collect();
        SplitMix64::new(self.seed).shuffle(&mut order);
        for i in order {
            let row = &train.rows[i];
            let x = design(&st, row);
            // Pull the arm of highest UCB among those with a tuple for this row.
            let mut best: Option<(f64, usize, Array1<f64>)> = None;
            for (c, arm) in arms.iter().enumerate() {
                let (Some(arm), Some(_)) = (arm, outcome_of_class(row, c)) else {
                    continue;
                };
                let ax = arm.a_inv.dot(&x);
                let ucb = ax.dot(&arm.b) + ALPHA * x.dot(&ax).max(0.0).sqrt();
                if best.as_ref().is_none_or(|(u, _, _)| ucb > *u) {
                    best = Some((ucb, c, ax));
                }
            }
            let Some((_, c, ax)) = best else { continue };
            let o = outcome_of_class(row, c).expect("chosen among present");
            let reward = f64::from(u8::from(o.correct)) - MU * o.tokens / scale;
            let arm = arms[c].as_mut().expect("present");
            // Sherman-Morrison: (A + x x^T)^-1 = A^-1 - (A^-1 x)(A^-1 x)^T / (1 + x^T A^-1 x).
            let denom = 1.0 + x.dot(&ax);
            for (r, mut row) in arm.a_inv.rows_mut().into_iter().enumerate() {
                row.scaled_add(-ax[r] / denom, &ax);
            }
            arm.b.scaled_add(reward, &x);
            arm.pulls += 1;
        }
        for arm in arms.iter_mut().flatten() {
            arm.theta = arm.a_inv.dot(&arm.b);
        }
        self.fitted = Some((st, arms));
        Ok(())
    }

    fn scores(&self, schema: &RoutingSchema, row: &RoutingRow) -> Result<Vec<f64>> {
        let (st, arms) = self
            .fitted
            .as_ref()
            .ok_or_else(|| BenchError::Invalid("router mba-rag: scores asked before fit".into()))?;
        if arms.len() + 1 != schema.n_classes() || row.features.len() != st.mean.len() {
            return Err(BenchError::Invalid(format!(
                "router mba-rag: fitted on {} classes and {} features, asked to score {} and {}",
                arms.len() + 1,
                st.mean.len(),
                schema.n_classes(),
                row.features.len()
            )));
        }
        let x = design(st, row);
        let mut s: Vec<f64> = arms
            .iter()
            .map(|a| match a {
                Some(a) => a.theta.dot(&x),
                None => ABSENT,
            })
            .collect();
        s.push(ABSENT - 1.0);
        Ok(s)
    }
}
