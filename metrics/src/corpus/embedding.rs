//! Embedding-space metrics: TwoNN intrinsic dimension, hubness (skewness of N_10) and dispersion.

use std::path::Path;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::error::MetricsError;
use super::knn::{knn_pass, KnnResult, UnitRows};
use super::sum::{neumaier_sum, Neumaier};

/// Neighbourhood size of the hubness metric (`hubness_skew_k10`).
pub const HUBNESS_K: usize = 10;

/// Decodes raw little-endian float32, row-major; errors name the byte offset that is wrong.
pub fn parse_f32_le(bytes: &[u8], dim: usize, file: &str) -> Result<Vec<f32>, MetricsError> {
    let bad = |offset: usize, message: String| MetricsError::BadBytes {
        file: file.to_owned(),
        offset: offset as u64,
        message,
    };
    if dim == 0 {
        return Err(MetricsError::Invalid(format!(
            "{file}: dimension must be at least 1"
        )));
    }
    if bytes.is_empty() {
        return Err(bad(0, "empty file: no embedding rows".to_owned()));
    }
    // A dimension this large cannot be a row of any file: say so instead of overflowing.
    let Some(row_bytes) = dim.checked_mul(4).filter(|&b| b <= bytes.len()) else {
        return Err(MetricsError::Invalid(format!(
            "{file}: dimension {dim} is larger than the file ({} bytes hold {} float32 values): \
             no whole row (wrong --dim?)",
            bytes.len(),
            bytes.len() / 4
        )));
    };
    if !bytes.len().is_multiple_of(row_bytes) {
        let whole = bytes.len() - bytes.len() % row_bytes;
        return Err(bad(
            whole,
            format!(
                "file length {} is not a multiple of 4 * dim = {row_bytes}: {} trailing bytes \
                 after {} whole rows (wrong --dim, or not raw float32?)",
                bytes.len(),
                bytes.len() - whole,
                whole / row_bytes
            ),
        ));
    }
    let mut data = Vec::with_capacity(bytes.len() / 4);
    for (i, chunk) in bytes.chunks_exact(4).enumerate() {
        let x = f32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        if !x.is_finite() {
            return Err(bad(
                4 * i,
                format!(
                    "row {}, column {}: value {x} is not finite",
                    i / dim,
                    i % dim
                ),
            ));
        }
        data.push(x);
    }
    Ok(data)
}

/// Reads a raw little-endian float32 file of `dim` columns.
pub fn read_f32_file(path: &Path, dim: usize) -> Result<Vec<f32>, MetricsError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| MetricsError::io(format!("reading {name}"), e))?;
    parse_f32_le(&bytes, dim, &name)
}

/// L2-normalises every row (in float64); a zero row cannot be normalised and is an error.
pub fn unit_rows(data: &[f32], dim: usize) -> Result<UnitRows, MetricsError> {
    check_shape(data, dim)?;
    let rows = data.len() / dim;
    // Rows in parallel (each row's arithmetic as it was, so the values are the same); the
    // first bad row is still the one reported.
    let norms: Vec<f64> = data
        .par_chunks_exact(dim)
        .map(|row| {
            row.iter()
                .map(|&x| f64::from(x) * f64::from(x))
                .sum::<f64>()
                .sqrt()
        })
        .collect();
    if let Some((r, norm)) = norms
        .iter()
        .enumerate()
        .find(|(_, n)| **n == 0.0 || !n.is_finite())
    {
        return Err(MetricsError::Invalid(format!(
            "embedding row {r} (byte offset {}) has norm {norm}: cannot be L2-normalised",
            r * dim * 4
        )));
    }
    let mut f64_rows = vec![0.0f64; data.len()];
    f64_rows
        .par_chunks_exact_mut(dim)
        .zip(data.par_chunks_exact(dim).zip(&norms))
        .for_each(|(out64, (row, &norm))| {
            for (o64, &x) in out64.iter_mut().zip(row) {
                *o64 = f64::from(x) / norm;
            }
        });
    Ok(UnitRows {
        rows,
        dim,
        f64: f64_rows,
    })
}

fn check_shape(data: &[f32], dim: usize) -> Result<(), MetricsError> {
    if dim == 0 || !data.len().is_multiple_of(dim) {
        return Err(MetricsError::Invalid(format!(
            "{} values do not form rows of dimension {dim}",
            data.len()
        )));
    }
    Ok(())
}

/// TwoNN estimates from per-row r1, r2.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TwoNn {
    /// The paper's maximum-likelihood form N / sum(ln mu).
    pub mle: f64,
    /// Facco et al.'s fit through the origin on the smallest 90% of ln mu.
    pub linear_p90: f64,
    /// Rows that entered the estimates.
    pub points_used: usize,
    /// Rows with r1 == 0 (an exact duplicate elsewhere), left out of both estimates.
    pub dropped_r1_zero: usize,
}

/// TwoNN from the two nearest-neighbour distances (NaN rows, i.e. fewer than 3 rows, are skipped).
pub fn twonn(r1: &[f64], r2: &[f64]) -> TwoNn {
    let dropped = r1.iter().filter(|&&r| r == 0.0).count();
    let mut log_mu: Vec<f64> = r1
        .iter()
        .zip(r2)
        .filter(|(a, b)| **a > 0.0 && b.is_finite())
        .map(|(a, b)| (b / a).ln())
        .collect();
    let n = log_mu.len();
    let nf = n as f64;
    let mle = if n == 0 {
        f64::NAN
    } else {
        nf / neumaier_sum(log_mu.iter().copied())
    };
    log_mu.sort_unstable_by(f64::total_cmp);
    // floor(0.9 N) in integers: 0.9f64 lies above 0.9, so the float product never falls below it.
    let keep = 9 * n / 10;
    let (mut sxy, mut sxx) = (Vec::with_capacity(keep), Vec::with_capacity(keep));
    for (i, &x) in log_mu.iter().take(keep).enumerate() {
        // y_i = -ln(1 - i/N), i = 1..keep
        let y = -(-((i + 1) as f64 / nf)).ln_1p();
        sxy.push(x * y);
        sxx.push(x * x);
    }
    let linear_p90 = if keep == 0 {
        f64::NAN
    } else {
        neumaier_sum(sxy) / neumaier_sum(sxx)
    };
    TwoNn {
        mle,
        linear_p90,
        points_used: n,
        dropped_r1_zero: dropped,
    }
}

/// Hubness from the k-occurrence counts N_k.
#[derive(Debug, Clone, PartialEq)]
pub struct Hubness {
    /// Population skewness m3 / m2^1.5 of N_k; NaN when every N_k is equal.
    pub skew: f64,
    /// The largest N_k (the strongest hub).
    pub nk_max: usize,
    /// Rows that are nobody's neighbour (anti-hubs).
    pub nk_zero: usize,
    /// N_k of every row.
    pub counts: Vec<u32>,
}

/// Hubness of a k-nearest-neighbour graph: the skew of its k-occurrence counts.
pub fn hubness(knn: &KnnResult) -> Hubness {
    let n = knn.r1.len();
    let mut counts = vec![0u32; n];
    for &j in &knn.neighbours {
        counts[j as usize] += 1;
    }
    let nf = n as f64;
    let mean = counts.iter().map(|&c| u64::from(c)).sum::<u64>() as f64 / nf;
    let dev = || counts.iter().map(|&c| f64::from(c) - mean);
    let m2 = neumaier_sum(dev().map(|d| d * d)) / nf;
    let m3 = neumaier_sum(dev().map(|d| d * d * d)) / nf;
    let skew = if m2 > 0.0 {
        m3 / m2.powf(1.5)
    } else {
        f64::NAN
    };
    Hubness {
        skew,
        nk_max: counts.iter().copied().max().unwrap_or(0) as usize,
        nk_zero: counts.iter().filter(|&&c| c == 0).count(),
        counts,
    }
}

/// Mean, population std, min and max of a set of cosine distances.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DispersionStats {
    /// Mean distance.
    pub mean: f64,
    /// Population standard deviation.
    pub std: f64,
    /// Smallest distance.
    pub min: f64,
    /// Largest distance.
    pub max: f64,
}

/// Cosine distances 1 - cos(x, centroid), the centroid being the mean of the rows as given
/// (float32 rows are widened to float64 exactly, so either gives the same values).
pub fn dispersion<T: Copy + Into<f64> + Sync>(rows: &[T], dim: usize) -> DispersionStats {
    let n = rows.len() / dim;
    if n == 0 {
        let nan = f64::NAN;
        return DispersionStats {
            mean: nan,
            std: nan,
            min: nan,
            max: nan,
        };
    }
    // Every column's compensated sum advances row by row: the same additions in the same order
    // as one column at a time, read in memory order (a strided walk per column took ~45 ms on
    // MuSiQue's 21,153 x 384).
    let mut sums = vec![Neumaier::default(); dim];
    for row in rows.chunks_exact(dim) {
        for (acc, &x) in sums.iter_mut().zip(row) {
            acc.add(x.into());
        }
    }
    let centroid: Vec<f64> = sums.iter().map(|acc| acc.value() / n as f64).collect();
    let c_norm = centroid.iter().map(|x| x * x).sum::<f64>().sqrt();
    let dist: Vec<f64> = rows
        .par_chunks_exact(dim)
        .map(|x| {
            let dot: f64 = x.iter().zip(&centroid).map(|(&a, b)| a.into() * b).sum();
            let x_norm = x.iter().map(|&a| a.into() * a.into()).sum::<f64>().sqrt();
            1.0 - dot / (x_norm * c_norm)
        })
        .collect();
    let mean = neumaier_sum(dist.iter().copied()) / n as f64;
    let var = neumaier_sum(dist.iter().map(|d| (d - mean) * (d - mean))) / n as f64;
    DispersionStats {
        mean,
        std: var.sqrt(),
        min: dist.iter().copied().fold(f64::INFINITY, f64::min),
        max: dist.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    }
}

/// The embedding metrics, keyed as in metric-fixtures' `expected.json` (`embeddings.*`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbeddingMetrics {
    /// Rows (vectors) measured.
    pub rows: u64,
    /// Vector dimension.
    pub dim: u64,
    /// Intrinsic dimension, TwoNN maximum-likelihood form ([`TwoNn::mle`]).
    pub twonn_mle: f64,
    /// Intrinsic dimension, TwoNN linear fit ([`TwoNn::linear_p90`]).
    pub twonn_linear_p90: f64,
    /// Rows the TwoNN estimates used.
    pub twonn_points_used: u64,
    /// Rows left out of TwoNN for an exact duplicate.
    pub twonn_points_dropped_r1_zero: u64,
    /// Skewness of the 10-occurrence counts ([`Hubness::skew`]).
    pub hubness_skew_k10: f64,
    /// Largest 10-occurrence count.
    pub hubness_nk_max: u64,
    /// Rows in no other row's 10 nearest neighbours.
    pub hubness_nk_zero: u64,
    /// Dispersion around the centroid of the raw rows (the indicator).
    pub dispersion_mean: f64,
    /// Standard deviation of the distances to the raw centroid.
    pub dispersion_std: f64,
    /// Smallest distance to the raw centroid.
    pub dispersion_min: f64,
    /// Largest distance to the raw centroid.
    pub dispersion_max: f64,
    /// Dispersion around the centroid of the L2-normalised rows, for comparison.
    pub dispersion_unitrow_centroid: DispersionStats,
}

/// Assembles [`EmbeddingMetrics`] from separately computed parts (lets a caller time each part).
pub fn metrics_from_parts(
    rows: usize,
    dim: usize,
    two: &TwoNn,
    hub: &Hubness,
    raw: &DispersionStats,
    unit: &DispersionStats,
) -> EmbeddingMetrics {
    EmbeddingMetrics {
        rows: rows as u64,
        dim: dim as u64,
        twonn_mle: two.mle,
        twonn_linear_p90: two.linear_p90,
        twonn_points_used: two.points_used as u64,
        twonn_points_dropped_r1_zero: two.dropped_r1_zero as u64,
        hubness_skew_k10: hub.skew,
        hubness_nk_max: hub.nk_max as u64,
        hubness_nk_zero: hub.nk_zero as u64,
        dispersion_mean: raw.mean,
        dispersion_std: raw.std,
        dispersion_min: raw.min,
        dispersion_max: raw.max,
        dispersion_unitrow_centroid: *unit,
    }
}

/// All embedding metrics of a row-major float32 matrix with `dim` columns.
pub fn embedding_metrics(data: &[f32], dim: usize) -> Result<EmbeddingMetrics, MetricsError> {
    let unit = unit_rows(data, dim)?;
    let (knn, (raw, unit_disp)) = rayon::join(
        || knn_pass(&unit, HUBNESS_K),
        || (dispersion(data, dim), dispersion(&unit.f64, dim)),
    );
    let two = twonn(&knn.r1, &knn.r2);
    let hub = hubness(&knn);
    Ok(metrics_from_parts(
        unit.rows, dim, &two, &hub, &raw, &unit_disp,
    ))
}
