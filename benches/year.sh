#!/usr/bin/env bash
# benches/year.sh — a year of history: EVENTS ledger events (default 100,000) over TASKS tasks
# (default 1,000) written by benches/year.py into a repository with an origin. Times (median
# of RUNS, default 3, after a warm-up) and peak RSS (/usr/bin/time) of `report` (text,
# `--since 7d`, `--json`, `--html`), `status --all --offline --json`, `log --json` and
# `log <branch>`; then `sync` between two clones: the first push of the whole ledger from
# clone a, a fresh clone b fetching and merging it (median of RUNS fresh clones), and a sync
# with nothing new. Keeps its repositories under $BENCH_DIR (default $TMPDIR/recode-year).
#
#   cargo build --release && bash benches/year.sh
set -eu -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=benches/lib.sh
. "$here/lib.sh"
events=${EVENTS:-100000}
tasks=${TASKS:-1000}
root=${BENCH_DIR:-${TMPDIR:-/tmp}/recode-year}
# The year ends at the generator's END: `--since 7d` is its last week.
export RECODE_NOW=2026-11-20T12:00:00Z

if [ ! -f "$root/ready" ]; then
  rm -rf "$root" && mkdir -p "$root"
  git init -q --bare "$root/origin.git"
  git init -q -b main "$root/a"
  git -C "$root/a" commit -q --allow-empty -m init
  git -C "$root/a" remote add origin "$root/origin.git"
  git -C "$root/a" push -q origin main
  python3 "$here/year.py" "$root/a" "$events" "$tasks" >"$root/ready"
fi
a=$root/a

load_note
cat "$root/ready"
printf '%-32s %9s %9s\n' command wall_s peak_MiB
row() {
  local name=$1; shift
  printf '%-32s %9.3f %9.1f\n' "$name" "$(time_cmd "$@")" "$(rss_mib "$@")"
}
html=$root/report.html
row "report" "$bin" -C "$a" report
row "report --since 7d" "$bin" -C "$a" report --since 7d
row "report --json" "$bin" -C "$a" report --json
row "report --html" "$bin" -C "$a" report --html "$html"
row "status --all --offline --json" "$bin" -C "$a" status --all --offline --json
row "log --json" "$bin" -C "$a" log --json
row "log <branch> --json" "$bin" -C "$a" log feat/issue-500-work --json

# sync: a pushes its ledger once (the first time only: later runs find it there).
if [ ! -f "$root/pushed" ]; then
  printf '%-32s %9.3f %9.1f\n' "sync a (first push)" \
    "$( { s=$(date +%s.%N); "$bin" -C "$a" sync >/dev/null 2>&1; e=$(date +%s.%N); echo "$e - $s" | bc -l; } )" \
    "$(rss_mib "$bin" -C "$a" sync)"
  touch "$root/pushed"
fi
# A fresh clone b fetches and merges the whole ledger: median over fresh clones.
fresh_sync() {
  rm -rf "$root/b" && git clone -q "$root/origin.git" "$root/b" 2>/dev/null
  /usr/bin/time -o "$root/b.time" -f '%e %M' "$bin" -C "$root/b" sync >/dev/null 2>&1 || true
  cat "$root/b.time"
}
for _ in $(seq 1 "$runs"); do fresh_sync; done >"$root/b.runs"
printf '%-32s %9.3f %9.1f\n' "sync b (fresh clone, all new)" \
  "$(awk '{print $1}' "$root/b.runs" | median)" "$(awk '{print $2 / 1024}' "$root/b.runs" | median)"
row "sync b (nothing new)" "$bin" -C "$root/b" sync
printf 'events in b after sync: %s\n' "$("$bin" -C "$root/b" log --json | wc -l)"
