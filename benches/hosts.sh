#!/usr/bin/env bash
# benches/hosts.sh — what several machines cost the remote (SPEC 1.2 "Several machines"):
# HOSTS clones (default 10) of one bare remote, each a host of its own (`unshare --uts`, run
# as root), each with WORKERS workers (default 100) whose agent is alive (one `sleep`
# recorded with `record spawn --pid`). Each host runs the multi-host tick TICKS times
# (default 6), TICK_MIN minutes apart (default 10, RECODE_NOW): `recover --all` (which
# rewrites its heartbeat when it changed or is older than recode.stallAfter / 2) then `sync`.
#
# Prints, from one run:
# - heartbeat refs on the remote per host, heartbeats pushed per host per tick, and the
#   bytes of one heartbeat (blob + tree + commit), against the remote's total growth per
#   host per tick (the ledger's `classified` lines included);
# - `sync` wall time on one host with HOSTS × WORKERS in the fleet: steady (nothing new),
#   and after every other host rewrote its heartbeat, each against the baseline of the
#   same clone and remote with no heartbeat ref at all (the ledger alone), as ratios.
#
#   cargo build && RECODE_BIN=$CARGO_TARGET_DIR/debug/git-recode nice -n 10 bash benches/hosts.sh
#
# Then run the long multi-host loop harness: RECODE_HOSTS_TRIALS=50 nice -n 10 cargo test
# --test it hosts_loop:: -- --nocapture (LOOP=1 runs it here after the figures).
set -eu -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=benches/lib.sh
. "$here/lib.sh"
hosts=${HOSTS:-10}
workers=${WORKERS:-100}
ticks=${TICKS:-6}
tick_min=${TICK_MIN:-10}
root=$(mktemp -d "${TMPDIR:-/tmp}/recode-hosts.XXXXXX")
sleepers=()
trap 'kill "${sleepers[@]}" 2>/dev/null || true; rm -rf "$root"' EXIT
t0=1893456000 # 2030-01-01T00:00:00Z, after every real mtime

# on HOST DIR EPOCH ARGS...: git-recode in DIR as HOST at EPOCH.
on() {
  local host=$1 dir=$2 at=$3; shift 3
  (cd "$dir" && RECODE_NOW=$(date -u -d "@$at" +%Y-%m-%dT%H:%M:%SZ) RECODE_HOST_NAME=$host \
    unshare --uts sh -c 'printf %s "$RECODE_HOST_NAME" > /proc/sys/kernel/hostname && exec "$@"' sh "$bin" "$@")
}
remote_kib() { git -C "$root/remote.git" count-objects -v | awk '/^size:|^size-pack:/ {s += $2} END {print s}'; }

git init -q --bare -b main "$root/remote.git"
git init -q -b main "$root/seed"
git -C "$root/seed" commit -q --allow-empty -m init
git -C "$root/seed" push -q "$root/remote.git" main
for h in $(seq 1 "$hosts"); do
  c=$root/host$h
  git clone -q "$root/remote.git" "$c"
  git -C "$c" commit -q --allow-empty -m "host $h work"
  tip=$(git -C "$c" rev-parse HEAD)
  git -C "$c" reset -q --hard HEAD~1
  for i in $(seq 1 "$workers"); do echo "create refs/heads/issue-$((h * 1000 + i)) $tip"; done |
    git -C "$c" update-ref --stdin
  sleep 3600 & sleepers+=($!)
  for i in $(seq 1 "$workers"); do
    on "host$h" "$c" "$t0" record spawn "issue-$((h * 1000 + i))" --pid "${sleepers[-1]}" --cwd "$c" >/dev/null
  done
  on "host$h" "$c" "$t0" recover --all >/dev/null
  on "host$h" "$c" "$t0" sync >/dev/null
done
echo "setup: $hosts hosts x $workers workers; $(load_note)"

# Ticks: count heartbeat pushes from the remote's refs moving, and the remote's growth.
before_kib=$(remote_kib)
moves=0
for t in $(seq 1 "$ticks"); do
  at=$((t0 + t * tick_min * 60))
  for h in $(seq 1 "$hosts"); do
    old=$(git -C "$root/remote.git" rev-parse "refs/recode/hosts/host$h")
    on "host$h" "$root/host$h" "$at" recover --all >/dev/null
    on "host$h" "$root/host$h" "$at" sync >/dev/null
    new=$(git -C "$root/remote.git" rev-parse "refs/recode/hosts/host$h")
    [ "$old" != "$new" ] && moves=$((moves + 1))
  done
done
after_kib=$(remote_kib)
refs=$(git -C "$root/remote.git" for-each-ref refs/recode/hosts | wc -l)
beat=$(git -C "$root/remote.git" rev-parse refs/recode/hosts/host1)
bytes=$(( $(git -C "$root/remote.git" cat-file -s "$beat") + $(git -C "$root/remote.git" cat-file -s "$beat^{tree}") + $(git -C "$root/remote.git" cat-file -s "$beat:heartbeat.json") ))
echo "remote: $refs heartbeat refs for $hosts hosts ($(ratio "$refs" "$hosts") per host)"
echo "heartbeats pushed per host per tick: $(ratio "$moves" $((hosts * ticks))) (tick every ${tick_min}m; rewritten when changed or older than stallAfter/2 = 15m)"
echo "one heartbeat of $workers workers: $bytes bytes uncompressed (commit + tree + blob), 3 objects"
echo "remote growth per host per tick: $(ratio $(( (after_kib - before_kib) * 1024 )) $((hosts * ticks))) bytes (loose + packed, ledger included)"

# sync on host 1: steady, then with every other heartbeat rewritten; baseline: no heartbeats.
last=$((t0 + (ticks + 1) * tick_min * 60))
steady=$(time_cmd on host1 "$root/host1" "$last" sync)
rewrite_others() {
  for h in $(seq 2 "$hosts"); do
    on "host$h" "$root/host$h" "$((last + 3600))" recover --all >/dev/null
    on "host$h" "$root/host$h" "$((last + 3600))" sync >/dev/null
  done
}
rewrite_others
s=$(date +%s.%N); on host1 "$root/host1" "$((last + 3600))" sync >/dev/null; e=$(date +%s.%N)
fetch9=$(echo "$e - $s" | bc -l)
# The baseline: copies of the remote and of host 1 with no heartbeat ref at all.
cp -a "$root/remote.git" "$root/base-remote.git"
cp -a "$root/host1" "$root/base-host1"
git -C "$root/base-host1" remote set-url origin "$root/base-remote.git"
for d in "$root/base-remote.git" "$root/base-host1"; do
  git -C "$d" for-each-ref --format='delete %(refname)' refs/recode/hosts | git -C "$d" update-ref --stdin
done
# Run the baseline as a host whose own heartbeat does not exist: nothing to push or fetch.
base=$(time_cmd on baseline "$root/base-host1" "$last" sync)
git -C "$root/base-host1" for-each-ref --format='delete %(refname)' refs/recode/hosts | git -C "$root/base-host1" update-ref --stdin
echo "sync, $hosts hosts x $workers workers: steady ${steady}s, after $((hosts - 1)) heartbeats changed ${fetch9}s; baseline (no heartbeat refs) ${base}s"
echo "ratios to the baseline: steady $(ratio "$steady" "$base"), fetching $((hosts - 1)) heartbeats $(ratio "$fetch9" "$base")"
if [ "${LOOP:-0}" = 1 ]; then
  (cd "$here/.." && RECODE_HOSTS_TRIALS="${RECODE_HOSTS_TRIALS:-50}" cargo test --test it hosts_loop:: -- --nocapture 2>&1 | grep '^hosts loop')
fi
