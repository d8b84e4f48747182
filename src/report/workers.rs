//! The attention queue and the waiting list, from the ledger alone (SPEC "Classification",
//! the `needs-human` rows that the ledger decides; 1.2 "The loop settles": every worker
//! ends running, waiting on a reset or a blocker, published, deleted, or `needs-human`).
//!
//! A worker is one branch of a task (SPEC 1.2 "Several branches of one task"): the events
//! naming that branch plus those naming none. Counted attempts stay the task's.

use jiff::Timestamp;

use super::{Options, first_line};
use crate::clock;
use crate::ledger::{Ledger, Ledgers};
use crate::model::{Body, Event};
use crate::outcome::Outcome;
use crate::wire::{QueueItemJson, WaitingJson};

/// Every branch `l` names, in the order first named; the task key when none is named.
pub(crate) fn branches(l: &Ledger) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in l.events() {
        if let Some(b) = &e.branch
            && !out.contains(b)
        {
            out.push(b.clone());
        }
    }
    if out.is_empty() {
        out.push(l.task.clone());
    }
    out
}

/// The events of `l` that concern `branch`: those naming it, and those naming no branch.
fn events_of(l: &Ledger, branch: &str) -> Vec<Event> {
    l.events()
        .filter(|e| e.branch.as_deref().is_none_or(|b| b == branch))
        .cloned()
        .collect()
}

fn ts(e: &Event) -> Timestamp {
    e.ts
}

/// Host and `cwd` of the newest `spawn` among `events`.
fn newest_spawn(events: &[Event]) -> (Option<String>, Option<String>) {
    events
        .iter()
        .rev()
        .find_map(|e| match &e.body {
            Body::Spawn { host, cwd, .. } => Some((Some(host.clone()), Some(cwd.clone()))),
            _ => None,
        })
        .unwrap_or((None, None))
}

/// The page of the newest `published` event.
fn pr_url(events: &[Event]) -> Option<String> {
    events.iter().rev().find_map(|e| match &e.body {
        Body::Published { url, .. } => Some(url.clone()),
        _ => None,
    })
}

/// The newest commit id the events name (the worker's head as far as the ledger knows).
fn newest_head(events: &[Event]) -> Option<gix::ObjectId> {
    events.iter().rev().find_map(|e| e.head)
}

/// Whether the worker was deleted after its newest attempt started (nothing is left to do).
fn deleted(events: &[Event]) -> bool {
    let last_start = events
        .iter()
        .rposition(|e| matches!(e.body, Body::Spawn { .. } | Body::Resume { .. }));
    events
        .iter()
        .enumerate()
        .any(|(i, e)| matches!(e.body, Body::Deleted { .. }) && last_start.is_none_or(|s| i > s))
}

/// What to fix before lifting, read from the reason's words (the ledger stores the
/// sentence `recover` wrote, `model::reason`'s `Display`).
fn fix_hint(
    why: &str,
    worktree: Option<&str>,
    host: Option<&str>,
    pr: Option<&str>,
) -> Option<String> {
    let wt = worktree.unwrap_or("the worktree");
    let w = why.to_ascii_lowercase();
    for op in ["rebase", "merge", "cherry-pick", "revert", "bisect"] {
        if w.contains(&format!("a {op} is in progress")) {
            return Some(format!(
                "finish or abort the {op} in {wt} (git -C {wt} status)"
            ));
        }
    }
    if w.contains("conflict") {
        return Some(format!(
            "resolve the conflicts in {wt} (git -C {wt} status)"
        ));
    }
    if w.contains("detached") {
        return Some(format!("put the detached commits in {wt} on a branch"));
    }
    if (w.contains("closed without merging")
        || w.contains("pull request")
        || w.contains("merge request"))
        && let Some(url) = pr
    {
        // The forge's own word (SPEC 1.3: merge request on GitLab).
        let noun = if w.contains("merge request") {
            "merge request"
        } else {
            "pull request"
        };
        return Some(format!("look at the {noun} {url}"));
    }
    if w.contains("maxattempts") {
        return Some(
            "read why the attempts failed (git recode log <branch>), fix the task or its prompt"
                .into(),
        );
    }
    if w.contains("needs-human") || w.contains("login") || w.contains("permission") {
        let on = host.map(|h| format!(" on {h}")).unwrap_or_default();
        return Some(format!("fix the agent's login, permissions or billing{on}"));
    }
    None
}

/// One worker (a branch of a task) as the lists see it: its events, and the host and
/// directory of its newest `spawn`.
struct Seen<'a> {
    task: &'a str,
    branch: String,
    events: Vec<Event>,
    host: Option<String>,
    worktree: Option<String>,
}

/// Where a worker stands now: in the attention queue, or on the waiting list.
enum Standing {
    Queue(QueueItemJson),
    Waiting(WaitingJson),
}

/// The queue item of a worker that needs a human ([`needs_human`]): its cause and why,
/// and the steps that lift it (a fix hint when one fits, then `record clear`).
fn human_item(
    s: &Seen,
    r: &crate::model::replay::Replay,
    task_attempts: u32,
    opts: &Options,
) -> Option<QueueItemJson> {
    let (cause, since, why) = needs_human(&s.events, r, task_attempts, opts)?;
    Some(queue_item(s, cause, since, why))
}

/// A worker the classifier (here, with its worktree at hand) calls `needs-human`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Human {
    /// Its task.
    pub task: String,
    /// `escalated`, `needs-human` (the last exit), `capped`, or `classified` (the state
    /// the worktree or the forge shows: an operation in progress, conflicts, a closed
    /// request, …).
    pub cause: &'static str,
    /// The classifier's reason, as `status` words it.
    pub why: String,
    /// Its newest activity (used when the ledger names no start of the problem).
    pub since: Timestamp,
    /// Its worktree.
    pub worktree: Option<String>,
    /// The host of its newest attempt.
    pub host: Option<String>,
}

/// Queue items of the workers the classifier calls `needs-human` that have no ledger
/// events (so no other part of the report sees them).
fn unledgered_humans(ledgers: &Ledgers, opts: &Options) -> Vec<QueueItemJson> {
    opts.at_hand
        .iter()
        .filter_map(|(branch, h)| Some((branch, h.as_ref()?)))
        .filter(|(branch, h)| {
            ledgers
                .by_task
                .get(&h.task)
                .is_none_or(|l| events_of(l, branch).is_empty())
        })
        .map(|(branch, h)| {
            let s = Seen {
                task: &h.task,
                branch: branch.clone(),
                events: Vec::new(),
                host: h.host.clone(),
                worktree: h.worktree.clone(),
            };
            queue_item(&s, h.cause, h.since, h.why.clone())
        })
        .collect()
}

/// The queue item of a worker that needs a human: `why`, what lifts it (what to fix, then
/// `git recode record clear <branch>`).
fn queue_item(s: &Seen, cause: &'static str, since: Timestamp, why: String) -> QueueItemJson {
    let pr = pr_url(&s.events);
    let branch = &s.branch;
    let mut lift: Vec<String> = fix_hint(
        &why,
        s.worktree.as_deref(),
        s.host.as_deref(),
        pr.as_deref(),
    )
    .map(|h| h.replace("<branch>", branch))
    .into_iter()
    .collect();
    lift.push(format!("git recode record clear {branch}"));
    QueueItemJson {
        task: s.task.to_string(),
        branch: branch.clone(),
        host: s.host.clone(),
        since: clock::whole_secs(since),
        cause: cause.into(),
        why,
        lift,
        worktree: s.worktree.clone(),
        pr_url: pr,
    }
}

/// The queue item of a worker pushed and waiting for someone to open its request
/// ([`pushed_waiting`]; SPEC 1.3: with no forge, that is work waiting for a human).
fn open_request_item(s: &Seen, opts: &Options) -> Option<QueueItemJson> {
    let (since, head) = pushed_waiting(&s.events, &s.branch)?;
    let branch = &s.branch;
    Some(QueueItemJson {
        task: s.task.to_string(),
        branch: branch.clone(),
        host: s.host.clone(),
        since: clock::whole_secs(since),
        cause: "open-request".into(),
        why: format!(
            "pushed {}: no forge can open its request; open it by hand",
            head.to_hex_with_len(12)
        ),
        lift: vec![format!(
            "open a pull request from {branch} into {base} (or mail it: git request-pull {base} {url} {branch})",
            base = opts.base,
            url = opts.remote_url,
        )],
        worktree: s.worktree.clone(),
        pr_url: None,
    })
}

/// The waiting entry of a worker whose last attempt exited blocked (lifted by `record
/// unblock`) or transient with a reset after `opts.now`; `None` otherwise.
fn waiting_item(s: Seen, r: &crate::model::replay::Replay, opts: &Options) -> Option<WaitingJson> {
    if !r.last_attempt_exited {
        return None;
    }
    let exit = r.last_exit.map(|i| &s.events[i])?;
    let since = clock::whole_secs(ts(exit));
    let branch = s.branch;
    if let Some(b) = &r.blocked {
        return Some(WaitingJson {
            task: s.task.to_string(),
            lift: Some(format!("git recode record unblock {branch}")),
            branch,
            host: s.host,
            on: "blocker".into(),
            until: None,
            blocker: Some(first_line(b, 100)),
            since,
        });
    }
    if r.last_outcome == Some(Outcome::Transient) && r.retry_after.is_some_and(|t| t > opts.now) {
        return Some(WaitingJson {
            task: s.task.to_string(),
            branch,
            host: s.host,
            on: "reset".into(),
            until: r.retry_after.map(clock::whole_secs),
            blocker: None,
            since,
            lift: None,
        });
    }
    None
}

/// Where `branch` of `l` stands, first match wins: needing a human, pushed and waiting
/// for its request, waiting on a blocker or a reset. `None` for a worker with no events,
/// deleted after its newest attempt, or in none of these.
fn standing(l: &Ledger, branch: String, task_attempts: u32, opts: &Options) -> Option<Standing> {
    let events = events_of(l, &branch);
    if events.is_empty() || deleted(&events) {
        return None;
    }
    let r = crate::model::replay::replay(&events);
    let (host, worktree) = newest_spawn(&events);
    let s = Seen {
        task: &l.task,
        branch,
        events,
        host,
        worktree,
    };
    let human = match opts.at_hand.get(&s.branch) {
        // The classifier decided here: its verdict and words; the ledger's cause and time
        // when it agrees (a standing escalation says more than the row that led to it).
        Some(verdict) => verdict.as_ref().map(|h| {
            let (cause, since) = needs_human(&s.events, &r, task_attempts, opts)
                .map_or((h.cause, h.since), |(cause, since, _)| (cause, since));
            queue_item(&s, cause, since, h.why.clone())
        }),
        None => human_item(&s, &r, task_attempts, opts),
    };
    if let Some(q) = human {
        return Some(Standing::Queue(q));
    }
    if let Some(q) = open_request_item(&s, opts) {
        return Some(Standing::Queue(q));
    }
    waiting_item(s, &r, opts).map(Standing::Waiting)
}

/// The attention queue (oldest first) and the waiting list (soonest end first) of every
/// worker in `ledgers`, from the whole ledger (`opts.since` does not apply: these are the
/// state now). A worker deleted after its newest attempt is in neither.
pub(crate) fn attention(
    ledgers: &Ledgers,
    opts: &Options,
) -> (Vec<QueueItemJson>, Vec<WaitingJson>) {
    let mut queue = Vec::new();
    let mut waiting = Vec::new();
    for l in ledgers.by_task.values() {
        let all: Vec<Event> = l.events().cloned().collect();
        let task_attempts = crate::model::replay::replay(&all).attempts;
        for branch in branches(l) {
            match standing(l, branch, task_attempts, opts) {
                Some(Standing::Queue(q)) => queue.push(q),
                Some(Standing::Waiting(w)) => waiting.push(w),
                None => {}
            }
        }
    }
    queue.extend(unledgered_humans(ledgers, opts));
    queue.sort_by(|a, b| (&a.since, &a.task, &a.branch).cmp(&(&b.since, &b.task, &b.branch)));
    waiting.sort_by(|a, b| {
        (a.until.is_none(), &a.until, &a.since, &a.branch).cmp(&(
            b.until.is_none(),
            &b.until,
            &b.since,
            &b.branch,
        ))
    });
    (queue, waiting)
}

/// When the newest `classified` event of `branch` is "pushed, open the pull request by
/// hand" (`publishable`/`none` on a head, SPEC 1.2 "The loop settles") with nothing newer
/// on that head: since when (the first such event on that head, when the problem began),
/// and the head.
fn pushed_waiting(events: &[Event], branch: &str) -> Option<(Timestamp, gix::ObjectId)> {
    let (state, action, _) = crate::model::replay::last_classified(events, branch)?;
    if state != "publishable" || action != "none" {
        return None;
    }
    let head = events
        .iter()
        .rev()
        .find(|e| matches!(e.body, Body::Classified { .. }))?
        .head?;
    if !crate::model::replay::pushed_by_hand(events, branch, head) || pr_url(events).is_some() {
        return None;
    }
    let since = events
        .iter()
        .find(|e| e.head == Some(head) && matches!(e.body, Body::Classified { .. }))
        .map(ts)?;
    Some((since, head))
}

/// Why a worker needs a human, first match wins: a standing escalation, a `needs-human`
/// last outcome, the cap reached without a passing gate on the newest head, or `recover`'s
/// newest classification since the last attempt and clear (`needs-human`).
/// Returns (cause, since, why).
fn needs_human(
    events: &[Event],
    r: &crate::model::replay::Replay,
    task_attempts: u32,
    opts: &Options,
) -> Option<(&'static str, Timestamp, String)> {
    let cleared = events
        .iter()
        .rposition(|e| matches!(e.body, Body::Cleared { .. }));
    let after_clear = |i: usize| cleared.is_none_or(|c| i > c);
    if let Some(reason) = &r.escalated {
        let at = events
            .iter()
            .enumerate()
            .rev()
            .find(|(i, e)| after_clear(*i) && matches!(e.body, Body::Escalated { .. }))
            .map(|(_, e)| ts(e))
            .unwrap_or(Timestamp::UNIX_EPOCH);
        return Some(("escalated", at, first_line(reason, 300)));
    }
    if r.last_outcome == Some(Outcome::NeedsHuman)
        && r.last_attempt_exited
        && let Some(exit) = r.last_exit.map(|i| &events[i])
    {
        let msg = match &exit.body {
            Body::Exit {
                message: Some(m), ..
            } => format!(": {}", first_line(m, 100)),
            _ => String::new(),
        };
        return Some((
            "needs-human",
            ts(exit),
            format!("the last attempt ended needs-human{msg}"),
        ));
    }
    if task_attempts >= opts.max_attempts
        && r.last_attempt_exited
        && newest_head(events).and_then(|h| crate::model::replay::gate_on(events, h)) != Some(true)
    {
        let at = r
            .last_exit
            .map(|i| ts(&events[i]))
            .unwrap_or(Timestamp::UNIX_EPOCH);
        return Some((
            "capped",
            at,
            format!(
                "{task_attempts} counted attempts reached recode.maxAttempts ({}) without a passing gate on the head",
                opts.max_attempts
            ),
        ));
    }
    let newest_start = events.iter().rposition(|e| {
        matches!(
            e.body,
            Body::Spawn { .. } | Body::Resume { .. } | Body::Cleared { .. }
        )
    });
    let (i, e) = events
        .iter()
        .enumerate()
        .rev()
        .find(|(_, e)| matches!(e.body, Body::Classified { .. }))?;
    match &e.body {
        Body::Classified { state, reason, .. }
            if *state == crate::model::State::NeedsHuman && newest_start.is_none_or(|s| i > s) =>
        {
            Some(("classified", ts(e), first_line(reason, 300)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::test_ledgers_on;

    fn spawn() -> Body {
        Body::test_spawn("h")
    }

    fn exit(outcome: Outcome) -> Body {
        Body::test_exit(outcome, None)
    }

    fn classified(state: crate::model::State, reason: &str) -> Body {
        Body::Classified {
            state,
            action: crate::model::Action::Escalate,
            reason: reason.into(),
            error: None,
        }
    }

    #[test]
    fn the_fix_names_the_request_in_the_forges_own_word() {
        let url = Some("https://forge.example/acme/widget/-/merge_requests/4");
        assert_eq!(
            fix_hint(
                "merge request !4: changes requested by bob (maxAttempts reached)",
                None,
                None,
                url
            ),
            Some(
                "look at the merge request https://forge.example/acme/widget/-/merge_requests/4"
                    .into()
            )
        );
        let url = Some("https://github.com/acme/widget/pull/4");
        assert_eq!(
            fix_hint("pull request #4: checks failing: ci", None, None, url),
            Some("look at the pull request https://github.com/acme/widget/pull/4".into())
        );
    }

    fn deleted() -> Body {
        Body::Deleted {
            worktree: None,
            ignored: vec![],
        }
    }

    #[test]
    fn capped_classified_and_deleted_workers() {
        let f = Outcome::Failed;
        let l = test_ledgers_on(&[
            // Task 1: three failed attempts, no gate: capped.
            ("1", "issue-1", "2026-11-20T09:00:00Z", spawn()),
            ("1", "issue-1", "2026-11-20T09:10:00Z", exit(f)),
            ("1", "issue-1", "2026-11-20T09:20:00Z", spawn()),
            ("1", "issue-1", "2026-11-20T09:30:00Z", exit(f)),
            ("1", "issue-1", "2026-11-20T09:40:00Z", spawn()),
            ("1", "issue-1", "2026-11-20T09:50:00Z", exit(f)),
            // Task 2: recover classified it needs-human after its attempt.
            ("2", "issue-2", "2026-11-20T09:00:00Z", spawn()),
            ("2", "issue-2", "2026-11-20T09:10:00Z", exit(f)),
            (
                "2",
                "issue-2",
                "2026-11-20T10:00:00Z",
                classified(
                    crate::model::State::NeedsHuman,
                    "a merge is in progress in /w/2",
                ),
            ),
            // Task 3: classified needs-human, then a new attempt: no longer stands.
            (
                "3",
                "issue-3",
                "2026-11-20T09:00:00Z",
                classified(
                    crate::model::State::NeedsHuman,
                    "a merge is in progress in /w/3",
                ),
            ),
            ("3", "issue-3", "2026-11-20T09:10:00Z", spawn()),
            ("3", "issue-3", "2026-11-20T09:20:00Z", exit(f)),
            // Task 4: escalated, then deleted: done.
            ("4", "issue-4", "2026-11-20T09:00:00Z", spawn()),
            (
                "4",
                "issue-4",
                "2026-11-20T09:10:00Z",
                exit(Outcome::NeedsHuman),
            ),
            ("4", "issue-4", "2026-11-20T09:20:00Z", deleted()),
        ]);
        let opts = Options {
            now: clock::parse("2026-11-20T12:00:00Z").unwrap(),
            since: None,
            max_attempts: 3,
            base: "<base>".into(),
            remote_url: "<remote URL>".into(),
            at_hand: Default::default(),
        };
        let (queue, waiting) = attention(&l, &opts);
        let got: Vec<String> = queue
            .iter()
            .map(|q| format!("{} {} {}", q.branch, q.cause, clock::format_secs(q.since)))
            .collect();
        assert_eq!(
            got,
            [
                "issue-1 capped 2026-11-20T09:50:00Z",
                "issue-2 classified 2026-11-20T10:00:00Z",
            ]
        );
        assert_eq!(
            queue[1].lift,
            [
                "finish or abort the merge in /w (git -C /w status)",
                "git recode record clear issue-2"
            ]
        );
        assert!(waiting.is_empty());
    }
}
