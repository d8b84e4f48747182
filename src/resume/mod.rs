//! `resume`: the successor's prompt, built from the repository and the ledger (never
//! from memory), and the command that resumes the agent's own session where it can.
//!
//! Agents key sessions by directory: when the recorded `cwd` is gone, or the last failure
//! was marked `fresh` (context window exceeded: resuming repeats it), the command starts a
//! fresh session with the prompt instead, and says why.
//!
//! A published worker whose pull request's checks fail or whose reviewer requests changes
//! gets the forge's feedback in its prompt ([`feedback`]), fenced as untrusted text.

use crate::ledger;
use crate::model::{self, Worker};
use crate::repo;

pub(crate) mod catch_up;
mod facts;
pub(crate) mod feedback;
mod launch;
mod place;
mod render;
pub(crate) mod start;
pub(crate) mod takeover;

pub(crate) use crate::wire::ResumeFacts as Facts;
pub(crate) use facts::facts;
pub(crate) use launch::{Launch, Mode, launch, sh_quote};
pub(crate) use place::{Place, place};
pub(crate) use render::prompt;

/// The fence lines around untrusted output. Every line of the output inside is prefixed
/// with `| `, so no text in it can close the fence.
pub const FENCE_BEGIN: &str = "----- BEGIN UNTRUSTED OUTPUT OF THE PREVIOUS ATTEMPT -----";
/// See [`FENCE_BEGIN`].
pub const FENCE_END: &str = "----- END UNTRUSTED OUTPUT OF THE PREVIOUS ATTEMPT -----";
/// The fence lines around the commits' subjects (untrusted text, SPEC 1.2).
pub(crate) const COMMITS_BEGIN: &str = "----- BEGIN UNTRUSTED COMMIT SUBJECTS -----";
/// See [`COMMITS_BEGIN`].
pub(crate) const COMMITS_END: &str = "----- END UNTRUSTED COMMIT SUBJECTS -----";
/// The fence around the task's own prompt (SPEC 1.3: kept as untrusted text).
pub(crate) const TASK_BEGIN: &str = "----- BEGIN UNTRUSTED TASK PROMPT -----";
/// See [`TASK_BEGIN`].
pub(crate) const TASK_END: &str = "----- END UNTRUSTED TASK PROMPT -----";

/// Prefix every line of untrusted text with `| ` so it cannot close its fence: lines end
/// at every break an agent or terminal honours, other control characters are escaped
/// ([`crate::fence::quote`], SPEC 1.2).
pub(crate) fn quote_untrusted(text: &str) -> String {
    crate::fence::quote(text)
}

/// Whether this worker may be resumed: `Some(reason)` when it must not (running, hung
/// with its pid alive, or needing a human: capped, auth, an operation in progress). The
/// branch and the reason are untrusted (a synced ledger's): shown escaped
/// ([`crate::fence::shown`]), so the message is one line with no control character.
pub(crate) fn refusal(w: &Worker) -> Option<String> {
    let branch = crate::fence::shown(&w.branch);
    let reason = crate::fence::shown(&w.reason.to_string());
    if w.liveness == model::Liveness::Running {
        return Some(format!("{branch} is running: {reason}"));
    }
    if w.state == model::State::NeedsHuman {
        return Some(format!("{branch} needs a human: {reason}"));
    }
    // SPEC 1.3 "The loop as people run it": a hung agent's pid is alive; it is ended by
    // `recover` first, never resumed beside it.
    if w.action == model::Action::Kill {
        return Some(format!(
            "{branch} is hung and still alive: {reason} (run `git recode recover {branch}` to end it first)"
        ));
    }
    // SPEC 1.2 "Several machines": a worker of another host is never acted on here
    // until that host has been silent for `recode.hostTimeout`.
    if let Some(model::reason::Override::OtherHost { .. }) = w.reason.last_override() {
        return Some(format!("{branch} belongs to another host: {reason}"));
    }
    None
}

/// Errors of `resume`: reading the facts, deciding where to resume.
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    /// The repository cannot be read.
    #[error(transparent)]
    Repo(#[from] repo::RepoError),
    /// A git run failed.
    #[error(transparent)]
    Git(#[from] crate::git::GitError),
    /// The registered worktree's directory is missing (moved, deleted, or on a volume
    /// that is not mounted): refused, nothing ledgered.
    #[error("the worktree of {branch} is registered at {path}, which does not exist")]
    MissingWorktree {
        /// The branch.
        branch: String,
        /// The registered path.
        path: String,
    },
    /// The ledger could not be read or written.
    #[error(transparent)]
    Ledger(#[from] ledger::LedgerError),
    /// The prompt file could not be written.
    #[error("cannot {what} {path}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// `recode.agent` is a template that puts a placeholder inside its own quotes.
    #[error(
        "config recode.agent = '{value}' is refused: {placeholder} is inside quotes of the template's own (each placeholder becomes one single-quoted word: write it bare)"
    )]
    Template {
        /// The template.
        value: String,
        /// The quoted placeholder.
        placeholder: &'static str,
    },
    /// A resume where other hosts share the remote could not sync the ledger with it
    /// first (SPEC 1.2 "Several machines": the silent host may have come back; SPEC 1.3:
    /// another host may have taken this host's worker over, or ended it).
    #[error(
        "cannot resume {branch}: syncing the ledger with {remote} failed, and other hosts share it (one may have taken it over or ended it): {why}"
    )]
    TakeoverSync {
        /// The branch.
        branch: String,
        /// The remote.
        remote: String,
        /// The sync's error.
        why: String,
    },
    /// `git worktree add` failed.
    #[error("cannot add a worktree for {branch} at {path}: {source}")]
    Add {
        /// The branch.
        branch: String,
        /// Where.
        path: String,
        /// git's error.
        #[source]
        source: crate::git::GitError,
    },
}

impl ResumeError {
    /// What the user can do about it (shown under the error), when there is something.
    pub fn hint(&self) -> Option<String> {
        match self {
            ResumeError::MissingWorktree { path, .. } => Some(format!(
                "if the directory moved, run `git worktree repair <new-path>`; if it is on a volume, mount it; then resume again (nothing was ledgered; the old path was {path})"
            )),
            ResumeError::Repo(e) => e.hint(),
            ResumeError::Git(e) => e.hint(),
            ResumeError::Ledger(e) => e.hint(),
            _ => None,
        }
    }
}
