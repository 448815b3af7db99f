# The step runner .ci/redis-fleet.sh and .ci/tracing-check.sh share (sourced, not run). The
# caller sets CHECK (its name in the verdict line), DIR (where step logs go), TOTAL, and starts
# STEP=0 PASSED=0. `step NAME FUNCTION LOG` runs FUNCTION with its output in $DIR/LOG.log and
# prints one verdict line; FUNCTION may set DETAIL for it. On a failure it prints the log's
# last lines and the script's own last line, then exits. Step functions run inside `if`, where
# `set -e` does not apply: they check each command themselves (`|| return`).
step() {
    local name=$1 fn=$2 log=$DIR/$3.log start rc=0 secs why
    STEP=$((STEP + 1))
    DETAIL=
    start=$EPOCHREALTIME
    if "$fn" >"$log" 2>&1; then rc=0; else rc=$?; fi
    secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
    if [[ $rc -eq 0 ]]; then
        PASSED=$((PASSED + 1))
        echo "[$STEP/$TOTAL] $name: ok (${secs}s)${DETAIL:+ - $DETAIL}"
    else
        why="exit $rc"
        [[ $rc -eq 124 ]] && why="timed out"
        echo "[$STEP/$TOTAL] $name: FAILED ($why after ${secs}s; log $log)"
        echo "---- last lines of $log ----" >&2
        tail -n 40 "$log" >&2
        echo "----" >&2
        echo "$CHECK: $PASSED passed, 1 failed (stopped at step $STEP of $TOTAL: $name)"
        exit 1
    fi
}
