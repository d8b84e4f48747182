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

    /// What to do next.
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            Error::Repo(RepoError::NotARepo { .. }) => {
                "run git recode inside a git repository, or point at one with -C <path>".into()
            }
            Error::Repo(RepoError::RefFormat { .. }) => {
                "use a clone with the files ref format (`git clone --ref-format=files …`)".into()
            }
            Error::Repo(RepoError::ObjectFormat { .. }) => {
                "git-recode reads SHA-1 repositories for now".into()
            }
            Error::UnknownBranch { close, .. } if !close.is_empty() => format!(
                "did you mean '{}'? (`git recode status --all` lists every worker)",
                close[0]
            ),
            Error::UnknownBranch { .. } => {
                "`git recode status --all` lists every worker; check the branch name".into()
            }
            Error::NoRemote { .. } => {
                "add it with `git remote add <name> <url>`, or name another remote (recode.remote sets the default)".into()
            }
            Error::Config(e) => e.hint(),
            Error::BaseBranch { .. } => {
                "name the issue branch the agent works on (the base is recode.base, else the remote's HEAD, main or master)".into()
            }
            Error::Clock(ClockError::BadTimestamp { .. }) => {
                "set RECODE_NOW to an RFC 3339 time such as 2026-11-29T12:00:00Z, or unset it".into()
            }
            Error::Refused { hint, .. } => hint.clone(),
            Error::Ledger(LedgerError::StaleLock { path }) => {
                format!("if no git process is running in this repository, remove it: rm '{path}'")
            }
            Error::Recover(RecoverError::Lock(_)) => {
                "another git recode recover is running; wait for it, or run again".into()
            }
            Error::Recover(RecoverError::UnknownBranch { .. }) => {
                "`git recode status --all` lists every worker; check the branch name".into()
            }
            Error::Recover(RecoverError::Gather(GatherError::Ledger(LedgerError::StaleLock {
                path,
            })))
            | Error::Recover(RecoverError::Ledger(LedgerError::StaleLock { path })) => {
                format!("if no git process is running in this repository, remove it: rm '{path}'")
            }
            Error::Resume(crate::resume::ResumeError::MissingWorktree { path, .. }) => format!(
                "if the directory moved, run `git worktree repair <new-path>`; if it is on a volume, mount it; then resume again (nothing was ledgered; the old path was {path})"
            ),
            Error::Git(crate::git::GitError::TooOld { .. }) => {
                "install a newer git (https://git-scm.com/downloads) and put it first on PATH".into()
            }
            Error::Ledger(LedgerError::Unwritable { name, .. })
            | Error::Recover(RecoverError::Ledger(LedgerError::Unwritable { name, .. })) => {
                format!(
                    "make {name} writable (check the permissions of the repository's refs directory and what stands at {name}.lock), then run the command again"
                )
            }
            Error::Ledger(LedgerError::Contended { .. }) => {
                "many writers are appending at once; run the command again".into()
            }
            _ => return None,
        })
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
