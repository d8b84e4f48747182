//! `git recode record spawn|exit|gate|unblock|clear`: ledger an event.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::cli::{Ctx, Ui};
use crate::error::{EXIT_OK, Error};
use crate::ledger::{self, Body, Event, GateBy};
use crate::outcome::{Outcome, backoff};
use crate::{agent, clock, process, snapshot, worktree};

/// Largest final message kept in an `exit` event, in bytes (its last 4 KiB).
pub const MESSAGE_KEEP_BYTES: usize = 4096;

/// Ledger an event
#[derive(clap::Subcommand, Debug)]
pub enum RecordCommand {
    /// Ledger an attempt's start
    ///
    /// The branch need not exist yet: a loop may record the spawn before the agent creates it.
    ///
    /// Example: `git recode record spawn feat/issue-12-parser --agent claude --pid $! --session-id "$sid"`
    Spawn {
        /// The worker's branch
        branch: String,
        /// The agent's session id (to resume it later)
        #[arg(long, value_name = "ID")]
        session_id: Option<String>,
        /// The agent's name (claude, codex, ...)
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
        /// The agent's process id on this host (its start time is recorded too)
        #[arg(long, value_name = "N")]
        pid: Option<u32>,
        /// The directory the agent runs in [default: the branch's worktree, else the current directory]
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
    },
    /// Ledger an attempt's end; the outcome is classified from rc and the final message
    ///
    /// Example: `claude -p "$prompt" >out.txt; git recode record exit "$branch" --rc $? --message-file out.txt`
    Exit {
        /// The worker's branch
        branch: String,
        /// The agent's exit code
        #[arg(long, allow_negative_numbers = true)]
        rc: i32,
        /// A file holding the agent's final message (- for standard input)
        #[arg(long, value_name = "F")]
        message_file: Option<PathBuf>,
        /// The agent's JSON output: Claude Code --output-format json or stream-json, Codex exec --json
        #[arg(long, value_name = "F")]
        result_json: Option<PathBuf>,
        /// The issue or ref the task is blocked on (outcome `blocked`)
        #[arg(long, value_name = "REF")]
        blocker: Option<String>,
    },
    /// Ledger a gate result for the branch's current head
    Gate {
        /// The worker's branch
        branch: String,
        /// The gate passed
        #[arg(long, conflicts_with = "failed", required_unless_present = "failed")]
        passed: bool,
        /// The gate failed
        #[arg(long)]
        failed: bool,
    },
    /// Ledger that a blocked task's blocker is resolved
    Unblock {
        /// The worker's branch
        branch: String,
    },
    /// Lift an escalation: attempts count afresh after it
    Clear {
        /// The worker's branch
        branch: String,
        /// Why (e.g. "fixed the login")
        #[arg(long, value_name = "TEXT")]
        reason: Option<String>,
    },
}

/// The worktree a branch is checked out in, and the branch's head (worktree HEAD, else tip).
fn locate(ctx: &Ctx, branch: &str) -> Result<(Option<PathBuf>, Option<String>), Error> {
    let wts = worktree::list(&ctx.repo)?;
    let wt = wts.iter().find(|w| w.branch.as_deref() == Some(branch));
    let head = wt
        .and_then(|w| w.head)
        .or_else(|| crate::repo::tip(&ctx.repo, &format!("refs/heads/{branch}")))
        .map(|h| h.to_hex().to_string());
    Ok((wt.map(|w| w.path.clone()), head))
}

fn read_message(path: &Path) -> Result<String, Error> {
    Ok(tail_utf8(
        &read_file(path, "read the message file")?,
        MESSAGE_KEEP_BYTES,
    ))
}

/// Read a file (`-` is standard input), lossily as UTF-8.
fn read_file(path: &Path, what: &'static str) -> Result<String, Error> {
    let mut bytes = Vec::new();
    let res = if path == Path::new("-") {
        std::io::stdin().read_to_end(&mut bytes).map(|_| ())
    } else {
        std::fs::File::open(path).and_then(|mut f| f.read_to_end(&mut bytes).map(|_| ()))
    };
    res.map_err(|source| Error::Io {
        what,
        path: path.display().to_string(),
        source,
    })?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The last `max` bytes of `s`, cut at a character boundary.
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

fn append(ctx: &Ctx, branch: &str, head: Option<String>, body: Body) -> Result<Event, Error> {
    let task = ctx.cfg.key_of(branch);
    let event = Event::new(ctx.now, &task, Some(branch), body).with_head(head);
    Ok(ledger::append(&ctx.repo, &ctx.cfg.notes_ref, event)?)
}

/// Run `record …`.
///
/// Errors: [`Error::UnknownBranch`] for `gate` on a branch with no head; [`Error::Io`]
/// for an unreadable message file; ledger errors.
pub fn run(cmd: RecordCommand, ui: &Ui) -> Result<i32, Error> {
    let ctx = Ctx::open(ui)?;
    let branch = match &cmd {
        RecordCommand::Spawn { branch, .. }
        | RecordCommand::Exit { branch, .. }
        | RecordCommand::Gate { branch, .. }
        | RecordCommand::Unblock { branch }
        | RecordCommand::Clear { branch, .. } => branch.clone(),
    };
    ctx.not_base(&branch)?;
    // A spawn may come before the agent creates its branch (SPEC `record spawn`); any
    // other record names a branch that exists or has a ledger (SPEC 1.2).
    if !matches!(cmd, RecordCommand::Spawn { .. }) {
        known(&ctx, &branch)?;
    }
    crate::cli::pick_up(&ctx, std::slice::from_ref(&branch));
    match cmd {
        RecordCommand::Spawn {
            branch,
            session_id,
            agent,
            pid,
            cwd,
        } => spawn(&ctx, branch, session_id, agent, pid, cwd)?,
        RecordCommand::Exit {
            branch,
            rc,
            message_file,
            result_json,
            blocker,
        } => exit(&ctx, branch, rc, message_file, result_json, blocker)?,
        RecordCommand::Gate { branch, passed, .. } => {
            let (_, head) = locate(&ctx, &branch)?;
            let Some(head) = head else {
                return Err(ctx.unknown_branch(&branch));
            };
            append(
                &ctx,
                &branch,
                Some(head),
                Body::Gate {
                    passed,
                    command: ctx.cfg.gate.clone(),
                    by: GateBy::Record,
                },
            )?;
        }
        RecordCommand::Unblock { branch } => {
            append(&ctx, &branch, None, Body::Unblocked)?;
        }
        RecordCommand::Clear { branch, reason } => {
            append(&ctx, &branch, None, Body::Cleared { reason })?;
        }
    }
    Ok(EXIT_OK)
}

/// Whether `branch` exists somewhere (a worktree, a local or `recode.remote` branch) or
/// has ledger events of its own (or branch-less ones of its task).
///
/// Errors: [`Error::UnknownBranch`] naming the closest worker branches.
fn known(ctx: &Ctx, branch: &str) -> Result<(), Error> {
    let (wt, head) = locate(ctx, branch)?;
    let remote = format!("refs/remotes/{}/{branch}", ctx.cfg.remote);
    if wt.is_some() || head.is_some() || crate::repo::tip(&ctx.repo, &remote).is_some() {
        return Ok(());
    }
    let named = task_events(ctx, branch)?
        .iter()
        .any(|e| e.branch.as_deref().is_none_or(|b| b == branch));
    if named {
        Ok(())
    } else {
        Err(ctx.unknown_branch(branch))
    }
}

/// The events ledgered for `branch`'s task, oldest first.
fn task_events(ctx: &Ctx, branch: &str) -> Result<Vec<Event>, Error> {
    let task = ctx.cfg.key_of(branch);
    let refs = snapshot::notes_refs(&ctx.repo, &ctx.cfg);
    let (ledger, _) = ledger::read_task(&ctx.repo, &refs, &task)?;
    Ok(ledger.events().cloned().collect())
}

/// `record spawn`: ledger the next attempt's start, with its directory, host and process.
fn spawn(
    ctx: &Ctx,
    branch: String,
    session_id: Option<String>,
    agent: Option<String>,
    pid: Option<u32>,
    cwd: Option<PathBuf>,
) -> Result<(), Error> {
    let (wt, head) = locate(ctx, &branch)?;
    let cwd = match cwd {
        Some(c) => worktree::absolute(&c),
        None => wt.unwrap_or_else(|| worktree::absolute(Path::new("."))),
    };
    let attempt = 1 + task_events(ctx, &branch)?
        .iter()
        .filter(|e| matches!(e.body, Body::Spawn { .. } | Body::Resume { .. }))
        .count() as u32;
    let pid_start = pid.and_then(process::start_token);
    if let (Some(p), None) = (pid, &pid_start) {
        ctx.ui.warn(&[format!(
            "no process {p} on this host: its pid is recorded but never taken as alive"
        )]);
    }
    append(
        ctx,
        &branch,
        head,
        Body::Spawn {
            attempt,
            cwd: cwd.to_string_lossy().to_string(),
            host: process::hostname(),
            session_id,
            agent,
            pid,
            pid_start,
        },
    )?;
    Ok(())
}

/// `record exit`: classify the attempt's end from rc and the final message, ledger it and
/// print the outcome.
fn exit(
    ctx: &Ctx,
    branch: String,
    rc: i32,
    message_file: Option<PathBuf>,
    result_json: Option<PathBuf>,
    blocker: Option<String>,
) -> Result<(), Error> {
    let result = match &result_json {
        Some(p) => Some(agent::parse_result(&read_file(p, "read the result file")?)),
        None => None,
    };
    let message = match &message_file {
        Some(p) => Some(read_message(p)?),
        None => result
            .as_ref()
            .and_then(|r| r.message.as_deref())
            .map(|m| tail_utf8(m, MESSAGE_KEEP_BYTES)),
    };
    // The session: from the result, else the newest attempt's.
    let events = task_events(ctx, &branch)?;
    let session = result
        .as_ref()
        .and_then(|r| r.session_id.clone())
        .or_else(|| crate::ledger::replay(&events).session_id);
    let transcript_error = session
        .as_deref()
        .and_then(agent::transcript)
        .and_then(agent::transcript_error);
    let mut verdict = agent::decide(
        rc,
        message.as_deref().unwrap_or(""),
        result.as_ref(),
        transcript_error.as_deref(),
        ctx.now,
    );
    if verdict.outcome == Outcome::Transient && verdict.retry_after.is_none() {
        verdict.retry_after = backoff_until(ctx, &events);
    }
    let outcome = match (&blocker, verdict.outcome) {
        (Some(_), Outcome::Success | Outcome::Failed) => Outcome::Blocked,
        (_, o) => o,
    };
    let (_, head) = locate(ctx, &branch)?;
    append(
        ctx,
        &branch,
        head,
        Body::Exit {
            rc,
            outcome,
            message: message.filter(|m| !m.is_empty()),
            retry_after: verdict.retry_after.map(clock::format_secs),
            fresh: verdict.fresh.then_some(true),
            blocker,
            session_id: result.and_then(|r| r.session_id),
        },
    )?;
    crate::say!("{}", outcome.as_str());
    Ok(())
}

/// When a transient exit that names no reset may retry (SPEC "Outcomes"): after a backoff
/// doubled for each consecutive transient exit of the task (after the last `cleared`), at
/// most 6 hours.
fn backoff_until(ctx: &Ctx, events: &[Event]) -> Option<jiff::Timestamp> {
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
    let wait = backoff::backoff_secs(backoff::transient_streak(&previous));
    ctx.now
        .checked_add(jiff::SignedDuration::from_secs(wait))
        .ok()
}
