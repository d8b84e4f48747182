//! What `record spawn|exit|gate|unblock|clear` ledgers (SPEC "Commands: record", table of
//! kinds). Every event whose content depends on the ledger (the attempt number, the
//! backoff of a transient exit) is decided inside the append's compare-and-swap from
//! [`crate::ledger`]'s replayed facts, so concurrent writers never decide it twice.

use std::path::{Path, PathBuf};

use jiff::Timestamp;

use crate::config::Config;
use crate::ledger::{self, LedgerError};
use crate::model::{Body, Event};
use crate::outcome::{Outcome, backoff};
use crate::repo::RepoError;
use crate::{agent, clock, process, worktree};

/// Largest final message kept in an `exit` event, in bytes (its last 4 KiB).
pub const MESSAGE_KEEP_BYTES: usize = 4096;

/// Why an event could not be recorded.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The ledger could not be read or written.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// The worktrees or refs could not be read.
    #[error(transparent)]
    Repo(#[from] RepoError),
}

/// The last `max` bytes of `s` (trailing whitespace trimmed), cut at a character boundary.
pub fn tail_utf8(s: &str, max: usize) -> String {
    let s = s.trim_end();
    if s.len() <= max {
        return s.to_string();
    }
    let mut start = s.len() - max;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    s[start..].to_string()
}

/// Where `branch` is: the worktree it is checked out in, and its head (that
/// worktree's HEAD, else the branch tip; `None` when the branch does not exist yet).
///
/// Errors: [`RepoError`] when the worktree registry cannot be read.
pub(crate) fn locate(
    repo: &gix::Repository,
    branch: &str,
) -> Result<(Option<PathBuf>, Option<gix::ObjectId>), RepoError> {
    let wts = worktree::list(repo)?;
    let wt = wts.iter().find(|w| w.branch.as_deref() == Some(branch));
    let head = wt
        .and_then(|w| w.head)
        .or_else(|| crate::repo::tip(repo, &format!("refs/heads/{branch}")));
    Ok((wt.map(|w| w.path.clone()), head))
}

/// Ledger `body` for `branch`'s task, on `head`, stamped `now`; returns it as stored.
///
/// Errors: [`LedgerError`].
pub(crate) fn append(
    repo: &gix::Repository,
    cfg: &Config,
    now: Timestamp,
    branch: &str,
    head: Option<gix::ObjectId>,
    body: Body,
) -> Result<Event, LedgerError> {
    let event = Event::new(now, &cfg.key_of(branch), Some(branch), body).with_head(head);
    ledger::append(repo, cfg, event)
}

/// What `record spawn` was told.
#[derive(Debug, Default)]
pub(crate) struct Spawn {
    /// The worker branch (it need not exist yet).
    pub branch: String,
    /// The agent's session id.
    pub session_id: Option<String>,
    /// The agent's name.
    pub agent: Option<String>,
    /// The agent's process id on this host.
    pub pid: Option<u32>,
    /// The agent's directory (relative to the current one); default the branch's
    /// worktree, else the current directory.
    pub cwd: Option<PathBuf>,
    /// The file the loop sends the agent's stdout to (absolute), read for a limit a live
    /// agent waits on (SPEC 1.2 "parked on a limit").
    pub output: Option<String>,
    /// The task's prompt the loop gave the agent, at most [`crate::model::event::PROMPT_KEEP_BYTES`]
    /// ([`head_utf8`] of `record spawn --prompt-file`), untrusted text.
    pub prompt: Option<String>,
    /// The agent's own flags (`record spawn -- ARGS`), replayed on resume (SPEC 1.3).
    pub agent_args: Option<Vec<String>>,
    /// The agent's configuration directory (absolute), replayed on resume (SPEC 1.3).
    pub config_dir: Option<String>,
}

/// The first `max` bytes of `bytes` as text (invalid UTF-8 replaced), cut at a character
/// boundary: a character split by the cut is dropped, never half-kept.
pub(crate) fn head_utf8(bytes: &[u8], max: usize) -> String {
    let mut end = bytes.len().min(max);
    if end < bytes.len() {
        // The last character's lead byte within 3 bytes of the cut: drop it when the cut
        // splits it.
        if let Some(i) = (end.saturating_sub(3)..end)
            .rev()
            .find(|i| bytes[*i] & 0xC0 != 0x80)
        {
            let width = match bytes[i] {
                b if b >= 0xF0 => 4,
                b if b >= 0xE0 => 3,
                b if b >= 0xC0 => 2,
                _ => 1,
            };
            if i + width > end {
                end = i;
            }
        }
    }
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// What `record spawn` has to say once the spawn is ledgered: warnings for stderr.
#[derive(Debug)]
pub(crate) struct Spawned {
    /// E.g. a pid with no process on this host.
    pub warnings: Vec<String>,
}

/// `record spawn`: ledger the next attempt's start, with its directory, host and process
/// (start token). The attempt is [`crate::model::replay::next_attempt`] of the ledger it joins.
///
/// Errors: [`RecordError`].
pub(crate) fn spawn(
    repo: &gix::Repository,
    cfg: &Config,
    now: Timestamp,
    s: Spawn,
) -> Result<Spawned, RecordError> {
    let (wt, head) = locate(repo, &s.branch)?;
    let cwd = match &s.cwd {
        Some(c) => worktree::absolute(c),
        None => wt.unwrap_or_else(|| worktree::absolute(Path::new("."))),
    };
    let pid_start = s.pid.and_then(process::start_token);
    let mut warnings = Vec::new();
    let session_id = s
        .session_id
        .clone()
        .filter(|id| checked_session(id, &mut warnings));
    if let (Some(p), None) = (s.pid, &pid_start) {
        warnings.push(format!(
            "no process {p} on this host: its pid is recorded but never taken as alive"
        ));
    }
    let task = cfg.key_of(&s.branch);
    let me = crate::hosts::me(repo, cfg.command_timeout);
    ledger::append_with(repo, cfg, &task, now, |events| {
        let body = Body::Spawn {
            attempt: crate::model::replay::next_attempt(events),
            cwd: cwd.to_string_lossy().to_string(),
            host: me.id.clone(),
            label: Some(me.label.clone()),
            session_id: session_id.clone(),
            agent: s.agent.clone(),
            pid: s.pid,
            pid_start: pid_start.clone(),
            output: s.output.clone(),
            prompt: s.prompt.clone(),
            agent_args: s.agent_args.clone(),
            config_dir: s.config_dir.clone(),
        };
        vec![Event::new(now, &task, Some(&s.branch), body).with_head(head)]
    })?;
    Ok(Spawned { warnings })
}

/// Whether `id` may be recorded as a session id ([`agent::session_id_ok`], SPEC 1.2:
/// `^[A-Za-z0-9._:@+-]{1,200}$`, not starting with `-`); pushes a warning when not.
pub(crate) fn checked_session(id: &str, warnings: &mut Vec<String>) -> bool {
    let ok = agent::session_id_ok(id);
    if !ok {
        warnings.push(format!(
            "session id {:?} is not recorded: it must match ^[A-Za-z0-9._:@+-]{{1,200}}$ and not start with `-`",
            agent::lines::tail(id, 80)
        ));
    }
    ok
}

/// The agent of the newest `spawn` that names one.
fn spawn_agent(events: &[Event]) -> Option<String> {
    events.iter().rev().find_map(|e| match &e.body {
        Body::Spawn { agent: Some(a), .. } => Some(a.clone()),
        _ => None,
    })
}

/// What `record exit` was told: the exit code, the final message (already cut to
/// [`MESSAGE_KEEP_BYTES`], or taken from `result`), the agent's JSON result, a blocker.
#[derive(Debug, Default)]
pub(crate) struct Exit {
    /// The worker branch.
    pub branch: String,
    /// The agent's exit code.
    pub rc: i32,
    /// The final message, from `--message-file`.
    pub message: Option<String>,
    /// The agent's parsed JSON result, from `--result-json`.
    pub result: Option<agent::AgentResult>,
    /// The issue or ref the task is blocked on.
    pub blocker: Option<String>,
}

/// `record exit`: classify the attempt's end from rc, the final message, the agent's JSON
/// result and its transcript (SPEC "Outcomes"), and ledger it. A transient exit that
/// names no reset waits [`backoff::backoff_secs`] of the [`crate::model::replay::transient_streak`]
/// decided in the compare-and-swap; a blocker turns a success or failure into `blocked`.
/// Returns the outcome ledgered.
///
/// Errors: [`RecordError`].
pub(crate) fn exit(
    repo: &gix::Repository,
    cfg: &Config,
    now: Timestamp,
    x: Exit,
) -> Result<Outcome, RecordError> {
    let message = x.message.or_else(|| {
        x.result
            .as_ref()
            .and_then(|r| r.message.as_deref())
            .map(|m| tail_utf8(m, MESSAGE_KEEP_BYTES))
    });
    let task = cfg.key_of(&x.branch);
    let refs = ledger::notes_refs(repo, &cfg.notes_ref);
    let (known, _) = ledger::read_task(repo, &refs, &task)?;
    let events: Vec<Event> = known.events().cloned().collect();
    let (verdict, silent) = verdict_of(
        cfg,
        (x.rc, x.result.as_ref()),
        message.as_deref(),
        &events,
        now,
    );
    let (_, head) = locate(repo, &x.branch)?;
    let wts = worktree::list(repo)?;
    let wt = wts
        .iter()
        .find(|w| w.branch.as_deref() == Some(x.branch.as_str()))
        .map(|w| (w.path.as_path(), w.git_dir.as_path()));
    let idle = verdict.outcome == Outcome::Success && resumed_idle(&events, &x.branch, head, wt);
    let outcome = match (&x.blocker, verdict.outcome) {
        (Some(_), Outcome::Success | Outcome::Failed) => Outcome::Blocked,
        _ if idle => Outcome::Failed,
        (_, o) => o,
    };
    let note = if idle {
        Some(IDLE_RESUME)
    } else {
        silent.then_some(agent::KILLED_SILENT)
    };
    let message = noted(message, note);
    let session_id = x.result.and_then(|r| r.session_id);
    let here = crate::hosts::me(repo, cfg.command_timeout);
    ledger::append_with(repo, cfg, &task, now, |events| {
        // The attempt git-recode itself ended (a hung agent) is closed already: the
        // loop's report of that same end (rc 137) is no second attempt and no second
        // failure (decided in the CAS: the kill may land while this runs).
        let r = crate::model::replay::replay_for(events, &x.branch);
        if x.rc == crate::model::event::KILLED_RC
            && r.last_attempt_exited
            && r.last_exit.is_some_and(|i| events[i].body.ended_by_us())
        {
            return Vec::new();
        }
        let retry_after = match verdict.retry_after {
            None if verdict.outcome == Outcome::Transient => {
                let wait = backoff::backoff_secs(crate::model::replay::transient_streak(events));
                now.checked_add(jiff::SignedDuration::from_secs(wait)).ok()
            }
            named => named,
        };
        let body = Body::Exit {
            rc: x.rc,
            outcome,
            message: message.clone(),
            // Stored to the second (the ledger's `retry_after` form).
            retry_after: retry_after.map(|t| clock::from_secs(t.as_second())),
            fresh: verdict.fresh.then_some(true),
            blocker: x.blocker.clone(),
            session_id: session_id.clone(),
            ends: crate::hosts::ends_now(events, &x.branch, |h, by_id| here.is_named(h, by_id)),
        };
        vec![Event::new(now, &task, Some(&x.branch), body).with_head(head)]
    })?;
    Ok(outcome)
}

/// `message` with git-recode's `note` on how it read the exit added as its last line
/// ([`IDLE_RESUME`], [`agent::KILLED_SILENT`]), kept to [`MESSAGE_KEEP_BYTES`].
fn noted(message: Option<String>, note: Option<&str>) -> Option<String> {
    match (message.filter(|m| !m.is_empty()), note) {
        (Some(m), Some(n)) => Some(tail_utf8(&format!("{m}\n{n}"), MESSAGE_KEEP_BYTES)),
        (None, Some(n)) => Some(n.to_string()),
        (m, None) => m,
    }
}

/// The verdict on the end of an attempt (its `rc` and the agent's JSON `result`, its
/// final `message`, the transcript of its session: SPEC "Outcomes") of the task whose
/// ledger is `events`: the session is the result's, else the newest attempt's; the agent
/// recorded at spawn (else `recode.agent`) decides whether its exit code is trusted and
/// whether it retries silently. Also returns whether that silence decided (a killed
/// [`agent::Habits::retries_silently`] agent read `transient`).
fn verdict_of(
    cfg: &Config,
    (rc, result): (i32, Option<&agent::AgentResult>),
    message: Option<&str>,
    events: &[Event],
    now: Timestamp,
) -> (crate::outcome::Verdict, bool) {
    let session = result
        .and_then(|r| r.session_id.clone())
        .or_else(|| crate::model::replay::replay(events).session_id);
    let agent_name = spawn_agent(events).unwrap_or_else(|| cfg.agent.clone());
    let transcript_error = session
        .as_deref()
        .and_then(agent::transcript)
        .and_then(agent::transcript_error);
    let habits = agent::Habits::of(agent::profile(&agent_name));
    let verdict = agent::decide(
        rc,
        message.unwrap_or(""),
        result,
        transcript_error.as_deref(),
        now,
        habits,
    );
    // Read again as an agent that says why it stops: when that differs, the silent
    // retrier's rule decided, and the ledger says so.
    let silent = habits.retries_silently
        && verdict
            != agent::decide(
                rc,
                message.unwrap_or(""),
                result,
                transcript_error.as_deref(),
                now,
                agent::Habits {
                    retries_silently: false,
                    ..habits
                },
            );
    (verdict, silent)
}

/// The sentence added to the message of a resumed run that did nothing (SPEC 1.3).
pub(crate) const IDLE_RESUME: &str =
    "git-recode: the resumed run exited 0 with no new commit and no change: not a success";

/// Whether the attempt being closed is a `resume` that did nothing: the branch's head is
/// still the one it was resumed on and its worktree (`(path, admin directory)`) is clean (SPEC 1.3 "Real agents": such
/// an exit 0 is not a `success`). A worktree that cannot be read did something, as far as
/// anyone can tell.
fn resumed_idle(
    events: &[Event],
    branch: &str,
    head: Option<gix::ObjectId>,
    wt: Option<(&Path, &Path)>,
) -> bool {
    let r = crate::model::replay::replay_for(events, branch);
    let Some(e) = r.last_attempt.map(|i| &events[i]) else {
        return false;
    };
    if !matches!(e.body, Body::Resume { .. }) || r.last_attempt_exited || e.head != head {
        return false;
    }
    wt.is_none_or(|(p, admin)| worktree::status(p, admin).is_ok_and(|s| s.dirty.is_clean()))
}

/// Whether `branch` exists somewhere (a worktree, a local or `recode.remote` branch) or
/// has ledger events of its own (or branch-less ones of its task): every `record` but
/// `spawn` needs one of them (SPEC 1.2 "Errors a newcomer meets").
///
/// Errors: [`RecordError`] when the worktrees or the ledger cannot be read.
pub(crate) fn known(
    repo: &gix::Repository,
    cfg: &Config,
    branch: &str,
) -> Result<bool, RecordError> {
    let (wt, head) = locate(repo, branch)?;
    let remote = format!("refs/remotes/{}/{branch}", cfg.remote);
    if wt.is_some() || head.is_some() || crate::repo::tip(repo, &remote).is_some() {
        return Ok(true);
    }
    let refs = ledger::notes_refs(repo, &cfg.notes_ref);
    let (known, _) = ledger::read_task(repo, &refs, &cfg.key_of(branch))?;
    Ok(known
        .events()
        .any(|e| e.branch.as_deref().is_none_or(|b| b == branch)))
}

#[cfg(test)]
mod tests {
    use super::head_utf8;

    #[test]
    fn a_prompt_is_cut_at_a_character_boundary() {
        assert_eq!(head_utf8(b"abcdef", 4), "abcd");
        assert_eq!(
            head_utf8("ab€".as_bytes(), 4),
            "ab",
            "€ is 3 bytes: cut, dropped"
        );
        assert_eq!(head_utf8("ab€".as_bytes(), 5), "ab€");
        assert_eq!(head_utf8("a😀b".as_bytes(), 5), "a😀");
        assert_eq!(head_utf8("a😀b".as_bytes(), 3), "a");
        assert_eq!(head_utf8(b"short", 100), "short");
    }
}
