//! The top-level error: every failure maps to one exit code here (SPEC "Exit codes":
//! 1 error, 2 bad usage, 3 refused for safety or capped) and prints as
//! `error: …`, its cause chain, then `hint: …`.

use crate::clock::ClockError;
use crate::config::ConfigError;
use crate::git::GitError;
use crate::ledger::LedgerError;
use crate::recover::RecoverError;
use crate::repo::RepoError;
use crate::snapshot::GatherError;
use crate::sync::SyncError;

/// Exit code: done.
pub const EXIT_OK: i32 = 0;
/// Exit code: error.
pub const EXIT_ERROR: i32 = 1;
/// Exit code: bad usage.
pub const EXIT_USAGE: i32 = 2;
/// Exit code: refused for safety or capped.
pub const EXIT_REFUSED: i32 = 3;

/// Any failure of a command.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Repository access.
    #[error(transparent)]
    Repo(#[from] RepoError),
    /// The ledger.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// Configuration.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Time parsing.
    #[error(transparent)]
    Clock(#[from] ClockError),
    /// The git binary.
    #[error(transparent)]
    Git(#[from] GitError),
    /// A branch that is neither a worker nor a branch anywhere.
    #[error("no worker or branch named '{branch}'{}", close_list(close))]
    UnknownBranch {
        /// The name given.
        branch: String,
        /// The closest worker branches, closest first (at most 3; SPEC 1.2 "Errors a
        /// newcomer meets").
        close: Vec<String>,
    },
    /// The base branch was named where a worker branch is needed.
    #[error("'{branch}' is the base branch: it is never a worker")]
    BaseBranch {
        /// The name given.
        branch: String,
    },
    /// `sync` named a remote the repository does not have (exit 1).
    #[error("no remote named '{remote}' (see `git remote -v`)")]
    NoRemote {
        /// The remote named (argument or `recode.remote`).
        remote: String,
    },
    /// Bad arguments that clap could not catch.
    #[error("{0}")]
    Usage(String),
    /// A file could not be read or written.
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
    /// `recover` stopped.
    #[error(transparent)]
    Recover(#[from] RecoverError),
    /// `resume` cannot run the agent where it must.
    #[error(transparent)]
    Resume(crate::resume::ResumeError),
    /// `sync` failed.
    #[error(transparent)]
    Sync(#[from] SyncError),
    /// A program git-recode runs (bash for the demo, its own executable) failed.
    #[error("{what}: {why}")]
    Program {
        /// What was being run.
        what: &'static str,
        /// Why it failed.
        why: String,
    },
    /// Some of the work failed after what could be done safely was done (`recover`: a
    /// rejected push, a forge error); the report says which (exit 1).
    #[error("{0}")]
    Partial(String),
    /// Refused for safety, or capped (exit 3), with what to do next.
    #[error("{message}")]
    Refused {
        /// What was refused and why.
        message: String,
        /// What to do next.
        hint: String,
    },
}

/// `; the closest worker branches: a, b` (nothing when there are none).
fn close_list(close: &[String]) -> String {
    if close.is_empty() {
        String::new()
    } else {
        format!("; the closest worker branches: {}", close.join(", "))
    }
}

impl From<GatherError> for Error {
    fn from(e: GatherError) -> Self {
        match e {
            GatherError::Repo(r) => Error::Repo(r),
            GatherError::Ledger(l) => Error::Ledger(l),
        }
    }
}

impl From<crate::resume::ResumeError> for Error {
    fn from(e: crate::resume::ResumeError) -> Self {
        use crate::resume::ResumeError;
        match e {
            ResumeError::Ledger(l) => Error::Ledger(l),
            ResumeError::Io { what, path, source } => Error::Io { what, path, source },
            e => Error::Resume(e),
        }
    }
}

impl From<crate::record::RecordError> for Error {
    fn from(e: crate::record::RecordError) -> Self {
        match e {
            crate::record::RecordError::Repo(r) => Error::Repo(r),
            crate::record::RecordError::Ledger(l) => Error::Ledger(l),
        }
    }
}

impl Error {
    /// The exit code for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_) => EXIT_USAGE,
            Error::Resume(crate::resume::ResumeError::Template { .. }) => EXIT_USAGE,
            Error::Refused { .. } => EXIT_REFUSED,
            _ => EXIT_ERROR,
        }
    }

    /// What to do next: this error's own hint, else the hint of the module error it
    /// wraps (each module's error type carries its own).
    pub fn hint(&self) -> Option<String> {
        match self {
            Error::UnknownBranch { close, .. } if !close.is_empty() => Some(format!(
                "did you mean '{}'? (`git recode status --all` lists every worker)",
                close[0]
            )),
            Error::UnknownBranch { .. } => Some(
                "`git recode status --all` lists every worker; check the branch name".into(),
            ),
            Error::NoRemote { .. } => Some(
                "add it with `git remote add <name> <url>`, or name another remote (recode.remote sets the default)".into(),
            ),
            Error::BaseBranch { .. } => Some(
                "name the issue branch the agent works on (the base is recode.base, else the remote's HEAD, main or master)".into(),
            ),
            Error::Refused { hint, .. } => Some(hint.clone()),
            Error::Repo(e) => e.hint(),
            Error::Ledger(e) => e.hint(),
            Error::Config(e) => Some(e.hint()),
            Error::Clock(e) => e.hint(),
            Error::Git(e) => e.hint(),
            Error::Recover(e) => e.hint(),
            Error::Resume(e) => e.hint(),
            _ => None,
        }
    }

    /// Render `error: …`, the cause chain, and `hint: …` (each on its own line; a hint of
    /// several lines gives one `hint:` line each).
    pub fn render(&self) -> String {
        let mut out = format!("error: {self}\n");
        let mut src = std::error::Error::source(self);
        // Transparent variants repeat their inner message as the first source: skip duplicates.
        let mut last = self.to_string();
        while let Some(s) = src {
            let msg = s.to_string();
            if !last.contains(&msg) {
                out.push_str(&format!("  caused by: {msg}\n"));
            }
            last = msg;
            src = s.source();
        }
        // A hint of several lines is several `hint:` lines, as git prints them.
        for h in self.hint().iter().flat_map(|h| h.lines()) {
            out.push_str(&format!("hint: {h}\n"));
        }
        out
    }
}
