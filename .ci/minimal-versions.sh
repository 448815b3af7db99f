#!/usr/bin/env bash
# The requirements are minimums that build (issue 40): every direct dependency of the published
# crates at the lowest version its requirement allows (`-Z direct-minimal-versions`; the
# transitive ones at their newest), then `cargo check` of every feature. The requirements are
# the versions Cargo.lock was tested at, so this fails when one is lowered below what builds.
# `-Z` needs a nightly cargo; the machine has only stable, whose cargo takes the flag with
# RUSTC_BOOTSTRAP=1 (set for these two commands only, in a copy under target/). Called by
# .ci/run; runnable on its own:
#
#     bash .ci/minimal-versions.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
start=$EPOCHREALTIME
copy=target/minimal-versions
rm -rf "$copy" && mkdir -p "$copy"
# The sources as they are (not a checkout: uncommitted work is checked too), without target/.
tar --exclude=./target --exclude=./.git -cf - . | tar -xf - -C "$copy" ||
    { echo "minimal-versions: FAILED (copying the sources)"; exit 1; }
# Only the published crates: the other members' higher requirements would otherwise lift a
# too-low one of theirs when the workspace resolves together.
sed -i 's/^members = .*/members = ["dsh-tools", "dsh-tools-derive"]/' "$copy/Cargo.toml"
grep -q '^members = \["dsh-tools", "dsh-tools-derive"\]' "$copy/Cargo.toml" ||
    { echo "minimal-versions: FAILED (the workspace members line was not found)"; exit 1; }
log=$PWD/target/minimal-versions.log
if ! (cd "$copy" && RUSTC_BOOTSTRAP=1 cargo update -Z direct-minimal-versions &&
    CARGO_TARGET_DIR=$PWD/../minimal-versions-target \
        cargo check -p dsh-tools -p dsh-tools-derive --all-features) >"$log" 2>&1; then
    tail -n 40 "$log"
    echo "minimal-versions: FAILED (log $log)"
    exit 1
fi
secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')
echo "minimal-versions: dsh-tools and dsh-tools-derive build with every direct dependency at its lowest allowed version (${secs}s)"
