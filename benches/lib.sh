# benches/lib.sh — helpers shared by fleet.sh and scale.sh (sourced, not run).
# Needs: bc, awk; /usr/bin/time for peak RSS (else it reads VmHWM from /proc while polling).

export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.invalid
unset RECODE_NOW GH_TOKEN GITHUB_TOKEN

bench_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=${RECODE_BIN:-$bench_here/../target/release/git-recode}
[ -x "$bin" ] || { echo "build first: cargo build --release" >&2; exit 2; }
runs=${RUNS:-3}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# time_cmd CMD...: median wall seconds over $runs, after one warm-up run.
time_cmd() {
  "$@" >/dev/null 2>&1 || true
  for _ in $(seq 1 "$runs"); do
    s=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; e=$(date +%s.%N)
    echo "$e - $s" | bc -l
  done | median
}

# rss_mib CMD...: peak resident set size of one run, in MiB.
rss_mib() {
  local kib
  if [ -x /usr/bin/time ]; then
    local f; f=$(mktemp)
    /usr/bin/time -o "$f" -f '%M' "$@" >/dev/null 2>&1 || true
    kib=$(tail -1 "$f"); rm -f "$f"
  else
    "$@" >/dev/null 2>&1 & local pid=$! hwm=0
    while kill -0 "$pid" 2>/dev/null; do
      v=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
      [ -n "$v" ] && hwm=$v
      sleep 0.01
    done
    wait "$pid" || true
    kib=$hwm
  fi
  echo "scale=1; $kib / 1024" | bc -l
}

ratio() { echo "scale=2; $1 / $2" | bc -l; }

# The machine's load when a table is printed (other builders share it).
load_note() { echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"; }
