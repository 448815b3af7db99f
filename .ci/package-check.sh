#!/usr/bin/env bash
# The publishable crates stand alone (issue 40): each package holds both licences and its
# README, no third-party requirement is exact (`=`) or bare `0`, and `cargo publish --dry-run`
# packages and builds them from their packages alone (so nothing is included from outside a
# package), and the README's auth example builds as a crate whose only dependencies are
# dsh-tools and tokio. Called by .ci/run; runnable on its own:
#
#     bash .ci/package-check.sh
#
# Prints one verdict line; exits 1 with the reasons when a check fails.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

mkdir -p target
CRATES=(dsh-tools dsh-tools-derive)
# Our own crates, pinned to each other exactly as serde pins serde_derive.
OURS='^(dsh-tools|dsh-tools-derive)$'
problems=()
start=$EPOCHREALTIME

for crate in "${CRATES[@]}"; do
    list=$(cargo package --list --allow-dirty -p "$crate" 2>/dev/null) ||
        { problems+=("$crate: cargo package --list failed"); continue; }
    for file in LICENSE-MIT LICENSE-APACHE README.md Cargo.toml; do
        grep -qx "$file" <<<"$list" || problems+=("$crate: the package holds no $file")
    done
    # No file over 1 MiB ships.
    while read -r file; do
        [[ -f $crate/$file ]] || continue
        size=$(stat -c %s "$crate/$file")
        ((size <= 1048576)) || problems+=("$crate: $file is $size bytes")
    done <<<"$list"
done

# Requirements: a dependency line whose version is `=…` or exactly "0" (in any dependency
# table of any manifest), unless it names one of ours.
while IFS= read -r hit; do
    name=$(sed -E 's/^[^:]+:[0-9]+:[[:space:]]*([A-Za-z0-9_-]+).*/\1/' <<<"$hit")
    [[ $name =~ $OURS ]] && continue
    problems+=("an exact or bare-0 requirement: $hit")
done < <(grep -nHE '^[A-Za-z0-9_-]+[[:space:]]*=[[:space:]]*(\{[^}]*version[[:space:]]*=[[:space:]]*)?"(=[^"]*|0)"' \
    Cargo.toml */Cargo.toml || true)

if ((${#problems[@]} == 0)); then
    if ! cargo publish --workspace --dry-run --allow-dirty >target/package-check.log 2>&1; then
        tail -n 40 target/package-check.log
        problems+=("cargo publish --workspace --dry-run failed (target/package-check.log)")
    fi
fi
# A newcomer's crate: the README block after `<!-- newcomer-crate -->`, built with only
# dsh-tools (mcp-auth) and tokio as dependencies (no serde, schemars or jsonwebtoken of its
# own), against this checkout, seeded with its lockfile (cargo keeps the locked versions of
# what the new crate still uses; --locked cannot hold, the root package differs).
if ((${#problems[@]} == 0)); then
    crate=target/newcomer-crate
    rm -rf "$crate" && mkdir -p "$crate/src"
    awk '/<!-- newcomer-crate -->/ { armed = 1; next }
         armed && /^```rust/ { inside = 1; next }
         inside && /^```/ { exit }
         inside { print }' README.md >"$crate/src/main.rs"
    cat >"$crate/Cargo.toml" <<TOML
[package]
name = "newcomer"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
dsh-tools = { path = '$PWD/dsh-tools', features = ["mcp-auth"] }
tokio = { version = "1", features = ["rt-multi-thread", "macros"] }

[workspace]
TOML
    cp Cargo.lock "$crate/Cargo.lock"
    if ! [[ -s $crate/src/main.rs ]]; then
        problems+=("README.md has no block after <!-- newcomer-crate -->")
    elif ! CARGO_TARGET_DIR=$PWD/target/newcomer cargo build --manifest-path "$crate/Cargo.toml" \
        >target/newcomer-crate.log 2>&1; then
        tail -n 30 target/newcomer-crate.log
        problems+=("the README's newcomer crate does not build with dsh-tools and tokio alone (target/newcomer-crate.log)")
    fi
fi
secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')
if ((${#problems[@]} > 0)); then
    printf '  %s\n' "${problems[@]}"
    echo "package-check: FAILED (${#problems[@]} problems, ${secs}s)"
    exit 1
fi
echo "package-check: ${CRATES[*]} package with both licences and a README, caret requirements, publish --dry-run builds them alone, the README's newcomer crate builds on dsh-tools and tokio alone (${secs}s)"
