//! With the `faiss` feature: FlatIndex and FAISS IndexFlatIP return the same top-K.
#![cfg(feature = "faiss")]

use bench_core::Embeddings;
use corpora::{FaissFlatIndex, FlatIndex, Hit};

/// splitmix64, so the vectors are the same on every run and platform.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1).
    fn unit(&mut self) -> f32 {
        ((self.next() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }
}

fn unit_vectors(rng: &mut SplitMix, n: usize, dim: usize) -> Embeddings {
    let mut data = Vec::with_capacity(n * dim);
    for _ in 0..n {
        let row: Vec<f32> = (0..dim).map(|_| rng.unit()).collect();
        let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt();
        data.extend(row.iter().map(|x| x / norm));
    }
    Embeddings::new(dim, data)
}

fn exact(data: &Embeddings, q: &[f32], row: u32) -> f64 {
    data.row(row as usize)
        .iter()
        .zip(q)
        .map(|(a, b)| *a as f64 * *b as f64)
        .sum()
}

/// Scores agree to 1e-5 position by position; rows too, except where the two rows' exact scores
/// are a near-tie (then summation order may legitimately swap them).
fn assert_same_top_k(data: &Embeddings, q: &[f32], ours: &[Hit], theirs: &[Hit]) -> usize {
    assert_eq!(ours.len(), theirs.len());
    let mut swaps = 0;
    for (a, b) in ours.iter().zip(theirs) {
        assert!((a.score - b.score).abs() <= 1e-5, "{a:?} vs {b:?}");
        if a.row != b.row {
            swaps += 1;
            let gap = (exact(data, q, a.row) - exact(data, q, b.row)).abs();
            assert!(gap <= 1e-5, "{a:?} vs {b:?}: not a near-tie ({gap})");
        }
    }
    swaps
}

#[test]
fn flat_and_faiss_agree_on_random_unit_vectors() {
    let (n, dim, m, k) = (2_000, 384, 64, 100);
    let mut rng = SplitMix(0x5EED_0001);
    let data = unit_vectors(&mut rng, n, dim);
    let queries = unit_vectors(&mut rng, m, dim);
    let flat = FlatIndex::new(data.clone()).unwrap();
    let faiss = FaissFlatIndex::new(data.clone()).unwrap();
    assert_eq!(faiss.len(), n);

    let ours = flat.search_batch(&queries, k);
    let theirs = faiss.search_batch(&queries, k);
    assert_eq!(theirs.len(), m);
    let mut swaps = 0;
    for ((q, a), b) in queries.rows().zip(&ours).zip(&theirs) {
        swaps += assert_same_top_k(&data, q, a, b);
    }
    // Near-ties are rare among random 384-d vectors; many swaps would mean a real disagreement.
    assert!(swaps * 100 <= m * k, "{swaps} swapped positions");

    let q = queries.row(0);
    assert_same_top_k(&data, q, &flat.search(q, k), &faiss.search(q, k));
}

#[test]
fn faiss_handles_k_beyond_n_ties_and_empty() {
    let data = Embeddings::new(2, vec![1.0, 0.0, 0.0, 1.0, 1.0, 0.0]);
    let faiss = FaissFlatIndex::new(data).unwrap();
    let hits = faiss.search(&[1.0, 0.0], 10);
    let rows: Vec<u32> = hits.iter().map(|h| h.row).collect();
    assert_eq!(rows, vec![0, 2, 1]);
    assert!(faiss.search(&[1.0, 0.0], 0).is_empty());
    let empty = FaissFlatIndex::new(Embeddings {
        dim: 2,
        data: vec![],
    })
    .unwrap();
    assert_eq!(
        empty.search_batch(&Embeddings::new(2, vec![1.0, 0.0]), 5),
        vec![Vec::new()]
    );
}
