#!/usr/bin/env bash
# Generates the 50-tool comparison in DIR (default: target/compile-time) and times rebuilding
# each tools crate alone, its dependencies already built:
#   appended:    one item appended to the crate's lib.rs (a constant of a new value, and of a
#                new length, each run), then `cargo build -p CRATE` (debug, incremental);
#   body edit:   one line inside tool 25's body changed (a string literal of a new length each
#                run; in dsh50m that is src/t25.rs), then `cargo build -p CRATE`;
#   clean:       `cargo clean -p CRATE`, then `cargo build -p CRATE`.
# Each figure is the median of RUNS (default 3); CRATES (default all four) picks the crates.
# Prints a markdown table.
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
# Times a build; a build that fails ends the script (a failed build would time as a fast one).
seconds() {
    local start end
    start=$(date +%s.%N)
    "$@" >/dev/null 2>&1 || { echo "measure.sh: failed: $*" >&2; exit 1; }
    end=$(date +%s.%N)
    awk -v a="$start" -v b="$end" 'BEGIN {printf "%.3f\n", b - a}'
}
# The body edit: a literal whose length differs from the previous run's.
source "$here/edit.sh"

echo "| crate | appended item | body edit | clean (own crate only) |"
echo "|---|---|---|---|"
# The runs are interleaved (each run builds every crate in turn), so a machine that speeds up or
# slows down during the script shifts every crate's figures alike.
crates=(${CRATES:-dsh50 dsh50m dsh50s rmcp50})
declare -A appended edited clean
for run in $(seq "$runs"); do
    for crate in "${crates[@]}"; do
        body=$(body_file "$crate")
        sed -i '/^pub const EDIT/d' "$crate/src/lib.rs"
        echo "pub const EDIT: &str = \"$(printf '%*s' "$run" '' | tr ' ' 7)\";" >>"$crate/src/lib.rs"
        appended[$crate]+=" $(seconds cargo build -q -p "$crate")"
        edit_body "$body" "$(printf '%*s' "$((run * 3))" '' | tr ' ' x)"
        edited[$crate]+=" $(seconds cargo build -q -p "$crate")"
        cargo clean -q -p "$crate"
        clean[$crate]+=" $(seconds cargo build -q -p "$crate")"
    done
done
for crate in "${crates[@]}"; do
    printf '| %s | %.2f s | %.2f s | %.2f s |\n' "$crate" \
        "$(printf '%s\n' ${appended[$crate]} | median)" "$(printf '%s\n' ${edited[$crate]} | median)" \
        "$(printf '%s\n' ${clean[$crate]} | median)"
done
