# Steps of scripts/test, each timed, and a table of them at the end (sourced, not run).
#
#   step NAME COMMAND...          runs COMMAND in the foreground, its output as it comes
#   step_logged NAME COMMAND...   the same, its output also kept: when it fails, the table ends with its
#                                 failed tests and errors (CI keeps only the end of the output)
#   step_start NAME COMMAND...    starts COMMAND in the background, its output kept in a log
#   step_wait NAME...             waits for background steps, then prints each one's log whole
#   step_table                    the table: each step's result and seconds, and the total, after a failed
#                                 logged step's failures and a line on the machine (machine-summary)
#
# A failed step is recorded and the next ones still run (a red run shows everything that failed);
# step_fail_fast stops at a failed step (nothing after a failed build can pass).

step_logs=${STEP_LOGS:-.build/test-steps}
mkdir -p "$step_logs"
rm -f "$step_logs"/*.log "$step_logs"/*.time "$step_logs"/*.out
step_names=() step_results=() step_seconds=() step_failure_logs=()
step_run_start=$SECONDS

step_record() {  # NAME RESULT SECONDS
    step_names+=("$1") step_results+=("$2") step_seconds+=("$3")
}

step() {
    local name=$1; shift
    local start=$SECONDS
    echo "== $name ($(date +%H:%M:%S))"
    if "$@"; then step_record "$name" ok $((SECONDS - start))
    else step_record "$name" FAILED $((SECONDS - start)); fi
}

# `step` through tee, its output kept for step_failures. Only for commands that leave nothing running
# behind them (tee waits for every writer of the pipe).
step_logged() {
    local log="$step_logs/$1.out"
    step "$1" step_tee "$log" "${@:2}"
    [ "${step_results[-1]}" = ok ] || step_failure_logs+=("$log")
}

step_tee() {  # LOG COMMAND...: COMMAND's status (pipefail), its output on the terminal and in LOG
    local log=$1; shift
    "$@" 2>&1 | tee "$log"
}

# A failed logged step's lines that say what failed: Swift Testing's ✘ lines, XCTest's failures,
# compiler and runtime errors (at most 60 lines a step).
step_failures() {
    local log
    for log in "${step_failure_logs[@]}"; do
        echo
        echo "== what failed in $(basename "$log" .out):"
        grep -aE '✘|error:|Fatal error|[Cc]rash|failed \(|Test Case .* failed' "$log" | grep -avE '^\s*$|^(◇|✔|↳) ' | head -60 || true
    done
}

step_fail_fast() {
    local last=$((${#step_results[@]} - 1))
    if [ "${step_results[$last]}" != ok ]; then
        echo "== ${step_names[$last]} failed: the steps after it cannot run" >&2
        exit 1
    fi
}

step_start() {
    local name=$1; shift
    echo "== $name: started in the background ($(date +%H:%M:%S))"
    (
        start=$SECONDS
        if "$@" > "$step_logs/$name.log" 2>&1; then result=ok; else result=FAILED; fi
        echo "$result $((SECONDS - start))" > "$step_logs/$name.time"
    ) &
}

step_wait() {
    local name result seconds
    for name in "$@"; do
        while [ ! -f "$step_logs/$name.time" ]; do wait -n 2>/dev/null || sleep 1; done
        read -r result seconds < "$step_logs/$name.time"
        echo "== $name: $result in ${seconds}s"
        cat "$step_logs/$name.log"
        step_record "$name" "$result" "$seconds"
    done
}

step_table() {
    local index failed=0
    step_failures
    echo
    "$(dirname "${BASH_SOURCE[0]}")/machine-summary" || true
    echo
    echo "| step | result | seconds |"
    echo "|---|---|---|"
    for index in "${!step_names[@]}"; do
        echo "| ${step_names[$index]} | ${step_results[$index]} | ${step_seconds[$index]} |"
        [ "${step_results[$index]}" = ok ] || failed=$((failed + 1))
    done
    echo "| total (wall clock; background steps overlap) | $([ $failed = 0 ] && echo ok || echo "$failed FAILED") | $((SECONDS - step_run_start)) |"
    return $failed
}
