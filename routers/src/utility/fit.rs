//! The λ-independent fit of a utility router: per paradigm class, cross-fitted and calibrated
//! learners (the grid point of lowest held-out log loss), or the per-corpus prior where it
//! predicts better, or a constant rate where the class has too few rows.

use std::sync::Arc;

use bench_core::{BenchError, Result, RoutingRow, RoutingSchema, RoutingSet};

use super::calibrate::{stratified_parts, Platt};
use super::{
    augment, binary_schema, log_loss, raw_p, Calibrated, ClassModel, Fitted, Learner, Prior,
    MIN_ROWS, PARTS,
};
use crate::cost::CostModel;
use crate::entry::FitCache;
use crate::rng::{hash_str, mix64};
use crate::seed_papers::outcome_of_class;

/// Every part's held-out scores of the whole grid (outer index: the grid point), filled on
/// first use where the learner shares its grid's work.
type SharedScores = Vec<Option<Vec<Vec<Vec<f64>>>>>;

/// One paradigm class's learned fit: its augmented rows, outcomes and stratified parts.
struct ClassFit<'a> {
    schema: &'a Arc<RoutingSchema>,
    learner: Learner,
    seed: u64,
    /// The paradigm class.
    c: usize,
    rows: Vec<RoutingRow>,
    labels: Vec<bool>,
    /// Per part, the rows it holds out.
    parts: Vec<Vec<usize>>,
}

impl Fitted {
    pub(super) fn fit(train: &RoutingSet, learner: Learner, seed: u64) -> Result<Fitted> {
        if train.rows.is_empty() {
            return Err(BenchError::Invalid(
                "utility router: no training rows".into(),
            ));
        }
        let mut corpora: Vec<String> = train.rows.iter().map(|r| r.corpus.clone()).collect();
        corpora.sort_unstable();
        corpora.dedup();
        let schema = Arc::new(binary_schema(&train.schema, &corpora));
        let k = train.schema.n_classes() - 1;
        let mut classes = Vec::with_capacity(k);
        let mut oofs = Vec::with_capacity(k);
        for c in 0..k {
            let (model, oof_c) = fit_class(train, &corpora, &schema, learner, seed, c)?;
            classes.push(model);
            oofs.push(oof_c);
        }
        if classes.iter().all(Option::is_none) {
            return Err(BenchError::Invalid(
                "utility router: no training row has any paradigm outcome".into(),
            ));
        }
        Ok(Fitted {
            corpora,
            schema,
            n_features: train.schema.n_features(),
            classes,
            oof: oofs,
            cost: CostModel::fit(train),
            scored: FitCache::default(),
        })
    }
}

/// Class `c`'s model (`None` where no training row has its tuple) and the held-out estimate of
/// every training row (`None` where the row has no tuple of the class).
fn fit_class(
    train: &RoutingSet,
    corpora: &[String],
    schema: &Arc<RoutingSchema>,
    learner: Learner,
    seed: u64,
    c: usize,
) -> Result<(Option<ClassModel>, Vec<Option<f64>>)> {
    let mut oof_c = vec![None; train.rows.len()];
    let (idx, have): (Vec<usize>, Vec<(&RoutingRow, bool)>) = train
        .rows
        .iter()
        .enumerate()
        .filter_map(|(i, r)| outcome_of_class(r, c).map(|o| (i, (r, o.correct))))
        .unzip();
    if have.is_empty() {
        return Ok((None, oof_c));
    }
    let labels: Vec<bool> = have.iter().map(|h| h.1).collect();
    let pos = labels.iter().filter(|&&v| v).count();
    let (model, oof) = if have.len() < MIN_ROWS || pos < PARTS || pos + PARTS > have.len() {
        let rate = (pos as f64 + 1.0) / (have.len() as f64 + 2.0);
        (ClassModel::Constant(rate), vec![rate; have.len()])
    } else {
        let rows: Vec<RoutingRow> = have
            .iter()
            .map(|(r, ok)| augment(r, corpora, *ok))
            .collect();
        let parts = stratified_parts(&labels, PARTS, mix64(seed ^ (c as u64 + 1)));
        let fit = ClassFit {
            schema,
            learner,
            seed,
            c,
            rows,
            labels,
            parts,
        };
        fit.learned_or_prior()?
    };
    for (&i, &p) in idx.iter().zip(&oof) {
        oof_c[i] = Some(p);
    }
    Ok((Some(model), oof_c))
}

impl ClassFit<'_> {
    /// Held-out estimates of the per-corpus prior and of every grid point; the lowest log loss
    /// wins (the prior guards against a learner that only adds noise). Returns the model and
    /// its held-out estimate of each of the class's rows.
    fn learned_or_prior(&self) -> Result<(ClassModel, Vec<f64>)> {
        let fit_idx: Vec<Vec<usize>> = self.parts.iter().map(|h| self.fit_indices(h)).collect();
        let mut best: Option<(f64, Vec<Calibrated>, Vec<f64>)> = None;
        let mut shared: SharedScores = vec![None; self.parts.len()];
        for g in 0..self.learner.grid {
            let (models, oof) = self.fit_grid_point(g, &fit_idx, &mut shared)?;
            let loss = log_loss(&oof, &self.labels);
            if best.as_ref().is_none_or(|(l, _, _)| loss < *l) {
                best = Some((loss, models, oof));
            }
        }
        let prior_oof = self.held_out_prior(&fit_idx);
        let prior_loss = log_loss(&prior_oof, &self.labels);
        Ok(match best {
            Some((loss, models, oof)) if loss < prior_loss => (ClassModel::Learners(models), oof),
            _ => {
                let prior = Prior::fit(
                    self.rows
                        .iter()
                        .zip(&self.labels)
                        .map(|(r, &y)| (r.corpus.as_str(), y)),
                );
                (ClassModel::Prior(prior), prior_oof)
            }
        })
    }

    /// The rows outside the held-out part `held`, in row order.
    fn fit_indices(&self, held: &[usize]) -> Vec<usize> {
        let mut in_held = vec![false; self.rows.len()];
        held.iter().for_each(|&i| in_held[i] = true);
        (0..self.rows.len()).filter(|&i| !in_held[i]).collect()
    }

    /// The per-corpus prior's held-out estimate of every row, each from the other parts.
    fn held_out_prior(&self, fit_idx: &[Vec<usize>]) -> Vec<f64> {
        let mut prior_oof = vec![0.0; self.rows.len()];
        for (held, fit) in self.parts.iter().zip(fit_idx) {
            let prior = Prior::fit(
                fit.iter()
                    .map(|&i| (self.rows[i].corpus.as_str(), self.labels[i])),
            );
            for &i in held {
                prior_oof[i] = prior.get(&self.rows[i].corpus);
            }
        }
        prior_oof
    }

    /// Grid point `g`: per part, a learner fitted on the other parts and calibrated on the
    /// part; returns the learners and their calibrated held-out estimate of every row.
    fn fit_grid_point(
        &self,
        g: usize,
        fit_idx: &[Vec<usize>],
        shared: &mut SharedScores,
    ) -> Result<(Vec<Calibrated>, Vec<f64>)> {
        let mut oof = vec![0.0; self.rows.len()];
        let mut models = Vec::with_capacity(PARTS);
        for (pi, held) in self.parts.iter().enumerate() {
            let (m, p) = self.fit_part(g, pi, &fit_idx[pi], &mut shared[pi])?;
            let y: Vec<bool> = held.iter().map(|&i| self.labels[i]).collect();
            let platt = Platt::fit(&p, &y);
            for (&i, &pv) in held.iter().zip(&p) {
                oof[i] = platt.apply(pv);
            }
            models.push((m, platt));
        }
        Ok((models, oof))
    }

    /// Part `pi`'s learner at grid point `g`, fitted on the rows `fit_idx`, and its raw
    /// P(correct) of each held-out row (from the grid's shared scores where the learner has
    /// them).
    fn fit_part(
        &self,
        g: usize,
        pi: usize,
        fit_idx: &[usize],
        shared: &mut Option<Vec<Vec<Vec<f64>>>>,
    ) -> Result<(Box<dyn bench_core::Router + Sync>, Vec<f64>)> {
        let held_rows: Vec<RoutingRow> = self.parts[pi]
            .iter()
            .map(|&i| self.rows[i].clone())
            .collect();
        let seed = mix64(self.seed ^ hash_str(self.c as u64, "part") ^ pi as u64);
        let mut m = (self.learner.make)(seed, g);
        let fit_set = RoutingSet {
            schema: Arc::clone(self.schema),
            rows: fit_idx.iter().map(|&i| self.rows[i].clone()).collect(),
        };
        m.fit(&fit_set)?;
        let scores = match self.learner.held_scores {
            Some(all) => {
                let grid = match shared {
                    Some(grid) => grid,
                    slot @ None => slot.insert(all(&fit_set, &held_rows)?),
                };
                std::mem::take(&mut grid[g])
            }
            None => m.scores_batch(self.schema, &held_rows)?,
        };
        Ok((m, scores.iter().map(|s| raw_p(s)).collect()))
    }
}
