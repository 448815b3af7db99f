#!/usr/bin/env bash
# Traces in a real backend (issue 37): Arize Phoenix, from PyPI (pinned, in target/phoenix-venv),
# receives OTLP http/protobuf from examples/agent (--code-mode, against a scripted
# chat-completions server) and examples/mcp_server (the Python `mcp` client, both eras, each
# call with a `traceparent` of its own), and .ci/tracing_check.py reads the spans back from
# Phoenix's REST API: names, parent links, the conventions' required attributes. Called by
# .ci/run; runnable on its own:
#
#     bash .ci/tracing-check.sh
#
# Needs python3 and PyPI. Phoenix runs on free loopback ports with a fresh working directory
# under target/tracing, and is stopped on exit. Each step prints one verdict line; the last line
# is `tracing-check: N passed, 0 failed` only when every step passed.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
source .ci/target-dir.sh

PHOENIX_VERSION=20.26.1
MCP_PY_VERSION=2.3.0
DIR=$PWD/target/tracing
PHOENIX_VENV=$PWD/target/phoenix-venv
# The Python mcp SDK: .ci/mcp-interop.sh's venv when it holds the pinned version, else our own.
MCP_VENV=$PWD/target/mcp-venv
TOTAL=4
STEP=0
PASSED=0
DETAIL=
PHOENIX_PID=
PHOENIX_URL=

cleanup() {
    if [[ -n $PHOENIX_PID ]] && kill -0 "$PHOENIX_PID" 2>/dev/null; then
        kill "$PHOENIX_PID" 2>/dev/null || true
        wait "$PHOENIX_PID" 2>/dev/null || true
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p "$DIR"

CHECK=tracing-check
# shellcheck source=.ci/steps.sh
source .ci/steps.sh

build() {
    # The README test command's features: the examples are already built by it.
    timeout 1200 cargo build --workspace --all-features --example agent --example mcp_server || return
    DETAIL="$TARGET_DIR/debug/examples/{agent,mcp_server}"
}

venv_has() {
    local venv=$1 package=$2 version=$3
    [[ -x $venv/bin/python ]] && [[ $("$venv/bin/python" -m pip show "$package" 2>/dev/null | sed -n 's/^Version: //p') == "$version" ]]
}

install_python() {
    if ! venv_has "$PHOENIX_VENV" arize-phoenix "$PHOENIX_VERSION"; then
        rm -rf "$PHOENIX_VENV"
        python3 -m venv "$PHOENIX_VENV" || return
        timeout 900 "$PHOENIX_VENV/bin/python" -m pip install -q --no-cache-dir "arize-phoenix==$PHOENIX_VERSION" || return
    fi
    if ! venv_has "$MCP_VENV" mcp "$MCP_PY_VERSION"; then
        MCP_VENV=$DIR/mcp-venv
        if ! venv_has "$MCP_VENV" mcp "$MCP_PY_VERSION"; then
            rm -rf "$MCP_VENV"
            python3 -m venv "$MCP_VENV" || return
            timeout 600 "$MCP_VENV/bin/python" -m pip install -q --no-cache-dir "mcp==$MCP_PY_VERSION" || return
        fi
    fi
    DETAIL="arize-phoenix $PHOENIX_VERSION, mcp $MCP_PY_VERSION"
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start_phoenix() {
    local port grpc data=$DIR/phoenix-data i
    port=$(free_port) && grpc=$(free_port) || return
    rm -rf "$data"
    mkdir -p "$data"
    PHOENIX_WORKING_DIR=$data PHOENIX_HOST=127.0.0.1 PHOENIX_PORT=$port PHOENIX_GRPC_PORT=$grpc \
        PHOENIX_TELEMETRY_ENABLED=false \
        "$PHOENIX_VENV/bin/phoenix" serve >"$DIR/phoenix.log" 2>&1 &
    PHOENIX_PID=$!
    PHOENIX_URL=http://127.0.0.1:$port
    for ((i = 0; i < 240; i++)); do # up to 120 s
        if python3 -c "import urllib.request, sys; urllib.request.urlopen(sys.argv[1], timeout=2)" \
            "$PHOENIX_URL/readyz" 2>/dev/null; then
            DETAIL="pid $PHOENIX_PID at $PHOENIX_URL"
            return 0
        fi
        if ! kill -0 "$PHOENIX_PID" 2>/dev/null; then
            echo "phoenix exited:"
            cat "$DIR/phoenix.log"
            return 1
        fi
        sleep 0.5
    done
    echo "phoenix did not answer /readyz within 120 s"
    cat "$DIR/phoenix.log"
    return 1
}

check() {
    timeout 600 "$MCP_VENV/bin/python" .ci/tracing_check.py --phoenix "$PHOENIX_URL" \
        --agent "$TARGET_DIR/debug/examples/agent" --server "$TARGET_DIR/debug/examples/mcp_server" \
        --out "$DIR/run" | tee "$DIR/check.out" || return
    DETAIL=$(grep -c -E '^(agent|mcp) ' "$DIR/check.out") || return
    DETAIL="$DETAIL trees checked: the agent's Code Mode run, 4 MCP calls across both eras"
}

step "build examples/agent and examples/mcp_server" build build
step "install arize-phoenix==$PHOENIX_VERSION and mcp==$MCP_PY_VERSION" install_python python-deps
step "start Phoenix" start_phoenix phoenix-start
step "spans in Phoenix: names, parents, required attributes" check check
echo "tracing-check: $PASSED passed, 0 failed"
