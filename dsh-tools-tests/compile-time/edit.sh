# The one-line body edit measure.sh and edit-instructions.sh time, sourced by both.

# The file holding tool 25's body in CRATE of the generated workspace.
body_file() {
    if [[ $1 == dsh50m ]]; then echo "$1/src/t25.rs"; else echo "$1/src/lib.rs"; fi
}

# Sets the string tool 25 returns when its flag is off (`String::new()` as generated) to TEXT,
# in FILE; a file the edit does not reach ends the script.
edit_body() {
    sed -i -E "s/(Out25 \{ text: if (args\.)?flag \{ (args\.)?text \} else \{ )String::[a-z]+\([^)]*\)/\1String::from(\"$2\")/" "$1"
    grep -q "String::from(\"$2\")" "$1" || { echo "$(basename "$0"): the body edit did not apply to $1" >&2; exit 1; }
}
