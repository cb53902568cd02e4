//! Histogram binning of feature columns and the binary decision tree shared by RF and GBT.
//!
//! Trees split on bin indices instead of raw values: each column is cut into at most
//! [`MAX_BINS`] bins at training quantiles, once per fit, so finding a node's best split is a
//! pass over its rows into per-bin sums plus a scan over bins (the LightGBM / XGBoost `hist`
//! method). A row goes left at a split `(feature, bin)` when its bin is at most `bin`.

use ndarray::ArrayView2;

/// Most bins per column (bin ids fit a `u8`).
pub const MAX_BINS: usize = 32;

/// Rows sampled (evenly spaced) to place the quantile cuts: enough for 32 quantiles, and it
/// keeps the sort off the fit's critical path.
const CUT_SAMPLE: usize = 2048;

/// Per-column cut points: a value goes to bin `number of cuts <= value`.
#[derive(Debug, Clone, PartialEq)]
pub struct Binner {
    cuts: Vec<Vec<f32>>,
}

impl Binner {
    /// Quantile cuts of each column of `x` (rows are observations). A column with at most
    /// `max_bins` distinct sampled values gets a cut midway between each pair of neighbours.
    pub fn fit(x: ArrayView2<'_, f32>, max_bins: usize) -> Self {
        let max_bins = max_bins.clamp(2, MAX_BINS);
        let n = x.nrows();
        let step = n.div_ceil(CUT_SAMPLE).max(1);
        let cuts = x
            .columns()
            .into_iter()
            .map(|col| {
                let mut v: Vec<f32> = col.iter().step_by(step).copied().collect();
                v.sort_by(f32::total_cmp);
                let mut distinct = v.clone();
                distinct.dedup();
                if distinct.len() <= max_bins {
                    distinct
                        .windows(2)
                        .map(|w| w[0] + (w[1] - w[0]) / 2.0)
                        .collect()
                } else {
                    let mut c: Vec<f32> =
                        (1..max_bins).map(|q| v[q * v.len() / max_bins]).collect();
                    c.dedup();
                    // A cut equal to the minimum would leave bin 0 empty.
                    c.retain(|&t| t > v[0]);
                    c
                }
            })
            .collect();
        Binner { cuts }
    }

    /// Number of columns binned.
    pub fn n_features(&self) -> usize {
        self.cuts.len()
    }

    /// Bins of column `f` (cuts + 1); only the tests call it.
    #[allow(dead_code)]
    pub fn n_bins(&self, f: usize) -> usize {
        self.cuts[f].len() + 1
    }

    /// The bin of value `v` in column `f`.
    pub fn bin(&self, f: usize, v: f32) -> u8 {
        self.cuts[f].partition_point(|&c| c <= v) as u8
    }

    /// The bins of every row of `x`, row-major.
    pub fn transform(&self, x: ArrayView2<'_, f32>) -> BinnedMatrix {
        let d = self.n_features();
        let mut bins = Vec::with_capacity(x.nrows() * d);
        for row in x.rows() {
            bins.extend(row.iter().enumerate().map(|(f, &v)| self.bin(f, v)));
        }
        BinnedMatrix {
            n_rows: x.nrows(),
            n_features: d,
            bins,
        }
    }
}

/// Bin ids of a matrix, row-major (`bins[row * n_features + feature]`).
#[derive(Debug, Clone, PartialEq)]
pub struct BinnedMatrix {
    /// Rows.
    pub n_rows: usize,
    /// Columns per row.
    pub n_features: usize,
    /// Bin ids, row-major.
    pub bins: Vec<u8>,
}

impl BinnedMatrix {
    /// The bin ids of row `r`.
    pub fn row(&self, r: usize) -> &[u8] {
        &self.bins[r * self.n_features..(r + 1) * self.n_features]
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Node {
    /// Left when `bins[feature] <= bin`.
    Split {
        feature: u32,
        bin: u8,
        left: u32,
        right: u32,
    },
    /// Offset of the leaf's values in `Tree::values`.
    Leaf(u32),
}

/// A binary tree over binned rows whose leaves hold `width` values each (a class distribution
/// for RF, one score for GBT).
#[derive(Debug, Clone, PartialEq)]
pub struct Tree {
    nodes: Vec<Node>,
    values: Vec<f32>,
    width: usize,
}

impl Tree {
    /// An empty tree whose leaves hold `width` values.
    pub fn new(width: usize) -> Self {
        Tree {
            nodes: Vec::new(),
            values: Vec::new(),
            width,
        }
    }

    /// Appends a placeholder node and returns its id (filled by `set_split` / `set_leaf`).
    pub fn push_node(&mut self) -> u32 {
        self.nodes.push(Node::Leaf(u32::MAX));
        (self.nodes.len() - 1) as u32
    }

    /// Makes `node` a split: rows with `bins[feature] <= bin` go to `left`, others to `right`.
    pub fn set_split(&mut self, node: u32, feature: usize, bin: u8, left: u32, right: u32) {
        self.nodes[node as usize] = Node::Split {
            feature: feature as u32,
            bin,
            left,
            right,
        };
    }

    /// Makes `node` a leaf holding `values` (`width` of them).
    pub fn set_leaf(&mut self, node: u32, values: &[f32]) {
        debug_assert_eq!(values.len(), self.width);
        self.nodes[node as usize] = Node::Leaf(self.values.len() as u32);
        self.values.extend_from_slice(values);
    }

    /// The leaf values reached by a binned row.
    pub fn predict(&self, row: &[u8]) -> &[f32] {
        let mut i = 0usize;
        loop {
            match self.nodes[i] {
                Node::Split {
                    feature,
                    bin,
                    left,
                    right,
                } => {
                    i = if row[feature as usize] <= bin {
                        left
                    } else {
                        right
                    } as usize
                }
                Node::Leaf(off) => {
                    let off = off as usize;
                    return &self.values[off..off + self.width];
                }
            }
        }
    }
}

/// Splits `rows` in place so the rows going left (`bin <= cut` on `feature`) come first;
/// returns how many go left.
pub fn partition(rows: &mut [u32], x: &BinnedMatrix, feature: usize, cut: u8) -> usize {
    let mut left = 0;
    for i in 0..rows.len() {
        let r = rows[i] as usize;
        if x.bins[r * x.n_features + feature] <= cut {
            rows.swap(i, left);
            left += 1;
        }
    }
    left
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;

    #[test]
    fn few_distinct_values_get_midpoint_cuts_and_many_get_quantiles() {
        let x = Array2::from_shape_fn(
            (100, 2),
            |(i, j)| {
                if j == 0 {
                    (i % 3) as f32
                } else {
                    i as f32
                }
            },
        );
        let b = Binner::fit(x.view(), 4);
        assert_eq!(b.cuts[0], vec![0.5, 1.5]);
        assert_eq!(
            (b.bin(0, 0.0), b.bin(0, 1.0), b.bin(0, 2.0), b.bin(0, 9.0)),
            (0, 1, 2, 2)
        );
        // Quartile cuts of 0..99: 25, 50, 75.
        assert_eq!(b.cuts[1], vec![25.0, 50.0, 75.0]);
        let m = b.transform(x.view());
        let counts = (0..4)
            .map(|k| (0..100).filter(|&r| m.row(r)[1] == k).count())
            .collect::<Vec<_>>();
        assert_eq!(counts, vec![25, 25, 25, 25]);
        // A constant column has one bin.
        let c = Binner::fit(Array2::<f32>::ones((10, 1)).view(), 32);
        assert_eq!(c.n_bins(0), 1);
    }

    #[test]
    fn tree_routes_rows_by_bin() {
        let mut t = Tree::new(1);
        let root = t.push_node();
        let l = t.push_node();
        let r = t.push_node();
        t.set_split(root, 1, 3, l, r);
        t.set_leaf(l, &[-1.0]);
        t.set_leaf(r, &[2.0]);
        assert_eq!(t.predict(&[9, 3]), &[-1.0]);
        assert_eq!(t.predict(&[0, 4]), &[2.0]);
        let x = BinnedMatrix {
            n_rows: 4,
            n_features: 1,
            bins: vec![5, 1, 7, 0],
        };
        let mut rows = vec![0, 1, 2, 3];
        let k = partition(&mut rows, &x, 0, 1);
        assert_eq!(k, 2);
        let mut left = rows[..2].to_vec();
        left.sort_unstable();
        assert_eq!(left, vec![1, 3]);
    }
}
