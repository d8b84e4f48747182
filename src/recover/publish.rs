//! `publish`: re-run the gate (when `recode.gate` is set), push the branch and open its
//! pull request (or find the one that exists). A worker is never published from a
//! detached worktree, with a held secret, or when the forge failed in this run (the
//! classifier's overrides; the guard re-checks them at the moment of acting).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::{Outcome, RecoverError, Run, Step, failed, failpoint, guard, push, step};
use crate::model::{Action, Worker};
use crate::model::{Body, GateBy};
use crate::{forge, git};

/// Carry out one `publish`.
///
/// Errors: [`RecoverError`] when the ledger cannot be written; a failed gate is a
/// `failed` step (a result, not an error); a rejected push or a forge error is a
/// `failed` step that makes the exit code 1.
pub(super) fn run(r: &Run, w: &Worker) -> Result<Step, RecoverError> {
    let (now_w, snap) = match guard::recheck(r, w, Action::Publish)? {
        Ok(v) => v,
        Err(s) => return Ok(s),
    };
    r.classified(&now_w)?;
    let dir = snap.worktree.as_ref().map(|f| PathBuf::from(&f.path));
    if let (Some(gate), Some(dir)) = (&r.cfg.gate, &dir)
        && let Some(s) = check_gate(r, w, &now_w, gate, dir)?
    {
        return Ok(s);
    }
    if forge::remote_url(r.repo, &r.cfg.remote).is_none() {
        return Ok(step(
            w,
            Outcome::Held,
            format!("no remote '{}' to push to", r.cfg.remote),
        ));
    }
    let cwd = dir.unwrap_or_else(|| r.repo.common_dir().to_path_buf());
    if snap.branch_local
        && let Some(s) = push_branch(r, w, &now_w, &cwd)?
    {
        return Ok(s);
    }
    let Some(gh) = &r.forge else {
        return pushed_by_hand(r, w, &now_w);
    };
    failpoint("publish-pr");
    open_pull(r, w, &now_w, gh.as_ref())
}

/// Re-run `recode.gate` on the worker's head in `dir` and ledger its verdict. `Some` step
/// ends the publish: the gate could not run, or it failed.
///
/// Errors: [`RecoverError`] when the ledger cannot be written.
fn check_gate(
    r: &Run,
    w: &Worker,
    now_w: &Worker,
    gate: &str,
    dir: &Path,
) -> Result<Option<Step>, RecoverError> {
    let head = now_w.head;
    let limit = r.cfg.gate_timeout;
    let hex = head.map(|h| h.to_string()).unwrap_or_default();
    let (passed, why) = match run_gate(gate, dir, w, &hex, limit, &r.cfg.ssh) {
        Ok(done) => gate_verdict(&done, r.cfg.gate_timeout.as_secs()),
        Err(e) => {
            return r
                .step_failed(now_w, format!("cannot run recode.gate: {e}"), false)
                .map(Some);
        }
    };
    r.append(
        w,
        head,
        Body::Gate {
            passed,
            command: Some(gate.to_string()),
            by: GateBy::Recover,
        },
    )?;
    Ok((!passed).then(|| {
        failed(
            w,
            format!("recode.gate failed{why}: the worker is half-done (resume)"),
            false,
        )
    }))
}

/// Push the worker's branch from `cwd` unless a secret holds it. `Some` step ends the
/// publish: held, or the push was rejected.
///
/// Errors: [`RecoverError`] when the ledger cannot be written.
fn push_branch(
    r: &Run,
    w: &Worker,
    now_w: &Worker,
    cwd: &Path,
) -> Result<Option<Step>, RecoverError> {
    match push::secrets_hold(r, w, cwd) {
        Ok(Some(why)) => return r.step_held(now_w, format!("push held: {why}")).map(Some),
        Ok(None) => {}
        Err(e) => return r.step_failed(now_w, e.to_string(), false).map(Some),
    }
    if let Some(why) = push::claim_hold(r, w) {
        return r.step_held(now_w, format!("push held: {why}")).map(Some);
    }
    failpoint("publish-push");
    if let Err(e) = push::push(r, cwd, &w.branch) {
        return r
            .step_failed(now_w, format!("push rejected: {e}"), true)
            .map(Some);
    }
    Ok(None)
}

/// SPEC 1.2 "The loop settles": pushed where no forge can open the pull request: ledger
/// the worker as `publishable`/`none` on this head ("pushed `<head>`; open the pull request
/// by hand"), so the next tick does not push it again; the step is `held`.
///
/// Errors: [`RecoverError`] when the ledger cannot be written.
fn pushed_by_hand(r: &Run, w: &Worker, now_w: &Worker) -> Result<Step, RecoverError> {
    let Some(head) = now_w.head else {
        return Ok(step(
            w,
            Outcome::Held,
            format!(
                "pushed {}; {}: open the {} by hand",
                w.branch,
                no_forge(r),
                w.reason.noun
            ),
        ));
    };
    let mut settled = now_w.clone();
    settled.action = Action::None;
    settled.reason = crate::model::reason::Reason {
        noun: now_w.reason.noun,
        ..crate::model::reason::Reason::row(crate::model::reason::Row::PushedByHand { head })
    };
    r.classified(&settled)?;
    Ok(step(
        w,
        Outcome::Held,
        format!("{} ({})", settled.reason, no_forge(r)),
    ))
}

/// Why a pushed branch gets no pull request from us (no token, `recode.forge` none, no
/// forge for the remote: [`forge::why_none`]).
fn no_forge(r: &Run) -> String {
    forge::why_none(r.repo, r.cfg)
}

/// Open the worker's pull request (or find the one that exists) and ledger `published`.
///
/// Errors: [`RecoverError`] when the ledger cannot be written; a forge error is a
/// `failed` step.
fn open_pull(
    r: &Run,
    w: &Worker,
    now_w: &Worker,
    gh: &dyn forge::Forge,
) -> Result<Step, RecoverError> {
    let title = format!("Task {}: {}", w.task, w.branch);
    let body = match w.task.parse::<u64>() {
        Ok(n) => format!("Closes #{n}\n\nPublished by git-recode after its gate passed."),
        Err(_) => "Published by git-recode after its gate passed.".to_string(),
    };
    match gh.open_pull(&w.branch, &w.base, &title, &body) {
        Ok(pr) => {
            r.append(
                w,
                now_w.head,
                Body::Published {
                    pr: pr.number,
                    url: pr.url.clone(),
                },
            )?;
            Ok(step(
                w,
                Outcome::Done,
                format!(
                    "pushed and opened {} {}",
                    w.reason.noun.numbered(pr.number),
                    pr.url
                ),
            ))
        }
        Err(e) => Ok(failed(
            w,
            format!("pushed {}; the forge failed: {e}", w.branch),
            true,
        )),
    }
}

/// Run `recode.gate` like a git alias with `!` (through `sh -c`), in the worktree, with
/// the task in `RECODE_TASK`, `RECODE_BRANCH`, `RECODE_HEAD` and the caller's git
/// location variables and the forge tokens removed (safety rule 0, SPEC 1.2), in a process
/// group of its own killed past `limit` (`recode.gateTimeout`, SPEC "The loop settles").
///
/// Errors: the gate could not be started.
fn run_gate(
    gate: &str,
    dir: &Path,
    w: &Worker,
    head: &str,
    limit: std::time::Duration,
    ssh: &crate::ssh::SshCommand,
) -> std::io::Result<crate::process::Finished> {
    let mut cmd = Command::new("sh");
    git::scrub_gate(&mut cmd, ssh);
    cmd.arg("-c")
        .arg(gate)
        .current_dir(dir)
        .env("RECODE_TASK", &w.task)
        .env("RECODE_BRANCH", &w.branch)
        .env("RECODE_HEAD", head)
        .stdin(Stdio::null());
    crate::process::run_bounded(&mut cmd, limit)
}

/// Whether the gate passed, and what to add to a failure's reason: the deadline it ran
/// past, and the last line of its stderr.
fn gate_verdict(done: &crate::process::Finished, limit_secs: u64) -> (bool, String) {
    if done.success() {
        return (true, String::new());
    }
    let mut why = String::new();
    if done.status.is_none() {
        why.push_str(&format!(
            " (killed after {limit_secs} s, recode.gateTimeout)"
        ));
    }
    if let Some(line) = done.last_stderr_line() {
        why.push_str(&format!(": {line}"));
    }
    (false, why)
}
