#!/usr/bin/env bash
# examples/loop.sh — a complete agent loop driven by git-recode (the README's "Use it in
# your loop"; tests/it/newcomer.rs runs it with a stand-in agent).
#
#   examples/loop.sh [--once] [ISSUE_NUMBER...]
#
# Run it in the main worktree of your repository. Each tick:
#   1. sync the ledger with the remote (when there is one);
#   2. carry out the mechanical actions: delete, publish, wip-commit, escalate;
#   3. resume every worker whose action is `resume`, each agent in its worktree;
#   4. start an agent on each ISSUE_NUMBER that has no worker yet, on a new branch
#      issue-<N> in its own worktree;
# then it waits for the agents it started, and sleeps RECODE_TICK seconds (default 300:
# a tenth of recode.stallAfter's 30m, so a dead worker is picked up within minutes).
# `--once` runs one tick.
#
# Set up once:   git config recode.agent claude
#                git recode hook install        # milestones from Recode-Phase: trailers
#                git recode doctor              # says what else to fix
# The agent: starting uses Claude Code's headless `claude -p`; resuming runs the command
# `git recode resume` prints for recode.agent. Its output goes to `record exit
# --message-file`, so rate limits and other transient ends are recognised (with
# `claude -p --output-format json`, pass the file as `--result-json` instead).
set -u

once=false
if [ "${1-}" = --once ]; then
  once=true
  shift
fi
issues=("$@")
tmp=${TMPDIR:-/tmp}
main=$(git rev-parse --show-toplevel) || exit 1
worktrees=$(git config recode.worktreeDir || echo "$main.worktrees")

# `resume` BRANCH TASK: run the command `git recode resume` hands out, ledger its exit.
resume() {
  local branch=$1 f=$tmp/recode-$2
  local cmd
  cmd=$(git recode resume "$branch" --output "$f.md") || return 0 # refused: capped, running
  sh -c "$cmd" </dev/null >"$f.out" 2>&1
  git recode record exit "$branch" --rc $? --message-file "$f.out" >/dev/null
}

# `start` N: a new worker on issue-N in its own worktree, its pid ledgered at spawn.
start() {
  local n=$1 branch=issue-$1 f=$tmp/recode-$1
  local dir=$worktrees/$branch
  mkdir -p "$worktrees"
  git worktree add -q -b "$branch" "$dir" || return 0
  printf 'Work on issue #%s in this repository. Commit at each milestone with a\n"Recode-Phase: <phase>" trailer; commit and push before you end.\n' "$n" >"$f.md"
  (cd "$dir" && exec claude -p "$(cat "$f.md")") </dev/null >"$f.out" 2>&1 &
  local pid=$!
  git recode record spawn "$branch" --agent claude --pid "$pid" --cwd "$dir" >/dev/null
  wait "$pid"
  git recode record exit "$branch" --rc $? --message-file "$f.out" >/dev/null
}

tick() {
  local remote
  remote=$(git config recode.remote || echo origin)
  if git remote get-url "$remote" >/dev/null 2>&1; then
    git recode sync "$remote" >/dev/null || echo "loop: sync failed" >&2
  fi
  git recode recover --all >/dev/null || echo "loop: recover failed (see git recode status)" >&2
  # Read the whole list first: no agent may read the rest of it from its stdin.
  local rows row task branch live state action n known
  mapfile -t rows < <(git recode status --porcelain --all)
  known=" "
  for row in "${rows[@]}"; do
    IFS=$'\t' read -r task branch live state action n <<<"$row"
    known+="$task "
    [ "$action" = resume ] && resume "$branch" "$task" &
  done
  for n in "${issues[@]}"; do
    case $known in *" $n "*) ;; *) start "$n" & ;; esac
  done
  wait
}

while :; do
  tick
  $once && break
  sleep "${RECODE_TICK:-300}"
done
