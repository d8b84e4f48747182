#!/usr/bin/env bash
# SIGKILLs at random points of `recover`, the post-commit hook and `record`, each followed
# by three loop ticks ten minutes apart (tests/it/settle_kill.rs): RECODE_SETTLE_KILLS kills
# (default 300). Prints "kills N (recover R, hook H, record C), locks left L, ticks still
# failing F". Run it with `nice -n 10`.
set -eu -o pipefail
cd "$(dirname "$0")/.."
RECODE_SETTLE_KILLS="${RECODE_SETTLE_KILLS:-300}" \
    cargo test --test it settle_kill:: -- --nocapture 2>&1 | grep -E '^kills |third tick still fails|test result'
