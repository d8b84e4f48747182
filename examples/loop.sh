#!/usr/bin/env bash
# examples/loop.sh — a complete agent loop driven by git-recode (the README's "Use it in
# your loop"; tests/it/loopsh.rs runs it with a stand-in for every agent, and a hung one).
#
#   examples/loop.sh [--once] [ISSUE_NUMBER...]
#
# Run it in the main worktree of your repository. Each tick:
#   1. reap the agents it started that have ended (`record exit` with their output);
#   2. sync the ledger with the remote (when there is one);
#   3. carry out the mechanical actions: delete, publish, wip-commit, escalate, and kill
#      (a hung agent: pid alive, no activity for recode.hungAfter);
#   4. resume every worker whose action is `resume`, each agent in its worktree;
#   5. start an agent on each ISSUE_NUMBER that has no worker yet (or whose worker was
#      deleted as empty after a failed attempt), on a new branch issue-<N>.
# Agents run in the background, each in a process group of its own (`setsid`), their pid
# recorded: the loop never waits on them, so one hung agent never freezes the others.
# Then it sleeps RECODE_TICK seconds (default 300: a tenth of recode.stallAfter's 30m).
# `--once` runs one tick and returns at once (the agents keep running; the next run
# reaps them).
#
# Set up once:   git config recode.agent claude   # or codex, gemini, opencode, cursor,
#                                                 # copilot, amp, goose, aider
#                git recode hook install          # milestones from Recode-Phase: trailers
#                git recode doctor                # says what else to fix
# A new issue starts with recode.agent's headless command (its JSON output where it has
# one, so `record exit --result-json` reads the outcome and the session id); a resume
# runs the command `git recode resume` prints. The task's prompt is kept with the attempt
# (`record spawn --prompt-file`) and carried into every resume prompt.
set -u

once=false
if [ "${1-}" = --once ]; then
  once=true
  shift
fi
issues=("$@")
main=$(git rev-parse --show-toplevel) || exit 1
common=$(git rev-parse --path-format=absolute --git-common-dir) || exit 1
worktrees=$(git config recode.worktreeDir || echo "$main.worktrees")
agent=$(git config recode.agent || echo claude)
# The loop's own state: one set of files per task (prompt, output, pid, rc).
state=${RECODE_LOOP_STATE:-$common/recode-loop}
mkdir -p "$state"

# `fresh` PROMPT_FILE: the agent's headless command for a new task, as words.
fresh() {
  local p=$1 prompt
  prompt=$(cat "$p")
  case $agent in
    claude) cmd=(claude -p "$prompt" --output-format json) ;;
    codex) cmd=(codex exec --json "$prompt") ;;
    gemini) cmd=(gemini -p "$prompt" -o stream-json --yolo --skip-trust) ;;
    opencode) cmd=(opencode run --format json --auto "$prompt") ;;
    cursor) cmd=(cursor-agent -p --output-format stream-json --force "$prompt") ;;
    copilot) cmd=(copilot -p "$prompt" --output-format json -s --allow-all --autopilot --no-ask-user) ;;
    amp) cmd=(amp -x "$prompt" --stream-json --dangerously-allow-all) ;;
    goose) cmd=(goose run -t "$prompt" --output-format stream-json) ;;
    aider) cmd=(aider --yes-always --message-file "$p") ;;
    *) # a command template: {prompt_file}, {cwd}, {session_id} (none yet)
      local t=${agent//\{prompt_file\}/\'$p\'}
      t=${t//\{cwd\}/.}
      t=${t//\{session_id\}/\'\'}
      cmd=(sh -c "$t") ;;
  esac
}

# `running` TASK: whether an agent this loop started on TASK is still alive.
running() {
  [ -s "$state/$1.pid" ] && [ ! -e "$state/$1.rc" ] && kill -0 "$(cat "$state/$1.pid")" 2>/dev/null
}

# `launch` TASK DIR WORD...: run the agent in DIR in the background, in a process group
# of its own, stdout and stderr to TASK's output file; its pid in TASK.pid and, once it
# ended, its exit code in TASK.rc (the next tick reaps it). The subshell that waits on it
# (its pid in TASK.watch) is the only writer of TASK.rc.
launch() {
  local task=$1 dir=$2 f=$state/$1
  shift 2
  settled "$task" || return 0
  rm -f "$f.pid" "$f.rc"
  local group=()
  command -v setsid >/dev/null 2>&1 && group=(setsid)
  (
    cd "$dir" || { echo 127 >"$f.rc"; exit; }
    "${group[@]}" "$@" </dev/null >"$f.out" 2>&1 &
    echo $! >"$f.pid.tmp" && mv "$f.pid.tmp" "$f.pid"
    wait $!
    echo $? >"$f.rc.tmp" && mv "$f.rc.tmp" "$f.rc"
  ) >/dev/null 2>&1 &
  echo $! >"$f.watch"
  while [ ! -s "$f.pid" ] && [ ! -e "$f.rc" ]; do sleep 0.05; done
}

# `settled` TASK: the previous run of TASK has been reaped. Its agent may have just been
# ended (a hung agent killed by recover) while the subshell waiting on it has not yet
# written its exit code: wait for it (5 s at most) and ledger that exit now, so a late
# code never lands on the next run. False while it still waits: try again next tick.
settled() {
  local f=$state/$1 w i
  w=$(cat "$f.watch" 2>/dev/null) || return 0
  for i in $(seq 100); do
    kill -0 "$w" 2>/dev/null || break
    sleep 0.05
  done
  kill -0 "$w" 2>/dev/null && return 1
  rm -f "$f.watch"
  [ -e "$f.rc" ] && reap_one "$f.rc"
  return 0
}

# `reap_one` TASK.rc: ledger the exit of the agent whose exit code it holds.
reap_one() {
  local rcf=$1 task branch
  task=$(basename "$rcf" .rc)
  branch=$(cat "$state/$task.branch")
  git recode record exit "$branch" --rc "$(cat "$rcf")" --result-json "$state/$task.out" >/dev/null ||
    echo "loop: record exit $branch failed" >&2
  rm -f "$rcf" "$state/$task.pid"
}

# `reap`: ledger the exit of every agent this loop started that has ended.
reap() {
  local rcf
  for rcf in "$state"/*.rc; do
    [ -e "$rcf" ] || continue
    reap_one "$rcf"
  done
}

# `resume` BRANCH TASK: start the command `git recode resume` hands out.
resume() {
  local branch=$1 task=$2 cmd
  running "$task" && return 0 # never two agents on one task
  settled "$task" || return 0 # the last run's exit is ledgered before the resume
  cmd=$(git recode resume "$branch" --output "$state/$task.md") || return 0 # refused: capped
  echo "$branch" >"$state/$task.branch"
  launch "$task" "$main" sh -c "$cmd"
}

# `start` N: a new worker on issue-N in its own worktree, its pid and prompt ledgered.
start() {
  local n=$1 branch=issue-$1 f=$state/$1
  local dir=$worktrees/$branch
  running "$n" && return 0
  mkdir -p "$worktrees"
  if ! git show-ref -q --verify "refs/heads/$branch"; then
    git worktree add -q -b "$branch" "$dir" >/dev/null 2>&1 || return 0
  elif [ ! -d "$dir" ]; then
    git worktree add -q "$dir" "$branch" >/dev/null 2>&1 || return 0
  fi
  printf 'Work on issue #%s in this repository. Commit at each milestone with a\n"Recode-Phase: <phase>" trailer; commit and push before you end.\n' "$n" >"$f.md"
  echo "$branch" >"$f.branch"
  fresh "$f.md"
  launch "$n" "$dir" "${cmd[@]}"
  git recode record spawn "$branch" --agent "$agent" --pid "$(cat "$f.pid" 2>/dev/null || echo 0)" \
    --cwd "$dir" --output "$f.out" --prompt-file "$f.md" >/dev/null
}

# `restartable` ROW: an issue whose worker was deleted as empty after a failed attempt
# (no branch anywhere, nothing published, attempts left) is started again.
restartable() {
  local task=$1 branch=$2 state=$3 n=$4 log
  [ "$state" = empty ] || return 1
  git show-ref -q "refs/heads/$branch" "refs/remotes/*/$branch" && return 1
  [ "$n" -lt "$(git config recode.maxAttempts || echo 3)" ] || return 1
  log=$(git recode log "$branch" --json 2>/dev/null) || return 1
  case $log in *'"kind":"published"'*) return 1 ;; esac
  case $log in *'"kind":"deleted"'*) return 0 ;; esac
  return 1
}

tick() {
  reap
  local remote
  remote=$(git config recode.remote || echo origin)
  if git remote get-url "$remote" >/dev/null 2>&1; then
    git recode sync "$remote" >/dev/null 2>&1 || echo "loop: sync failed" >&2
  fi
  git recode recover --all >/dev/null || echo "loop: recover failed (see git recode status)" >&2
  # Read the whole list first: no agent may read the rest of it from its stdin.
  local rows row task branch live st action n known
  mapfile -t rows < <(git recode status --porcelain --all)
  known=" "
  for row in "${rows[@]}"; do
    IFS=$'\t' read -r task branch live st action n <<<"$row"
    if restartable "$task" "$branch" "$st" "$n"; then continue; fi
    known+="$task "
    [ "$action" = resume ] && resume "$branch" "$task"
  done
  for n in "${issues[@]}"; do
    case $known in *" $n "*) ;; *) start "$n" ;; esac
  done
}

while :; do
  tick
  $once && break
  sleep "${RECODE_TICK:-300}"
done
