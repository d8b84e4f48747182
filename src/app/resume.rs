//! `resume <branch>`: the prompt and the command that continues the agent.

use std::path::PathBuf;

use super::Session;
use crate::classify;
use crate::error::Error;
use crate::resume::catch_up::{CatchUp, catch_up};
use crate::resume::start::{Request, Resumed, Started, start};
use crate::resume::{Mode, refusal, takeover};

/// What `resume` is asked.
#[derive(Debug, Default, Clone)]
pub struct ResumeRequest {
    /// `--output`: where the prompt goes (made absolute here).
    pub output: Option<PathBuf>,
    /// `--json`: without `--output`, the prompt goes to
    /// `<common dir>/recode/prompts/<task>-<attempt>.md`.
    pub json: bool,
    /// `--dry-run`: write nothing (no ledger event, no file, no worktree).
    pub dry_run: bool,
}

/// A started attempt: what `resume` shows.
#[derive(Debug)]
pub struct Resume {
    started: Started,
    dry_run: bool,
}

impl Resume {
    /// The POSIX shell command that continues the agent.
    pub fn command(&self) -> &str {
        &self.started.launch.command
    }

    /// The prompt text.
    pub fn prompt(&self) -> &str {
        &self.started.prompt
    }

    /// `attempt N of M, MODE mode: WHY` (MODE `session` or `fresh`).
    pub fn attempt_line(&self) -> String {
        let mode = match self.started.launch.mode {
            Mode::Session => "session",
            Mode::Fresh => "fresh",
        };
        format!(
            "attempt {} of {}, {mode} mode: {}",
            self.started.facts.attempt, self.started.facts.max_attempts, self.started.launch.why
        )
    }

    /// The document `resume --json` prints.
    pub fn doc(&self) -> crate::wire::ResumeDoc<'_> {
        let s = &self.started;
        crate::wire::ResumeDoc {
            schema: crate::wire::SCHEMA,
            task: &s.facts.task,
            branch: &s.facts.branch,
            attempt: s.facts.attempt,
            mode: match s.launch.mode {
                Mode::Session => "session",
                Mode::Fresh => "fresh",
            },
            why: &s.launch.why,
            session_id: s.launch.session_id.as_deref(),
            cwd: &s.launch.cwd,
            command: &s.launch.command,
            prompt_file: s.prompt_file.as_ref().map(|p| p.display().to_string()),
            prompt_sha: &s.prompt_sha,
            dry_run: self.dry_run,
            facts: &s.facts,
        }
    }
}

/// `resume`: pick up milestones, gather and classify the worker; where other hosts share
/// the remote (the worker is another host's, or any other host's heartbeat is known), sync
/// the ledger and fetch the branch first, then decide again (SPEC 1.2 "Several machines";
/// SPEC 1.3: a ledger behind the remote is no proof that this host's worker is still its
/// own); a takeover first brings this host's local branch up to what was pushed
/// ([`crate::resume::catch_up::catch_up`]); then start the next attempt
/// ([`crate::resume::start::start`]).
///
/// Errors: [`Error::UnknownBranch`]; [`Error::Refused`] (exit 3) when capped, needing a
/// human, or running; takeover and ledger errors.
pub fn resume(s: &Session, branch: &str, req: ResumeRequest) -> Result<Resume, Error> {
    if !req.dry_run {
        s.pick_up(&[branch.to_string()]);
    }
    let mut snap = s.one_worker(branch, false)?;
    let mut w = classify::classify(&snap);
    let shared = snap.hosts.other.is_some() || takeover::shared(&s.repo, &s.cfg);
    if !req.dry_run && shared && refusal(&w).is_none() {
        takeover::before(&s.repo, &s.cfg, s.now, branch)?;
        snap = s.one_worker(branch, false)?;
        w = classify::classify(&snap);
        // A takeover starts from what was pushed: a local branch left behind here (a
        // resume that lost its claim after adding the worktree) is fast-forwarded first,
        // one holding work the remote lacks never moved (the takeover refused).
        if snap.hosts.other.is_some() && refusal(&w).is_none() {
            match catch_up(&s.repo, &s.cfg, &snap)? {
                CatchUp::Current => {}
                CatchUp::Moved => {
                    snap = s.one_worker(branch, false)?;
                    w = classify::classify(&snap);
                }
                CatchUp::Refused { why, hint } => {
                    return Err(Error::Refused { message: why, hint });
                }
            }
        }
    }
    let start_req = Request {
        output: req
            .output
            .as_deref()
            .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())),
        json: req.json,
        dry_run: req.dry_run,
    };
    match start(&s.repo, &s.cfg, s.now, &snap, &w, &start_req)? {
        Resumed::Refused { why, running } => Err(Error::Refused {
            message: why,
            hint: if running {
                "wait for it to exit (or stall), then resume".into()
            } else {
                "a human must look: fix the cause, then `git recode record clear <branch>`".into()
            },
        }),
        Resumed::Started(started) => {
            s.warn(started.warnings.clone());
            Ok(Resume {
                started: *started,
                dry_run: req.dry_run,
            })
        }
    }
}
