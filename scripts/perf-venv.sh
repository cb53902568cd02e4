#!/usr/bin/env bash
# The perf examples' optional Python references (numpy/OpenBLAS, python-igraph, faiss-cpu, and
# networkx, scikit-learn, scikit-dimension at the metric fixtures' pinned versions) in target/perf-venv.
# Made once; prints "FLAG PYTHON" (or just PYTHON without FLAG) on success and nothing when
# python3 or the packages are unavailable, so a recipe can pass it along or skip the reference.
set -u
flag="${1:-}"
venv="$(dirname "$0")/../target/perf-venv"
py="$venv/bin/python"
if [ ! -x "$py" ] || ! "$py" -c 'import numpy, igraph, networkx, sklearn, skdim, threadpoolctl' 2>/dev/null; then
    command -v python3 >/dev/null || { echo "perf-venv: no python3, references skipped" >&2; exit 0; }
    python3 -m venv "$venv" >&2 || { echo "perf-venv: venv failed, references skipped" >&2; exit 0; }
    "$py" -m pip install -q numpy threadpoolctl igraph networkx==3.6.1 scikit-learn==1.9.1 \
        scikit-dimension==0.5.0 scipy==1.17.1 >&2 \
        || { echo "perf-venv: pip install failed, references skipped" >&2; exit 0; }
fi
# faiss-cpu (its exact kNN is perf_metrics' other reference) is optional: a failed install
# leaves the other references in place.
if ! "$py" -c 'import faiss' 2>/dev/null; then
    "$py" -m pip install -q faiss-cpu >&2 || echo "perf-venv: faiss-cpu not installed, its reference skipped" >&2
fi
py="$(cd "$(dirname "$py")" && pwd)/python"
if [ -n "$flag" ]; then echo "$flag $py"; else echo "$py"; fi
