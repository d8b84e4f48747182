#!/usr/bin/env bash
# benches/formats.sh — `git recode status --json --offline` on the same repository made in
# each repository format: N linked worktrees (default 100) of FILES tracked files (default
# 5000), EVENTS ledger events (default 10000), as benches/status.sh makes them.
#
#   cargo build --release && bash benches/formats.sh          # FORMATS="files reftable"
#   FORMATS="files reftable sha256 reftable-sha256" N=100 RUNS=5 bash benches/formats.sh
#
# Each repository is made once (kept under $BENCH_DIR, default $TMPDIR/recode-formats) and
# every index refreshed once (a plain `git status` in each worktree); then the formats are
# timed interleaved, one run of each per round after a warm-up round, RUNS rounds (default
# 5). Prints each format's median wall time and its ratio to the first format's, from
# the same rounds.
set -eu -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${RECODE_BIN:-$here/../target/release/git-recode}
[ -x "$bin" ] || { echo "build first: cargo build --release" >&2; exit 2; }
formats=${FORMATS:-files reftable}
n=${N:-100}
files=${FILES:-5000}
events=${EVENTS:-10000}
runs=${RUNS:-5}
root=${BENCH_DIR:-${TMPDIR:-/tmp}/recode-formats}
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.invalid
unset RECODE_NOW GH_TOKEN GITHUB_TOKEN

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
vars() { # the git variables that make repositories of format $1
  case $1 in
    files) ;;
    reftable) echo GIT_DEFAULT_REF_FORMAT=reftable ;;
    sha256) echo GIT_DEFAULT_HASH=sha256 ;;
    reftable-sha256) echo GIT_DEFAULT_REF_FORMAT=reftable GIT_DEFAULT_HASH=sha256 ;;
    *) echo "unknown format $1" >&2; exit 2 ;;
  esac
}
for f in $formats; do
  dir="$root/$f-$n-$files"
  if [ ! -f "$dir/ready" ]; then
    env $(vars "$f") bash "$here/make-repo.sh" "$dir" "$n" "$files" >/dev/null 2>&1
    python3 "$here/ledger.py" "$dir/repo" "$events" >"$dir/ready"
  fi
  bash "$here/git-status-sum.sh" "$dir/repo" >/dev/null 2>&1 # refresh every index once
  echo "$f: $(git -C "$dir/repo" rev-parse --show-ref-format --show-object-format | tr '\n' ' ')" >&2
done
time_one() { s=$(date +%s.%N); "$bin" -C "$1" status --json --offline >/dev/null 2>&1; e=$(date +%s.%N); echo "$e - $s" | bc -l; }
out=$(mktemp -d)
for round in $(seq 0 "$runs"); do
  for f in $formats; do
    t=$(time_one "$root/$f-$n-$files/repo")
    [ "$round" -gt 0 ] && echo "$t" >>"$out/$f"
  done
done
first=
printf '%-16s %10s %8s\n' format median_s ratio
for f in $formats; do
  m=$(median <"$out/$f")
  first=${first:-$m}
  printf '%-16s %10.3f %7.2fx\n' "$f" "$m" "$(echo "$m/$first" | bc -l)"
done
rm -rf "$out"
