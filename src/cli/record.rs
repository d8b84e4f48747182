//! `git recode record spawn|exit|gate|unblock|clear`: ledger an event.

use std::io::Write;
use std::path::PathBuf;

use crate::app::{self, EXIT_OK, Error};
use crate::cli::{Ui, out_err};

/// Ledger an event
#[derive(clap::Subcommand, Debug)]
pub(crate) enum RecordCommand {
    /// Ledger an attempt's start
    ///
    /// The branch need not exist yet: a loop may record the spawn before the agent creates it.
    ///
    /// Example: `git recode record spawn feat/issue-12-parser --agent claude --pid $! --session-id "$sid" -- --permission-mode acceptEdits --model opus`
    Spawn {
        /// The worker's branch
        #[arg(value_parser = crate::app::parse_branch)]
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
        #[arg(value_parser = crate::app::parse_branch)]
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
        #[arg(value_parser = crate::app::parse_branch)]
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
        #[arg(value_parser = crate::app::parse_branch)]
        branch: String,
    },
    /// Lift an escalation: attempts count afresh after it
    Clear {
        /// The worker's branch
        #[arg(value_parser = crate::app::parse_branch)]
        branch: String,
        /// Why (e.g. "fixed the login")
        #[arg(long, value_name = "TEXT")]
        reason: Option<String>,
    },
}

/// Run `record …`.
///
/// Errors: as [`app::record`].
pub(crate) fn run(cmd: RecordCommand, ui: &Ui) -> Result<i32, Error> {
    let what = match cmd {
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
        } => app::Record::Spawn(app::Spawn {
            branch,
            session_id,
            agent,
            pid,
            cwd,
            output,
            prompt_file,
            config_dir,
            agent_args,
        }),
        RecordCommand::Exit {
            branch,
            rc,
            message_file,
            result_json,
            blocker,
        } => app::Record::Exit(app::Exit {
            branch,
            rc,
            message_file,
            result_json,
            blocker,
        }),
        RecordCommand::Gate { branch, passed, .. } => app::Record::Gate { branch, passed },
        RecordCommand::Unblock { branch } => app::Record::Unblock { branch },
        RecordCommand::Clear { branch, reason } => app::Record::Clear { branch, reason },
    };
    let (s, ui) = ui.session()?;
    if let Some(outcome) = ui.after(&s, app::record(&s, what))? {
        writeln!(ui.out(), "{outcome}").map_err(out_err)?;
    }
    Ok(EXIT_OK)
}
