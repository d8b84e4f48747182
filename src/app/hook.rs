//! `hook install|uninstall|status|post-commit`.

use super::Session;
use crate::error::{EXIT_OK, Error};
use crate::hook::install::{Done, InstallError};
use crate::hook::{self, WorktreeReach};

/// What `hook install` / `hook uninstall` did, as the line to say; or a refusal, with the
/// configuration the user is to add (for a hook manager: its line or stanza), printed on
/// stdout before the error.
#[derive(Debug)]
pub enum Acted {
    /// Done: the sentence saying what.
    Done(String),
    /// Refused (exit 3).
    Refused {
        /// The configuration to add, when there is some.
        advice: Option<String>,
        /// The refusal ([`Error::Refused`]).
        error: Error,
    },
}

/// `hook install [--chain]` (`install` is `Some(chain)`) or `hook uninstall` (`None`).
///
/// Errors: [`Error::Io`]; repository errors.
pub fn act(s: &Session, install: Option<bool>) -> Result<Acted, Error> {
    let done = match install {
        Some(chain) => hook::install::install(&s.repo, chain),
        None => hook::install::uninstall(&s.repo),
    };
    let said = match done {
        Ok(Done::AlreadyInstalled(p)) => format!("already installed in {}", p.display()),
        Ok(Done::AlreadyReached(via)) => format!("already installed: {via}"),
        Ok(Done::Installed(p)) => format!("installed {}", p.display()),
        Ok(Done::Repaired { hook, why }) => {
            format!("repaired {} (it did not run: {why})", hook.display())
        }
        Ok(Done::Chained { hook, kept }) => format!(
            "installed {} (runs the previous hook, kept as {}, first)",
            hook.display(),
            kept.display()
        ),
        Ok(Done::Removed(p)) => format!("removed {}", p.display()),
        Ok(Done::Restored(p)) => format!("restored the previous hook {}", p.display()),
        Ok(Done::SplicedOut(p)) => format!("removed git-recode's lines from {}", p.display()),
        Ok(Done::NotInstalled(dir)) => format!("not installed in {}", dir.display()),
        Err(InstallError::Refused {
            advice,
            message,
            hint,
        }) => {
            return Ok(Acted::Refused {
                advice,
                error: Error::Refused { message, hint },
            });
        }
        Err(InstallError::Io { what, path, source }) => {
            return Err(Error::Io { what, path, source });
        }
    };
    Ok(Acted::Done(said))
}

/// `hook status`: for each worktree, whether a commit there reaches the milestone hook and
/// the hook runs (the current worktree's entry has `current`).
pub fn status(s: &Session) -> Vec<WorktreeReach> {
    hook::reach_and_run(&s.repo)
}

/// The document `hook status --json` prints for `all`.
pub fn status_doc(all: &[WorktreeReach]) -> crate::wire::HookStatusDoc<'_> {
    crate::wire::HookStatusDoc {
        schema: crate::wire::SCHEMA,
        worktrees: all
            .iter()
            .map(|r| crate::wire::HookReachJson {
                path: r.path.display().to_string(),
                hooks_dir: r.hooks_dir.display().to_string(),
                manager: r.manager.map(<&'static str>::from),
                reaches: r.reaches,
                via: r.via.as_deref(),
                why: r.why.as_deref(),
                current: r.current,
            })
            .collect(),
    }
}

/// What the post-commit hook says: a line for stdout (the dry call's answer) and at most
/// one line for stderr. The hook never fails a commit: its exit code is always 0.
#[derive(Debug, Default)]
pub struct HookSaid {
    /// The answer to a dry call (`RECODE_HOOK_DRY_RUN`).
    pub stdout: Option<String>,
    /// A warning or an error, on one line.
    pub stderr: Option<String>,
    /// The exit code: 0.
    pub code: i32,
}

/// Whether this process was started as the post-commit hook itself: git running
/// git-recode as the hook's interpreter (`args` as given, program name left out).
pub fn is_hook_path(args: &[std::ffi::OsString]) -> bool {
    hook::is_hook_path(args)
}

/// The post-commit hook, as git runs it: journal a milestone when HEAD's message has a
/// `Recode-Phase:` trailer; a dry call answers who would run.
pub fn post_commit() -> HookSaid {
    if std::env::var_os(hook::runs::DRY_RUN_ENV).is_some() {
        let exe = std::env::current_exe().unwrap_or_default();
        return HookSaid {
            stdout: Some(format!(
                "{} ({} {})",
                hook::runs::DRY_RUN_ANSWER,
                env!("CARGO_PKG_VERSION"),
                exe.display()
            )),
            ..HookSaid::default()
        };
    }
    if hook::certainly_no_phase() {
        return HookSaid::default();
    }
    let stderr = match journal() {
        Ok(warning) => warning.map(|w| format!("git-recode post-commit: warning: {w}")),
        Err(e) => {
            let mut line = format!("git-recode post-commit: error: {e}");
            if let Some(h) = e.hint() {
                line.push_str(&format!("; hint: {h}"));
            }
            Some(line.replace('\n', " "))
        }
    };
    HookSaid {
        stderr,
        code: EXIT_OK,
        ..HookSaid::default()
    }
}

/// Journal HEAD's milestone; the warning to show when there is one.
fn journal() -> Result<Option<String>, Error> {
    let s = Session::open()?;
    match hook::commit::post_commit(&s.repo, &s.cfg, s.now) {
        Ok(hook::commit::Milestone::Journaled(_, warning)) => Ok(warning),
        Ok(_) => Ok(None),
        Err(e) => Err(Error::Partial(e.to_string())),
    }
}
