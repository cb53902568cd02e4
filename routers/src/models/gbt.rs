//! `gbt`: gradient-boosted trees with a multiclass softmax loss on histogram-binned features.
//!
//! Friedman's gradient boosting with XGBoost's second-order leaf values: each round computes
//! softmax probabilities `p` from the margins, then fits one regression tree per class present
//! in training to the gradients `g = p - y` and hessians `h = p (1 - p)`, choosing splits by the
//! gain `G_L^2/(H_L+lambda) + G_R^2/(H_R+lambda) - G^2/(H+lambda)` and setting leaves to
//! `-eta G/(H+lambda)`. Margins start at the log class priors. Settings: 40 rounds, depth 4,
//! learning rate eta 0.3, lambda 1, each round on a seeded 50 % row subsample, each tree on a
//! seeded 30 % of the columns, 32 quantile bins per column. (The paper's XGBoost used 100
//! estimators of depth 6; fewer, shallower trees keep 5-fold CV of the zoo within its time goal.)
//! A child's histogram is the parent's minus its sibling's, so only the smaller child is scanned.
//! Scores are the softmax probabilities of the final margins.

use bench_core::{Result, RoutingRow, RoutingSchema, RoutingSet};

use super::hist::{partition, BinnedMatrix, Binner, Tree, MAX_BINS};
use super::prep::Standardizer;
use super::{boxed, fitted, model_entry, seed_for, Model, PresentClasses};
use crate::entry::{Family, RouterEntry};
use crate::rng::SplitMix64;

/// The registry entry of `gbt`.
pub fn entry() -> RouterEntry {
    model_entry(
        "gbt",
        "gradient-boosted trees, softmax loss: 40 rounds x depth 4, eta 0.3, 50% rows, 30% columns",
        Family::Ml,
        |ctx, _| boxed("gbt", Boosted::new(seed_for(ctx.seed, "gbt"))),
    )
}

/// Boosting settings and, once fitted, the ensemble.
#[derive(Debug, Clone)]
pub struct Boosted {
    seed: u64,
    /// Boosting rounds (one tree per present class each).
    pub rounds: usize,
    /// Depth of each tree.
    pub max_depth: usize,
    /// Learning rate: the shrinkage of each leaf value.
    pub eta: f64,
    /// L2 penalty on leaf values (`-eta G/(H+lambda)`).
    pub lambda: f64,
    /// Share of rows each round samples.
    pub subsample: f64,
    /// Share of columns each tree samples.
    pub colsample: f64,
    fitted: Option<Fitted>,
}

#[derive(Debug, Clone)]
struct Fitted {
    st: Standardizer,
    binner: Binner,
    /// Present class indices; margin column j belongs to class `classes[j]`.
    classes: Vec<usize>,
    base: Vec<f64>,
    /// `trees[round * classes.len() + j]`.
    trees: Vec<Tree>,
}

impl Boosted {
    /// The default settings, seeded by `seed`.
    pub fn new(seed: u64) -> Self {
        Boosted {
            seed,
            rounds: 40,
            max_depth: 4,
            eta: 0.3,
            lambda: 1.0,
            subsample: 0.5,
            colsample: 0.3,
            fitted: None,
        }
    }
}

/// Per-bin (gradient, hessian, count) sums for the sampled features: `[feature][bin][3]`.
type Hist = Vec<f64>;

struct Builder<'a> {
    x: &'a BinnedMatrix,
    g: &'a [f64],
    h: &'a [f64],
    features: &'a [usize],
    max_depth: usize,
    eta: f64,
    lambda: f64,
}

impl Builder<'_> {
    fn hist(&self, rows: &[u32]) -> Hist {
        let mut hist = vec![0.0; self.features.len() * MAX_BINS * 3];
        for &r in rows {
            let r = r as usize;
            let (g, h) = (self.g[r], self.h[r]);
            let row = self.x.row(r);
            for (fi, &f) in self.features.iter().enumerate() {
                let o = (fi * MAX_BINS + row[f] as usize) * 3;
                hist[o] += g;
                hist[o + 1] += h;
                hist[o + 2] += 1.0;
            }
        }
        hist
    }

    fn build(&self, tree: &mut Tree, node: u32, rows: &mut [u32], hist: Hist, depth: usize) {
        let (mut gs, mut hs) = (0.0, 0.0);
        for b in 0..MAX_BINS {
            gs += hist[b * 3];
            hs += hist[b * 3 + 1];
        }
        let leaf =
            |tree: &mut Tree| tree.set_leaf(node, &[(-self.eta * gs / (hs + self.lambda)) as f32]);
        if depth >= self.max_depth || rows.len() < 2 {
            return leaf(tree);
        }
        let parent = gs * gs / (hs + self.lambda);
        let mut best: Option<(f64, usize, u8)> = None;
        for fi in 0..self.features.len() {
            let (mut gl, mut hl, mut nl) = (0.0, 0.0, 0.0);
            for b in 0..MAX_BINS - 1 {
                let o = (fi * MAX_BINS + b) * 3;
                gl += hist[o];
                hl += hist[o + 1];
                nl += hist[o + 2];
                if nl == 0.0 {
                    continue;
                }
                if nl as usize >= rows.len() {
                    break;
                }
                let (gr, hr) = (gs - gl, hs - hl);
                let gain = gl * gl / (hl + self.lambda) + gr * gr / (hr + self.lambda) - parent;
                if gain > 1e-12 && best.is_none_or(|(s, _, _)| gain > s) {
                    best = Some((gain, fi, b as u8));
                }
            }
        }
        let Some((_, fi, cut)) = best else {
            return leaf(tree);
        };
        let n_left = partition(rows, self.x, self.features[fi], cut);
        let (l, r) = (tree.push_node(), tree.push_node());
        tree.set_split(node, self.features[fi], cut, l, r);
        let (lrows, rrows) = rows.split_at_mut(n_left);
        // Scan the smaller child; the larger one's histogram is the parent's minus it.
        let left_small = lrows.len() <= rrows.len();
        let small = self.hist(if left_small { &*lrows } else { &*rrows });
        let mut other = hist;
        other.iter_mut().zip(&small).for_each(|(p, s)| *p -= s);
        let (lh, rh) = if left_small {
            (small, other)
        } else {
            (other, small)
        };
        self.build(tree, l, lrows, lh, depth + 1);
        self.build(tree, r, rrows, rh, depth + 1);
    }
}

fn softmax_rows(margins: &[f64], m: usize, out: &mut [f64]) {
    for (row, o) in margins.chunks(m).zip(out.chunks_mut(m)) {
        let max = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mut s = 0.0;
        for (v, p) in row.iter().zip(o.iter_mut()) {
            *p = (v - max).exp();
            s += *p;
        }
        o.iter_mut().for_each(|p| *p /= s);
    }
}

impl Model for Boosted {
    fn fit(&mut self, train: &RoutingSet, present: &PresentClasses) -> Result<()> {
        let st = Standardizer::fit_all(&train.rows, &train.schema);
        let x = st.matrix(&train.rows);
        let binner = Binner::fit(x.view(), MAX_BINS);
        let xb = binner.transform(x.view());
        let classes = present.indices();
        let m = classes.len();
        let n = train.rows.len();
        let d = xb.n_features;
        let col_of = |label: usize| classes.iter().position(|&c| c == label).expect("present");
        let y: Vec<usize> = train.rows.iter().map(|r| col_of(r.label)).collect();
        let mut base = vec![0.0; m];
        y.iter().for_each(|&j| base[j] += 1.0);
        base.iter_mut().for_each(|b| *b = (*b / n as f64).ln());
        let mut margins: Vec<f64> = (0..n).flat_map(|_| base.iter().copied()).collect();
        let mut p = vec![0.0; n * m];
        let (mut g, mut h) = (vec![0.0; n], vec![0.0; n]);
        let mut rng = SplitMix64::new(self.seed);
        let n_sub = ((n as f64 * self.subsample).round() as usize).clamp(1, n);
        let d_sub = ((d as f64 * self.colsample).round() as usize).clamp(usize::from(d > 0), d);
        let mut all_rows: Vec<u32> = (0..n as u32).collect();
        let mut all_feats: Vec<usize> = (0..d).collect();
        let mut trees = Vec::with_capacity(self.rounds * m);
        for _ in 0..self.rounds {
            softmax_rows(&margins, m, &mut p);
            rng.shuffle(&mut all_rows);
            let sample = &all_rows[..n_sub];
            for j in 0..m {
                for i in 0..n {
                    let pij = p[i * m + j];
                    g[i] = pij - if y[i] == j { 1.0 } else { 0.0 };
                    h[i] = (pij * (1.0 - pij)).max(1e-6);
                }
                rng.shuffle(&mut all_feats);
                let mut feats = all_feats[..d_sub].to_vec();
                feats.sort_unstable();
                let builder = Builder {
                    x: &xb,
                    g: &g,
                    h: &h,
                    features: &feats,
                    max_depth: self.max_depth,
                    eta: self.eta,
                    lambda: self.lambda,
                };
                let mut rows = sample.to_vec();
                let mut tree = Tree::new(1);
                let root = tree.push_node();
                let hist = builder.hist(&rows);
                if feats.is_empty() {
                    let (gs, hs) = rows.iter().fold((0.0, 0.0), |(a, b), &r| {
                        (a + g[r as usize], b + h[r as usize])
                    });
                    tree.set_leaf(root, &[(-self.eta * gs / (hs + self.lambda)) as f32]);
                } else {
                    builder.build(&mut tree, root, &mut rows, hist, 0);
                }
                for i in 0..n {
                    margins[i * m + j] += f64::from(tree.predict(xb.row(i))[0]);
                }
                trees.push(tree);
            }
        }
        self.fitted = Some(Fitted {
            st,
            binner,
            classes,
            base,
            trees,
        });
        Ok(())
    }

    fn scores(&self, schema: &RoutingSchema, rows: &[RoutingRow]) -> Result<Vec<Vec<f64>>> {
        let f = fitted(&self.fitted);
        let xb = f.binner.transform(f.st.matrix(rows).view());
        let m = f.classes.len();
        let mut margins: Vec<f64> = (0..rows.len())
            .flat_map(|_| f.base.iter().copied())
            .collect();
        for (t, tree) in f.trees.iter().enumerate() {
            let j = t % m;
            for i in 0..rows.len() {
                margins[i * m + j] += f64::from(tree.predict(xb.row(i))[0]);
            }
        }
        let mut p = vec![0.0; margins.len()];
        softmax_rows(&margins, m, &mut p);
        Ok(p.chunks(m)
            .map(|pr| {
                let mut s = vec![0.0; schema.n_classes()];
                for (j, &c) in f.classes.iter().enumerate() {
                    s[c] = pr[j];
                }
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
    fn learns_the_synthetic_rule() {
        let mut r = (entry().make)(&ctx(2), None).unwrap();
        let acc = synthetic_accuracy(r.as_mut(), 1200, 900, 4);
        assert!(acc > 0.9, "gbt held-out accuracy {acc}");
    }

    #[test]
    fn boosting_fits_a_threshold_exactly() {
        // One feature, label = x >= 0.5: a single round's trees already separate the classes.
        let set = crate::synthetic::synthetic_set(64, 1);
        let mut b = Boosted::new(3);
        b.rounds = 5;
        b.subsample = 1.0;
        b.colsample = 1.0;
        let lcc = set
            .schema
            .feature_names
            .iter()
            .position(|n| n == "lcc_ratio")
            .unwrap();
        let proj = set.project(|k| k == bench_core::FeatureKind::CorpusIndicators);
        let mut rows = proj.rows.clone();
        for r in &mut rows {
            r.label = usize::from(
                set.rows
                    .iter()
                    .find(|s| s.query_id == r.query_id)
                    .unwrap()
                    .features[lcc]
                    >= 0.5,
            );
        }
        let t = RoutingSet {
            schema: proj.schema.clone(),
            rows,
        };
        let present = PresentClasses::of(&t);
        b.fit(&t, &present).unwrap();
        let s = b.scores(&t.schema, &t.rows).unwrap();
        for (r, sc) in t.rows.iter().zip(&s) {
            assert_eq!(bench_core::routing::argmax(sc), r.label);
        }
    }
}
