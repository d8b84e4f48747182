//! `record spawn|exit|gate|unblock|clear`: ledger an event.

use std::path::{Path, PathBuf};

use super::Session;
use crate::error::Error;
use crate::model::{Body, GateBy};
use crate::{agent, record};

/// What `record spawn` is told (files not read yet).
#[derive(Debug, Default)]
pub struct Spawn {
    /// The worker branch (it need not exist yet).
    pub branch: String,
    /// The agent's session id.
    pub session_id: Option<String>,
    /// The agent's name.
    pub agent: Option<String>,
    /// The agent's process id on this host.
    pub pid: Option<u32>,
    /// The agent's directory.
    pub cwd: Option<PathBuf>,
    /// The file the loop sends the agent's stdout to.
    pub output: Option<PathBuf>,
    /// The file holding the prompt the loop gave the agent.
    pub prompt_file: Option<PathBuf>,
    /// The agent's configuration directory.
    pub config_dir: Option<PathBuf>,
    /// The agent's own flags (after `--`).
    pub agent_args: Vec<String>,
}

/// What `record exit` is told (files not read yet).
#[derive(Debug, Default)]
pub struct Exit {
    /// The worker branch.
    pub branch: String,
    /// The agent's exit code.
    pub rc: i32,
    /// The final message's file (`-`: standard input).
    pub message_file: Option<PathBuf>,
    /// The agent's output (`-`: standard input).
    pub result_json: Option<PathBuf>,
    /// The issue or ref the task is blocked on.
    pub blocker: Option<String>,
}

/// What `record` is told (the command line's words, files not read yet).
#[derive(Debug)]
pub enum Record {
    /// An attempt's start.
    Spawn(Spawn),
    /// An attempt's end.
    Exit(Exit),
    /// A gate result for the branch's head.
    Gate {
        /// The worker branch.
        branch: String,
        /// Whether it passed.
        passed: bool,
    },
    /// The blocker is resolved.
    Unblock {
        /// The worker branch.
        branch: String,
    },
    /// An escalation is lifted.
    Clear {
        /// The worker branch.
        branch: String,
        /// Why.
        reason: Option<String>,
    },
}

impl Record {
    fn branch(&self) -> &str {
        match self {
            Record::Spawn(Spawn { branch, .. })
            | Record::Exit(Exit { branch, .. })
            | Record::Gate { branch, .. }
            | Record::Unblock { branch }
            | Record::Clear { branch, .. } => branch,
        }
    }
}

/// `record`: refuse the base branch; any record but a spawn names a branch that exists or
/// has a ledger (SPEC 1.2; a spawn may come before the agent creates its branch); pick up
/// milestones; ledger the event. Returns the outcome `record exit` ledgered (`success`,
/// `failed`, …; SPEC "Outcomes"), `None` for the others.
///
/// Errors: [`Error::BaseBranch`]; [`Error::UnknownBranch`]; [`Error::Usage`] for an agent
/// flag holding a secret; [`Error::Io`] for an unreadable file; ledger errors.
pub fn record(s: &Session, what: Record) -> Result<Option<&'static str>, Error> {
    let branch = what.branch().to_string();
    s.not_base(&branch)?;
    if !matches!(what, Record::Spawn(_)) && !record::known(&s.repo, &s.cfg, &branch)? {
        return Err(s.unknown_branch(&branch));
    }
    s.pick_up(std::slice::from_ref(&branch));
    match what {
        Record::Spawn(spawn) => record_spawn(s, spawn).map(|()| None),
        Record::Exit(exit) => record_exit(s, exit).map(Some),
        Record::Gate { branch, passed } => {
            let (_, head) = record::locate(&s.repo, &branch)?;
            let Some(head) = head else {
                return Err(s.unknown_branch(&branch));
            };
            let body = Body::Gate {
                passed,
                command: s.cfg.gate.clone(),
                by: GateBy::Record,
            };
            record::append(&s.repo, &s.cfg, s.now, &branch, Some(head), body)?;
            Ok(None)
        }
        Record::Unblock { branch } => {
            record::append(&s.repo, &s.cfg, s.now, &branch, None, Body::Unblocked)?;
            Ok(None)
        }
        Record::Clear { branch, reason } => {
            let body = Body::Cleared { reason };
            record::append(&s.repo, &s.cfg, s.now, &branch, None, body)?;
            Ok(None)
        }
    }
}

/// `record spawn`: the prompt file's head, the agent's flags (refused when one holds a
/// secret: the ledger travels with the repository), paths made absolute, then ledgered.
///
/// Errors: [`Error::Usage`]; [`Error::Io`]; ledger errors.
fn record_spawn(s: &Session, spawn: Spawn) -> Result<(), Error> {
    let Spawn {
        branch,
        session_id,
        agent,
        pid,
        cwd,
        output,
        prompt_file,
        config_dir,
        agent_args,
    } = spawn;
    let prompt = prompt_file.as_deref().map(read_prompt).transpose()?;
    // The ledger travels with the repository: a key passed as a flag stays out.
    if let Some(a) = agent_args.iter().find(|a| crate::redact::redact(a) != **a) {
        return Err(Error::Usage(format!(
            "agent flag {:?} holds a secret: pass it through the agent's environment, not `record spawn --`",
            crate::redact::redact(a)
        )));
    }
    let config_dir = config_dir.map(|d| absolute(&d)).or_else(|| {
        let var = agent.as_deref().and_then(agent::profile)?.config_env?;
        std::env::var(var)
            .ok()
            .filter(|d| !d.is_empty())
            .map(|d| absolute(Path::new(&d)))
    });
    let spawn = record::Spawn {
        branch,
        session_id,
        agent,
        pid,
        cwd,
        output: output.as_deref().map(absolute),
        prompt,
        agent_args: (!agent_args.is_empty()).then_some(agent_args),
        config_dir,
    };
    let done = record::spawn(&s.repo, &s.cfg, s.now, spawn)?;
    s.warn(done.warnings);
    Ok(())
}

/// `record exit`: the agent's output and final message read in bounded memory, then the
/// outcome classified and ledgered ([`record::exit`]); returns the outcome's name.
///
/// Errors: [`Error::Io`]; ledger errors.
fn record_exit(s: &Session, exit: Exit) -> Result<&'static str, Error> {
    let Exit {
        branch,
        rc,
        message_file,
        result_json,
        blocker,
    } = exit;
    let mut result = result_json
        .as_deref()
        .map(|p| read_result(s, p))
        .transpose()?;
    if let Some(r) = result.as_mut() {
        let mut warnings = Vec::new();
        r.session_id = r
            .session_id
            .take()
            .filter(|id| record::checked_session(id, &mut warnings));
        s.warn(warnings);
    }
    let message = message_file
        .as_deref()
        .map(|p| read_message(s, p))
        .transpose()?;
    let x = record::Exit {
        branch,
        rc,
        message,
        result,
        blocker,
    };
    Ok(record::exit(&s.repo, &s.cfg, s.now, x)?.as_str())
}

/// `p` made absolute (against the current directory), as text.
fn absolute(p: &Path) -> String {
    crate::worktree::absolute(p).to_string_lossy().to_string()
}

/// The last [`record::MESSAGE_KEEP_BYTES`] of a message file (`-`: standard input), read from
/// its tail in bounded memory ([`crate::tail`], SPEC 1.2); a warning when a stream was
/// too long to read to its end.
///
/// Errors: [`Error::Io`].
fn read_message(s: &Session, path: &Path) -> Result<String, Error> {
    // 3 more bytes: a character cut at the start is skipped, and 4 KiB remain.
    let t = crate::tail::read_tail(path, record::MESSAGE_KEEP_BYTES + 3).map_err(|source| {
        Error::Io {
            what: "read the message file",
            path: path.display().to_string(),
            source,
        }
    })?;
    if t.stopped {
        s.warn([format!(
            "{}: stopped reading after {} MiB; kept the last {} bytes read",
            path.display(),
            crate::tail::MAX_STREAM_BYTES >> 20,
            record::MESSAGE_KEEP_BYTES
        )]);
    }
    Ok(record::tail_utf8(
        &String::from_utf8_lossy(&t.bytes),
        record::MESSAGE_KEEP_BYTES,
    ))
}

/// The first [`crate::model::event::PROMPT_KEEP_BYTES`] of the prompt file (read no further).
///
/// Errors: [`Error::Io`].
fn read_prompt(path: &Path) -> Result<String, Error> {
    use std::io::Read;
    let max = crate::model::event::PROMPT_KEEP_BYTES;
    let mut buf = Vec::with_capacity(max + 4);
    std::fs::File::open(path)
        .and_then(|f| f.take(max as u64 + 4).read_to_end(&mut buf))
        .map_err(|source| Error::Io {
            what: "read the prompt file",
            path: path.display().to_string(),
            source,
        })?;
    Ok(record::head_utf8(&buf, max))
}

/// Read `--result-json` line by line in bounded memory ([`agent::parse_reader`]); `-`
/// is standard input. Warns for each line over 1 MiB skipped.
///
/// Errors: [`Error::Io`] when the file cannot be opened.
fn read_result(s: &Session, path: &Path) -> Result<agent::AgentResult, Error> {
    let (r, skipped) = if path == Path::new("-") {
        agent::parse_reader(std::io::stdin().lock())
    } else {
        let f = std::fs::File::open(path).map_err(|source| Error::Io {
            what: "read the result file",
            path: path.display().to_string(),
            source,
        })?;
        agent::parse_reader(f)
    };
    if skipped > 0 {
        s.warn([format!(
            "{skipped} line(s) of {} over 1 MiB skipped",
            path.display()
        )]);
    }
    Ok(r)
}
