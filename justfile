# ragrouter-bench recipes. `cargo install just` to use them; nothing here is needed for the
# README's set-up, main command or tests.

default:
    @just --list

# Fetch and verify the sentence encoder's weights (otherwise done on first use).
setup:
    cargo run --release -- setup

# Run every available paradigm over a corpus (demo, medical, 2wiki, musique-dev, jsonl:<dir>).
bench corpus *args:
    cargo run --release -- bench {{corpus}} {{args}}

# The known corpora and where their files are looked for.
corpora:
    cargo run --release -- corpora

# Corpus metrics of raw files: just metrics --edges FILE.tsv --embeddings FILE.f32 --dim 384
metrics *args:
    cargo run --release -- metrics {{args}}

# Cross-validate routers on the stored tuples: just route eval --features q+c --folds 5
route *args:
    cargo run --release -- route {{args}}

# Figures, tables, exports and report.html of the latest runs and router evaluations:
# just report [--corpus a,b] [--run ID] [--eval ID] [--db PATH]
report out="target/report" *args:
    cargo run --release -- report --out {{out}} {{args}}

# The test suite, exactly as CI runs it.
test:
    bash .ci/run

# Performance benchmarks: each prints its ratio against a baseline measured in the same run.
perf:
    cargo run --release -p corpora --example perf_encoder
    cargo run --release -p corpora --example perf_search
    cargo run --release -p paradigms --example perf_ppr
    cargo run --release -p metrics --example perf_metrics
    cargo run --release -p routers --example perf_cv
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

# The dense-search benchmark with faiss as the side-by-side baseline
# (needs: apt-get install -y cmake libopenblas-dev; builds FAISS from source, ~5 min).
perf-faiss:
    cargo run --release -p corpora --features faiss --example perf_search

lint:
    cargo fmt --all -- --check
    cargo clippy --all-targets -- -D warnings
