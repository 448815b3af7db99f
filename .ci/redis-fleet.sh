#!/usr/bin/env bash
# A real Redis for the fleet tests: installs Debian's redis-server under target/redis (the
# packages unpacked with `dpkg -x`, nothing installed on the machine), starts it on a Unix
# socket of its own, runs the `#[ignore]`d Redis tests of dsh-tools-tests/tests/mcp/fleet.rs
# against it (two instances behind a round-robin proxy, both eras, list_changed; the store's
# round trip and expiry) and of tests/approvals/redis.rs (deferred approvals: the store's
# contract; a turn resumed in a fresh process) and of tests/tasks/main.rs (tasks shared by a fleet), and
# stops it. Called by .ci/run; runnable on its own:
#
#     bash .ci/redis-fleet.sh
#
# Needs apt-get (Debian's package archive) and dpkg-deb. Each step prints one verdict line; the
# last line is `redis-fleet: N passed, 0 failed` only when every step passed.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

DIR=$PWD/target/redis
ROOT=$DIR/root
SOCKET=$DIR/redis.sock
LOG=$DIR/redis.log
PACKAGES=(redis-server redis-tools libjemalloc2 liblzf1)
# The tests this step owns: every one must run and pass.
EXPECTED_TESTS=3
EXPECTED_APPROVAL_TESTS=2
EXPECTED_TASK_TESTS=2
TOTAL=5
STEP=0
PASSED=0
DETAIL=
REDIS_PID=

cleanup() {
    if [[ -n $REDIS_PID ]] && kill -0 "$REDIS_PID" 2>/dev/null; then
        kill "$REDIS_PID" 2>/dev/null || true
        wait "$REDIS_PID" 2>/dev/null || true
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p "$DIR"

CHECK=redis-fleet
# shellcheck source=.ci/steps.sh
source .ci/steps.sh

# The unpacked libraries' directory (usr/lib/<multiarch triplet>), in LIBS.
libs_dir() {
    LIBS=$(find "$ROOT/usr/lib" -name 'libjemalloc.so.2' -printf '%h\n' | head -n 1)
    [[ -n $LIBS ]] || { echo "libjemalloc.so.2 not found under $ROOT/usr/lib"; return 1; }
}

install_redis() {
    local debs=$DIR/debs lists=$DIR/apt-lists cache=$DIR/apt-cache
    rm -rf "$debs" "$ROOT"
    mkdir -p "$debs" "$ROOT"
    # The machine's package index first; when it has none (a fresh image), an index of our own
    # under target/ (the machine's apt state is left as it was).
    if ! (cd "$debs" && timeout 300 apt-get download "${PACKAGES[@]}"); then
        mkdir -p "$lists/partial" "$cache/archives/partial"
        local own=(-o "Dir::State::Lists=$lists" -o "Dir::Cache=$cache")
        timeout 300 apt-get "${own[@]}" update || return
        (cd "$debs" && timeout 300 apt-get "${own[@]}" download "${PACKAGES[@]}") || return
    fi
    local deb
    for deb in "$debs"/*.deb; do
        dpkg-deb -x "$deb" "$ROOT" || return
    done
    libs_dir || return
    local version
    version=$(LD_LIBRARY_PATH=$LIBS "$ROOT/usr/bin/redis-server" --version) || return
    DETAIL="${version%% sha=*} ($(cd "$debs" && ls redis-server_*.deb | sed 's/%3a/:/'))"
}

start_redis() {
    libs_dir || return
    rm -f "$SOCKET"
    LD_LIBRARY_PATH=$LIBS "$ROOT/usr/bin/redis-server" \
        --port 0 --unixsocket "$SOCKET" --unixsocketperm 700 --save "" --appendonly no \
        --dir "$DIR" >"$LOG" 2>&1 &
    REDIS_PID=$!
    local i
    for ((i = 0; i < 100; i++)); do # up to 10 s
        if LD_LIBRARY_PATH=$LIBS "$ROOT/usr/bin/redis-cli" -s "$SOCKET" ping 2>/dev/null | grep -q PONG; then
            DETAIL="pid $REDIS_PID on $SOCKET"
            return 0
        fi
        if ! kill -0 "$REDIS_PID" 2>/dev/null; then
            echo "redis-server exited:"
            cat "$LOG"
            return 1
        fi
        sleep 0.1
    done
    echo "redis-server did not answer PING within 10 s"
    return 1
}

fleet_tests() {
    # The README test command's selection and features: the test binary is already built.
    REDIS_URL="redis+unix://$SOCKET" timeout 600 cargo test --workspace --all-features \
        --test mcp -- fleet:: --ignored --test-threads 1 || return
}

verdict_of_tests() {
    local line
    line=$(grep -E '^test result: ' "$DIR/tests.log" | tail -n 1)
    [[ $line =~ ok\.\ ([0-9]+)\ passed\;\ 0\ failed ]] || { echo "no passing result line: $line"; return 1; }
    [[ ${BASH_REMATCH[1]} -eq $EXPECTED_TESTS ]] || { echo "${BASH_REMATCH[1]} Redis tests ran, want $EXPECTED_TESTS"; return 1; }
    DETAIL="$EXPECTED_TESTS/$EXPECTED_TESTS Redis tests: a 2025-11-25 fleet sharing sessions behind a round-robin proxy (list_changed included), the same fleet serving 2026-07-28, the store's round trip and expiry"
}

run_tests() {
    fleet_tests >"$DIR/tests.log" 2>&1 || { cat "$DIR/tests.log"; return 1; }
    verdict_of_tests
}

approval_tests() {
    REDIS_URL="redis+unix://$SOCKET" timeout 600 cargo test --workspace --all-features \
        --test approvals -- redis:: --ignored --test-threads 1 >"$DIR/approvals.log" 2>&1 \
        || { cat "$DIR/approvals.log"; return 1; }
    local line
    # The last result line is this binary's own (the fresh process it starts prints one too).
    line=$(grep -E '^test result: ' "$DIR/approvals.log" | tail -n 1)
    [[ $line =~ ok\.\ ([0-9]+)\ passed\;\ 0\ failed ]] || { echo "no passing result line: $line"; return 1; }
    [[ ${BASH_REMATCH[1]} -eq $EXPECTED_APPROVAL_TESTS ]] || { echo "${BASH_REMATCH[1]} approval tests ran, want $EXPECTED_APPROVAL_TESTS"; return 1; }
    DETAIL="$EXPECTED_APPROVAL_TESTS/$EXPECTED_APPROVAL_TESTS deferred-approval tests: the store claims once and pages; a turn of 8 calls (3 asking) resumed in a fresh process ends as the inline turn"
}

task_tests() {
    REDIS_URL="redis+unix://$SOCKET" timeout 600 cargo test --workspace --all-features \
        --test tasks -- redis:: --ignored --test-threads 1 >"$DIR/tasks.log" 2>&1 \
        || { cat "$DIR/tasks.log"; return 1; }
    local line
    line=$(grep -E '^test result: ' "$DIR/tasks.log" | tail -n 1)
    [[ $line =~ ok\.\ ([0-9]+)\ passed\;\ 0\ failed ]] || { echo "no passing result line: $line"; return 1; }
    [[ ${BASH_REMATCH[1]} -eq $EXPECTED_TASK_TESTS ]] || { echo "${BASH_REMATCH[1]} task tests ran, want $EXPECTED_TASK_TESTS"; return 1; }
    DETAIL="$EXPECTED_TASK_TESTS/$EXPECTED_TASK_TESTS task tests: the store's compare-and-set, pages, expiry and bound; a task started on one instance read, waited for and cancelled on another; a dead instance's task ends failed"
}

step "install Debian's redis-server under target/redis" install_redis install
step "start redis-server on a Unix socket" start_redis start
step "mcp fleet:: Redis tests (--ignored) against it" run_tests tests-step
step "approvals redis:: tests (--ignored) against it" approval_tests approvals-step
step "tasks redis:: tests (--ignored) against it" task_tests tasks-redis-step
cleanup
echo "redis-fleet: $PASSED passed, 0 failed"
