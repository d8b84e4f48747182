//! `git recode record spawn|exit|gate|unblock|clear`: ledger an event.

use std::path::{Path, PathBuf};

use crate::cli::{Ctx, Ui};
use crate::error::{EXIT_OK, Error};
use crate::ledger::{Body, GateBy};
use crate::{agent, record};

/// Ledger an event
#[derive(clap::Subcommand, Debug)]
pub enum RecordCommand {
    /// Ledger an attempt's start
    ///
    /// The branch need not exist yet: a loop may record the spawn before the agent creates it.
    ///
    /// Example: `git recode record spawn feat/issue-12-parser --agent claude --pid $! --session-id "$sid" -- --permission-mode acceptEdits --model opus`
    Spawn {
        /// The worker's branch
        #[arg(value_parser = crate::cli::branch::parse)]
        branch: String,
        /// The agent's session id (to resume it later)
        #[arg(long, value_name = "ID")]
        session_id: Option<String>,
        /// The agent: claude, codex, gemini, opencode, cursor, copilot, amp, goose, aider
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
        /// The agent's process id on this host (its start time is recorded too)
        #[arg(long, value_name = "N")]
        pid: Option<u32>,
        /// The directory the agent runs in [default: the branch's worktree, else the current directory]
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// The file the loop sends the agent's stdout to (read for a limit a live agent waits on)
        #[arg(long, value_name = "FILE")]
        output: Option<PathBuf>,
        /// The file holding the prompt the loop gave the agent: its first 16 KiB are kept with the attempt and carried into every resume prompt
        #[arg(long, value_name = "F")]
        prompt_file: Option<PathBuf>,
        /// The agent's configuration directory (e.g. CLAUDE_CONFIG_DIR, CODEX_HOME), set again on resume [default: the agent's variable in this environment]
        #[arg(long, value_name = "DIR")]
        config_dir: Option<PathBuf>,
        /// The agent's own flags, after `--` (permission mode, model, allowed tools; not the prompt nor the session): the command `resume` prints runs the agent with them
        #[arg(last = true, index = 2, value_name = "AGENT_ARGS")]
        agent_args: Vec<String>,
    },
    /// Ledger an attempt's end; the outcome is classified from rc and the final message
    ///
    /// Example: `claude -p "$prompt" >out.txt; git recode record exit "$branch" --rc $? --message-file out.txt`
    Exit {
        /// The worker's branch
        #[arg(value_parser = crate::cli::branch::parse)]
        branch: String,
        /// The agent's exit code
        #[arg(long, allow_negative_numbers = true)]
        rc: i32,
        /// A file holding the agent's final message (- for standard input)
        #[arg(long, value_name = "F")]
        message_file: Option<PathBuf>,
        /// The agent's output (stderr may be merged in): any known agent's JSON, or its text; read line by line
        #[arg(long, value_name = "F")]
        result_json: Option<PathBuf>,
        /// The issue or ref the task is blocked on (outcome `blocked`)
        #[arg(long, value_name = "REF")]
        blocker: Option<String>,
    },
    /// Ledger a gate result for the branch's current head
    Gate {
        /// The worker's branch
        #[arg(value_parser = crate::cli::branch::parse)]
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
        #[arg(value_parser = crate::cli::branch::parse)]
        branch: String,
    },
    /// Lift an escalation: attempts count afresh after it
    Clear {
        /// The worker's branch
        #[arg(value_parser = crate::cli::branch::parse)]
        branch: String,
        /// Why (e.g. "fixed the login")
        #[arg(long, value_name = "TEXT")]
        reason: Option<String>,
    },
}

/// The last [`record::MESSAGE_KEEP_BYTES`] of a message file (`-`: standard input), read from
/// its tail in bounded memory ([`crate::tail`], SPEC 1.2); a warning when a stream was
/// too long to read to its end.
///
/// Errors: [`Error::Io`].
fn read_message(ui: &Ui, path: &Path) -> Result<String, Error> {
    // 3 more bytes: a character cut at the start is skipped, and 4 KiB remain.
    let t = crate::tail::read_tail(path, record::MESSAGE_KEEP_BYTES + 3).map_err(|source| {
        Error::Io {
            what: "read the message file",
            path: path.display().to_string(),
            source,
        }
    })?;
    if t.stopped {
        ui.warn(&[format!(
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
            output,
            prompt_file,
            config_dir,
            agent_args,
        } => {
            let prompt = prompt_file.as_deref().map(read_prompt).transpose()?;
            // The ledger travels with the repository: a key passed as a flag stays out.
            if let Some(a) = agent_args.iter().find(|a| crate::redact::redact(a) != **a) {
                return Err(Error::Usage(format!(
                    "agent flag {:?} holds a secret: pass it through the agent's environment, not `record spawn --`",
                    crate::redact::redact(a)
                )));
            }
            let absolute = |p: PathBuf| crate::worktree::absolute(&p).to_string_lossy().to_string();
            let config_dir = config_dir.map(absolute).or_else(|| {
                let var = agent.as_deref().and_then(agent::profile)?.config_env?;
                std::env::var(var)
                    .ok()
                    .filter(|d| !d.is_empty())
                    .map(|d| absolute(d.into()))
            });
            let s = record::Spawn {
                branch,
                session_id,
                agent,
                pid,
                cwd,
                output: output.map(absolute),
                prompt,
                agent_args: (!agent_args.is_empty()).then_some(agent_args),
                config_dir,
            };
            let done = record::spawn(&ctx.repo, &ctx.cfg, ctx.now, s)?;
            ctx.ui.warn(&done.warnings);
        }
        RecordCommand::Exit {
            branch,
            rc,
            message_file,
            result_json,
            blocker,
        } => {
            let mut result = match &result_json {
                Some(p) => Some(read_result(ui, p)?),
                None => None,
            };
            if let Some(r) = result.as_mut() {
                let mut warnings = Vec::new();
                r.session_id = r
                    .session_id
                    .take()
                    .filter(|id| record::checked_session(id, &mut warnings));
                ctx.ui.warn(&warnings);
            }
            let message = match &message_file {
                Some(p) => Some(read_message(ui, p)?),
                None => None,
            };
            let x = record::Exit {
                branch,
                rc,
                message,
                result,
                blocker,
            };
            let outcome = record::exit(&ctx.repo, &ctx.cfg, ctx.now, x)?;
            crate::say!("{}", outcome.as_str());
        }
        RecordCommand::Gate { branch, passed, .. } => {
            let (_, head) = record::locate(&ctx.repo, &branch)?;
            let Some(head) = head else {
                return Err(ctx.unknown_branch(&branch));
            };
            let body = Body::Gate {
                passed,
                command: ctx.cfg.gate.clone(),
                by: GateBy::Record,
            };
            record::append(&ctx.repo, &ctx.cfg, ctx.now, &branch, Some(head), body)?;
        }
        RecordCommand::Unblock { branch } => {
            record::append(&ctx.repo, &ctx.cfg, ctx.now, &branch, None, Body::Unblocked)?;
        }
        RecordCommand::Clear { branch, reason } => {
            let body = Body::Cleared { reason };
            record::append(&ctx.repo, &ctx.cfg, ctx.now, &branch, None, body)?;
        }
    }
    Ok(EXIT_OK)
}

/// Read `--result-json` line by line in bounded memory ([`agent::parse_reader`]); `-`
/// is standard input. Warns for each line over 1 MiB skipped.
///
/// Errors: [`Error::Io`] when the file cannot be opened.
/// The first [`crate::model::event::PROMPT_KEEP_BYTES`] of the prompt file (read no further).
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

fn read_result(ui: &Ui, path: &Path) -> Result<agent::AgentResult, Error> {
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
        ui.warn(&[format!(
            "{skipped} line(s) of {} over 1 MiB skipped",
            path.display()
        )]);
    }
    Ok(r)
}

/// [`record::known`], or [`Error::UnknownBranch`] naming the closest worker branches.
fn known(ctx: &Ctx, branch: &str) -> Result<(), Error> {
    if record::known(&ctx.repo, &ctx.cfg, branch)? {
        Ok(())
    } else {
        Err(ctx.unknown_branch(branch))
    }
}
