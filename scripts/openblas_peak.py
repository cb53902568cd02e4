#!/usr/bin/env python3
"""OpenBLAS's sgemm peak through numpy: a reference for the perf examples' shares, never a
dependency. 2048^3 float32, best of 5, all threads; prints the kernel OpenBLAS chose.

Run it with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset for this command only (`just perf`
does), or OpenBLAS keeps the core type these machines pin (Haswell, AVX2) instead of detecting
AVX-512 (see ../shared/design/dependencies.md).
"""
import os
import time

import numpy as np

try:
    from threadpoolctl import threadpool_info
except ImportError:  # the peak is still measured; only the kernel name is missing
    threadpool_info = None


def main():
    n = 2048
    a = (np.arange(n * n, dtype=np.float32) % 97 - 48).reshape(n, n) / 97
    b = (np.arange(n * n, dtype=np.float32) % 89 - 44).reshape(n, n) / 89
    a @ b  # warm-up: thread pool, pages
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t)
    kernel = "unknown"
    if threadpool_info is not None:
        blas = [i for i in threadpool_info() if i.get("internal_api") == "openblas"]
        if blas:
            kernel = f"{blas[0].get('architecture')} ({blas[0].get('num_threads')} threads, {blas[0].get('version')})"
    print(
        f"OpenBLAS sgemm peak (numpy {np.__version__}), kernel {kernel}, 2048^3 f32, best of 5: "
        f"{2 * n**3 / best / 1e9:.1f} GFLOP/s; OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', 'unset')}, "
        f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )


if __name__ == "__main__":
    main()
