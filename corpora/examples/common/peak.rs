//! The machine's sgemm peak with the widest gemm kernel this binary has, shared by the perf
//! examples (included with `#[path]`, so `corpora` and `metrics` measure it the same way).

use std::time::Instant;

/// The best of five 2048^3 f32 gemm products on all rayon threads, in FLOP/s: what the cores
/// reach on a large, ideal matrix product with the gemm kernel chosen at run time (AVX-512 where
/// the CPU has it and the build has corpora's default `x86-v4` feature).
#[allow(unsafe_code)]
pub fn sgemm_peak() -> f64 {
    let n = 2048usize;
    let a: Vec<f32> = (0..n * n)
        .map(|i| ((i % 97) as f32 - 48.0) / 97.0)
        .collect();
    let b: Vec<f32> = (0..n * n)
        .map(|i| ((i % 89) as f32 - 44.0) / 89.0)
        .collect();
    let mut c = vec![0.0f32; n * n];
    let threads = rayon::current_num_threads();
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let t = Instant::now();
        // SAFETY: three distinct n x n row-major buffers of the sizes the strides address.
        unsafe {
            gemm::gemm(
                n,
                n,
                n,
                c.as_mut_ptr(),
                1,
                n as isize,
                false,
                a.as_ptr(),
                1,
                n as isize,
                b.as_ptr(),
                1,
                n as isize,
                0.0,
                1.0,
                false,
                false,
                false,
                gemm::Parallelism::Rayon(threads),
            );
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    std::hint::black_box(&c);
    2.0 * (n as f64).powi(3) / best
}
