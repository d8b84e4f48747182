#!/usr/bin/env bash
# benches/ab-status.sh — `git recode status --json` of two builds, A (the baseline) and B,
# run interleaved on one repository of SIZE linked worktrees over FILES tracked files
# (benches/make-repo.sh), ROUNDS times each; prints the median wall and CPU (user+sys)
# seconds of each and the ratios B/A from the same run. CPU time is the figure to trust
# on a loaded machine; wall time shows the threads' overlap.
#
#   A=/path/to/old/git-recode B=target/debug/git-recode SIZE=100 FILES=500 bash benches/ab-status.sh
set -eu -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
a=${A:?A=<baseline binary>}; b=${B:?B=<new binary>}
size=${SIZE:-100}; files=${FILES:-500}; rounds=${ROUNDS:-15}
dir=${BENCH_DIR:-${TMPDIR:-/tmp}/recode-ab-$size-$files}
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.invalid
unset RECODE_NOW GH_TOKEN GITHUB_TOKEN
[ -d "$dir/repo" ] || bash "$here/make-repo.sh" "$dir" "$size" "$files" >/dev/null 2>&1
cd "$dir/repo"
out=$(mktemp)
"$a" status --json >/dev/null 2>&1; "$b" status --json >/dev/null 2>&1
for _ in $(seq 1 "$rounds"); do
  for x in A B; do
    bin=$a; [ $x = B ] && bin=$b
    /usr/bin/time -f "$x %e %U %S" "$bin" status --json >/dev/null 2>>"$out"
  done
done
med() { grep "^$1 " "$out" | awk "{print $2}" | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
wa=$(med A '$2'); wb=$(med B '$2'); ca=$(med A '$3+$4'); cb=$(med B '$3+$4')
printf 'worktrees %s files %s rounds %s\n' "$size" "$files" "$rounds"
printf 'A wall %ss cpu %ss\nB wall %ss cpu %ss\n' "$wa" "$ca" "$wb" "$cb"
printf 'B/A wall %.2f cpu %.2f\n' "$(echo "$wb / $wa" | bc -l)" "$(echo "$cb / $ca" | bc -l)"
rm -f "$out"
