#!/usr/bin/env bash
# The PostgreSQL fork, run end to end (docs/beyond-one-machine.md):
#   1. a throwaway server from the system's `postgresql` package (initdb in a temporary
#      folder, a Unix socket only, stopped and removed at the end whatever happens), or the
#      database DATABASE_URL names;
#   2. a virtual environment with the project and the pinned psycopg (requirements.txt);
#   3. the fork kit: the store contract and the store and manager state machines, each test
#      in its own schema, dropped after;
#   4. the cross-host checks, with real processes and separate connections;
#   5. `python -m recuris.bench locomo --store postgres_factory:make_store`: the same top 10
#      as SQLite for every question (LOCOMO names the files or folders; default: the test
#      fixture's conversation).
# `run.sh --measure [SIZE]` runs steps 1, 2 and the measured rows instead (bench_postgres.py).
# Run from anywhere; as root, the server runs as the user `postgres` (made if missing),
# since initdb refuses to run as root.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$(mktemp -d /tmp/recuris-pg.XXXXXX)"
server=""
as_server=()

say() { printf '== %s\n' "$*"; }

finish() {
    status=$?
    if [ -n "$server" ] && [ -f "$server/data/postmaster.pid" ]; then
        "${as_server[@]}" "$bin/pg_ctl" -D "$server/data" -m immediate -w stop > /dev/null || true
    fi
    rm -rf "$work"
    exit "$status"
}
trap finish EXIT INT TERM

find_bin() {
    # The Debian package puts the server in /usr/lib/postgresql/<version>/bin, off the PATH.
    if command -v initdb > /dev/null; then
        dirname "$(readlink -f "$(command -v initdb)")"
        return
    fi
    find /usr/lib/postgresql -path '*/bin/initdb' 2> /dev/null | sort -V | tail -n 1 | xargs -r dirname
}

start_server() {
    bin="$(find_bin)"
    if [ -z "$bin" ]; then
        if [ "$(id -u)" != 0 ]; then
            echo "no PostgreSQL server found: install the postgresql package" >&2
            exit 1
        fi
        say "installing the operating system's postgresql package"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq > /dev/null
        apt-get install -y -qq --no-install-recommends postgresql > /dev/null
        bin="$(find_bin)"
    fi
    server="$work/server"
    mkdir "$server"
    if [ "$(id -u)" = 0 ]; then
        id postgres > /dev/null 2>&1 || useradd --system --no-create-home postgres
        chown postgres "$work" "$server"
        as_server=(runuser -u postgres --)
    fi
    say "starting a throwaway PostgreSQL ($("$bin/postgres" --version)) in $server"
    "${as_server[@]}" "$bin/initdb" -D "$server/data" -U postgres --auth=trust -E UTF8 \
        --no-locale > "$server/initdb.log"
    # A Unix socket only; durability off (fsync), as no check here cuts the power.
    "${as_server[@]}" "$bin/pg_ctl" -D "$server/data" -l "$server/log" -w -o \
        "-c listen_addresses='' -c unix_socket_directories=$server -c max_connections=200 \
         -c fsync=off -c synchronous_commit=off -c full_page_writes=off" start > /dev/null
    export DATABASE_URL="host=$server user=postgres dbname=postgres"
    export PGDATA="$server/data"
}

if [ -z "${DATABASE_URL:-}" ]; then
    start_server
else
    say "using the database DATABASE_URL names"
fi

say "a virtual environment with the project and psycopg"
python3 -m venv "$work/venv"
python="$work/venv/bin/python"
"$python" -m pip install --quiet --disable-pip-version-check -e "$root[test]" \
    -r "$here/requirements.txt"
export PYTHONPATH="$here"
cd "$root"

if [ "${1:-}" = "--measure" ]; then
    # The clone's root on the path too: the measures it shares live in benchmarks/, not installed.
    PYTHONPATH="$here:$root" "$python" "$here/bench_postgres.py" "${2:-100000}"
    exit 0
fi

say "the fork kit on PostgreSQL: store contract, store and manager state machines"
RECURIS_STORES=postgres_factory:make_store PYTHONPATH="$here:$root/tests" "$python" -m pytest \
    -o addopts= -p no:cacheprovider -q -rN -k "postgres_factory or StoresAgainstAList" \
    tests/storage/test_store.py tests/storage/test_store_properties.py \
    tests/manager/test_manager_properties.py
left="$("$python" -c 'from postgres_factory import drop_test_schemas; print(drop_test_schemas())')"
if [ "$left" != 0 ]; then
    echo "PF2: $left test schemas were left behind" >&2
    exit 1
fi

say "cross-host checks: real processes, separate connections"
TMPDIR="$work" "$python" "$here/check_processes.py"

say "LoCoMo through the PostgreSQL store"
if [ -z "${LOCOMO:-}" ]; then
    "$python" -c 'import json, sys
sys.path.insert(0, "tests")
from locomo_conversation import CONVERSATION
json.dump(CONVERSATION, open(sys.argv[1], "w"))' "$work/conversation.json"
    LOCOMO="$work/conversation.json"
fi
# shellcheck disable=SC2086
"$python" "$here/check_locomo.py" $LOCOMO

say "the PostgreSQL fork holds"
