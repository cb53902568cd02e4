//! IVF tests: the lists partition the rows, scanning every list is the exact search, recall on
//! a seeded clustered set, and the stored copy (reused, rebuilt when damaged or asked otherwise).

use super::*;
use crate::index::testdata::{clustered, recall};
use crate::index::FlatIndex;

fn params(lists: usize) -> IvfParams {
    IvfParams {
        lists,
        nprobe: 2,
        ..IvfParams::default()
    }
}

#[test]
fn every_row_is_in_exactly_one_list_in_ascending_order() {
    let flat = FlatIndex::new(clustered(2_000, 16, 3)).unwrap();
    let index = IvfIndex::build(flat.rows(), params(0)).unwrap();
    assert_eq!(index.lists(), 89, "round(2 sqrt(2000))");
    assert_eq!(index.list_sizes().iter().sum::<usize>(), 2_000);
    assert!(
        index.list_sizes().iter().all(|&n| n > 0),
        "no list left empty"
    );
    let mut seen = index.ids.clone();
    for w in index.offsets.windows(2) {
        assert!(index.ids[w[0]..w[1]].windows(2).all(|p| p[0] < p[1]));
    }
    seen.sort_unstable();
    assert_eq!(seen, (0..2_000u32).collect::<Vec<_>>());
    // Each list's copy of a row is the row.
    for (j, &id) in index.ids.iter().enumerate() {
        assert_eq!(&index.vectors[j * 16..(j + 1) * 16], flat.row(id as usize));
    }
    // Same seed, same lists.
    let again = IvfIndex::build(flat.rows(), params(0)).unwrap();
    assert_eq!((&index.offsets, &index.ids), (&again.offsets, &again.ids));
}

#[test]
fn scanning_every_list_is_the_exact_search() {
    let flat = FlatIndex::new(clustered(1_500, 24, 5)).unwrap();
    let queries = clustered(40, 24, 6);
    let index = IvfIndex::build(flat.rows(), params(30)).unwrap();
    let exact = flat.exact_search_batch(&queries, 25);
    let all = index.search_batch_with(&queries.data, 25, 30);
    for (j, (e, a)) in exact.iter().zip(&all).enumerate() {
        assert_eq!(a.len(), 25);
        for (x, y) in e.iter().zip(a) {
            // gemm's blocking differs between a list and the whole index: last-bit differences.
            assert!(
                (x.score - y.score).abs() < 1e-5,
                "query {j}: {x:?} vs {y:?}"
            );
        }
        assert_eq!(
            recall(std::slice::from_ref(e), std::slice::from_ref(a)),
            1.0,
            "query {j}"
        );
        for w in a.windows(2) {
            assert!(select::better(&w[0], &w[1]).is_lt());
        }
    }
    // One query alone equals the same query in the batch.
    let one = index.search_with(queries.row(7), 25, 30);
    assert_eq!(one.len(), all[7].len());
    for (x, y) in one.iter().zip(&all[7]) {
        assert!(
            x.row == y.row && (x.score - y.score).abs() < 1e-5,
            "{x:?} vs {y:?}"
        );
    }
}

#[test]
fn recall_rises_with_nprobe_on_a_seeded_set() {
    let flat = FlatIndex::new(clustered(4_000, 32, 11)).unwrap();
    let queries = clustered(100, 32, 12);
    let exact = flat.exact_search_batch(&queries, 10);
    let index = IvfIndex::build(flat.rows(), params(40)).unwrap();
    let at = |nprobe| recall(&exact, &index.search_batch_with(&queries.data, 10, nprobe));
    let (one, four, eight, all) = (at(1), at(4), at(8), at(40));
    assert!(
        one < four && four < eight && eight <= all,
        "{one} {four} {eight} {all}"
    );
    assert!(eight >= 0.95, "recall@10 at nprobe 8: {eight}");
    assert_eq!(all, 1.0);
}

#[test]
fn stored_lists_are_reused_and_damaged_ones_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let flat = FlatIndex::new(clustered(900, 16, 5)).unwrap();
    let queries = clustered(20, 16, 6);
    let p = params(12);
    let (a, origin) = IvfIndex::load_or_build(dir.path(), "t:chunks", flat.rows(), p).unwrap();
    assert_eq!(origin, Origin::Built);
    // nprobe is a search setting: the stored lists serve another one.
    let wider = IvfParams { nprobe: 5, ..p };
    let (b, origin) = IvfIndex::load_or_build(dir.path(), "t:chunks", flat.rows(), wider).unwrap();
    assert_eq!(origin, Origin::Cached);
    assert_eq!(b.params().nprobe, 5);
    assert_eq!(
        a.search_batch_with(&queries.data, 5, 3),
        b.search_batch_with(&queries.data, 5, 3)
    );
    // Another list count or seed: another index.
    for other in [params(13), IvfParams { seed: 9, ..p }] {
        let (_, origin) =
            IvfIndex::load_or_build(dir.path(), "t:chunks", flat.rows(), other).unwrap();
        assert_eq!(origin, Origin::Built);
    }
    // Damaged data (truncated, or one id flipped) fails its digest and is rebuilt, not read.
    let stored = std::fs::read_dir(dir.path().join("ivf"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|path| {
            let m: Manifest =
                serde_json::from_str(&fs::read_to_string(path.join("manifest.json")).unwrap())
                    .unwrap();
            m.build == BuildKey::of(&p, 900)
        })
        .unwrap();
    let data = stored.join(DATA);
    let bytes = fs::read(&data).unwrap();
    let mut flipped = bytes.clone();
    *flipped.last_mut().unwrap() ^= 1;
    for bad in [bytes[..bytes.len() / 2].to_vec(), flipped] {
        fs::write(&data, bad).unwrap();
        let (c, origin) = IvfIndex::load_or_build(dir.path(), "t:chunks", flat.rows(), p).unwrap();
        assert_eq!(origin, Origin::Built);
        assert_eq!((&c.offsets, &c.ids), (&a.offsets, &a.ids));
    }
    // Other vectors: another index.
    let flat2 = FlatIndex::new(clustered(900, 16, 7)).unwrap();
    let (_, origin) = IvfIndex::load_or_build(dir.path(), "t:chunks", flat2.rows(), p).unwrap();
    assert_eq!(origin, Origin::Built);
}

#[test]
fn a_stored_file_with_consistent_digest_but_bad_contents_is_refused() {
    // decode is the last guard: sizes, offsets and ids must agree with the vectors.
    assert!(decode(&[0u8; 3], 1, 1, 1).is_none());
    let mut ok = Vec::new();
    ok.extend_from_slice(&1.0f32.to_le_bytes());
    ok.extend_from_slice(&0u64.to_le_bytes());
    ok.extend_from_slice(&2u64.to_le_bytes());
    ok.extend_from_slice(&1u32.to_le_bytes());
    ok.extend_from_slice(&0u32.to_le_bytes());
    assert!(decode(&ok, 1, 1, 2).is_some());
    let mut bad_id = ok.clone();
    bad_id[20..24].copy_from_slice(&7u32.to_le_bytes());
    assert!(decode(&bad_id, 1, 1, 2).is_none());
    let mut bad_offset = ok;
    bad_offset[12..20].copy_from_slice(&3u64.to_le_bytes());
    assert!(decode(&bad_offset, 1, 1, 2).is_none());
}

#[test]
fn bad_parameters_are_refused_and_tiny_sets_work() {
    let flat = FlatIndex::new(clustered(10, 4, 1)).unwrap();
    for bad in [
        IvfParams {
            nprobe: 0,
            ..IvfParams::default()
        },
        IvfParams {
            iterations: 0,
            ..IvfParams::default()
        },
        IvfParams {
            train_per_list: 0,
            ..IvfParams::default()
        },
    ] {
        assert!(matches!(
            IvfIndex::build(flat.rows(), bad),
            Err(CorpusError::Index(_))
        ));
    }
    // More lists than rows: one row per list at most.
    let index = IvfIndex::build(flat.rows(), params(50)).unwrap();
    assert_eq!(index.lists(), 10);
    let q = clustered(1, 4, 2);
    assert_eq!(index.search_batch_with(&q.data, 3, 50).len(), 1);
    assert!(index.search_batch_with(&q.data, 0, 2)[0].is_empty());
}
