#!/usr/bin/env bash
# Counts the instructions rustc executes to rebuild the 50-tool crate `dsh50` (generate.py) against
# two revisions of dsh-tools, with valgrind's cachegrind. Wall time on a shared 2-core VM varies
# by more than the differences worth measuring; an instruction count repeats to within 0.05 %.
#
#     bash dsh-tools-tests/compile-time/instructions.sh BASE [REV]
#
# BASE and REV are git revisions (REV defaults to the working tree: tracked files as they are now,
# staged or not; `git add` a new file first). For each, the tree is exported under DIR (default
# target/compile-time-ir), the workspace generated with this checkout's generate.py, its
# dependencies built, and then only the rustc that compiles `dsh50` counted:
#   clean:       `cargo clean -p dsh50`, then `cargo build -p dsh50` (debug);
#   incremental: an item appended to its lib.rs, then `cargo build -p dsh50`.
# A proc macro runs inside rustc, so `#[tool]`'s own expansion is counted too. About 3 minutes a
# revision after the dependency builds. Needs valgrind and python3.
set -euo pipefail
base=${1:?usage: instructions.sh BASE [REV]}
rev=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(git -C "$here" rev-parse --show-toplevel)
dir=${DIR:-$repo/target/compile-time-ir}
command -v valgrind >/dev/null || { echo "instructions.sh: needs valgrind" >&2; exit 1; }
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

# The wrapper counts only the rustc that builds dsh50, and only when asked (CG_OUT set).
cat >"$dir/wrap.sh" <<'EOF'
#!/usr/bin/env bash
if [[ -n "${CG_OUT:-}" && " $* " == *" --crate-name dsh50 "* ]]; then
    exec valgrind -q --tool=cachegrind --cache-sim=no --cachegrind-out-file="$CG_OUT" "$@"
fi
exec "$@"
EOF
chmod +x "$dir/wrap.sh"
export RUSTC_WRAPPER=$dir/wrap.sh CARGO_TERM_COLOR=never

# Exports a revision's tree (the working tree for "") to $dir/$name/src.
export_tree() {
    local name=$1 at=$2 out=$dir/$1/src
    rm -rf "$out" && mkdir -p "$out"
    if [[ -z $at ]]; then
        # A commit object of the working tree's tracked files (nothing is stashed or changed).
        at=$(git -C "$repo" stash create)
        at=${at:-HEAD}
    fi
    git -C "$repo" archive "$at" | tar -x -C "$out"
}

count() { grep -m1 '^summary' "$1" | awk '{print $2}'; }

measure() {
    local name=$1 ws=$dir/$1/ws
    python3 "$here/generate.py" "$ws" --dsh-tools "$dir/$name/src/dsh-tools" >/dev/null
    [[ -f $dir/Cargo.lock && ! -f $ws/Cargo.lock ]] && cp "$dir/Cargo.lock" "$ws/Cargo.lock"
    (cd "$ws" && cargo build -q -p dsh50)
    [[ -f $dir/Cargo.lock ]] || cp "$ws/Cargo.lock" "$dir/Cargo.lock"
    cd "$ws"
    sed -i '/^pub const EDIT/d' dsh50/src/lib.rs
    cargo clean -q -p dsh50
    rm -f "$dir/$name.clean.out" "$dir/$name.incremental.out"
    CG_OUT=$dir/$name.clean.out cargo build -q -p dsh50
    echo "pub const EDIT: u32 = $RANDOM;" >>dsh50/src/lib.rs
    CG_OUT=$dir/$name.incremental.out cargo build -q -p dsh50
    sed -i '/^pub const EDIT/d' dsh50/src/lib.rs
    cd - >/dev/null
}

export_tree base "$base"
export_tree rev "$rev"
measure base
measure rev
label=${rev:-working tree}
printf '| dsh50 rebuild (debug) | %s | %s | ratio |\n|---|---|---|---|\n' "$base" "$label"
for kind in clean incremental; do
    b=$(count "$dir/base.$kind.out")
    r=$(count "$dir/rev.$kind.out")
    awk -v k="$kind" -v b="$b" -v r="$r" \
        'BEGIN {printf "| %s, instructions | %.3f G | %.3f G | %.3fx |\n", k, b / 1e9, r / 1e9, r / b}'
done
