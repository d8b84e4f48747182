#!/usr/bin/env bash
# benches/watch.sh [N] — the idle tick with and without a file watcher (issue 38): `git recode
# status --json --offline` on N worktrees (default 20) of FILES tracked files (default
# 20,000), every worker dead, all in one run, interleaved:
#   floor    benches/statfloor.c: lstat of every entry and readdir of every directory (what
#            a status must at least do without a watcher)
#   off      recode.watcher=off: every worktree read whole
#   idle     through a Watchman server of this bench's own (WATCHMAN_SOCK), nothing changed
#            since the last tick
#   one      the same, one file of one worktree changed before the tick
# Each runs once to warm up (the watched ones store their answers), then RUNS times (default
# 5); medians of wall and CPU time, and the ratios to the floor from the same run.
#
#   cargo build --release && bash benches/watch.sh 20
set -eu -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=benches/lib.sh
. "$here/lib.sh"
# `git recode` runs the binary measured.
PATH=$(dirname "$bin"):$PATH
n=${1:-20}
files=${FILES:-20000}
runs=${RUNS:-5}
root=${BENCH_DIR:-${TMPDIR:-/tmp}/recode-watch}
dir=$root/$n-$files
floor=$root/statfloor
command -v watchman >/dev/null || { echo "needs watchman (apt-get install watchman)" >&2; exit 2; }
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
bash "$here/git-status-sum.sh" "$repo" >/dev/null 2>&1 # refresh every index once

# This bench's own Watchman server, shut down at the end.
wm=$root/wm
mkdir -p "$wm"
watchman --sockname="$wm/sock" --statefile="$wm/state" --logfile="$wm/log" --pidfile="$wm/pid" \
  get-sockname >/dev/null
trap 'watchman --sockname="$wm/sock" --no-spawn --no-local shutdown-server >/dev/null 2>&1 || true' EXIT

one() {
  local f; f=$(mktemp)
  /usr/bin/time -o "$f" -f '%e %U %S' "$@" >/dev/null 2>&1 || true
  awk '{printf "%s %.3f\n", $1, $2 + $3}' "$f"; rm -f "$f"
}
changed=${wts[0]}/src/m000/f00002.rs
tick=0
run() {
  case $1 in
    floor) one "$floor" "${wts[@]}" ;;
    off) one git -C "$repo" -c recode.watcher=off recode status --json --offline ;;
    idle) WATCHMAN_SOCK=$wm/sock one git -C "$repo" recode status --json --offline ;;
    one)
      tick=$((tick + 1)); echo "// tick $tick" >>"$changed"
      WATCHMAN_SOCK=$wm/sock one git -C "$repo" recode status --json --offline ;;
  esac
}
names="floor off idle one"
declare -A wall cpu
for name in $names; do wall[$name]=""; cpu[$name]=""; run "$name" >/dev/null; done
for _ in $(seq 1 "$runs"); do
  for name in $names; do
    read -r w c < <(run "$name")
    wall[$name]+="$w "; cpu[$name]+="$c "
  done
done
med() { tr ' ' '\n' | grep . | median; }
load_note
echo "$n worktrees × $files files"
printf '%-6s %9s %9s %12s %12s\n' command wall_s cpu_s wall/floor cpu/floor
fw=$(med <<<"${wall[floor]}"); fc=$(med <<<"${cpu[floor]}")
for name in $names; do
  w=$(med <<<"${wall[$name]}"); c=$(med <<<"${cpu[$name]}")
  printf '%-6s %9.3f %9.3f %11sx %11sx\n' "$name" "$w" "$c" "$(ratio "$w" "$fw")" "$(ratio "$c" "$fc")"
done
# The three readings agree (counts of every worker).
counts() { "$@" | python3 -c 'import json,sys; print(sorted((w["branch"], json.dumps(w["dirty"], sort_keys=True)) for w in json.load(sys.stdin)["workers"]))'; }
a=$(counts git -C "$repo" -c recode.watcher=off recode status --json --offline)
b=$(WATCHMAN_SOCK=$wm/sock counts git -C "$repo" recode status --json --offline)
[ "$a" = "$b" ] && echo "watched and whole readings agree" || { echo "MISMATCH"; exit 1; }
