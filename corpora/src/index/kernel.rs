//! Which gemm micro-kernel this binary runs on this CPU, and the machine facts perf lines print.
//!
//! With the `x86-v4` feature (on by default since 2026-12-04; `--no-default-features` builds
//! without it) gemm (through pulp) picks its AVX-512 kernels at run time where the CPU has every
//! x86-64-v4 feature; otherwise, and on CPUs without them, its AVX2+FMA kernels where it has the
//! x86-64-v3 ones. The checks below are the ones pulp's `V4::try_new`/`V3::try_new`
//! make, so the name matches the kernel gemm really dispatches to.

/// The gemm kernel family chosen on this CPU: `"avx512"`, `"avx2"` or `"scalar"` (every other
/// CPU, including non-x86 ones, where gemm's own generic or NEON path runs).
pub fn gemm_kernel() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        let v3 = has!("avx")
            && has!("avx2")
            && has!("fma")
            && has!("bmi1")
            && has!("bmi2")
            && has!("lzcnt")
            && has!("popcnt")
            && has!("sse4.2");
        let v4 = v3
            && has!("avx512f")
            && has!("avx512bw")
            && has!("avx512cd")
            && has!("avx512dq")
            && has!("avx512vl");
        if v4 && cfg!(feature = "x86-v4") {
            return "avx512";
        }
        if v3 {
            return "avx2";
        }
    }
    "scalar"
}

/// The CPU's model name from /proc/cpuinfo (Linux), or `"unknown CPU"`.
pub fn cpu_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

/// The 1-, 5- and 15-minute load averages from /proc/loadavg (Linux), as printed there.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "unknown".into())
}

/// One line for a perf report: CPU, cores, the gemm kernel and the load average right now.
pub fn machine_line() -> String {
    format!(
        "machine: {}, {} cores, gemm kernel {}, load average {}",
        cpu_name(),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        gemm_kernel(),
        load_average()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_is_one_of_the_known_names() {
        assert!(["avx512", "avx2", "scalar"].contains(&gemm_kernel()));
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512vl")
            && std::arch::is_x86_feature_detected!("avx2")
        {
            assert_ne!(gemm_kernel(), "scalar");
        }
    }

    #[test]
    fn machine_line_names_kernel_and_load() {
        let l = machine_line();
        assert!(
            l.contains(gemm_kernel()) && l.contains("load average"),
            "{l}"
        );
    }
}
