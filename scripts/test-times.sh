#!/usr/bin/env bash
# Runs `cargo test --workspace ARGS` in two timed halves, building every test binary first
# (`--no-run`), then running them, and ends with where the time went: the build's seconds and
# each test binary's own run time ("finished in" of libtest), slowest first. The exit status is
# the test run's. Used by .ci/run and `just test-times`.
set -uo pipefail
cd "$(dirname "$0")/.."

log=$(mktemp)
trap 'rm -f "$log"' EXIT

# The build takes cargo's own arguments (those before `--`); the run takes them all.
build_args=()
for a in "$@"; do
    [[ $a == -- ]] && break
    build_args+=("$a")
done

t0=$SECONDS
cargo test --workspace --no-run "${build_args[@]}" || exit $?
build=$((SECONDS - t0))

t1=$SECONDS
cargo test --workspace "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
run=$((SECONDS - t1))

echo
echo "test-times: building the test binaries ${build} s, running them ${run} s (load average $(cut -d' ' -f1-3 /proc/loadavg))"
echo "test-times: run time per test binary, slowest first (libtest's 'finished in'):"
# libtest prints "Running <target> (<path>)" before a binary's tests and "test result: ...
# finished in N.NNs" after them; doctests print "Doc-tests <crate>".
awk '
    /^ *Running / {
        src = ($2 == "unittests") ? $3 : $2
        bin = $NF; gsub(/[()]/, "", bin); n = split(bin, part, "/"); bin = part[n]
        sub(/-[0-9a-f]+$/, "", bin)
        name = bin " (" src ")"
    }
    /^ *Doc-tests / { name = "doctests of " $2 }
    /^test result:/ {
        for (i = 1; i <= NF; i++) if ($i == "in") { t = $(i + 1); sub(/s$/, "", t) }
        printf "%10.1f s  %s\n", t, name
    }
' "$log" | sort -rn | head -25
exit "$status"
