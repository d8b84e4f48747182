#!/usr/bin/env bash
# The long run of the property tests of the untrusted-input parsers (SPEC 1.2): the outcome
# reader (tests/it/untrusted_fuzz.rs) and the ledger line reader (src/ledger/fuzz.rs), in
# release mode, RECODE_FUZZ_CASES inputs per property (default 5000) from the seed shift
# RECODE_FUZZ_SEED (default 0; the suite runs 0 with a small fixed handful). Exits non-zero
# on a broken property; the log is target/untrusted-fuzz.log.
set -eu -o pipefail
cd "$(dirname "$0")/.."
log=target/untrusted-fuzz.log
mkdir -p target
export RECODE_FUZZ_CASES="${RECODE_FUZZ_CASES:-5000}" RECODE_FUZZ_SEED="${RECODE_FUZZ_SEED:-0}"
status=0
{
    nice -n 10 cargo test --release --lib ledger::fuzz:: &&
    nice -n 10 cargo test --release --test it untrusted_fuzz::
} >"$log" 2>&1 || status=$?
grep -E '^test result|panicked' "$log" || tail -40 "$log" >&2
echo "cases ${RECODE_FUZZ_CASES}, seed shift ${RECODE_FUZZ_SEED}, exit ${status}"
exit "$status"
