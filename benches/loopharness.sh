#!/usr/bin/env bash
# The long loop run: the randomized loop harness of tests/it/loopharness.rs (the README's
# tick over 4-10 workers in random field states, random SIGKILLs, invariants after each
# tick), RECODE_LOOP_TRIALS trials (default 2000) from seed RECODE_LOOP_SEED (default 1000)
# on RECODE_THREADS threads (default 2). Each trial prints one line as it ends, so a run cut
# short still reports what ran. Prints "trials N, violations V, ticks-to-settle median M
# max X, kills K, seconds S" from the log (target/loopharness.log); exits non-zero on a
# violation. Release build (the trials run the release binary). Run it with `nice -n 10`: it is long.
set -eu -o pipefail
cd "$(dirname "$0")/.."
log=${RECODE_LOOP_LOG:-target/loopharness.log}
mkdir -p "$(dirname "$log")"
start=$(date +%s)
status=0
RECODE_LOOP_TRIALS="${RECODE_LOOP_TRIALS:-2000}" \
RECODE_LOOP_SEED="${RECODE_LOOP_SEED:-1000}" \
RECODE_THREADS="${RECODE_THREADS:-2}" \
    cargo test --release --test it loopharness:: -- --nocapture >"$log" 2>&1 || status=$?
benches/loopharness-summary.sh "$log" "$start"
exit "$status"
