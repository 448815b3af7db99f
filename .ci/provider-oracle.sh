#!/usr/bin/env bash
# The providers' own Python SDKs as oracles for our exported tool schemas (issue 8, "How it is
# checked"). Called by .ci/run after the MCP interop; runnable on its own:
#
#     bash .ci/provider-oracle.sh
#
# Needs python3 (>= 3.10) and network access to PyPI. Everything it installs goes under target/
# (gitignored): the pinned `openai`, `anthropic` and `google-genai` SDKs in target/provider-venv.
# The steps: install the SDKs; run the Rust test that exports every example tool, bridge-corpus
# type and bench schema to every dialect and writes the successes to
# <target>/provider-exports.json; check that file with .ci/provider_oracle.py; feed seeded
# random streams to the SDKs' own stream accumulators and to `dsh-tools provider stream`
# (.ci/provider_stream_oracle.py) and compare. Logs go to
# target/provider-oracle/. Each step prints one verdict line; the last line is
# `provider-oracle: N passed, 0 failed` only when every step passed (the script stops at the
# first failure, exits 1 and says which step failed).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

# Pinned exactly; .ci/provider_oracle.py checks the same versions (its PINNED).
OPENAI_VERSION=3.57.0
ANTHROPIC_VERSION=2.14.0
GENAI_VERSION=3.6.1

OUT=target/provider-oracle
VENV=target/provider-venv
PY=$VENV/bin/python
source .ci/target-dir.sh
EXPORTS=$TARGET_DIR/provider-exports.json
DEFERRAL=$TARGET_DIR/provider-deferral.json

TOTAL=4
STEP=0
PASSED=0
DETAIL=

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
        tail -n 60 "$log" >&2
        echo "----" >&2
        echo "provider-oracle: $PASSED passed, 1 failed (stopped at step $STEP of $TOTAL: $name)"
        exit 1
    fi
}

install_sdks() {
    if ! [[ -x $PY ]] || ! "$PY" -c 'import sys' 2>/dev/null; then
        rm -rf "$VENV"
        timeout 300 python3 -m venv "$VENV" || return
    fi
    "$PY" -c 'import sys; assert sys.version_info >= (3, 10), sys.version' || return
    timeout 600 "$VENV/bin/pip" install -q --no-cache-dir "openai==$OPENAI_VERSION" \
        "anthropic==$ANTHROPIC_VERSION" "google-genai==$GENAI_VERSION" || return
    local got
    got=$("$PY" -c 'import importlib.metadata as m; print(*(m.version(p) for p in ("openai", "anthropic", "google-genai")))') || return
    [[ $got == "$OPENAI_VERSION $ANTHROPIC_VERSION $GENAI_VERSION" ]] ||
        { echo "installed openai anthropic google-genai: $got"; return 1; }
    "$PY" -m pip freeze >"$OUT/pip-freeze.txt" || return
    DETAIL="openai $OPENAI_VERSION, anthropic $ANTHROPIC_VERSION, google-genai $GENAI_VERSION on $("$PY" -c 'import platform; print("Python", platform.python_version())')"
}

export_schemas() {
    rm -f "$EXPORTS" "$DEFERRAL"
    timeout 1800 cargo test --workspace --all-features --test provider -- exports:: --nocapture || return
    [[ -s $EXPORTS ]] || { echo "the test wrote no $EXPORTS"; return 1; }
    [[ -s $DEFERRAL ]] || { echo "the test wrote no $DEFERRAL"; return 1; }
    DETAIL="$(grep -c '"dialect":' "$EXPORTS") exports in $EXPORTS; $(grep -c '^skipped ' "$OUT/export.log") sources left out (listed in the log)"
}

run_oracle() {
    timeout 300 "$PY" .ci/provider_oracle.py "$EXPORTS" "$DEFERRAL" || return
    DETAIL=$(tail -n 1 "$OUT/oracle.log" | sed 's/^provider-oracle checks: //')
}

stream_oracle() {
    # The CLI as the README's test command built it (every feature: nothing rebuilds).
    timeout 1800 cargo build -p dsh-tools --all-features --bin dsh-tools >"$OUT/stream-build.log" 2>&1 || return
    timeout 600 "$PY" .ci/provider_stream_oracle.py "$TARGET_DIR/debug/dsh-tools" || return
    DETAIL=$(tail -n 1 "$OUT/stream.log" | sed 's/^provider-stream-oracle: //')
}

step "install openai==$OPENAI_VERSION anthropic==$ANTHROPIC_VERSION google-genai==$GENAI_VERSION in $VENV" python-deps install_sdks
step "cargo test --workspace --all-features --test provider -- exports::" export export_schemas
step "SDK oracles (.ci/provider_oracle.py)" oracle run_oracle
# The per-check counts and known mismatches, indented under the verdict.
sed -e '$d' -e 's/^/    /' "$OUT/oracle.log"
step "SDK stream accumulators vs dsh-tools provider stream (.ci/provider_stream_oracle.py)" stream stream_oracle
sed -e '$d' -e 's/^/    /' "$OUT/stream.log"

echo "provider-oracle: $PASSED passed, 0 failed"
