#!/usr/bin/env bash
# benches/fleet.sh [N...] — `git recode status` on a fleet at work: N linked worktrees (default
# "10 100 300") of FILES tracked files (default 5000), 80% of them with a live agent process
# (a `sleep`, recorded with `record spawn --pid`), 20% dead in mixed debris states (empty,
# dirty, ahead, untracked; exited, stalled, or a dead pid), over EVENTS ledger events (default
# 10000). Then every agent is stopped and the same fleet is measured all dead.
#
#   cargo build --release && bash benches/fleet.sh 100
#
# Each command runs once to warm the page cache, then RUNS times (default 3); the median
# wall time is reported with git-recode's peak RSS and ratios to the shell census a loop runs
# today (benches/shell-census.sh) and to plain `git status` two at a time
# (benches/git-status-par.sh), all from the same run; deep_s is `status --deep`, which
# reads every worktree as status did before live workers were skipped. Repositories are kept under BENCH_DIR
# (default $TMPDIR/recode-fleet) for the next run; SETUP_ONLY=1 only builds them.
set -eu -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=benches/lib.sh
. "$here/lib.sh"
sizes=${*:-10 100 300}
files=${FILES:-5000}
events=${EVENTS:-10000}
root=${BENCH_DIR:-${TMPDIR:-/tmp}/recode-fleet}
sleepers=$(mktemp)
stop_agents() { [ -s "$sleepers" ] && xargs -r kill <"$sleepers" 2>/dev/null; : >"$sleepers"; }
trap 'stop_agents; rm -f "$sleepers"' EXIT

# fleet DIR N: the repository, its ledger, and the agents (started afresh each run).
fleet() {
  local dir=$1 n=$2 repo=$1/repo
  if [ ! -f "$dir/ready" ]; then
    bash "$here/make-repo.sh" "$dir" "$n" "$files" >/dev/null 2>&1
    python3 "$here/ledger.py" "$repo" "$events" >/dev/null
    for i in $(seq 5 5 "$n"); do # the dead fifth: exited, a dead pid, or stalled
      case $(( (i / 5) % 3 )) in
        0) "$bin" -C "$repo" record exit "feat/issue-$i-work" --rc 1 >/dev/null ;;
        1) true & p=$!; wait $p; "$bin" -C "$repo" record spawn "feat/issue-$i-work" --pid "$p" 2>/dev/null ;;
        2) ;; # the ledger's last attempt has no exit and no pid: stalled
      esac
    done
    touch "$dir/ready"
  fi
  for i in $(seq 1 "$n"); do
    [ $((i % 5)) -eq 0 ] && continue
    sleep 1000000 & echo $! >>"$sleepers"
    "$bin" -C "$repo" record spawn "feat/issue-$i-work" --pid $! >/dev/null
  done
}

# measure LABEL N REPO: one table row.
measure() {
  local label=$1 n=$2 repo=$3 r d c p rss
  bash "$here/shell-census.sh" "$repo" >/dev/null 2>&1 # refresh every index once, like a loop's first tick
  r=$(time_cmd "$bin" -C "$repo" status --json --offline)
  d=$(time_cmd "$bin" -C "$repo" status --json --offline --deep)
  c=$(time_cmd bash "$here/shell-census.sh" "$repo")
  p=$(time_cmd bash "$here/git-status-par.sh" "$repo")
  rss=$(rss_mib "$bin" -C "$repo" status --json --offline)
  printf '%-6s %-9s %9.3f %8.1f %9.3f %10.3f %8sx %10.3f %8sx\n' "$n" "$label" "$r" "$rss" "$d" "$c" "$(ratio "$c" "$r")" "$p" "$(ratio "$p" "$r")"
}

if [ -n "${SETUP_ONLY:-}" ]; then # build the repositories now, measure later
  for n in $sizes; do fleet "$root/$n" "$n"; stop_agents; done
  exit 0
fi
load_note
printf '%-6s %-9s %9s %8s %9s %10s %9s %10s %9s\n' wts mix recode_s rss_MiB deep_s census_s vs_census gitpar_s vs_gitpar
for n in $sizes; do
  dir="$root/$n"
  fleet "$dir" "$n"
  # A day on, the fleet's own fresh files and events are old: only a live pid keeps a worker running.
  export RECODE_NOW; RECODE_NOW=$(date -u -d '+1 day' +%Y-%m-%dT%H:%M:%SZ)
  live=$("$bin" -C "$dir/repo" status --porcelain --offline | awk -F'\t' '$3 == "running" && $5 == "wait"' | wc -l)
  measure "live-80%" "$n" "$dir/repo"
  stop_agents
  measure "all-dead" "$n" "$dir/repo"
  unset RECODE_NOW
  echo "       ($live of $n workers running, action wait, in the live mix)"
done
