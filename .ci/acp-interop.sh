#!/usr/bin/env bash
# Third-party ACP interop: the official TypeScript SDK, @agentclientprotocol/sdk, as the client of
# examples/acp_agent. Called by .ci/run after the README's test command; runnable on its own:
#
#     bash .ci/acp-interop.sh
#
# Needs node (>= 20), npm and network access to npm. It installs the pinned SDK and zod under
# target/acp-node (gitignored), builds the example, and runs .ci/acp-interop/client.mjs there: the
# client launches the agent over stdio, initializes, opens a session on a temporary directory,
# prompts the scripted model to read, edit and run a command, answers the permission requests,
# and checks every message against the SDK's own schemas, the diff's old and new text and the
# file on disk. The client prints one line per check; this script's last line is
# `acp-interop: N passed, 0 failed` only when all passed (it exits 1 otherwise). The agent is the
# client's child and exits when its stdin closes; the client kills it after 10 s otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

SDK_PKG=@agentclientprotocol/sdk@2.4.0
ZOD_PKG=zod@4.6.7
PREFIX=target/acp-node
source .ci/target-dir.sh
AGENT_BIN=$TARGET_DIR/debug/examples/acp_agent
LOG=target/acp-interop.log

fail() {
    echo "acp-interop: $1"
    echo "acp-interop: 0 passed, 1 failed"
    exit 1
}

command -v node >/dev/null || fail "node is not installed"
major=$(node -p 'process.versions.node.split(".")[0]')
(( major >= 20 )) || fail "node $(node --version) is too old (want >= 20)"

cargo build -q --workspace --all-features --example acp_agent || fail "building examples/acp_agent failed"
mkdir -p "$PREFIX"
if ! timeout 600 npm install --prefix "$PREFIX" --cache "$PREFIX/npm-cache" --no-audit --no-fund --save-exact \
    "$SDK_PKG" "$ZOD_PKG" >"$LOG" 2>&1; then
    tail -20 "$LOG"
    fail "npm install $SDK_PKG $ZOD_PKG failed (log: $LOG)"
fi
echo "acp-interop: node $(node --version), $SDK_PKG, $ZOD_PKG"
cp .ci/acp-interop/client.mjs "$PREFIX/client.mjs"
# The client's own last line is its verdict; its exit status is ours.
timeout 300 node "$PREFIX/client.mjs" "$AGENT_BIN" 2>>"$LOG" || {
    rc=$?
    echo "acp-interop: the client failed (exit $rc; agent log: $LOG)"
    exit 1
}
