//! `mlp`: a multi-layer perceptron (hidden 64, 32, ReLU, softmax) on standardised features.
//!
//! The paper's MLP router (Table 18: hidden layers 64, 32). Trained with softmax
//! cross-entropy over all schema classes, Adam (learning rate 3e-3, decoupled weight decay
//! 1e-4), batch 128, 12 epochs (at least 400 steps on small sets), seeded initialisation and shuffles. Scores are the softmax
//! probabilities.

use bench_core::{Result, RoutingRow, RoutingSchema, RoutingSet};

use super::nn::{Loss, Mlp, MlpSpec, Output, Targets, TrainConfig};
use super::prep::Standardizer;
use super::{boxed, fitted, model_entry, rows_f64, seed_for, Model, PresentClasses};
use crate::entry::{Family, RouterEntry};
use crate::rng::SplitMix64;

/// Hidden widths.
pub const HIDDEN: [usize; 2] = [64, 32];

/// The registry entry of `mlp`.
pub fn entry() -> RouterEntry {
    model_entry(
        "mlp",
        "MLP 64-32 (ReLU, softmax), Adam 3e-3, 12 epochs, standardised features",
        Family::Ml,
        |ctx, _| boxed("mlp", MlpModel::new(seed_for(ctx.seed, "mlp"))),
    )
}

/// The network, its scaler and its training settings.
#[derive(Debug, Clone)]
pub struct MlpModel {
    seed: u64,
    /// Training settings (12 epochs, Adam 3e-3).
    pub train: TrainConfig,
    fitted: Option<(Standardizer, Mlp)>,
}

impl MlpModel {
    /// An unfitted network seeded by `seed`.
    pub fn new(seed: u64) -> Self {
        MlpModel {
            seed,
            train: TrainConfig {
                epochs: 12,
                min_steps: 400,
                batch_size: 128,
                lr: 3e-3,
                weight_decay: 1e-4,
                seed: 0,
            },
            fitted: None,
        }
    }
}

impl Model for MlpModel {
    fn fit(&mut self, train: &RoutingSet, _: &PresentClasses) -> Result<()> {
        let st = Standardizer::fit_all(&train.rows, &train.schema);
        let x = st.matrix(&train.rows);
        let mut rng = SplitMix64::new(self.seed);
        let spec = MlpSpec {
            sizes: vec![x.ncols(), HIDDEN[0], HIDDEN[1], train.schema.n_classes()],
            batch_norm: false,
            output: Output::Softmax,
        };
        let mut net = Mlp::with_rng(&spec, &mut rng);
        let cfg = TrainConfig {
            seed: rng.next_u64(),
            ..self.train.clone()
        };
        net.fit(
            x.view(),
            &Targets::Classes(train.labels()),
            &Loss::softmax_ce(),
            &cfg,
        )?;
        self.fitted = Some((st, net));
        Ok(())
    }

    fn scores(&self, _: &RoutingSchema, rows: &[RoutingRow]) -> Result<Vec<Vec<f64>>> {
        let (st, net) = fitted(&self.fitted);
        Ok(rows_f64(net.predict(st.matrix(rows).view()).view()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::test_support::{ctx, synthetic_accuracy};

    #[test]
    fn learns_the_synthetic_rule() {
        let mut r = (entry().make)(&ctx(3), None).unwrap();
        let acc = synthetic_accuracy(r.as_mut(), 1200, 900, 8);
        assert!(acc > 0.9, "mlp held-out accuracy {acc}");
    }
}
