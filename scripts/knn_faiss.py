#!/usr/bin/env python3
"""faiss's exact 10-NN graph of the rows perf_metrics embeds: the reference its whole pass is
timed against (issue #31: "the whole metrics pass faster than faiss's exact 10-NN graph alone").

Usage: knn_faiss.py EMB.f32 DIM [REPEATS]
Rows are L2-normalised in float32 (not timed), then an `IndexFlatIP` is built and searched for
every row's 11 nearest (the row itself included), all cores (OpenMP) and faiss's BLAS; the
timed part is the index's `add` plus the `search`, best of REPEATS (default 3). Run it with
OPENBLAS_CORETYPE unset so the BLAS picks its own widest kernel (perf_metrics does). Prints
`faiss_knn_s X`, the version and threads, and the N_10 hubness values from its neighbours (the
row itself, or with exact duplicates the first 10 others, left out), for a side-by-side check.
"""
import os
import sys
import time

import faiss
import numpy as np


def main():
    path, dim = sys.argv[1], int(sys.argv[2])
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    x = np.ascontiguousarray(np.fromfile(path, dtype="<f4").reshape(-1, dim))
    faiss.normalize_L2(x)
    n = x.shape[0]
    best, idx = float("inf"), None
    for _ in range(repeats):
        t = time.perf_counter()
        index = faiss.IndexFlatIP(dim)
        index.add(x)
        _, idx = index.search(x, 11)
        best = min(best, time.perf_counter() - t)
    counts = np.zeros(n)
    for i in range(n):
        others = [j for j in idx[i] if j != i][:10]
        counts[others] += 1
    m = counts - counts.mean()
    print(f"value embeddings.hubness_skew_k10 {(m**3).mean() / (m**2).mean() ** 1.5}")
    print(f"value embeddings.hubness_nk_max {int(counts.max())}")
    print(f"value embeddings.hubness_nk_zero {int((counts == 0).sum())}")
    print(
        f"versions faiss {faiss.__version__} threads {faiss.omp_get_max_threads()} "
        f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', 'unset')} "
        f"load {os.getloadavg()[0]:.2f}"
    )
    print(f"faiss_knn_s {best:.3f}")


if __name__ == "__main__":
    main()
