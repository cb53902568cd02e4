//! gemm's AVX-512 kernels (the `x86-v4` feature, chosen at run time where the CPU has AVX-512)
//! give the vectors the AVX2 kernels gave, within 1e-6 per component.
//!
//! `data/encoder_avx2.json` was written by `examples/encoder_vectors.rs` with the AVX2 kernels
//! (2026-12-01). In the default build (`x86-v4` on since 2026-12-04; issue #31: largest
//! difference 2.0e-7 on an AVX-512 CPU) this checks the AVX-512 kernels; built with
//! `--no-default-features`, and on an AVX2-only CPU, the AVX2 kernels themselves.

use bench_core::Embedder;
use corpora::MiniLm;

#[derive(serde::Deserialize)]
struct Golden {
    texts: Vec<String>,
    vectors: Vec<Vec<f32>>,
}

#[test]
fn vectors_match_the_avx2_build_within_1e_6() {
    let golden: Golden =
        serde_json::from_str(include_str!("data/encoder_avx2.json")).expect("golden file");
    assert_eq!(golden.texts.len(), golden.vectors.len());
    let m = MiniLm::new().expect("encoder");
    let texts: Vec<&str> = golden.texts.iter().map(String::as_str).collect();
    let now = m.embed(&texts).unwrap();
    let mut worst = 0.0f32;
    for (i, want) in golden.vectors.iter().enumerate() {
        assert_eq!(want.len(), now.dim);
        let diff = now
            .row(i)
            .iter()
            .zip(want)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(
            diff <= 1e-6,
            "text {i}: differs from the AVX2 build by {diff}"
        );
        worst = worst.max(diff);
    }
    eprintln!(
        "largest difference from the AVX2 build: {worst:.2e} (AVX-512F on this CPU: {})",
        avx512()
    );
}

fn avx512() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}
