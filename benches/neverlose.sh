#!/usr/bin/env bash
# The long never-lose run: the randomized harness of tests/it/neverlose.rs in release mode,
# RECODE_TRIALS trials (default 2000) from seed RECODE_SEED (default 1000) on
# RECODE_THREADS threads (default 2), in batches of RECODE_BATCH seeds (default 100), each
# batch one run of the test binary. RECODE_BUDGET_SECONDS (default 0: none) stops starting
# batches once that much wall time has passed: the run then reports the trials it did. A
# trial is one generated repository with 3 to 6 workers in random debris states (round 3
# included: submodules, three branches of one task, unborn HEADs, oversize artifacts, a
# shallow repository) and random faults, recovered twice, invariants checked after each.
# Prints "trials N, violations V, seeds A..B, seconds S, cpu-seconds C" (CPU: user + system
# of the test binary and every process it ran). Each violation's seed is in the log
# (target/neverlose.log). Exits non-zero on a violation. RECODE_NO_TEMPLATE=1 builds each
# trial's base repository with git instead of copying the template: the baseline of the
# trial cost. RECODE_RACES (default 100) races of a writer against a delete run after.
set -eu -o pipefail
cd "$(dirname "$0")/.."
log=target/neverlose.log
mkdir -p target
: >"$log"
trials="${RECODE_TRIALS:-2000}"
first="${RECODE_SEED:-1000}"
batch="${RECODE_BATCH:-100}"
budget="${RECODE_BUDGET_SECONDS:-0}"
export RECODE_THREADS="${RECODE_THREADS:-2}"
# The test binary itself, run directly: a source edit during the run rebuilds nothing and
# every batch tests the same build.
# RECODE_BIN names a test binary already built (`cargo test --release --test it --no-run`).
bin="${RECODE_BIN:-$(cargo test --release --test it --no-run 2>&1 | tee -a "$log" | sed -nE 's/.*Executable .*\((.*)\)/\1/p' | tail -1)}"
[ -x "$bin" ] || { tail -40 "$log" >&2; exit 1; }
status=0
start=$(date +%s)
done_trials=0
violations=0
cpu=0
seed=$first
while [ "$done_trials" -lt "$trials" ]; do
    if [ "$budget" -gt 0 ] && [ $(( $(date +%s) - start )) -ge "$budget" ]; then
        break
    fi
    n=$(( trials - done_trials < batch ? trials - done_trials : batch ))
    t0=$(mktemp)
    RECODE_TRIALS=$n RECODE_SEED=$seed /usr/bin/time -f '%U %S' -o "$t0" \
        "$bin" neverlose::randomized --nocapture >>"$log" 2>&1 || status=$?
    cpu=$(awk -v c="$cpu" '{ printf "%.1f", c + $1 + $2 }' "$t0")
    rm -f "$t0"
    line=$(grep "^trials $n, violations .*seeds $seed\.\." "$log" | tail -1)
    [ -n "$line" ] || { tail -40 "$log" >&2; exit 1; }
    v=$(echo "$line" | sed -E 's/.*violations ([0-9]+).*/\1/')
    violations=$(( violations + v ))
    done_trials=$(( done_trials + n ))
    seed=$(( seed + n ))
    echo "batch: $line" >&2
done
elapsed=$(( $(date +%s) - start ))
echo "trials $done_trials, violations $violations, seeds $first..$(( seed - 1 )), seconds $elapsed, cpu-seconds $cpu"
grep 'never-lose violation' "$log" >&2 || true
# The 100 races of a writer against a delete (tests/it/neverlose_states.rs).
if [ "${RECODE_RACES:-100}" -gt 0 ]; then
    RECODE_RACES="${RECODE_RACES:-100}" \
        "$bin" neverlose_states::a_hundred_writes --nocapture >>"$log" 2>&1 || status=$?
fi
exit "$status"
