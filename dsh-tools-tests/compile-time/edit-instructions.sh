#!/usr/bin/env bash
# Counts the instructions rustc executes to rebuild each named crate of the 50-tool comparison
# (generate.py) after a one-line edit inside tool 25's body, with valgrind's cachegrind: only the
# rustc that compiles the crate is counted (a proc macro runs inside it, so `#[tool]`'s expansion
# is counted too). A warm-up edit comes first; then two edits, each a string of a new length,
# whose counts agree to about 0.1 %. CHECK=1 counts `cargo check` instead (the front end only).
#
#     bash dsh-tools-tests/compile-time/edit-instructions.sh [CRATE ...]    # default: dsh50 rmcp50
#
# DIR (default target/compile-time, as measure.sh) holds the generated workspace. Needs valgrind
# and python3.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${DIR:-$here/../../target/compile-time}
command -v valgrind >/dev/null || { echo "edit-instructions.sh: needs valgrind" >&2; exit 1; }
python3 "$here/generate.py" "$dir" >/dev/null
dir=$(cd "$dir" && pwd)
cd "$dir"
cat >"$dir/cg-wrap.sh" <<'WRAP'
#!/usr/bin/env bash
if [[ -n "${CG_OUT:-}" && " $* " == *" --crate-name $CG_CRATE "* ]]; then
    exec valgrind -q --log-file=/dev/null --tool=cachegrind --cache-sim=no --cachegrind-out-file="$CG_OUT" "$@"
fi
exec "$@"
WRAP
chmod +x "$dir/cg-wrap.sh"
export RUSTC_WRAPPER=$dir/cg-wrap.sh CARGO_TERM_COLOR=never
cmd=build
[[ -n "${CHECK:-}" ]] && cmd=check
cargo "$cmd" -q --workspace

source "$here/edit.sh"

echo "| crate | cargo $cmd after a body edit (two edits) |"
echo "|---|---|"
crates=("$@")
[[ ${#crates[@]} -eq 0 ]] && crates=(dsh50 rmcp50)
for crate in "${crates[@]}"; do
    body=$(body_file "$crate")
    export CG_CRATE=$crate
    edit_body "$body" w
    cargo "$cmd" -q -p "$crate"
    counts=()
    for text in ab abcd; do
        edit_body "$body" "$text"
        CG_OUT=$dir/cg.$crate.$text cargo "$cmd" -q -p "$crate"
        counts+=("$(awk '/^summary:/ {printf "%.3f G", $2 / 1e9}' "$dir/cg.$crate.$text")")
    done
    echo "| $crate | ${counts[0]} · ${counts[1]} |"
done
