//! A hung agent (SPEC 1.3 "The loop as people run it"): its pid alive with the recorded
//! start token, no activity for `recode.hungAfter`. `recover` ends its process group —
//! the token re-checked at the moment of acting — and ledgers an `exit` (`rc` 137,
//! `outcome` `failed`, the reason), so the next tick resumes it and a loop never waits on
//! a live agent to decide the others.

use super::{Outcome, RecoverError, Run, Step, failed, guard, step};
use crate::model::Body;
use crate::model::{Action, Snapshot, Worker};
use crate::process::{self, Ended};

use crate::model::event::{ENDED_BY_US, KILLED_RC};

/// End the hung agent of `w` and ledger its exit.
///
/// Errors: [`RecoverError`] when the repository or the ledger cannot be read or written.
pub(super) fn run(r: &Run, w: &Worker) -> Result<Step, RecoverError> {
    let (now_w, snap) = match guard::recheck(r, w, Action::Kill)? {
        Ok(x) => x,
        Err(s) => return Ok(s),
    };
    let Some((pid, token)) = recorded_pid(r.repo, &snap, r.cfg.command_timeout) else {
        return Ok(failed(
            w,
            "no pid of this host recorded for its newest attempt",
            false,
        ));
    };
    let reason = now_w.reason.to_string();
    let ended = process::end_worker(pid, &token);
    if ended == Ended::Gone {
        return Ok(step(
            w,
            Outcome::Skipped,
            format!("re-checked: pid {pid} is no longer the worker (its start token changed)"),
        ));
    }
    r.classified(&now_w)?;
    let message = format!("{reason}; {ENDED_BY_US}");
    let me = crate::hosts::me(r.repo, r.cfg.command_timeout);
    r.append(
        &now_w,
        now_w.head,
        Body::Exit {
            rc: KILLED_RC,
            outcome: crate::outcome::Outcome::Failed,
            message: Some(message),
            retry_after: None,
            fresh: None,
            blocker: None,
            session_id: None,
            ends: crate::hosts::ends_now(&snap.events, &now_w.branch, |h, by_id| {
                me.is_named(h, by_id)
            }),
        },
    )?;
    let what = match ended {
        Ended::Group => "its process group",
        _ => "its pid (it shares its process group)",
    };
    Ok(step(
        w,
        Outcome::Done,
        format!("{reason}: ended {what} (pid {pid}), exit {KILLED_RC} ledgered"),
    ))
}

/// The pid and start token of the branch's newest attempt, when it is a `spawn` recorded
/// on this machine with both (SPEC 1.3: a pid recorded here is probed here, whatever the
/// host's label).
fn recorded_pid(
    repo: &gix::Repository,
    s: &Snapshot,
    timeout: std::time::Duration,
) -> Option<(u32, String)> {
    let r = s.replayed();
    let me = crate::hosts::me(repo, timeout);
    match &s.events[r.last_attempt?].body {
        Body::Spawn {
            host,
            label,
            pid: Some(pid),
            pid_start: Some(token),
            ..
        } if me.same_machine(host, label.is_some()) => Some((*pid, token.clone())),
        _ => None,
    }
}
