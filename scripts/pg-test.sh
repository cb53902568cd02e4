#!/usr/bin/env bash
# A throwaway PostgreSQL server on loopback, for the tests that need a real one (issue #17).
#
#   scripts/pg-test.sh start   install PostgreSQL from the system's packages if missing, create a
#                              cluster in PG_TEST_STATE, start it on a free port, print the URL
#   scripts/pg-test.sh stop    stop that server and delete its cluster
#
# The server refuses to run as root, so as root the cluster belongs to the `postgres` user.
# Trust authentication on 127.0.0.1 only; fsync off: the data is thrown away afterwards.
set -euo pipefail

STATE=${PG_TEST_STATE:?set PG_TEST_STATE to a directory for the cluster}
say() { echo "pg-test: $*" >&2; }
die() { say "error: $*"; exit 1; }

bindir() {
    if command -v pg_config >/dev/null 2>&1 && [[ -x $(pg_config --bindir)/initdb ]]; then
        pg_config --bindir; return
    fi
    local d
    d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
    [[ -n $d && -x $d/initdb ]] && echo "$d"
}

install() {
    [[ -n $(bindir) ]] && return
    say "PostgreSQL is missing: installing it from the system's packages"
    if command -v apt-get >/dev/null 2>&1; then
        local sudo=; [[ $(id -u) -ne 0 ]] && sudo=sudo
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q postgresql >&2 \
            || { $sudo apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q postgresql >&2; }
    elif command -v dnf >/dev/null 2>&1; then
        sudo dnf install -y postgresql-server >&2
    else
        die "no PostgreSQL and no apt-get or dnf to install it; install PostgreSQL (initdb, pg_ctl)"
    fi
    [[ -n $(bindir) ]] || die "PostgreSQL was installed but initdb was not found"
}

# Runs a server binary as the cluster's owner.
as_owner() {
    if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start() {
    install
    local bin port
    bin=$(bindir)
    mkdir -p "$STATE"
    [[ $(id -u) -eq 0 ]] && chown postgres "$STATE"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    as_owner "$bin/initdb" -D "$STATE/data" -U ragrouter --auth=trust --locale=C -E UTF8 >"$STATE/initdb.log" 2>&1 \
        || { cat "$STATE/initdb.log" >&2; die "initdb failed"; }
    as_owner "$bin/pg_ctl" -D "$STATE/data" -l "$STATE/server.log" -w -t 60 \
        -o "-p $port -k $STATE -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" start >&2 \
        || { cat "$STATE/server.log" >&2; die "the server did not start"; }
    echo "$bin" >"$STATE/bindir"
    as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U ragrouter ragrouter
    say "$("$bin/postgres" --version) on 127.0.0.1:$port"
    echo "RAGROUTER_TEST_PG=postgres://ragrouter@127.0.0.1:$port/ragrouter"
}

stop() {
    [[ -f $STATE/bindir ]] || return 0
    as_owner "$(cat "$STATE/bindir")/pg_ctl" -D "$STATE/data" -m fast -w stop >&2 || true
    rm -rf "$STATE"
}

case ${1:-} in
    start) start ;;
    stop) stop ;;
    *) die "usage: scripts/pg-test.sh start|stop" ;;
esac
