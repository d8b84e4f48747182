//! `hook install` and `hook uninstall` as a state machine over what the hooks directory
//! holds ([`super::Installed`]): what to write, keep, restore or splice, and
//! when to refuse (SPEC `hook`: never a tracked file, never inside a working tree; a
//! hook git-recode did not write is kept with `--chain`, else refused). Returns what was
//! done as a value; the command line renders it.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::{Installed, advice, walk};

/// What `install` or `uninstall` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Done {
    /// Our hook was already at this path.
    AlreadyInstalled(PathBuf),
    /// A hook manager or chain already reaches the hook: how.
    AlreadyReached(String),
    /// Wrote the hook at this path.
    Installed(PathBuf),
    /// Rewrote our own hook at this path, which did not run (`why`: its interpreter or the
    /// binary it names moved, [`super::runs`]).
    Repaired {
        /// The hook.
        hook: PathBuf,
        /// Why it did not run.
        why: String,
    },
    /// Wrote the hook at `hook`, keeping the previous one as `kept` (run first).
    Chained {
        /// The hook.
        hook: PathBuf,
        /// The previous hook, kept.
        kept: PathBuf,
    },
    /// Removed our hook at this path.
    Removed(PathBuf),
    /// Put the chained hook back at this path.
    Restored(PathBuf),
    /// Removed our lines from the hook at this path.
    SplicedOut(PathBuf),
    /// Nothing of ours in this hooks directory.
    NotInstalled(PathBuf),
}

/// Why `install` or `uninstall` did not act.
#[derive(Debug, thiserror::Error)]
pub(crate) enum InstallError {
    /// Refused (exit 3): `advice` is the line or stanza to add to a manager's
    /// configuration, for stdout.
    #[error("{message}")]
    Refused {
        /// The configuration text to add, when a manager or a working tree holds the hooks.
        advice: Option<String>,
        /// Why.
        message: String,
        /// What to do (one or more lines).
        hint: String,
    },
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
}

fn io(what: &'static str, p: &Path) -> impl FnOnce(std::io::Error) -> InstallError {
    let path = p.display().to_string();
    move |source| InstallError::Io { what, path, source }
}

fn refused(message: String, hint: String) -> InstallError {
    InstallError::Refused {
        advice: None,
        message,
        hint,
    }
}

fn write_hook(path: &Path, text: &str) -> Result<(), InstallError> {
    std::fs::write(path, text).map_err(io("write the hook", path))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .map_err(io("make executable", path))
}

/// The text of a new hook: a [`super::direct_script`] of the `git-recode` on `PATH` when
/// it is this binary, else the [`super::script`] that finds it on `PATH`.
fn fresh_hook() -> String {
    match super::direct_interpreter() {
        Some(exe) => super::direct_script(&exe),
        None => super::script(false),
    }
}

/// Whether our own hook at `hook` runs: its interpreter exists and a dry call reaches
/// git-recode ([`super::runs`]).
///
/// Errors: why it does not.
fn runs(wt: &Path, hook: &Path) -> Result<(), String> {
    let text = super::managers::read(hook).unwrap_or_default();
    if let Some(why) = super::runs::interpreter_problem(hook, &text) {
        return Err(why);
    }
    super::runs::dry_call(wt, hook, true, &text).map(|_| ())
}

/// This worktree's top (the git dir in a bare repository) and the hooks directory git uses here.
fn here(repo: &gix::Repository) -> (PathBuf, walk::HooksDir) {
    let wt = walk::normalize(repo.workdir().unwrap_or_else(|| repo.git_dir()));
    let dir = walk::hooks_dir(repo, &wt, repo.git_dir());
    (wt, dir)
}

/// Install the post-commit hook where the hooks directory is git's own; where a manager
/// or a working tree holds it, refuse with the configuration to add.
///
/// Errors: [`InstallError::Refused`], [`InstallError::Io`].
pub(crate) fn install(repo: &gix::Repository, chain: bool) -> Result<Done, InstallError> {
    let (wt, dir) = here(repo);
    let hook_path = dir.path.join("post-commit");
    let kind = super::installed(&dir.path);
    if kind == Installed::Ours
        && !walk::in_a_working_tree(repo, &dir.path)
        && let Err(why) = runs(&wt, &hook_path)
    {
        write_hook(&hook_path, &fresh_hook())?;
        return Ok(Done::Repaired {
            hook: hook_path,
            why,
        });
    }
    // A hook someone else wrote (or edited) whose `#!` interpreter is gone never runs: it
    // is not "already installed", and not git-recode's to rewrite (SPEC 1.3, "every path
    // an upgrade moves").
    if unrunnable(&dir.path).is_some()
        && let Some(why) = super::managers::read(&hook_path)
            .and_then(|text| super::runs::interpreter_problem(&hook_path, &text))
    {
        return Err(refused(
            why,
            unrunnable_hint(&hook_path, "git recode hook install"),
        ));
    }
    if matches!(
        kind,
        Installed::Ours | Installed::Chained | Installed::Edited
    ) {
        return Ok(Done::AlreadyInstalled(hook_path));
    }
    let (manager, verdict) = walk::reach_one(&wt, &dir);
    if let Ok(via) = verdict {
        return already_reached(&wt, &hook_path, via);
    }
    if manager.is_some() || walk::in_a_working_tree(repo, &dir.path) {
        return Err(manager_refusal(manager, &wt, &dir));
    }
    write_into(&dir.path, hook_path, kind, chain)
}

/// A manager or chain already reaches the hook (`via`: how): done, when a dry call of
/// the hook at `hook_path` reaches git-recode.
///
/// Errors: [`InstallError::Refused`] when it does not (the hook is not ours to rewrite:
/// the line to change it to).
fn already_reached(wt: &Path, hook_path: &Path, via: String) -> Result<Done, InstallError> {
    let text = super::managers::read(hook_path).unwrap_or_default();
    if let Err(why) = super::runs::dry_call(wt, hook_path, false, &text) {
        return Err(refused(
            why,
            format!(
                "the hook is not git-recode's to rewrite: change its line to `{}`",
                super::managers::LINE
            ),
        ));
    }
    Ok(Done::AlreadyReached(via))
}

/// The refusal where a hook manager (`manager`) or a working tree holds the hooks
/// directory: the configuration to add ([`advice::advice`]), where, what to run then, and
/// what `hook status` will report.
fn manager_refusal(
    manager: Option<super::Manager>,
    wt: &Path,
    dir: &walk::HooksDir,
) -> InstallError {
    let a = advice::advice(manager, wt, dir);
    let what = if a.text.lines().count() > 1 {
        "the stanza"
    } else {
        "the line"
    };
    let mut hint = format!("add {what} printed above to {}", a.file);
    if let Some(then) = &a.then {
        hint.push_str(&format!("\nthen run `{then}`"));
    }
    hint.push_str(&format!(
        "\n`git recode hook status` will then report: {}",
        a.status
    ));
    InstallError::Refused {
        advice: Some(a.text),
        message: a.reason,
        hint,
    }
}

/// Write our hook at `hook_path` in git's own hooks directory `dir`, by what is there
/// (`kind`): nothing (the directory created), or someone else's hook, kept as
/// `post-commit.pre-recode` ([`super::CHAINED_SUFFIX`]) and run first with `chain`.
///
/// Errors: [`InstallError::Refused`] for someone else's hook without `chain`, or a kept
/// hook already there; [`InstallError::Io`].
fn write_into(
    dir: &Path,
    hook_path: PathBuf,
    kind: Installed,
    chain: bool,
) -> Result<Done, InstallError> {
    match kind {
        Installed::Ours | Installed::Chained | Installed::Edited => {
            Ok(Done::AlreadyInstalled(hook_path))
        }
        Installed::Nothing => {
            std::fs::create_dir_all(dir).map_err(io("create", dir))?;
            write_hook(&hook_path, &fresh_hook())?;
            Ok(Done::Installed(hook_path))
        }
        Installed::Foreign if chain => {
            let kept = dir.join(format!("post-commit{}", super::CHAINED_SUFFIX));
            if kept.exists() {
                return Err(refused(
                    format!("{} already exists: not overwriting it", kept.display()),
                    "move it away (it is a hook kept by an earlier --chain install), then install again".into(),
                ));
            }
            std::fs::rename(&hook_path, &kept).map_err(io("keep the existing hook as", &kept))?;
            write_hook(&hook_path, &super::script(true))?;
            Ok(Done::Chained {
                hook: hook_path,
                kept,
            })
        }
        Installed::Foreign => Err(refused(
            format!(
                "{} exists and git-recode did not write it",
                hook_path.display()
            ),
            "`git recode hook install --chain` keeps it and runs it first".into(),
        )),
    }
}

/// The post-commit hook in `hooks_dir` when someone else wrote it (or edited ours) and it
/// cannot start: its `#!` interpreter is gone ([`super::runs::interpreter_problem`]).
pub(crate) fn unrunnable(hooks_dir: &Path) -> Option<PathBuf> {
    let hook = hooks_dir.join("post-commit");
    let theirs = matches!(
        super::installed(hooks_dir),
        Installed::Edited | Installed::Foreign
    );
    let text = super::managers::read(&hook)?;
    (theirs && super::runs::interpreter_problem(&hook, &text).is_some()).then_some(hook)
}

/// What to do about a hook git-recode did not write (or one someone edited) that cannot
/// start: its `#!` interpreter is gone; `install` is the command that installs ours after
/// (`git recode hook install`, or doctor's `git -C DIR recode hook install`).
pub(crate) fn unrunnable_hint(hook: &Path, install: &str) -> String {
    format!(
        "correct the `#!` line of {} (or reinstall it with the tool that wrote it), then run `{install}`",
        hook.display()
    )
}

/// Remove our hook, restore a chained hook, or splice our lines out of an edited one.
///
/// Errors: [`InstallError::Refused`] inside a working tree, [`InstallError::Io`].
pub(crate) fn uninstall(repo: &gix::Repository) -> Result<Done, InstallError> {
    let (_, dir) = here(repo);
    let dir = dir.path;
    let hook_path = dir.join("post-commit");
    let ours = super::installed(&dir);
    if matches!(
        ours,
        Installed::Ours | Installed::Chained | Installed::Edited
    ) && walk::in_a_working_tree(repo, &dir)
    {
        return Err(refused(
            format!(
                "{} is inside a working tree: git-recode does not write there",
                hook_path.display()
            ),
            format!(
                "remove the lines from {} to {} yourself",
                super::BEGIN,
                super::END
            ),
        ));
    }
    match ours {
        Installed::Ours => {
            std::fs::remove_file(&hook_path).map_err(io("remove", &hook_path))?;
            Ok(Done::Removed(hook_path))
        }
        Installed::Chained => {
            let kept = dir.join(format!("post-commit{}", super::CHAINED_SUFFIX));
            std::fs::rename(&kept, &hook_path).map_err(io("restore", &kept))?;
            Ok(Done::Restored(hook_path))
        }
        Installed::Edited => {
            let text = std::fs::read_to_string(&hook_path).map_err(io("read", &hook_path))?;
            std::fs::write(&hook_path, super::splice_out(&text))
                .map_err(io("write", &hook_path))?;
            Ok(Done::SplicedOut(hook_path))
        }
        Installed::Nothing | Installed::Foreign => Ok(Done::NotInstalled(dir)),
    }
}
