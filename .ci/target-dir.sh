# Sourced by the .ci scripts: sets TARGET_DIR to cargo's own target directory, absolute, as
# `cargo metadata` reports it. That honours CARGO_TARGET_DIR (unset, relative or absolute) and a
# `build.target-dir` in any cargo config, where rebuilding the path by hand does not.
#
#     source .ci/target-dir.sh   # then "$TARGET_DIR/debug/examples/mcp_server"
TARGET_DIR=$(cargo metadata --format-version 1 --no-deps)
# The field is a JSON string; a target path holding a quote or backslash is refused, not guessed.
TARGET_DIR=$(printf '%s' "$TARGET_DIR" | sed -n 's/.*"target_directory":"\([^"\\]*\)".*/\1/p')
if [[ -z $TARGET_DIR || $TARGET_DIR != /* ]]; then
    echo "target-dir: cargo metadata gave no usable absolute target_directory" >&2
    exit 1
fi
export TARGET_DIR
