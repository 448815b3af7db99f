#!/usr/bin/env bash
# Generates the 50-tool comparison in DIR (default: target/compile-time) and times rebuilding
# each tools crate alone, its dependencies already built:
#   incremental: one item of the crate's lib.rs changed (a constant appended, a new value each
#                run), then `cargo build -p CRATE` (debug, incremental);
#   clean:       `cargo clean -p CRATE`, then `cargo build -p CRATE`.
# Each figure is the median of RUNS (default 3). Prints a markdown table.
#
#     bash dsh-tools-tests/compile-time/measure.sh [DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$here/../../target/compile-time}
runs=${RUNS:-3}
python3 "$here/generate.py" "$dir" >/dev/null
cd "$dir"
export CARGO_TERM_COLOR=never
cargo build -q --workspace 2>/dev/null || cargo build --workspace

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
seconds() { local start end; start=$(date +%s.%N); "$@" >/dev/null 2>&1; end=$(date +%s.%N); awk -v a="$start" -v b="$end" 'BEGIN {printf "%.3f\n", b - a}'; }

echo "| crate | incremental (one item changed) | clean (own crate only) |"
echo "|---|---|---|"
for crate in dsh50 rmcp50; do
    inc=(); clean=()
    for run in $(seq "$runs"); do
        sed -i '/^pub const EDIT/d' "$crate/src/lib.rs"
        echo "pub const EDIT: u32 = $run$RANDOM;" >>"$crate/src/lib.rs"
        inc+=("$(seconds cargo build -q -p "$crate")")
        cargo clean -q -p "$crate"
        clean+=("$(seconds cargo build -q -p "$crate")")
    done
    printf '| %s | %.2f s | %.2f s |\n' "$crate" \
        "$(printf '%s\n' "${inc[@]}" | median)" "$(printf '%s\n' "${clean[@]}" | median)"
done
