#!/usr/bin/env bash
# benches/scale.sh [N...] — how git-recode grows with the fleet: N linked worktrees (default
# "10 100 1000") of FILES tracked files (default 500), with PER_TASK ledger events a task
# (default 100: 100,000 events over 1,000 tasks at the largest size). Times (median of RUNS,
# default 3, after a warm-up) and peak RSS of `status --json`, `log --json`, the first line of
# `log --json | head -1`, `log <branch> --json`, and `recover --all --dry-run --json`, with the
# time per worktree (flat when linear), and plain `git status` two at a time in the same run.
#
#   cargo build --release && bash benches/scale.sh 10 100
set -eu -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=benches/lib.sh
. "$here/lib.sh"
sizes=${*:-10 100 1000}
files=${FILES:-500}
per_task=${PER_TASK:-100}
root=${BENCH_DIR:-${TMPDIR:-/tmp}/recode-scale}

load_note
printf '%-6s %8s %9s %10s %9s %9s %8s %9s %9s %10s %9s %9s %8s\n' wts events status_s status_MiB ms_per_wt gitpar_s vs_gitpar log_s log_MiB log_head_s log_one_s recover_s rec_MiB
for n in $sizes; do
  dir="$root/$n" repo="$root/$n/repo"
  if [ ! -f "$dir/ready" ]; then
    bash "$here/make-repo.sh" "$dir" "$n" "$files" >/dev/null 2>&1
    python3 "$here/ledger.py" "$repo" $((n * per_task)) >"$dir/ready"
  fi
  bash "$here/shell-census.sh" "$repo" >/dev/null 2>&1 # refresh every index once
  st=$(time_cmd "$bin" -C "$repo" status --json --offline)
  st_rss=$(rss_mib "$bin" -C "$repo" status --json --offline)
  par=$(time_cmd bash "$here/git-status-par.sh" "$repo")
  lg=$(time_cmd "$bin" -C "$repo" log --json)
  lg_rss=$(rss_mib "$bin" -C "$repo" log --json)
  head1=$(time_cmd bash -c '"$0" -C "$1" log --json | head -1' "$bin" "$repo")
  one=$(time_cmd "$bin" -C "$repo" log "feat/issue-$n-work" --json)
  rc=$(time_cmd "$bin" -C "$repo" recover --all --dry-run --json)
  rc_rss=$(rss_mib "$bin" -C "$repo" recover --all --dry-run --json)
  printf '%-6s %8s %9.3f %10.1f %9.2f %9.3f %8sx %9.3f %9.1f %10.3f %9.3f %9.3f %8.1f\n' "$n" "$(cut -d' ' -f1 "$dir/ready")" \
    "$st" "$st_rss" "$(echo "1000 * $st / $n" | bc -l)" "$par" "$(ratio "$par" "$st")" "$lg" "$lg_rss" "$head1" "$one" "$rc" "$rc_rss"
done
