//! The sentences of the overrides ([`Override`]'s `Display`).

use std::fmt;

use super::*;

impl fmt::Display for Override {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::model::Action;
        match self {
            Override::NeverRemoved(Kept::Main) => {
                f.write_str("it is the main worktree: git-recode never removes it")
            }
            Override::NeverRemoved(Kept::Locked(r)) if r.is_empty() => {
                f.write_str("the worktree is locked: never removed")
            }
            Override::NeverRemoved(Kept::Locked(r)) => {
                write!(f, "the worktree is locked ({r}): never removed")
            }
            Override::NeverRemoved(Kept::Submodules) => f.write_str(
                "the worktree holds submodules, which git worktree remove refuses: never removed",
            ),
            Override::ShallowNeverDeleted => f.write_str(
                "the history is shallow and has no merge base of the branch and its base: never deleted (`git fetch --unshallow`)",
            ),
            Override::MainNotCommitted => {
                f.write_str("in the main worktree, which git-recode never commits: resume in place")
            }
            Override::Unreadable { path, why } => {
                write!(f, "the worktree {path} is not clean on this reading: {why}")
            }
            Override::Detached {
                path,
                branch,
                refused,
            } => {
                let what = match refused {
                    Action::Publish => {
                        "its branch is never published while the worktree is detached"
                    }
                    Action::WipCommit => "a WIP commit there would land on no branch",
                    _ => "a detached worktree is never removed",
                };
                write!(
                    f,
                    "the worktree {path} is on a detached HEAD: {what}; `git -C {path} switch {branch}` first"
                )
            }
            Override::MissingDirectory { path } => write!(
                f,
                "worktree directory {path} is missing (maybe an unmounted volume): never removed"
            ),
            Override::MissingNotResumed { path } => write!(
                f,
                "worktree directory {path} is missing, so resume cannot run there: mount it or run `git worktree repair`, then `git recode record clear`"
            ),
            Override::SecretsKept { files } => write!(
                f,
                "worktree holds ignored secret files ({}): never removed",
                files.join(", ")
            ),
            Override::ForgeFailed { refused } => write!(
                f,
                "the forge failed in this run: {} waits for a run in which it answers",
                if *refused == Action::Publish {
                    "publishing"
                } else {
                    "a delete"
                }
            ),
            Override::Transient { retry_after } => {
                write!(
                    f,
                    "transient limit: retry after {}",
                    clock::format_secs(*retry_after)
                )
            }
            Override::Blocked { on } => {
                write!(f, "blocked on {on} until `git recode record unblock`")
            }
            Override::Running { by } => match by {
                RunningBy::PidAlive => f.write_str("worker is running (its pid is alive)"),
                RunningBy::Activity => f.write_str("worker is running (recent activity)"),
                RunningBy::Parked { until } => write!(
                    f,
                    "worker is running (its output waits on a limit until {})",
                    clock::format_secs(*until)
                ),
            },
            Override::Hung { idle, until } => write!(
                f,
                "hung: pid alive, no activity for {}{}",
                clock::human_secs(*idle),
                until
                    .map(|t| format!(" (its limit reset at {})", clock::format_secs(t)))
                    .unwrap_or_default()
            ),
            Override::OtherHost { host, why } => {
                write!(f, "worker of host {host}")?;
                match why {
                    HostWait::Alive { age } => write!(
                        f,
                        ": its heartbeat {} ago says it is alive",
                        clock::human_secs(age.as_secs())
                    ),
                    HostWait::Young { age } => {
                        write!(f, ": its attempt started {} ago", clock::human_secs(age.as_secs()))
                    }
                    HostWait::HostHandles { age } => write!(
                        f,
                        ", whose loop handles it (heartbeat {} ago)",
                        clock::human_secs(age.as_secs())
                    ),
                    HostWait::Silent { age, refused } => {
                        return write!(
                            f,
                            ", silent for {}: only a takeover (resume) acts on it here, never a {refused}",
                            clock::human_secs(age.as_secs())
                        );
                    }
                    HostWait::NotSilent { age, timeout } => write!(
                        f,
                        ": heard of {} ago; taken over here only after {} of silence (recode.hostTimeout)",
                        clock::human_secs(age.as_secs()),
                        clock::human_secs(timeout.as_secs())
                    ),
                }?;
                f.write_str("; never acted on here")
            }
            Override::UnrecordedActivity { idle } => write!(
                f,
                "no attempt recorded but activity {} ago: an unrecorded agent may be at work",
                clock::human_secs(*idle)
            ),
        }
    }
}
