//! Replaying a task's ledger into the facts every command asks of it: counted attempts,
//! the last outcome, a standing escalation, "phantom since the last exit", the gate on a
//! head. Every "only once" rule reads these, so `recover`, `verify` and `resume` agree
//! (SPEC "attempt", `cleared`, `escalated`, `phantom`).

use jiff::Timestamp;

use super::{Body, Event};
use crate::clock;
use crate::outcome::Outcome;

/// What replaying a ledger yields (SPEC: state is derived by replaying events).
#[derive(Clone, Debug, Default)]
pub struct Replay {
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
}

fn ts_of(e: &Event) -> Option<Timestamp> {
    clock::parse(&e.ts).ok()
}

/// Replay `events` (in ledger order).
pub fn replay(events: &[Event]) -> Replay {
    let mut r = Replay::default();
    let cleared = events
        .iter()
        .rposition(|e| matches!(e.body, Body::Cleared { .. }));
    let mut open_attempt = false;
    let mut counted_open: Option<bool> = None; // current attempt after cleared, outcome not yet known
    for (i, e) in events.iter().enumerate() {
        let after_clear = cleared.is_none_or(|c| i > c);
        let ts = ts_of(e);
        if e.body.is_worker_activity() {
            r.last_worker_event = r.last_worker_event.max(ts);
        }
        if e.body.is_own_action() {
            r.last_own_action = r.last_own_action.max(ts);
        }
        match &e.body {
            Body::Spawn { session_id, .. } | Body::Resume { session_id, .. } => {
                if let Some(true) = counted_open.take() {
                    r.attempts += 1;
                }
                r.last_attempt = Some(i);
                r.last_attempt_exited = false;
                open_attempt = true;
                if after_clear {
                    counted_open = Some(true);
                }
                if session_id.is_some() {
                    r.session_id = session_id.clone();
                }
            }
            Body::Exit {
                outcome,
                retry_after,
                blocker,
                session_id,
                ..
            } => {
                if !open_attempt {
                    // An exit with no attempt open: the loop never recorded the spawn.
                    r.last_attempt = Some(i);
                    if after_clear {
                        counted_open = Some(true);
                    }
                }
                open_attempt = false;
                r.last_attempt_exited = true;
                if session_id.is_some() {
                    r.session_id = session_id.clone();
                }
                if after_clear {
                    if counted_open.take().is_some()
                        && !matches!(outcome, Outcome::Transient | Outcome::Blocked)
                    {
                        r.attempts += 1;
                    }
                    r.last_exit = Some(i);
                    r.last_outcome = Some(*outcome);
                    r.retry_after = if *outcome == Outcome::Transient {
                        retry_after.as_deref().and_then(|t| clock::parse(t).ok())
                    } else {
                        None
                    };
                    r.blocked = (*outcome == Outcome::Blocked)
                        .then(|| blocker.clone().unwrap_or_else(|| "a blocker".into()));
                }
            }
            Body::Unblocked => r.blocked = None,
            Body::Escalated { reason } if after_clear => r.escalated = Some(reason.clone()),
            Body::Milestone { phase, .. } => r.phase = Some(phase.clone()),
            _ => {}
        }
    }
    if let Some(true) = counted_open {
        r.attempts += 1; // an attempt with no exit (killed, stalled) counts
    }
    r
}

/// The newest gate verdict for exactly `head`: a `gate` event or a `tests-green`
/// milestone on it is a pass; a later failed gate on the same head cancels it.
pub fn gate_on(events: &[Event], head: &str) -> Option<bool> {
    events
        .iter()
        .filter(|e| e.head.as_deref() == Some(head))
        .filter_map(|e| match &e.body {
            Body::Gate { passed, .. } => Some(*passed),
            Body::Milestone { phase, .. } if phase == "tests-green" => Some(true),
            _ => None,
        })
        .next_back()
}

/// A `phantom` event stands since the last `exit` (SPEC: phantom is recorded once per
/// claimed success). `recover` and `verify` both ask this before writing one.
pub fn phantom_since_last_exit(events: &[Event]) -> bool {
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
pub fn standing_escalation(events: &[Event]) -> Option<String> {
    replay(events).escalated
}

/// How many `recover` runs in a row failed `action` on `head`, counting back from the
/// newest event: `classified` events carrying an `error` for that action and head; a
/// failure of another step or head, or any `wip`, `published`, `deleted`, `escalated` or
/// `cleared` event, ends the streak (SPEC safety rule 0: three in a row escalate).
pub fn failure_streak(events: &[Event], action: &str, head: Option<&str>) -> u32 {
    let mut n = 0;
    for e in events.iter().rev() {
        match &e.body {
            Body::Classified {
                action: a,
                error: Some(_),
                ..
            } => {
                if a == action && e.head.as_deref() == head {
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

/// Whether an event is about `branch` (an event without a branch, from old ledgers, is
/// about every branch of its task: SPEC 1.2 "Several branches of one task").
fn on_branch(e: &Event, branch: &str) -> bool {
    e.branch.as_deref().is_none_or(|b| b == branch)
}

/// The newest `classified` event `recover` wrote for `branch`: `(state, action, reason)`
/// (SPEC 1.2 "The loop settles": a `classified` event is written only when one of them
/// differs from this).
pub fn last_classified<'a>(
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
pub fn pushed_by_hand(events: &[Event], branch: &str, head: &str) -> bool {
    events.iter().any(|e| {
        on_branch(e, branch)
            && e.head.as_deref() == Some(head)
            && matches!(&e.body, Body::Classified { state, action, error: None, .. }
                if state == "publishable" && action == "none")
    })
}

/// What the newest WIP step on `branch` left out: the paths (nested repositories,
/// submodules, oversize files, anything git would not stage). The same content stays left
/// out on later heads (an agent's commits do not capture it either), so the head is not
/// compared; empty when the newest WIP step left nothing out.
pub fn left_out_last(events: &[Event], branch: &str) -> Vec<String> {
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
