#!/usr/bin/env bash
# benches/hook.sh — the post-commit hook's cost: COMMITS (default 200) commits with and
# without the hook, ordinary and milestone (`Recode-Phase:`) commits measured apart.
# Prints the median milliseconds per commit, the median extra cost of the hook, and (issue
# 26) the ratio of the milestone hook's extra cost to the baseline's: a shell hook running
# `git notes append`. The hook only appends to the milestone journal; the fold of the
# journal into the ledger (what the next writing command does) is timed apart.
#   cargo build --release && bash benches/hook.sh   (CARGO_TARGET_DIR honoured)
set -eu -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin_dir=$(cd "${CARGO_TARGET_DIR:-$here/../target}/release" && pwd)
[ -x "$bin_dir/git-recode" ] || { echo "build first: cargo build --release" >&2; exit 2; }
export PATH="$bin_dir:$PATH"
n=${COMMITS:-200}
root=$(mktemp -d "${TMPDIR:-/tmp}/recode-hook-bench.XXXXXX")
trap 'rm -rf "$root"' EXIT
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null HOME="$root"
export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@example.invalid GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@example.invalid
unset RECODE_NOW

# one_commit DIR KIND I: microseconds of one `git commit` (KIND: plain | milestone).
one_commit() {
  local dir=$1 kind=$2 i=$3
  echo "$i" >"$dir/f"
  git -C "$dir" add f
  s=$(date +%s%N)
  if [ "$kind" = milestone ]; then
    git -C "$dir" commit -q -m "step $i" -m "Recode-Phase: implemented"
  else
    git -C "$dir" commit -q -m "step $i"
  fi
  e=$(date +%s%N)
  echo $(( (e - s) / 1000 ))
}

median_ms() { sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]/1000}'; }

# The four repositories take turns, commit by commit, so a machine whose load changes
# during the run weighs on all of them alike.
per_kind() {
  local kind=$1
  for i in $(seq 1 "$n"); do
    for r in plain hooked shell reader; do
      echo "$r $(one_commit "$root/$r" "$kind" "$kind-$i")"
    done
  done >"$root/times-$kind"
  for r in plain hooked shell reader; do
    awk -v r="$r" '$1 == r {print $2}' "$root/times-$kind" | median_ms >"$root/median-$kind-$r"
  done
}

setup() {
  git init -q -b main "$1"
  echo 0 >"$1/f" && git -C "$1" add f && git -C "$1" commit -q -m init
  git -C "$1" branch -q -m main feat/issue-1-bench
}
setup "$root/plain"
setup "$root/hooked"
setup "$root/shell"
setup "$root/reader"
git -C "$root/hooked" recode hook install >/dev/null
# The baseline: a plain shell hook that reads the trailer and runs `git notes append`.
cat >"$root/shell/.git/hooks/post-commit" <<'SH'
#!/bin/sh
p=$(git log -1 --format='%(trailers:key=Recode-Phase,valueonly)')
[ -n "$p" ] && git notes --ref=shell append -m "{\"phase\":\"$p\"}" HEAD
exit 0
SH
chmod +x "$root/shell/.git/hooks/post-commit"
# The floor for an ordinary commit: a shell hook that only reads the trailer.
cat >"$root/reader/.git/hooks/post-commit" <<'SH'
#!/bin/sh
p=$(git log -1 --format='%(trailers:key=Recode-Phase,valueonly)')
exit 0
SH
chmod +x "$root/reader/.git/hooks/post-commit"
echo "median ms per commit over $n commits of each kind; + is what the hook adds to a commit without one"
printf '%-9s %8s %16s %18s %16s %s\n' kind "no hook" "git-recode" "shell notes" "shell reader" "ratio"
for kind in plain milestone; do
  per_kind "$kind"
  without=$(cat "$root/median-$kind-plain")
  add() { echo "$(cat "$root/median-$kind-$1") - $without" | bc -l; }
  ours=$(add hooked); notes=$(add shell); reader=$(add reader)
  if [ "$kind" = milestone ]; then ours_milestone=$ours; notes_milestone=$notes; ratio="git-recode/shell-notes $(echo "$ours / $notes" | bc -l | xargs printf '%.2f')"
  else ratio="git-recode/shell-reader $(echo "$ours / $reader" | bc -l | xargs printf '%.2f')"; fi
  printf '%-9s %8.2f %8.2f (+%5.2f) %8.2f (+%5.2f) %8.2f (+%5.2f) %s\n' "$kind" "$without" \
    "$(cat "$root/median-$kind-hooked")" "$ours" "$(cat "$root/median-$kind-shell")" "$notes" \
    "$(cat "$root/median-$kind-reader")" "$reader" "$ratio"
done
shown=$(git -C "$root/hooked" recode log --json | grep -c '"kind":"milestone"')
s=$(date +%s%N)
git -C "$root/hooked" recode record unblock feat/issue-1-bench
e=$(date +%s%N)
ledgered=$(git -C "$root/hooked" recode log --json | grep '"kind":"milestone"' | grep -vc '"seq":0' || true)
echo "milestones shown at once: $shown; ledgered by one writing command (record unblock, the fold included): $ledgered in $(( (e - s) / 1000000 )) ms"
echo "ratio milestone hook / shell git-notes-append hook: $(echo "$ours_milestone / $notes_milestone" | bc -l | xargs printf '%.2f')"
