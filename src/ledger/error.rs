//! Errors of the ledger, and the helper that wraps a git failure in one.

/// Errors of the ledger.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// A git object or ref could not be read or written.
    #[error("cannot {what} in the ledger ({notes_ref}): {source}")]
    Git {
        /// What was being done.
        what: String,
        /// The notes ref.
        notes_ref: String,
        /// The underlying gix error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A ref's lock file was left behind by a killed writer.
    #[error("the ref lock {path} was left behind (no git process holds it for seconds)")]
    StaleLock {
        /// The lock file.
        path: String,
    },
    /// A ref could not be written for a reason other than a lost race (something at its
    /// lock path that is not a writer's lock, an unwritable refs directory): retrying
    /// would not help, so the append fails at once.
    #[error("cannot write {name}: {why}")]
    Unwritable {
        /// The ref.
        name: String,
        /// What is wrong, in a few words.
        why: String,
        /// The underlying gix error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The compare-and-swap kept losing for longer than the retry budget.
    #[error(
        "gave up appending to the ledger of task {task} after {tries} lost races on {notes_ref}"
    )]
    Contended {
        /// Task key.
        task: String,
        /// The notes ref.
        notes_ref: String,
        /// Attempts made.
        tries: u32,
    },
}

impl LedgerError {
    /// What the user can do about it (shown under the error), when there is something.
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            LedgerError::StaleLock { path } => {
                format!("if no git process is running in this repository, remove it: rm '{path}'")
            }
            LedgerError::Unwritable { name, .. } => format!(
                "make {name} writable (check the permissions of the repository's refs directory and what stands at {name}.lock), then run the command again"
            ),
            LedgerError::Contended { .. } => {
                "many writers are appending at once; run the command again".into()
            }
            LedgerError::Git { .. } => return None,
        })
    }
}

pub(super) fn git_err(
    what: impl Into<String>,
    notes_ref: &str,
) -> impl FnOnce(Box<dyn std::error::Error + Send + Sync>) -> LedgerError {
    let what = what.into();
    let notes_ref = notes_ref.to_string();
    move |source| LedgerError::Git {
        what,
        notes_ref,
        source,
    }
}
