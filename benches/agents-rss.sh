#!/usr/bin/env bash
# benches/agents-rss.sh [MB] — peak memory of `record exit --result-json` on a large agent
# stream (default 300 MB of Claude-shaped stream-json: system/init, assistant events, one
# line of 2 MiB, a result), against a named baseline: BASELINE_BIN (e.g. a build of main,
# which read the whole file into memory) when given, and `wc -l` on the same file (the floor
# of reading it line by line). SPEC 1.2: peak memory under 100 MiB whatever the input size.
#
#   cargo build && BASELINE_BIN=/path/to/old/git-recode nice -n 10 bash benches/agents-rss.sh 300
#
# Prints each run's peak RSS (KiB, from /usr/bin/time) and wall time, and the ratios to
# `wc -l` measured in the same run.
set -eu -o pipefail
mb=${1:-300}
bin=${RECODE_BIN:-${CARGO_TARGET_DIR:-target}/debug/git-recode}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.invalid
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null RECODE_NOW=2026-11-20T12:00:00Z
git init -q -b main "$dir/repo" && git -C "$dir/repo" commit -q --allow-empty -m init
f="$dir/stream.jsonl"
python3 - "$f" "$mb" <<'PY'
import sys
path, mb = sys.argv[1], int(sys.argv[2])
line = '{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"%s"}]},"session_id":"s-bench"}\n' % ("x" * 900)
with open(path, "w") as f:
    f.write('{"type":"system","subtype":"init","session_id":"s-bench"}\n')
    n = mb * 1024 * 1024 // len(line)
    for i in range(n):
        f.write(line)
        if i == n // 2:
            f.write('{"type":"assistant","note":"%s"}\n' % ("y" * (2 << 20)))
    f.write('{"type":"result","subtype":"success","is_error":false,"result":"Done; tests pass.","session_id":"s-bench"}\n')
PY
measure() { # name cmd...: prints "name peak_rss_kib wall_s"
  /usr/bin/time -o "$dir/time" -f '%M %e' "${@:2}" >/dev/null 2>"$dir/err"
  echo "$1 $(tail -1 "$dir/time")"
}
n=0
run_recode() { # name bin
  n=$((n + 1))
  (cd "$dir/repo" && "$2" record spawn "bench-$n" --cwd . >/dev/null 2>&1)
  measure "$1" sh -c "cd '$dir/repo' && exec '$2' record exit bench-$n --rc 0 --result-json '$f' 2>/dev/null"
}
echo "input: $(du -m "$f" | cut -f1) MB"
wc_line=$(measure wc-l wc -l "$f")
echo "$wc_line"
new=$(run_recode git-recode "$bin")
echo "$new"
if [ -n "${BASELINE_BIN:-}" ]; then
  old=$(run_recode baseline "$BASELINE_BIN")
  echo "$old"
fi
awk -v a="$new" -v w="$wc_line" -v b="${old:-}" 'BEGIN {
  split(a, x, " "); split(w, y, " ");
  printf "git-recode peak RSS %.1f MiB = %.1fx wc -l\n", x[2] / 1024, x[2] / y[2];
  if (b != "") { split(b, z, " "); printf "baseline peak RSS %.1f MiB; git-recode / baseline = %.3f\n", z[2] / 1024, x[2] / z[2] }
}'
