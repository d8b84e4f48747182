//! Replaying a task's ledger into the facts every command asks of it: counted attempts,
//! the last outcome, a standing escalation, "phantom since the last exit", the gate on a
//! head. Every "only once" rule reads these, so `recover`, `verify` and `resume` agree
//! (SPEC "attempt", `cleared`, `escalated`, `phantom`).

use jiff::Timestamp;

use super::event::Ends;
use super::{Action, Body, Event, State};
use crate::clock;
use crate::outcome::Outcome;

/// What replaying a ledger yields (SPEC: state is derived by replaying events).
#[derive(Clone, Debug, Default)]
pub(crate) struct Replay {
    /// Counted attempts after the last `cleared`.
    pub attempts: u32,
    /// Index (into the events) of the newest attempt (`spawn`, `resume`, or an exit with no attempt open).
    pub last_attempt: Option<usize>,
    /// The newest attempt has an exit after it.
    pub last_attempt_exited: bool,
    /// The newest exit after the last `cleared`.
    pub last_exit: Option<usize>,
    /// Its outcome.
    pub last_outcome: Option<Outcome>,
    /// Its `retry_after` when transient.
    pub retry_after: Option<Timestamp>,
    /// A standing escalation's reason (an `escalated` after the last `cleared`).
    pub escalated: Option<String>,
    /// A `blocked` outcome with no `unblocked` after it.
    pub blocked: Option<String>,
    /// Newest milestone phase.
    pub phase: Option<String>,
    /// Newest session id.
    pub session_id: Option<String>,
    /// Newest worker signal (spawn, resume, exit, milestone, recorded gate).
    pub last_worker_event: Option<Timestamp>,
    /// Newest event git-recode itself wrote.
    pub last_own_action: Option<Timestamp>,
    /// The newest attempt named this branch and was ended by an exit that named no branch
    /// (an old ledger's line): such an exit never makes a branch whose own pid is alive
    /// anything but `running` (SPEC 1.2 "Several branches of one task"). Only
    /// [`replay_for`] sets it.
    pub exit_unnamed: bool,
}

/// Replay `events` (in ledger order) as one task: every branch's events together.
pub(crate) fn replay(events: &[Event]) -> Replay {
    replay_kept(events, |_| true)
}

/// Replay `events` for the worker on `branch` (SPEC 1.2 "Several branches of one task"):
/// the last attempt, its exit, outcome, `retry_after`, session and the activity are this
/// branch's own (events naming it, or naming no branch); counted attempts, escalation,
/// blocker and phase stay the task's, over all its branches. Indices still point into
/// `events`. A branch with no attempt of its own has `last_attempt: None` (`unknown`).
pub(crate) fn replay_for(events: &[Event], branch: &str) -> Replay {
    let task = replay(events);
    let own = replay_kept(events, |e| e.branch.as_deref().is_none_or(|b| b == branch));
    Replay {
        last_attempt: own.last_attempt,
        last_attempt_exited: own.last_attempt_exited,
        last_exit: own.last_exit,
        last_outcome: own.last_outcome,
        retry_after: own.retry_after,
        session_id: own.session_id,
        last_worker_event: own.last_worker_event,
        last_own_action: own.last_own_action,
        exit_unnamed: own.exit_unnamed,
        ..task
    }
}

/// Replay the events `keep` accepts; `cleared` is the task's (over every event).
fn replay_kept(events: &[Event], keep: impl Fn(&Event) -> bool) -> Replay {
    let cleared = events
        .iter()
        .rposition(|e| matches!(e.body, Body::Cleared { .. }));
    let mut w = Walk::default();
    for (i, e) in events.iter().enumerate().filter(|(_, e)| keep(e)) {
        let after_clear = cleared.is_none_or(|c| i > c);
        if e.body.is_worker_activity() {
            w.r.last_worker_event = w.r.last_worker_event.max(Some(e.ts));
        }
        if e.body.is_own_action() {
            w.r.last_own_action = w.r.last_own_action.max(Some(e.ts));
        }
        match &e.body {
            Body::Spawn { session_id, .. } | Body::Resume { session_id, .. } => {
                w.attempt(i, e, session_id, after_clear);
            }
            Body::Exit { .. } => w.exit(i, e, after_clear),
            Body::Unblocked => w.r.blocked = None,
            Body::Escalated { reason } if after_clear => w.r.escalated = Some(reason.clone()),
            Body::Milestone { phase, .. } => w.r.phase = Some(phase.clone()),
            _ => {}
        }
    }
    if let Some(true) = w.counted_open {
        w.r.attempts += 1; // an attempt with no exit (killed, stalled) counts
    }
    w.r
}

/// One replay as it walks the events, in ledger order.
#[derive(Default)]
struct Walk {
    /// What it has found so far.
    r: Replay,
    /// An attempt is open (no exit after it yet).
    open_attempt: bool,
    /// The open attempt's event named a branch.
    open_named: bool,
    /// The current attempt, after the last `cleared`, whose outcome is not yet known.
    counted_open: Option<bool>,
    /// The newest attempt's number and host, when its event names a host (itself or,
    /// for a `resume` from before 1.2, an attempt before it).
    newest: Option<Ends>,
    /// The host of the newest attempt that named one.
    host: Option<String>,
}

impl Walk {
    /// A `spawn` or `resume` (event `i`, `e`): a new attempt; the one before it counts.
    fn attempt(&mut self, i: usize, e: &Event, session_id: &Option<String>, after_clear: bool) {
        if let Some(true) = self.counted_open.take() {
            self.r.attempts += 1;
        }
        self.r.last_attempt = Some(i);
        self.r.last_attempt_exited = false;
        self.r.exit_unnamed = false;
        let (attempt, host) = match &e.body {
            Body::Spawn { attempt, host, .. } => (*attempt, Some(host)),
            Body::Resume { attempt, host, .. } => (*attempt, host.as_ref()),
            _ => (0, None),
        };
        if let Some(h) = host {
            self.host = Some(h.clone());
        }
        self.newest = self.host.clone().map(|host| Ends { attempt, host });
        self.open_attempt = true;
        self.open_named = e.branch.is_some();
        if after_clear {
            self.counted_open = Some(true);
        }
        if session_id.is_some() {
            self.r.session_id = session_id.clone();
        }
    }

    /// An `exit` (event `i`, `e`): the attempt's end; after the last `cleared`, its
    /// outcome (healed when an old ledger's `failed` reads transient today) decides the
    /// count, the last outcome, `retry_after` and the blocker.
    fn exit(&mut self, i: usize, e: &Event, after_clear: bool) {
        let Body::Exit {
            outcome,
            retry_after,
            blocker,
            session_id,
            rc,
            message,
            ends,
            ..
        } = &e.body
        else {
            return;
        };
        // SPEC 1.3: an exit naming an attempt other than the newest is the late news of
        // an earlier attempt (a host cut off while another took its worker over): it
        // ends nothing here, and the newest attempt's outcome is not its.
        if let (Some(named), Some(newest)) = (ends, &self.newest)
            && named != newest
        {
            return;
        }
        // Old ledgers heal: a `failed` whose message reads transient today. A healed
        // reset time is kept to the second, as a stored one is.
        let (outcome, retry_after) =
            match crate::outcome::reread(*outcome, *rc, message.as_deref(), e.ts) {
                Some((o, at)) => (o, at.map(|t| clock::from_secs(t.as_second()))),
                None => (*outcome, *retry_after),
            };
        if !self.open_attempt {
            // An exit with no attempt open: the loop never recorded the spawn.
            self.r.last_attempt = Some(i);
            if after_clear {
                self.counted_open = Some(true);
            }
        }
        self.r.exit_unnamed = self.open_attempt && self.open_named && e.branch.is_none();
        self.open_attempt = false;
        self.r.last_attempt_exited = true;
        if session_id.is_some() {
            self.r.session_id = session_id.clone();
        }
        if !after_clear {
            return;
        }
        if self.counted_open.take().is_some()
            && !matches!(outcome, Outcome::Transient | Outcome::Blocked)
        {
            self.r.attempts += 1;
        }
        self.r.last_exit = Some(i);
        self.r.last_outcome = Some(outcome);
        self.r.retry_after = (outcome == Outcome::Transient)
            .then_some(retry_after)
            .flatten();
        self.r.blocked = (outcome == Outcome::Blocked)
            .then(|| blocker.clone().unwrap_or_else(|| "a blocker".into()));
    }
}

/// Whether the `exit` `e` ends the attempt `attempt` (SPEC 1.3): it names that attempt,
/// or names none (a ledger line from before [`Ends`]).
pub(crate) fn exit_ends(e: &Event, attempt: &Ends) -> bool {
    matches!(&e.body, Body::Exit { ends, .. } if ends.as_ref().is_none_or(|n| n == attempt))
}

/// The newest gate verdict for exactly `head`: a `gate` event or a `tests-green`
/// milestone on it is a pass; a later failed gate on the same head cancels it.
pub(crate) fn gate_on(events: &[Event], head: gix::ObjectId) -> Option<bool> {
    events
        .iter()
        .filter(|e| e.head == Some(head))
        .filter_map(|e| match &e.body {
            Body::Gate { passed, .. } => Some(*passed),
            Body::Milestone { phase, .. } if phase == "tests-green" => Some(true),
            _ => None,
        })
        .next_back()
}

/// Whether the pass [`gate_on`] finds for `head` is the agent's own claim: a `tests-green`
/// milestone, not a `gate` event (SPEC 1.3: with `recode.gate` unset the reason says so).
pub(crate) fn gate_claimed(events: &[Event], head: gix::ObjectId) -> bool {
    events
        .iter()
        .rfind(|e| {
            e.head == Some(head)
                && match &e.body {
                    Body::Gate { .. } => true,
                    Body::Milestone { phase, .. } => phase == "tests-green",
                    _ => false,
                }
        })
        .is_some_and(|e| matches!(e.body, Body::Milestone { .. }))
}

/// The reason a `phantom` event gives (SPEC table of kinds), written by `recover` and
/// `verify`.
pub(crate) const PHANTOM_REASON: &str =
    "the last exit claimed success but the forge has no pull request for the branch";

/// A `phantom` event stands since the last `exit` (SPEC: phantom is recorded once per
/// claimed success). `recover` and `verify` both ask this before writing one.
pub(crate) fn phantom_since_last_exit(events: &[Event]) -> bool {
    let last_exit = events
        .iter()
        .rposition(|e| matches!(e.body, Body::Exit { .. }));
    events
        .iter()
        .enumerate()
        .any(|(i, e)| matches!(e.body, Body::Phantom { .. }) && last_exit.is_none_or(|x| i > x))
}

/// The reason of the escalation that stands (an `escalated` after the last `cleared`):
/// `recover` and `resume` write `escalated` only when this is `None` (SPEC: once per
/// escalation).
pub(crate) fn standing_escalation(events: &[Event]) -> Option<String> {
    replay(events).escalated
}

/// How many `recover` runs in a row failed `action` on `head`, counting back from the
/// newest event: `classified` events carrying an `error` for that action and head; a
/// failure of another step or head, or any `wip`, `published`, `deleted`, `escalated` or
/// `cleared` event, ends the streak (SPEC safety rule 0: three in a row escalate).
pub(crate) fn failure_streak(events: &[Event], action: Action, head: Option<gix::ObjectId>) -> u32 {
    let mut n = 0;
    for e in events.iter().rev() {
        match &e.body {
            Body::Classified {
                action: a,
                error: Some(_),
                ..
            } => {
                if *a == action && e.head == head {
                    n += 1;
                } else {
                    break;
                }
            }
            Body::Wip { .. }
            | Body::Published { .. }
            | Body::Deleted { .. }
            | Body::Escalated { .. }
            | Body::Cleared { .. } => break,
            _ => {}
        }
    }
    n
}

/// The attempt number a new `spawn` or `resume` takes: one more than the `spawn` and
/// `resume` events in `events` (SPEC "attempt": numbered in the task's ledger, counting
/// every start, before and after a `cleared`). Asked inside the append's
/// compare-and-swap ([`crate::ledger::append_with`]), so concurrent starts never share a number.
pub(crate) fn next_attempt(events: &[Event]) -> u32 {
    let starts = events
        .iter()
        .filter(|e| matches!(e.body, Body::Spawn { .. } | Body::Resume { .. }))
        .count();
    u32::try_from(starts).unwrap_or(u32::MAX).saturating_add(1)
}

/// Whether a `milestone` of `phase` on commit `head` is already ledgered (SPEC
/// "milestone": one per head and phase, whether the hook or a pickup writes it).
pub(crate) fn milestone_ledgered(events: &[Event], head: gix::ObjectId, phase: &str) -> bool {
    events.iter().any(|e| {
        e.head == Some(head) && matches!(&e.body, Body::Milestone { phase: p, .. } if p == phase)
    })
}

/// The streak a transient exit being recorded now extends: the trailing transient exits
/// after the last `cleared`, plus one for this one (SPEC "Outcomes": the backoff doubles
/// for each consecutive transient exit of the task).
pub(crate) fn transient_streak(events: &[Event]) -> u32 {
    let since_cleared = events
        .iter()
        .rposition(|e| matches!(e.body, Body::Cleared { .. }))
        .map_or(0, |i| i + 1);
    let previous: Vec<Outcome> = events[since_cleared..]
        .iter()
        .filter_map(|e| match &e.body {
            Body::Exit { outcome, .. } => Some(*outcome),
            _ => None,
        })
        .collect();
    crate::outcome::backoff::transient_streak(&previous)
}

/// Whether an event is about `branch` (an event without a branch, from old ledgers, is
/// about every branch of its task: SPEC 1.2 "Several branches of one task").
fn on_branch(e: &Event, branch: &str) -> bool {
    e.branch.as_deref().is_none_or(|b| b == branch)
}

/// The newest `classified` event `recover` wrote for `branch`: `(state, action, reason)`
/// (SPEC 1.2 "The loop settles": a `classified` event is written only when one of them
/// differs from this).
pub(crate) fn last_classified<'a>(
    events: &'a [Event],
    branch: &str,
) -> Option<(&'a str, &'a str, &'a str)> {
    events
        .iter()
        .filter(|e| on_branch(e, branch))
        .filter_map(|e| match &e.body {
            Body::Classified {
                state,
                action,
                reason,
                ..
            } => Some((state.as_str(), action.as_str(), reason.as_str())),
            _ => None,
        })
        .next_back()
}

/// Whether `recover` pushed `branch` at exactly `head` where no forge could open its pull
/// request: its `classified` event `publishable`/`none` on that head (SPEC 1.2 "The loop
/// settles": pushed once per head, then `none` until the head changes or a forge answers).
pub(crate) fn pushed_by_hand(events: &[Event], branch: &str, head: gix::ObjectId) -> bool {
    events.iter().any(|e| {
        on_branch(e, branch)
            && e.head == Some(head)
            && matches!(&e.body, Body::Classified { state, action, error: None, .. }
                if *state == State::Publishable && *action == Action::None)
    })
}

/// What the newest WIP step on `branch` left out: the paths (nested repositories,
/// submodules, oversize files, anything git would not stage). The same content stays left
/// out on later heads (an agent's commits do not capture it either), so the head is not
/// compared; empty when the newest WIP step left nothing out.
pub(crate) fn left_out_last(events: &[Event], branch: &str) -> Vec<String> {
    events
        .iter()
        .filter(|e| on_branch(e, branch))
        .filter_map(|e| match &e.body {
            Body::Wip { left_out, .. } => Some(left_out.clone()),
            _ => None,
        })
        .next_back()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::Outcome;

    fn ev(i: i64, body: Body) -> Event {
        let t = crate::clock::parse("2026-11-29T12:00:00Z").unwrap()
            + jiff::SignedDuration::from_secs(i);
        let mut e = Event::new(t, "1", Some("issue-1"), body);
        e.seq = i as u64;
        e
    }

    fn exit(ends: Option<(u32, &str)>) -> Body {
        Body::test_exit(Outcome::Failed, ends)
    }

    /// A's spawn (attempt 1), B's takeover resume (attempt 2), then A's exit ledgered late.
    fn taken_over_then(late: Body) -> Vec<Event> {
        let spawn = Body::test_spawn("a");
        let resume = Body::test_resume(2, Some("b"));
        vec![ev(0, spawn), ev(1, resume), ev(3600, late)]
    }

    /// SPEC 1.3 (seed 9181 of the hosts simulation): an exit naming the attempt taken over
    /// ends nothing of the taker's; one naming the taker's attempt, or none (an old
    /// line), ends it.
    #[test]
    fn an_exit_ends_the_attempt_it_names() {
        let r = replay_for(&taken_over_then(exit(Some((1, "a")))), "issue-1");
        assert_eq!(
            (
                r.last_attempt,
                r.last_attempt_exited,
                r.last_exit,
                r.attempts
            ),
            (Some(1), false, None, 2)
        );
        let r = replay_for(&taken_over_then(exit(Some((2, "b")))), "issue-1");
        assert_eq!(
            (
                r.last_attempt,
                r.last_attempt_exited,
                r.last_exit,
                r.attempts
            ),
            (Some(1), true, Some(2), 2)
        );
        let r = replay_for(&taken_over_then(exit(None)), "issue-1");
        assert_eq!((r.last_attempt_exited, r.last_exit), (true, Some(2)));
        assert!(exit_ends(
            &ev(9, exit(None)),
            &Ends {
                attempt: 2,
                host: "b".into()
            }
        ));
        assert!(!exit_ends(
            &ev(9, exit(Some((2, "a")))),
            &Ends {
                attempt: 2,
                host: "b".into()
            }
        ));
    }
}
