#!/usr/bin/env bash
# benches/floor.sh [N] — `git recode status --json --offline` on N worktrees (default 100) of
# FILES tracked files (default 5000), every worker dead, against the physical floor and plain
# git, all in one run:
#   floor   benches/statfloor.c: lstat of every entry and readdir of every directory under
#           each worktree, on 2 threads (what any status must at least do without a monitor)
#   gitpar  benches/git-status-par.sh: plain `git status --porcelain`, two at a time
#   before  (only with RECODE_BEFORE=<binary>) an older git-recode, e.g. the previous release,
#           measured in the same run for a before/after ratio
#
#   cargo build --release && bash benches/floor.sh 100
#
# Each command runs once to warm the page cache, then RUNS times (default 5), interleaved so
# that a load from other work on the machine hits every command alike. Reported: the median
# wall time and the median CPU time (user + system, of the command and its children) of
# each, and git-recode's ratios to the floor and to gitpar from the same run. On a loaded
# machine wall times stretch; CPU time is the steadier figure, and the ratio is what counts.
set -eu -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=benches/lib.sh
. "$here/lib.sh"
n=${1:-100}
files=${FILES:-5000}
runs=${RUNS:-5}
root=${BENCH_DIR:-${TMPDIR:-/tmp}/recode-floor}
dir=$root/$n
floor=$root/statfloor
mkdir -p "$root"
[ -x "$floor" ] || cc -O2 -pthread -o "$floor" "$here/statfloor.c"
if [ ! -f "$dir/ready" ]; then
  bash "$here/make-repo.sh" "$dir" "$n" "$files" >/dev/null 2>&1
  for i in $(seq 1 "$n"); do # every worker dead: an exit recorded for each
    "$bin" -C "$dir/repo" record exit "feat/issue-$i-work" --rc 1 >/dev/null
  done
  sleep 2 # files older than the index written next: no entry is racily clean
  touch "$dir/ready"
fi
repo=$dir/repo
mapfile -t wts < <(git -C "$repo" worktree list --porcelain | awk '/^worktree /{print $2}' | tail -n +2)
# Refresh every index once (plain `git status`, which may write it), as a worker's own git
# commands leave it: gitpar runs with --no-optional-locks and never writes an index, so
# without this every entry checked out in the second its index was written stays racily
# clean, and git and git-recode alike compare its content on every run.
bash "$here/git-status-sum.sh" "$repo" >/dev/null 2>&1

# one CMD...: "wall cpu" seconds of one run.
one() {
  local f; f=$(mktemp)
  /usr/bin/time -o "$f" -f '%e %U %S' "$@" >/dev/null 2>&1 || true
  awk '{printf "%s %.3f\n", $1, $2 + $3}' "$f"; rm -f "$f"
}
names="floor gitpar recode"
[ -n "${RECODE_BEFORE:-}" ] && names="$names before"
declare -A wall cpu
for name in $names; do wall[$name]=""; cpu[$name]=""; done
run() {
  case $1 in
    floor) one "$floor" "${wts[@]}" ;;
    gitpar) one bash "$here/git-status-par.sh" "$repo" ;;
    recode) one "$bin" -C "$repo" status --json --offline ;;
    before) one "$RECODE_BEFORE" -C "$repo" status --json --offline ;;
  esac
}
for name in $names; do run "$name" >/dev/null; done # warm-up
for _ in $(seq 1 "$runs"); do
  for name in $names; do
    read -r w c < <(run "$name")
    wall[$name]+="$w "; cpu[$name]+="$c "
  done
done
med() { tr ' ' '\n' | grep . | median; }
load_note
printf '%-8s %9s %9s\n' command wall_s cpu_s
for name in $names; do
  printf '%-8s %9.3f %9.3f\n' "$name" "$(med <<<"${wall[$name]}")" "$(med <<<"${cpu[$name]}")"
done
rw=$(med <<<"${wall[recode]}"); rc=$(med <<<"${cpu[recode]}")
echo "recode / floor:  wall $(ratio "$rw" "$(med <<<"${wall[floor]}")")x  cpu $(ratio "$rc" "$(med <<<"${cpu[floor]}")")x"
echo "recode / gitpar: wall $(ratio "$rw" "$(med <<<"${wall[gitpar]}")")x  cpu $(ratio "$rc" "$(med <<<"${cpu[gitpar]}")")x"
if [ -n "${RECODE_BEFORE:-}" ]; then
  echo "recode / before: wall $(ratio "$rw" "$(med <<<"${wall[before]}")")x  cpu $(ratio "$rc" "$(med <<<"${cpu[before]}")")x"
fi
echo "peak RSS of recode: $(rss_mib "$bin" -C "$repo" status --json --offline) MiB"
