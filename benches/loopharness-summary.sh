#!/usr/bin/env bash
# loopharness-summary.sh LOG [START_EPOCH]: the figures of a (possibly cut short) loop run.
set -eu
log=$1; start=${2:-}
lines=$(grep '^loop trial seed' "$log" || true)
n=$(printf '%s\n' "$lines" | grep -c . || true)
field() { printf '%s\n' "$lines" | sed -n "s/.*$1 \([0-9]*\).*/\1/p"; }
sum() { awk '{ s += $1 } END { print s + 0 }'; }
ticks=$(field 'settled at tick' | sort -n)
m=$(printf '%s\n' "$ticks" | grep -c . || true)
median=$( [ "$m" -gt 0 ] && printf '%s\n' "$ticks" | sed -n "$(( (m + 1) / 2 ))p" || echo 0)
max=$( [ "$m" -gt 0 ] && printf '%s\n' "$ticks" | tail -1 || echo 0)
secs=$( [ -n "$start" ] && echo $(( $(date +%s) - start )) || echo 0)
echo "trials $n, violations $(field violations | sum), ticks-to-settle median $median max $max, kills $(field kills | sum), seconds $secs"
grep 'loop violation' "$log" >&2 || true
