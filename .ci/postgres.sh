# Sourced by .ci/run: a throwaway PostgreSQL from Debian's packages (installed by .ci/run)
# for the store tests, on 127.0.0.1 only, in a temporary directory.
# Sets VOXBENCH_TEST_POSTGRES on success; on any failure says why and leaves it unset, so
# the PostgreSQL tests skip with their reason instead of failing CI.

PG_CI_STOP=()
PG_CI_DIR=""

pg_start() {
    local bin port dir
    bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
        echo "postgres: not installed; its tests will skip"
        return 0
    fi
    port=${VOXBENCH_CI_PG_PORT:-$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
    dir=$(mktemp -d /tmp/voxbench-ci-pg.XXXXXX)
    chmod 755 "$dir"
    PG_CI_DIR=$dir
    local as=()
    if [ "$(id -u)" = 0 ]; then
        chown postgres "$dir" 2>/dev/null || { echo "postgres: no postgres user; its tests will skip"; return 0; }
        as=(runuser -u postgres --)
    fi
    if ! "${as[@]}" "$bin/initdb" -D "$dir/data" -U voxbench --auth=trust >"$dir/initdb.log" 2>&1; then
        echo "postgres: initdb failed (see $dir/initdb.log); its tests will skip"
        return 0
    fi
    if ! "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $dir" start >/dev/null 2>&1; then
        echo "postgres: the server did not start (see $dir/server.log); its tests will skip"
        return 0
    fi
    PG_CI_STOP=("${as[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast stop)
    if ! "${as[@]}" "$bin/createdb" -h 127.0.0.1 -p "$port" -U voxbench voxbench_test >/dev/null 2>&1; then
        echo "postgres: createdb failed; its tests will skip"
        return 0
    fi
    export VOXBENCH_TEST_POSTGRES="postgresql://voxbench@127.0.0.1:$port/voxbench_test"
    echo "postgres: running on 127.0.0.1:$port for the store tests"
}

pg_stop() {
    if [ "${#PG_CI_STOP[@]}" -gt 0 ] 2>/dev/null; then
        "${PG_CI_STOP[@]}" >/dev/null 2>&1 || true
    fi
    if [ -n "$PG_CI_DIR" ]; then
        rm -rf "$PG_CI_DIR"
    fi
}
