#!/usr/bin/env bash
# Code Mode against five third-party MCP servers' real schemas (issue 39): the reference
# filesystem, memory and everything servers from npm, mcp-server-git and mcp-server-time from
# PyPI, all pinned. Called by .ci/run; runnable on its own:
#
#     bash .ci/code-sdk-servers.sh
#
# Needs node (>= 20), npm, python3 and network access to npm and PyPI; installs only under
# target/code-sdk. It prints `dsh-tools code sdk --server …` for the five servers at once
# (namespaced fs_, mem_, every_, git_, time_), counts the tools and the `unknown`s, then for each
# program in .ci/code-sdk/programs: type-checks it with `tsc --strict` against that SDK, and runs
# it with `dsh-tools code run` against the same servers, comparing the output with its
# `.expect` file. The last line is the verdict; it exits 1 when anything failed.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

NPM_PKGS=(
    @modelcontextprotocol/server-filesystem@2026.8.31
    @modelcontextprotocol/server-memory@2026.8.31
    @modelcontextprotocol/server-everything@2026.8.31
    typescript@5.9.3
)
PY_PKGS=(mcp-server-git==2026.10.19 mcp-server-time==2026.10.19)
PREFIX=target/code-sdk
LOG=target/code-sdk.log
: >"$LOG"

fail() {
    echo "code-sdk-servers: FAILED: $1"
    exit 1
}

command -v node >/dev/null || fail "node is not installed"
command -v python3 >/dev/null || fail "python3 is not installed"
source .ci/target-dir.sh
cargo build -q -p dsh-tools --all-features --bin dsh-tools || fail "building the CLI failed"
CLI=$TARGET_DIR/debug/dsh-tools
mkdir -p "$PREFIX"
# npm's cache and pip's too stay under target/ (nothing is written to the home directory).
if ! timeout 600 npm install --prefix "$PREFIX" --cache "$PREFIX/npm-cache" --no-audit --no-fund \
    --save-exact "${NPM_PKGS[@]}" >>"$LOG" 2>&1; then
    tail -20 "$LOG"
    fail "npm install failed (log: $LOG)"
fi
if [[ ! -x $PREFIX/venv/bin/python ]]; then
    python3 -m venv "$PREFIX/venv" >>"$LOG" 2>&1 || fail "python3 -m venv failed"
fi
timeout 600 "$PREFIX/venv/bin/python" -m pip install -q --no-cache-dir "${PY_PKGS[@]}" \
    >>"$LOG" 2>&1 ||
    fail "pip install ${PY_PKGS[*]} failed (log: $LOG)"
BIN=$(cd "$PREFIX" && pwd)

# The servers' world: a directory with two text files, a repository of 14 commits, a memory file.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/root"
printf 'one\ntwo\nthree\n' >"$work/root/a.txt"
printf 'solo\n' >"$work/root/b.txt"
printf '# not text\n' >"$work/root/c.md"
git init -q "$work/repo"
for i in $(seq 1 14); do
    git -C "$work/repo" -c user.name=ci -c user.email=ci@example.invalid \
        commit -q --allow-empty -m "commit $i"
done
export MEMORY_FILE_PATH=$work/memory.jsonl
servers=(
    --server "fs=$BIN/node_modules/.bin/mcp-server-filesystem $work/root"
    --server "mem=$BIN/node_modules/.bin/mcp-server-memory"
    --server "every=$BIN/node_modules/.bin/mcp-server-everything"
    --server "git=$BIN/venv/bin/mcp-server-git --repository $work/repo"
    --server "time=$BIN/venv/bin/mcp-server-time"
)

if ! timeout 300 "$CLI" code sdk "${servers[@]}" >"$work/sdk.md" 2>"$work/sdk.err"; then
    cat "$work/sdk.err"
    fail "dsh-tools code sdk --server failed"
fi
tools=$(sed -n '/^interface ToolArgsMap {$/,/^}$/p' "$work/sdk.md" | grep -cE '^  ("[^"]+"|[A-Za-z_$][A-Za-z0-9_$]*): ')
unknowns=$(grep -cw unknown "$work/sdk.md" || true)
left_out=$(grep -c . "$work/sdk.err" || true)
echo "code-sdk-servers: $tools tools from 5 servers; 'unknown' in the SDK: $unknowns; parts left out: $left_out"
cat "$work/sdk.err"
# The declarations a program is checked against: the SDK's TypeScript block.
sed -n '/^```ts$/,/^```$/p' "$work/sdk.md" | sed '1d;$d' >"$work/sdk.ts"
printf 'declare const console: { log(...data: unknown[]): void };\n' >>"$work/sdk.ts"

passed=0
failed=0
for program in .ci/code-sdk/programs/*.ts; do
    name=$(basename "$program" .ts)
    body=$(sed "s|REPO|\"$work/repo\"|g" "$program")
    {
        cat "$work/sdk.ts"
        printf 'async function program() {\n%s\n}\nexport { program };\n' "$body"
    } >"$work/$name.check.ts"
    errors=0
    if ! "$BIN/node_modules/.bin/tsc" --strict --noEmit --target es2022 --lib es2022 \
        "$work/$name.check.ts" >"$work/$name.tsc" 2>&1; then
        errors=$(grep -c 'error TS' "$work/$name.tsc" || true)
        (( errors > 0 )) || errors=1
    fi
    out=$(printf '%s' "$body" | timeout 120 "$CLI" code run "${servers[@]}" - 2>>"$LOG") && rc=0 || rc=$?
    expected=$(cat ".ci/code-sdk/programs/$name.expect")
    shown=$(printf '%s' "$out" | tr -s ' \n' ' ')
    if (( errors == 0 && rc == 0 )) && [[ $out == "$expected" ]]; then
        passed=$((passed + 1))
        echo "code-sdk-servers: $name: tsc --strict 0 errors; run: $shown"
    else
        failed=$((failed + 1))
        echo "code-sdk-servers: $name: tsc --strict $errors errors; run exit $rc: $shown"
        printf 'expected:\n%s\n' "$expected" | sed 's/^/    /'
        sed 's/^/    /' "$work/$name.tsc" | head -20
    fi
done
# Recursive types (none of the five servers has one): a tool list with two different `Tree`s.
"$CLI" code sdk .ci/code-sdk/recursive-tools.json 2>>"$LOG" | sed -n '/^```ts$/,/^```$/p' |
    sed '1d;$d' >"$work/recursive.check.ts"
printf 'async function program() {\n%s\n}\nexport { program };\n' \
    "$(cat .ci/code-sdk/recursive.ts)" >>"$work/recursive.check.ts"
if "$BIN/node_modules/.bin/tsc" --strict --noEmit --target es2022 --lib es2022 \
    "$work/recursive.check.ts" >"$work/recursive.tsc" 2>&1 && grep -q '^type Tree_2 = ' "$work/recursive.check.ts"; then
    passed=$((passed + 1))
    echo "code-sdk-servers: recursive types: declared by name, tsc --strict 0 errors"
else
    failed=$((failed + 1))
    echo "code-sdk-servers: recursive types: FAILED"
    sed 's/^/    /' "$work/recursive.tsc" | head -20
fi
if (( failed == 0 && unknowns == 0 )); then
    echo "code-sdk-servers: $passed/$((passed + failed)) checks passed (programs type-check and run); 0 unknown"
else
    echo "code-sdk-servers: FAILED: $passed/$((passed + failed)) programs passed; $unknowns unknown"
    exit 1
fi
