#!/usr/bin/env bash
# The long never-lose run: the randomized harness of tests/it/neverlose.rs in release mode,
# RECODE_TRIALS trials (default 2000) from seed RECODE_SEED (default 1000) on
# RECODE_THREADS threads (default 2). A trial is one generated repository with 3 to 6
# workers in random debris states and random faults, recovered twice, invariants checked
# after each run. Prints "trials N, violations V, seeds A..B, seconds S"; each violation's
# seed is in the log (target/neverlose.log). Exits non-zero on a violation.
set -eu -o pipefail
cd "$(dirname "$0")/.."
log=target/neverlose.log
mkdir -p target
status=0
RECODE_TRIALS="${RECODE_TRIALS:-2000}" \
RECODE_SEED="${RECODE_SEED:-1000}" \
RECODE_THREADS="${RECODE_THREADS:-2}" \
    cargo test --release --test it neverlose:: -- --nocapture >"$log" 2>&1 || status=$?
# The issue's 100 races of a writer against a delete (tests/it/neverlose3.rs).
RECODE_RACES="${RECODE_RACES:-100}" \
    cargo test --release --test it neverlose3::a_hundred_writes -- --nocapture >>"$log" 2>&1 || status=$?
grep '^trials ' "$log" || { tail -40 "$log" >&2; exit 1; }
grep 'never-lose violation' "$log" >&2 || true
exit "$status"
