//! `rf`: a random forest (Breiman 2001) of Gini trees on histogram-binned, standardised features.
//!
//! 60 trees, each grown on a bootstrap sample (n draws with replacement) to depth at most 16
//! or until a node is pure or has fewer than 2 rows; every node draws `floor(sqrt(d))` candidate
//! features without replacement. A leaf holds its class frequencies; a row's scores are the
//! mean of its leaves' frequencies over the trees (scikit-learn's `predict_proba`).
//!
//! Written here rather than with smartcore's `RandomForestClassifier`: smartcore 0.7 argsorts
//! every column for every tree and exposes neither vote shares nor its trees; measured with
//! `examples/perf_models.rs --smartcore`, 10 of its trees took 2.3 s on 6,400 x 403 rows (this
//! forest's 60 trees take about 0.5 s). Binning once per fit (32 quantile bins) makes a split
//! search a pass over the node's rows.

use bench_core::{Result, RoutingRow, RoutingSchema, RoutingSet};

use super::hist::{partition, BinnedMatrix, Binner, Tree, MAX_BINS};
use super::prep::Standardizer;
use super::{boxed, fitted, model_entry, seed_for, Model, PresentClasses};
use crate::entry::{Family, RouterEntry};
use crate::rng::SplitMix64;

/// Trees in the forest.
pub const N_TREES: usize = 60;
/// Depth limit of each tree.
pub const MAX_DEPTH: usize = 16;

/// The registry entry of `rf`.
pub fn entry() -> RouterEntry {
    model_entry(
        "rf",
        "random forest: 60 Gini trees on 32-bin features, sqrt(d) features per split, mean leaf frequencies",
        Family::Ml,
        |ctx, _| {
            boxed("rf", Forest::new(seed_for(ctx.seed, "rf")))
        },
    )
}

/// The forest and what it needs to read rows.
#[derive(Debug, Clone)]
pub struct Forest {
    seed: u64,
    /// Trees grown (default [`N_TREES`]).
    pub n_trees: usize,
    /// Depth limit (default [`MAX_DEPTH`]).
    pub max_depth: usize,
    fitted: Option<(Standardizer, Binner, Vec<Tree>)>,
}

impl Forest {
    /// The default settings, seeded by `seed`.
    pub fn new(seed: u64) -> Self {
        Forest {
            seed,
            n_trees: N_TREES,
            max_depth: MAX_DEPTH,
            fitted: None,
        }
    }
}

struct Grow<'a> {
    x: &'a BinnedMatrix,
    y: &'a [usize],
    k: usize,
    mtry: usize,
    max_depth: usize,
    rng: SplitMix64,
    features: Vec<usize>,
    hist: Vec<u32>,
}

impl Grow<'_> {
    fn leaf(&self, tree: &mut Tree, node: u32, counts: &[u32], n: usize) {
        let v: Vec<f32> = counts.iter().map(|&c| c as f32 / n as f32).collect();
        tree.set_leaf(node, &v);
    }

    fn grow(&mut self, tree: &mut Tree, node: u32, rows: &mut [u32], depth: usize) {
        let k = self.k;
        let n = rows.len();
        let mut counts = vec![0u32; k];
        for &r in rows.iter() {
            counts[self.y[r as usize]] += 1;
        }
        let pure = counts.iter().filter(|&&c| c > 0).count() <= 1;
        if pure || n < 2 || depth >= self.max_depth {
            self.leaf(tree, node, &counts, n);
            return;
        }
        // Draw mtry features (partial Fisher-Yates over the reusable index list).
        let d = self.features.len();
        for i in 0..self.mtry {
            let j = i + self.rng.below(d - i);
            self.features.swap(i, j);
        }
        // Gini: maximise sum_c L_c^2 / n_L + sum_c R_c^2 / n_R.
        let parent_score = counts.iter().map(|&c| f64::from(c).powi(2)).sum::<f64>() / n as f64;
        let mut best: Option<(f64, usize, u8)> = None;
        for fi in 0..self.mtry {
            let f = self.features[fi];
            self.hist.iter_mut().for_each(|h| *h = 0);
            for &r in rows.iter() {
                let b = self.x.bins[r as usize * self.x.n_features + f] as usize;
                self.hist[b * k + self.y[r as usize]] += 1;
            }
            let mut left = vec![0u32; k];
            let mut n_left = 0usize;
            for b in 0..MAX_BINS - 1 {
                let hb = &self.hist[b * k..(b + 1) * k];
                let nb: u32 = hb.iter().sum();
                if nb == 0 {
                    continue;
                }
                left.iter_mut().zip(hb).for_each(|(l, h)| *l += h);
                n_left += nb as usize;
                if n_left == n {
                    break;
                }
                let n_right = n - n_left;
                let (mut sl, mut sr) = (0.0, 0.0);
                for c in 0..k {
                    let l = f64::from(left[c]);
                    let r = f64::from(counts[c] - left[c]);
                    sl += l * l;
                    sr += r * r;
                }
                let score = sl / n_left as f64 + sr / n_right as f64;
                if score > parent_score + 1e-12 && best.is_none_or(|(s, _, _)| score > s) {
                    best = Some((score, f, b as u8));
                }
            }
        }
        let Some((_, f, cut)) = best else {
            self.leaf(tree, node, &counts, n);
            return;
        };
        let n_left = partition(rows, self.x, f, cut);
        let (l, r) = (tree.push_node(), tree.push_node());
        tree.set_split(node, f, cut, l, r);
        let (lrows, rrows) = rows.split_at_mut(n_left);
        self.grow(tree, l, lrows, depth + 1);
        self.grow(tree, r, rrows, depth + 1);
    }
}

impl Model for Forest {
    fn fit(&mut self, train: &RoutingSet, _: &PresentClasses) -> Result<()> {
        let st = Standardizer::fit_all(&train.rows, &train.schema);
        let x = st.matrix(&train.rows);
        let binner = Binner::fit(x.view(), MAX_BINS);
        let xb = binner.transform(x.view());
        let y = train.labels();
        let n = y.len();
        let d = xb.n_features;
        let k = train.schema.n_classes();
        let mut rng = SplitMix64::new(self.seed);
        let mut grow = Grow {
            x: &xb,
            y: &y,
            k,
            mtry: ((d as f64).sqrt().floor() as usize).clamp(1, d.max(1)),
            max_depth: self.max_depth,
            rng: SplitMix64::new(rng.next_u64()),
            features: (0..d).collect(),
            hist: vec![0; MAX_BINS * k],
        };
        let mut trees = Vec::with_capacity(self.n_trees);
        for _ in 0..self.n_trees {
            let mut rows: Vec<u32> = (0..n).map(|_| rng.below(n) as u32).collect();
            let mut tree = Tree::new(k);
            let root = tree.push_node();
            if d == 0 {
                let mut counts = vec![0u32; k];
                rows.iter().for_each(|&r| counts[y[r as usize]] += 1);
                grow.leaf(&mut tree, root, &counts, n);
            } else {
                grow.grow(&mut tree, root, &mut rows, 0);
            }
            trees.push(tree);
        }
        self.fitted = Some((st, binner, trees));
        Ok(())
    }

    fn scores(&self, schema: &RoutingSchema, rows: &[RoutingRow]) -> Result<Vec<Vec<f64>>> {
        let (st, binner, trees) = fitted(&self.fitted);
        let xb = binner.transform(st.matrix(rows).view());
        let k = schema.n_classes();
        Ok((0..rows.len())
            .map(|i| {
                let mut s = vec![0.0f64; k];
                for t in trees {
                    for (a, &v) in s.iter_mut().zip(t.predict(xb.row(i))) {
                        *a += f64::from(v);
                    }
                }
                s.iter_mut().for_each(|v| *v /= trees.len() as f64);
                s
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::test_support::{ctx, synthetic_accuracy};

    #[test]
    fn learns_the_synthetic_rule_and_scores_are_vote_shares() {
        let mut r = (entry().make)(&ctx(1), None).unwrap();
        let acc = synthetic_accuracy(r.as_mut(), 1200, 900, 3);
        // Best-fixed is 1/8 on this set (eight equally frequent classes).
        assert!(acc > 0.9, "rf held-out accuracy {acc}");
        let set = crate::synthetic::synthetic_set(20, 9);
        let s = r.scores_batch(&set.schema, &set.rows).unwrap();
        for row in s {
            assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-6);
            assert!(row.iter().all(|&v| (0.0..=1.0).contains(&v)));
        }
    }
}
