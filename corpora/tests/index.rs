//! FlatIndex against hand-made matrices and, by property test, against an f64 brute force.

use bench_core::Embeddings;
use corpora::{CorpusError, FlatIndex, Hit};
use proptest::prelude::*;

fn index(dim: usize, rows: &[&[f32]]) -> FlatIndex {
    FlatIndex::new(Embeddings::new(dim, rows.concat())).unwrap()
}

fn rows(hits: &[Hit]) -> Vec<u32> {
    hits.iter().map(|h| h.row).collect()
}

/// Both search paths, checked to agree, for tests whose answer is exact.
fn both(index: &FlatIndex, query: &[f32], k: usize) -> Vec<Hit> {
    let single = index.search(query, k);
    let batch = index.search_batch(&Embeddings::new(query.len(), query.to_vec()), k);
    assert_eq!(batch, vec![single.clone()]);
    single
}

#[test]
fn known_top_k_on_axes() {
    let s = std::f32::consts::FRAC_1_SQRT_2;
    let idx = index(
        2,
        &[
            &[1.0, 0.0],
            &[0.0, 1.0],
            &[s, s],
            &[-1.0, 0.0],
            &[0.0, -1.0],
        ],
    );
    let hits = both(&idx, &[1.0, 0.0], 3);
    assert_eq!(rows(&hits), vec![0, 2, 1]);
    assert_eq!(hits[0].score, 1.0);
    assert!((hits[1].score - s).abs() < 1e-7);
    assert_eq!(rows(&both(&idx, &[0.0, -1.0], 1)), vec![4]);
}

#[test]
fn ties_go_to_the_lower_row() {
    // Rows 1, 3 and 4 are the same vector; rows 0 and 2 tie below them.
    let idx = index(
        3,
        &[
            &[0.0, 1.0, 0.0],
            &[1.0, 0.0, 0.0],
            &[0.0, 0.0, 1.0],
            &[1.0, 0.0, 0.0],
            &[1.0, 0.0, 0.0],
        ],
    );
    let q = [0.8, 0.6, 0.6];
    assert_eq!(rows(&both(&idx, &q, 2)), vec![1, 3]);
    assert_eq!(rows(&both(&idx, &q, 4)), vec![1, 3, 4, 0]);
    assert_eq!(rows(&both(&idx, &q, 5)), vec![1, 3, 4, 0, 2]);
}

#[test]
fn k_beyond_n_and_k_zero() {
    let idx = index(2, &[&[0.6, 0.8], &[1.0, 0.0], &[0.0, 1.0]]);
    let hits = both(&idx, &[0.0, 1.0], 100);
    assert_eq!(rows(&hits), vec![2, 0, 1]);
    assert_eq!(rows(&hits).len(), 3);
    assert!(both(&idx, &[0.0, 1.0], 0).is_empty());
}

#[test]
fn empty_index_and_empty_batch() {
    let idx = FlatIndex::new(Embeddings {
        dim: 4,
        data: vec![],
    })
    .unwrap();
    assert!(idx.is_empty());
    assert!(idx.search(&[0.5; 4], 10).is_empty());
    let queries = Embeddings::new(4, vec![0.5; 8]);
    assert_eq!(idx.search_batch(&queries, 10), vec![Vec::new(), Vec::new()]);
    assert!(idx.search_batch(&Embeddings::default(), 10).is_empty());
}

#[test]
fn invalid_vectors_are_index_errors() {
    let bad = Embeddings {
        dim: 3,
        data: vec![1.0; 7],
    };
    assert!(matches!(FlatIndex::new(bad), Err(CorpusError::Index(_))));
    let inf = Embeddings::new(2, vec![1.0, f32::INFINITY]);
    assert!(matches!(FlatIndex::new(inf), Err(CorpusError::Index(_))));
}

#[test]
#[should_panic(expected = "dimension")]
fn wrong_query_dimension_panics() {
    index(2, &[&[1.0, 0.0]]).search(&[1.0, 0.0, 0.0], 1);
}

/// Reference ranking in f64: (row, score), score descending then row ascending.
fn brute_force(data: &[f32], dim: usize, query: &[f32], k: usize) -> Vec<(u32, f64)> {
    let mut all: Vec<(u32, f64)> = data
        .chunks_exact(dim)
        .enumerate()
        .map(|(i, row)| {
            let s = row
                .iter()
                .zip(query)
                .map(|(a, b)| *a as f64 * *b as f64)
                .sum();
            (i as u32, s)
        })
        .collect();
    // partial_cmp, not total_cmp: -0.0 and 0.0 are the same similarity, so they tie by row.
    all.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap().then(a.0.cmp(&b.0)));
    all.truncate(k);
    all
}

fn normalised(mut v: Vec<f32>, dim: usize) -> Vec<f32> {
    for row in v.chunks_exact_mut(dim) {
        let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 1e-6 {
            row.iter_mut().for_each(|x| *x /= norm);
        }
    }
    v
}

/// `(dim, rows, queries)` with values drawn by `value`.
fn matrices(
    value: impl Strategy<Value = f32> + Clone,
) -> impl Strategy<Value = (usize, Vec<f32>, Vec<f32>)> {
    (1usize..12, 0usize..80, 1usize..6).prop_flat_map(move |(dim, n, m)| {
        (
            Just(dim),
            prop::collection::vec(value.clone(), n * dim),
            prop::collection::vec(value.clone(), m * dim),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Unit vectors: each position's score matches the reference's within float error, and a
    /// different row there is only allowed when its exact score ties the reference's.
    #[test]
    fn batch_matches_f64_brute_force(
        (dim, data, queries) in matrices(-1.0f32..1.0),
        k in 0usize..100,
    ) {
        const TOL: f64 = 1e-5;
        let data = normalised(data, dim);
        let queries = Embeddings::new(dim, normalised(queries, dim));
        let idx = FlatIndex::new(Embeddings::new(dim, data.clone())).unwrap();
        let batch = idx.search_batch(&queries, k);
        prop_assert_eq!(batch.len(), queries.len());
        for (q, hits) in queries.rows().zip(&batch) {
            let want = brute_force(&data, dim, q, k);
            prop_assert_eq!(hits.len(), want.len());
            let exact = brute_force(&data, dim, q, usize::MAX);
            let exact_of = |row: u32| exact.iter().find(|e| e.0 == row).unwrap().1;
            for (hit, (row, score)) in hits.iter().zip(&want) {
                prop_assert!((hit.score as f64 - score).abs() < TOL, "{:?} vs {}", hit, score);
                if hit.row != *row {
                    prop_assert!((exact_of(hit.row) - score).abs() < TOL, "{:?} vs {}", hit, row);
                }
            }
            let mut seen = rows(hits);
            seen.sort_unstable();
            seen.dedup();
            prop_assert_eq!(seen.len(), hits.len());
        }
    }

    /// Values on a coarse dyadic grid make every dot product exact in f32 whatever the summation
    /// order, so ties are real and both paths must reproduce the reference exactly, rows included.
    #[test]
    fn exact_ties_match_reference_exactly(
        (dim, data, queries) in matrices((-2i8..=2).prop_map(|v| v as f32 * 0.5)),
        k in 0usize..100,
    ) {
        let queries = Embeddings::new(dim, queries);
        let idx = FlatIndex::new(Embeddings::new(dim, data.clone())).unwrap();
        let batch = idx.search_batch(&queries, k);
        for (q, hits) in queries.rows().zip(&batch) {
            let want: Vec<Hit> = brute_force(&data, dim, q, k)
                .into_iter()
                .map(|(row, score)| Hit { row, score: score as f32 })
                .collect();
            prop_assert_eq!(hits, &want);
            prop_assert_eq!(&idx.search(q, k), &want);
        }
    }
}
