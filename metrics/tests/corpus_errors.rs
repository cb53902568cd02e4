//! Bad inputs give clear errors with the line or byte offset; small closed-form cases.

use std::io::Cursor;

use metrics::corpus::embedding::{embedding_metrics, hubness, parse_f32_le, twonn};
use metrics::corpus::graph::{graph_metrics, parse_edges_tsv, parse_edges_tsv_lenient};
use metrics::corpus::knn::KnnResult;
use metrics::corpus::MetricsError;

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn malformed_tsv_line_is_reported_with_its_number() {
    let text = "a\tr\tb\n\nb\tr\n";
    let err = parse_edges_tsv(Cursor::new(text), "kg.tsv").unwrap_err();
    assert!(
        matches!(err, MetricsError::BadLine { line: 3, .. }),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(
        msg.starts_with("kg.tsv:3:") && msg.contains("3 tab-separated"),
        "{msg}"
    );

    let err = parse_edges_tsv(Cursor::new("a\tr\tb\tc\n"), "x").unwrap_err();
    assert!(err.to_string().contains("more than 3"), "{err}");
    let err = parse_edges_tsv(Cursor::new("a\t\tb\n"), "x").unwrap_err();
    assert!(err.to_string().contains("empty"), "{err}");
    let err = parse_edges_tsv(Cursor::new(b"a\tr\tb\n\xff\tr\tb\n".to_vec()), "x").unwrap_err();
    assert!(err.to_string().starts_with("x:2: invalid UTF-8"), "{err}");
}

#[test]
fn lenient_parse_counts_malformed_lines_and_crlf_is_stripped() {
    let text = "a\tr\tb\r\nbroken\nb\tr\tc\r\n\nc\ts\ta\n";
    let list = parse_edges_tsv_lenient(Cursor::new(text), "x").unwrap();
    assert_eq!(list.malformed_lines, 1);
    let g = graph_metrics(&list);
    assert_eq!(
        (g.nodes, g.edges, g.triples, g.relation_types),
        (3, 3, 3, 2)
    );
    assert_eq!(g.average_clustering, 1.0);
    assert_eq!(g.malformed_lines, 1);
}

#[test]
fn embedding_file_errors_name_the_byte_offset() {
    // 5 floats with dim 2: the third row is incomplete and starts at byte 16.
    let bytes = f32_bytes(&[1.0, 0.0, 0.0, 1.0, 0.5]);
    let err = parse_f32_le(&bytes, 2, "e.f32").unwrap_err();
    assert!(
        matches!(err, MetricsError::BadBytes { offset: 16, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("byte offset 16"), "{err}");

    let mut bytes = f32_bytes(&[1.0, 0.0, 0.0, 1.0]);
    bytes.push(0); // not a whole float
    let err = parse_f32_le(&bytes, 1, "e.f32").unwrap_err();
    assert!(
        matches!(err, MetricsError::BadBytes { offset: 16, .. }),
        "{err:?}"
    );

    let bytes = f32_bytes(&[1.0, 0.0, 0.0, f32::NAN]);
    let err = parse_f32_le(&bytes, 2, "e.f32").unwrap_err();
    assert!(
        matches!(err, MetricsError::BadBytes { offset: 12, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("row 1, column 1"), "{err}");

    assert!(parse_f32_le(&[], 2, "e.f32").is_err());
    assert!(parse_f32_le(&bytes, 0, "e.f32").is_err());

    let err = embedding_metrics(&[1.0, 0.0, 0.0, 0.0, 0.0, 1.0], 2).unwrap_err();
    assert!(err.to_string().contains("row 1"), "{err}");
    // Rows are normalised in parallel; the first zero row is still the one named.
    let mut rows = [1.0f32, 0.0].repeat(5_000);
    rows[2 * 3_001..2 * 3_002].fill(0.0);
    rows[2 * 4_500..2 * 4_501].fill(0.0);
    let err = embedding_metrics(&rows, 2).unwrap_err().to_string();
    assert!(err.contains("row 3001 (byte offset 24008)"), "{err}");
}

#[test]
fn a_dimension_larger_than_the_file_is_an_error_not_an_overflow() {
    // 4 * 2^62 overflows usize; before the check this panicked (then divided by zero).
    let bytes = f32_bytes(&[1.0, 0.0, 0.0, 1.0]);
    for dim in [4_611_686_018_427_387_904usize, usize::MAX, 5] {
        let err = parse_f32_le(&bytes, dim, "e.f32").unwrap_err();
        assert!(matches!(err, MetricsError::Invalid(_)), "{err:?}");
        let msg = err.to_string();
        assert!(
            msg.contains("e.f32") && msg.contains(&format!("dimension {dim}")),
            "{msg}"
        );
    }
    assert_eq!(parse_f32_le(&bytes, 4, "e.f32").unwrap().len(), 4);
}

#[test]
fn twonn_closed_forms() {
    // mu = e for every point: ln mu = 1, so the paper's estimate is exactly 1.
    let r1 = vec![1.0; 10];
    let r2 = vec![std::f64::consts::E; 10];
    let t = twonn(&r1, &r2);
    assert!((t.mle - 1.0).abs() < 1e-12, "{}", t.mle);
    // Linear fit over the 9 smallest: sum y_i / sum 1 with y_i = -ln(1 - i/10).
    let want: f64 = (1..=9).map(|i| -(1.0 - i as f64 / 10.0).ln()).sum::<f64>() / 9.0;
    assert!(
        (t.linear_p90 - want).abs() < 1e-12,
        "{} vs {want}",
        t.linear_p90
    );
    // A zero r1 is dropped and counted.
    let t = twonn(&[0.0, 1.0, 1.0], &[0.0, 2.0, 4.0]);
    assert_eq!((t.points_used, t.dropped_r1_zero), (2, 1));
    assert!((t.mle - 2.0 / (2f64.ln() + 4f64.ln())).abs() < 1e-12);
}

#[test]
fn hubness_skew_closed_form() {
    // 4 rows, k = 1: N_1 = [3, 1, 0, 0] -> mean 1, deviations [2, 0, -1, -1].
    let knn = KnnResult {
        k: 1,
        neighbours: vec![1, 0, 0, 0],
        r1: vec![1.0; 4],
        r2: vec![1.0; 4],
    };
    let h = hubness(&knn);
    let (m2, m3) = (6.0 / 4.0, 6.0 / 4.0);
    assert!((h.skew - m3 / f64::powf(m2, 1.5)).abs() < 1e-12);
    assert_eq!((h.nk_max, h.nk_zero), (3, 2));
}
