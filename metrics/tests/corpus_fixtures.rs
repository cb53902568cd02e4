//! Reproduces every value of ../shared/metric-fixtures/*/expected*.json (ppr/ belongs to another issue).

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use metrics::corpus::embedding::{read_f32_file, unit_rows, HUBNESS_K};
use metrics::corpus::knn::{knn_exact, knn_pass};
use metrics::corpus::{embedding_metrics, flatten, graph_metrics, parse_edges_tsv, CorpusMetrics};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

fn fixtures_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/metric-fixtures");
    assert!(
        dir.join("README.md").is_file(),
        "metric fixtures not found at {} (expected the shared/ folder next to the workspace)",
        dir.display()
    );
    dir
}

fn load_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn sha256_hex(path: &Path) -> String {
    hex::encode(Sha256::digest(std::fs::read(path).unwrap()))
}

/// Which kind of expected file: the reference implementation's values, or hand-derived ones
/// (computed from the exact construction, before the float32 quantisation of emb.f32).
#[derive(Clone, Copy, PartialEq, Debug)]
enum Source {
    Reference,
    Hand,
}

/// Tolerances of metric-fixtures/README.md, by our key.
fn within(key: &str, ours: f64, expected: f64, source: Source) -> bool {
    let rel = |tol: f64| (ours - expected).abs() <= tol * expected.abs().max(f64::MIN_POSITIVE);
    if key.starts_with("graph.") {
        rel(1e-12)
    } else if key.starts_with("embeddings.twonn_") {
        rel(1e-5)
    } else if key.starts_with("embeddings.hubness_") {
        (ours - expected).abs() <= 5e-3
    } else if key.starts_with("embeddings.dispersion_") {
        // The README gives no dispersion tolerance: float64 on the same data agrees to rounding;
        // hand values are for the unquantised vectors, float32 input moves them by ~1e-8.
        match source {
            Source::Reference => rel(1e-10),
            Source::Hand => (ours - expected).abs() <= 1e-6,
        }
    } else {
        panic!("no tolerance defined for {key}")
    }
}

/// Maps a key of an expected file to the key of ours that must reproduce it; None = not a value
/// of ours (provenance, per-point notes, cross-library agreement flags).
fn our_key(key: &str) -> Option<String> {
    if key.starts_with("inputs.") || key.contains("._") {
        return None;
    }
    if let Some(rest) = key.strip_prefix("checks.graph.scipy_values.") {
        return Some(format!("graph.{rest}"));
    }
    let alias = match key {
        // scikit-dimension's TwoNN is Facco's fit with 10% discarded.
        "embeddings.twonn_skdim" | "checks.embeddings.sklearn_twonn_linear_p90" => {
            "embeddings.twonn_linear_p90"
        }
        "checks.embeddings.sklearn_twonn_mle" => "embeddings.twonn_mle",
        "checks.embeddings.skew_pop_formula"
        | "checks.embeddings.sklearn_hubness_skew_k10"
        | "checks.embeddings.f32gram_hubness_skew_k10" => "embeddings.hubness_skew_k10",
        // A row with an exact duplicate is exactly a row with r1 == 0.
        "checks.embeddings.duplicate_rows" => "embeddings.twonn_points_dropped_r1_zero",
        _ if key.starts_with("checks.") => return None,
        _ => key,
    };
    Some(alias.to_owned())
}

/// Loads a fixture directory's inputs, computes our metrics and compares every value of
/// `expected_file`; returns our flat map and the number of values compared.
fn check(dir: &str, edges: Option<&str>, emb: Option<(&str, usize)>, expected_file: &str) -> usize {
    let base = fixtures_dir().join(dir);
    let source = if expected_file.starts_with("expected_hand") {
        Source::Hand
    } else {
        Source::Reference
    };
    let expected = load_json(&base.join(expected_file));

    // The inputs must be the ones the expected values were computed from.
    if let Some(Value::Object(inputs)) = expected.get("inputs") {
        for (name_key, sum_key) in [
            ("edges", "edges_sha256"),
            ("embeddings", "embeddings_sha256"),
        ] {
            if let (Some(Value::String(f)), Some(Value::String(sum))) =
                (inputs.get(name_key), inputs.get(sum_key))
            {
                assert_eq!(&sha256_hex(&base.join(f)), sum, "{dir}/{f} changed");
            }
        }
    }
    for flag in ["checks.graph.all_agree", "checks.embeddings.all_agree"] {
        let mut v = &expected;
        for part in flag.split('.') {
            v = v.get(part).unwrap_or(&Value::Null);
        }
        assert!(
            v.is_null() || v == &Value::Bool(true),
            "{dir}/{expected_file}: {flag} is not true"
        );
    }

    let mut ours = CorpusMetrics::default();
    if let Some(f) = edges {
        let path = base.join(f);
        let file = File::open(&path).unwrap();
        let list = parse_edges_tsv(BufReader::new(file), &path.display().to_string()).unwrap();
        ours.graph = Some(graph_metrics(&list));
    }
    if let Some((f, dim)) = emb {
        let data = read_f32_file(&base.join(f), dim).unwrap();
        ours.embeddings = Some(embedding_metrics(&data, dim).unwrap());
    }
    let ours = ours.flat_map();

    let mut flat = Map::new();
    flatten("", &expected, &mut flat);
    let mut compared = 0;
    let mut failures = Vec::new();
    for (key, want) in &flat {
        let Some(mine) = our_key(key) else { continue };
        let Some(got) = ours.get(&mine) else {
            failures.push(format!("{key}: no value `{mine}` in our output"));
            continue;
        };
        compared += 1;
        let ok = if want.is_u64() || want.is_i64() {
            got.is_u64() && got.as_u64() == want.as_u64()
        } else {
            match (got.as_f64(), want.as_f64()) {
                (Some(g), Some(w)) => within(&mine, g, w, source),
                _ => false,
            }
        };
        if !ok {
            failures.push(format!("{key}: ours {got}, expected {want}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{dir}/{expected_file}:\n  {}",
        failures.join("\n  ")
    );
    // Our keys are the fixture's: everything we report is in the file, bar the named extras.
    let groups: Vec<&str> = ["graph", "embeddings"]
        .into_iter()
        .filter(|g| expected.get(g).is_some())
        .collect();
    for key in ours.keys() {
        let in_file = flat.contains_key(key);
        let extra = key == "graph.density_leaderboard";
        let group_checked = groups.iter().any(|g| key.starts_with(&format!("{g}.")));
        let hand_subset = source == Source::Hand; // hand files list only what was derived by hand
        assert!(
            in_file || extra || !group_checked || hand_subset,
            "{dir}/{expected_file}: our key {key} is not in the fixture"
        );
    }
    compared
}

#[test]
fn a_small_reference_values() {
    let n = check(
        "a_small",
        Some("edges.tsv"),
        Some(("emb.f32", 4)),
        "expected.json",
    );
    assert!(n >= 40, "only {n} values compared");
}

#[test]
fn a_small_hand_values() {
    let n = check(
        "a_small",
        Some("edges.tsv"),
        Some(("emb.f32", 4)),
        "expected_hand.json",
    );
    assert!(n >= 30, "only {n} values compared");
}

#[test]
fn ring_p0_reference_values() {
    check("b_ws", Some("ring_p0.tsv"), None, "expected_ring_p0.json");
}

#[test]
fn ring_p0_hand_values() {
    check(
        "b_ws",
        Some("ring_p0.tsv"),
        None,
        "expected_hand_ring_p0.json",
    );
}

#[test]
fn ws_p01_reference_values() {
    check("b_ws", Some("ws_p01.tsv"), None, "expected_ws_p01.json");
}

/// expected_hand.json's `_per_point`: r1, r2, mu and N_10 of each of the 12 rows.
#[test]
fn a_small_hand_per_point() {
    let base = fixtures_dir().join("a_small");
    let hand = load_json(&base.join("expected_hand.json"));
    let points = hand["embeddings"]["_per_point"].as_array().unwrap();
    let data = read_f32_file(&base.join("emb.f32"), 4).unwrap();
    let rows = unit_rows(&data, 4).unwrap();
    let knn = knn_pass(&rows, HUBNESS_K);
    let hub = metrics::corpus::embedding::hubness(&knn);
    assert_eq!(points.len(), rows.rows);
    let rel = |a: f64, b: f64| (a - b).abs() <= 1e-5 * b.abs();
    for (i, p) in points.iter().enumerate() {
        let (r1, r2, mu) = (
            p["r1"].as_f64().unwrap(),
            p["r2"].as_f64().unwrap(),
            p["mu"].as_f64().unwrap(),
        );
        assert!(rel(knn.r1[i], r1), "row {i}: r1 {} vs {r1}", knn.r1[i]);
        assert!(rel(knn.r2[i], r2), "row {i}: r2 {} vs {r2}", knn.r2[i]);
        assert!(rel(knn.r2[i] / knn.r1[i], mu), "row {i}: mu");
        assert_eq!(
            u64::from(hub.counts[i]),
            p["N10"].as_u64().unwrap(),
            "row {i}: N10"
        );
    }
    // The blocked float32 pass agrees with brute force in float64.
    let exact = knn_exact(&rows, HUBNESS_K);
    assert_eq!(knn.neighbours, exact.neighbours);
    assert_eq!(knn.r1, exact.r1);
    assert_eq!(knn.r2, exact.r2);
}

#[test]
fn leaderboard_density_is_half_rounded_to_six_decimals() {
    let base = fixtures_dir();
    for (dir, file, expected_density) in [
        ("a_small", "edges.tsv", "expected.json"),
        ("b_ws", "ring_p0.tsv", "expected_ring_p0.json"),
        ("b_ws", "ws_p01.tsv", "expected_ws_p01.json"),
    ] {
        let list = parse_edges_tsv(
            BufReader::new(File::open(base.join(dir).join(file)).unwrap()),
            file,
        )
        .unwrap();
        let g = graph_metrics(&list);
        let density = load_json(&base.join(dir).join(expected_density))["graph"]["density"]
            .as_f64()
            .unwrap();
        // Decimal rounding by string, independent of the implementation's.
        let want: f64 = format!("{:.6}", density / 2.0).parse().unwrap();
        assert_eq!(g.density_leaderboard, want, "{dir}/{file}");
    }
}
