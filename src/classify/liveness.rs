//! Liveness (SPEC "Liveness") and the activity it reads (SPEC "stalled"): whether the
//! newest attempt is running, stalled, parked on a limit or exited, with its evidence.

use crate::clock;
use crate::model::Body;
use crate::model::reason::RunningBy;
use crate::model::replay::Replay;
use crate::model::{Liveness, Snapshot};

/// Activity (SPEC "stalled"): the newest of the worker's ledger events, commits, file
/// mtimes and transcript, each after git-recode's own last action; a time after `now` is
/// ignored (a skewed clock). Returns `(last activity, idle seconds, fresh)`.
pub(super) fn activity(
    s: &Snapshot,
    r: &Replay,
    ev: &mut Vec<String>,
) -> (Option<jiff::Timestamp>, Option<i64>, bool) {
    let wt = s.worktree.as_ref();
    // An own action stamped in the future (another host's clock, or a stamp kept after
    // a newer event: SPEC 1.3) would hide every change made before it: not counted.
    let own = r.last_own_action.filter(|o| *o <= s.now);
    let file_activity = wt
        .and_then(|w| w.newest_mtime)
        .filter(|m| own.is_none_or(|o| *m > o));
    let transcript = s.transcript_mtime.filter(|m| own.is_none_or(|o| *m > o));
    let signals = [
        r.last_worker_event,
        s.newest_commit,
        file_activity,
        transcript,
    ];
    // A timestamp from the future (a skewed clock, a synced ledger) is not activity
    // (SPEC "Outcomes"): it would keep a dead worker running.
    let future = signals
        .iter()
        .flatten()
        .filter(|t| **t > s.now)
        .max()
        .copied();
    let last_activity = signals
        .iter()
        .flatten()
        .filter(|t| **t <= s.now)
        .max()
        .copied();
    if let Some(t) = future {
        ev.push(format!(
            "ignored activity stamped in the future ({}): a skewed clock",
            clock::format_secs(t)
        ));
    }
    let idle = last_activity.map(|t| (s.now.as_second() - t.as_second()).max(0));
    let fresh_activity = idle.is_some_and(|i| i < s.stall_after.as_secs());
    if let (Some(t), Some(i)) = (last_activity, idle) {
        ev.push(format!(
            "last activity {} ({} ago; stalled after {})",
            clock::format_secs(t),
            clock::human_secs(i),
            clock::human_secs(s.stall_after.as_secs())
        ));
    } else {
        ev.push("no activity recorded".into());
    }

    (last_activity, idle, fresh_activity)
}

/// Liveness (SPEC "Liveness"): from the newest attempt, its exit, the pid probe and
/// fresh activity; when `running`, the fact it was decided on.
pub(super) fn liveness(
    s: &Snapshot,
    r: &Replay,
    (fresh_activity, idle): (bool, Option<i64>),
    ev: &mut Vec<String>,
) -> (Liveness, Option<RunningBy>) {
    let attempt_desc = r.last_attempt.map(|i| {
        let e = &s.events[i];
        match &e.body {
            Body::Spawn { attempt, .. } | Body::Resume { attempt, .. } => {
                format!(
                    "attempt {attempt} ({} at {})",
                    e.body.kind(),
                    crate::clock::format(e.ts)
                )
            }
            _ => format!(
                "an exit at {} with no recorded start",
                crate::clock::format(e.ts)
            ),
        }
    });
    match (&attempt_desc, r.last_attempt_exited) {
        (None, _) => {
            ev.push("liveness unknown: no attempt in the ledger".into());
            (Liveness::Unknown, None)
        }
        (Some(a), true) if r.exit_unnamed && s.pid_alive == Some(true) => {
            ev.push(format!(
                "running: the newest {a} is followed by an exit naming no branch, and its own pid is alive"
            ));
            (Liveness::Running, Some(RunningBy::PidAlive))
        }
        (Some(a), true) => {
            ev.push(format!("exited: the newest {a} has an exit after it"));
            (Liveness::Exited, None)
        }
        (Some(a), false) => {
            // A gone process waits on nothing: parked only while alive or not probeable.
            if let Some(until) = s.parked_until.filter(|_| s.pid_alive != Some(false)) {
                return parked(s, a, until, fresh_activity, ev);
            }
            // SPEC 1.3: a live pid idle for `recode.hungAfter` is hung.
            if let Some(i) =
                idle.filter(|i| s.pid_alive == Some(true) && *i >= s.hung_after.as_secs())
            {
                ev.push(format!(
                    "stalled: the newest {a} has no exit; hung: pid alive, no activity for {}",
                    clock::human_secs(i)
                ));
                return (Liveness::Stalled, None);
            }
            if s.pid_alive == Some(true) {
                ev.push(format!(
                    "running: the newest {a} has no exit and its pid is alive"
                ));
                (Liveness::Running, Some(RunningBy::PidAlive))
            } else if fresh_activity {
                ev.push(format!(
                    "running: the newest {a} has no exit and activity is recent"
                ));
                (Liveness::Running, Some(RunningBy::Activity))
            } else {
                let pid = match s.pid_alive {
                    Some(false) => "its pid is gone",
                    _ => "no pid probeable here",
                };
                ev.push(format!(
                    "stalled: the newest {a} has no exit, no activity for {}, {pid}",
                    clock::human_secs(s.stall_after.as_secs())
                ));
                (Liveness::Stalled, None)
            }
        }
    }
}

/// Liveness of an open attempt parked on a limit (SPEC 1.2): `running` until the limit's
/// reset plus `recode.stallAfter`, and after that while activity is recent; then
/// `stalled`, even with its pid alive.
fn parked(
    s: &Snapshot,
    a: &str,
    until: jiff::Timestamp,
    fresh_activity: bool,
    ev: &mut Vec<String>,
) -> (Liveness, Option<RunningBy>) {
    let deadline = until.as_second().saturating_add(s.stall_after.as_secs());
    if s.now.as_second() <= deadline {
        ev.push(format!(
            "running: the newest {a} has no exit and its newest output waits on a limit until {}",
            clock::format_secs(until)
        ));
        (Liveness::Running, Some(RunningBy::Parked { until }))
    } else if fresh_activity {
        ev.push(format!(
            "running: the newest {a} has no exit, its limit reset at {} and activity is recent",
            clock::format_secs(until)
        ));
        (Liveness::Running, Some(RunningBy::Activity))
    } else {
        ev.push(format!(
            "stalled: the newest {a} has no exit and waited on a limit that reset at {}, no activity for {} since",
            clock::format_secs(until),
            clock::human_secs(s.stall_after.as_secs())
        ));
        (Liveness::Stalled, None)
    }
}
