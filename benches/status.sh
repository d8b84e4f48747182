#!/usr/bin/env bash
# benches/status.sh — time `git recode status --json` against the baselines it replaces,
# on repositories with SIZES linked worktrees (default "10 100 300") over FILES tracked
# files (default 5000), workers in mixed states, and EVENTS ledger events (default 10000).
#
#   cargo build --release && bash benches/status.sh        # RUNS=5 SIZES="10 100 300"
#
# Baselines (the shell census a loop runs today, and plain git status) are the scripts
# beside this one, copied from the project's shared bench. Each command runs once to warm
# the page cache and refresh the indexes, then RUNS times; the median wall time is
# reported, with git-recode's peak RSS, and ratios from the same run.
set -eu -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${RECODE_BIN:-$here/../target/release/git-recode}
[ -x "$bin" ] || { echo "build first: cargo build --release" >&2; exit 2; }
sizes=${SIZES:-10 100 300}
files=${FILES:-5000}
events=${EVENTS:-10000}
runs=${RUNS:-5}
root=${BENCH_DIR:-${TMPDIR:-/tmp}/recode-bench}
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.invalid
unset RECODE_NOW GH_TOKEN GITHUB_TOKEN

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# time_cmd CMD...: median wall seconds over $runs (after one warm-up run).
time_cmd() {
  "$@" >/dev/null 2>&1
  for _ in $(seq 1 "$runs"); do
    s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N)
    echo "$e - $s" | bc -l
  done | median
}

printf '%-6s %10s %10s %10s %10s %9s %10s %10s\n' worktrees recode_s census_s gitsum_s gitpar_s rss_MiB vs_census vs_gitsum
for n in $sizes; do
  dir="$root/$n"
  if [ ! -f "$dir/ready" ]; then
    bash "$here/make-repo.sh" "$dir" "$n" "$files" >/dev/null 2>&1
    python3 "$here/ledger.py" "$dir/repo" "$events" >"$dir/ready"
  fi
  bash "$here/shell-census.sh" "$dir/repo" >/dev/null 2>&1 # refresh every index once, like a real loop's first tick
  r=$(time_cmd "$bin" -C "$dir/repo" status --json --offline)
  c=$(time_cmd bash "$here/shell-census.sh" "$dir/repo")
  g=$(time_cmd bash "$here/git-status-sum.sh" "$dir/repo")
  p=$(time_cmd bash "$here/git-status-par.sh" "$dir/repo")
  rss=$( { /usr/bin/time -f '%M' "$bin" -C "$dir/repo" status --json --offline >/dev/null; } 2>&1 | tail -1)
  printf '%-9s %10.3f %10.3f %10.3f %10.3f %9.1f %9.1fx %9.2fx\n' "$n" "$r" "$c" "$g" "$p" "$(echo "$rss/1024" | bc -l)" \
    "$(echo "$c/$r" | bc -l)" "$(echo "$g/$r" | bc -l)"
done
