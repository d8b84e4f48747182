//! The per-worktree reach walk: for each worktree, the hooks directory git uses there
//! (`core.hooksPath`, worktree config included), the `post-commit` file in it, and — when
//! a hook manager wrote that file — the manager's own configuration in that worktree, to
//! answer whether a commit there reaches `git-recode hook post-commit` (SPEC `hook status`).
//! Everything here only reads.

use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use super::managers::{
    COMMAND, LINE, Manager, PRE_COMMIT_FILE, calls_us, detect, husky4_runs_us, lefthook_runs_us,
    pre_commit_runs_us, read, simple_config_runs_us,
};
use super::{Installed, installed};

/// The hooks directory git uses in one worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HooksDir {
    /// Absolute path.
    pub path: PathBuf,
    /// `core.hooksPath` as configured for that worktree (`None`: unset, the common `hooks`).
    pub configured: Option<String>,
}

/// Whether a commit in one worktree reaches `git-recode hook post-commit`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorktreeReach {
    /// The worktree's directory (absolute).
    pub path: PathBuf,
    /// The hooks directory git uses there.
    pub hooks_dir: PathBuf,
    /// The manager whose hook git runs there, if any.
    pub manager: Option<Manager>,
    /// A commit there runs `git-recode hook post-commit`.
    pub reaches: bool,
    /// How it is reached (`None` when it is not).
    pub via: Option<String>,
    /// Why it is not reached (`None` when it is).
    pub why: Option<String>,
    /// The worktree the repository was opened from.
    pub current: bool,
}

/// `p` made absolute and free of `.`/`..`, symlinks resolved as far as the path exists.
pub(crate) fn normalize(p: &Path) -> PathBuf {
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let mut existing = abs.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(c) = existing.canonicalize() {
            let mut out = c;
            for part in rest.iter().rev() {
                match part {
                    Component::ParentDir => {
                        out.pop();
                    }
                    Component::CurDir => {}
                    other => out.push(other.as_os_str()),
                }
            }
            return out;
        }
        match (existing.parent(), existing.components().next_back()) {
            (Some(parent), Some(last)) => {
                rest.push(last);
                existing = parent;
            }
            _ => return abs,
        }
    }
}

/// `core.hooksPath` for the worktree whose git dir is `wt_git_dir`: its own
/// `config.worktree` when `extensions.worktreeConfig` is on, else the shared configuration
/// (never another worktree's `config.worktree`).
fn configured_hooks_path(repo: &gix::Repository, wt_git_dir: &Path) -> Option<String> {
    let snap = repo.config_snapshot();
    let file = snap.plumbing();
    if let Ok(Some(true)) = file.boolean("extensions.worktreeConfig") {
        let own = gix::config::File::from_path_no_includes(
            wt_git_dir.join("config.worktree"),
            gix::config::Source::Worktree,
        )
        .ok()
        .and_then(|f| f.string("core.hooksPath").map(|v| v.to_string()));
        if own.is_some() {
            return own;
        }
    }
    file.string_filter("core.hooksPath", |m| {
        m.source != gix::config::Source::Worktree
    })
    .map(|v| v.to_string())
}

/// The hooks directory git uses in the worktree at `wt` (git dir `wt_git_dir`): a relative
/// `core.hooksPath` is relative to the worktree's top, where git runs hooks.
pub(crate) fn hooks_dir(repo: &gix::Repository, wt: &Path, wt_git_dir: &Path) -> HooksDir {
    let configured = configured_hooks_path(repo, wt_git_dir).filter(|v| !v.is_empty());
    let path = match &configured {
        None => normalize(&repo.common_dir().join("hooks")),
        Some(v) => normalize(&wt.join(crate::config::interpolate_path(v))),
    };
    HooksDir { path, configured }
}
/// Whether `p` has an execute bit.
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

/// `p` relative to `base` when inside it, for shorter messages.
pub(super) fn rel(p: &Path, base: &Path) -> String {
    p.strip_prefix(base)
        .map(|r| r.display().to_string())
        .unwrap_or_else(|_| p.display().to_string())
}

/// The verdict for one worktree at `wt` whose hooks directory is `dir`.
pub(crate) fn reach_one(wt: &Path, dir: &HooksDir) -> (Option<Manager>, Result<String, String>) {
    let d = &dir.path;
    let hook = d.join("post-commit");
    let text = read(&hook);
    let manager = detect(wt, d, text.as_deref());
    if !wt.is_dir() {
        return (
            manager,
            Err("the worktree's directory is missing".to_string()),
        );
    }
    if !d.is_dir() {
        return (manager, Err(missing_dir(dir, manager)));
    }
    let Some(text) = text else {
        let hint = not_installed_hint(wt, manager);
        return (
            manager,
            Err(format!("no post-commit hook in {}{hint}", d.display())),
        );
    };
    if !is_executable(&hook) {
        return (
            manager,
            Err(format!(
                "{} is not executable: git skips it",
                hook.display()
            )),
        );
    }
    if let Some(why) = super::runs::interpreter_problem(&hook, &text) {
        return (manager, Err(why));
    }
    if let Some(via) = ours(d, &hook) {
        return (None, Ok(via));
    }
    (manager, manager_verdict(manager, wt, d, &hook, &text))
}

/// Why a missing hooks directory `dir` (of `manager`, if any) runs no hook.
fn missing_dir(dir: &HooksDir, manager: Option<Manager>) -> String {
    let d = &dir.path;
    match (&dir.configured, manager) {
        (Some(v), Some(Manager::Husky9)) => format!(
            "core.hooksPath {v} does not exist in this worktree (husky generates it: run `npx husky` here): git runs no hooks here, so milestones are lost"
        ),
        (Some(v), _) => format!(
            "core.hooksPath {v} does not exist in this worktree ({}): git runs no hooks here, so milestones are lost",
            d.display()
        ),
        (None, _) => format!("no post-commit hook in {}", d.display()),
    }
}

/// What to run when `manager`'s configuration in `wt` calls us but its hook is not written.
fn not_installed_hint(wt: &Path, manager: Option<Manager>) -> &'static str {
    match manager {
        Some(Manager::Lefthook) if lefthook_runs_us(wt).is_some() => {
            " (lefthook.yml calls git-recode, but lefthook's hook is not installed: run `lefthook install`)"
        }
        Some(Manager::PreCommit)
            if read(&wt.join(PRE_COMMIT_FILE)).is_some_and(|t| pre_commit_runs_us(&t)) =>
        {
            " (.pre-commit-config.yaml calls git-recode, but its post-commit hook is not installed: run `pre-commit install --hook-type post-commit`)"
        }
        Some(Manager::SimpleGitHooks) if simple_config_runs_us(wt) => {
            " (simple-git-hooks' configuration calls git-recode, but its hooks are not installed: run `npx simple-git-hooks`)"
        }
        _ => "",
    }
}

/// How our own script in `d` (installed or chained) is reached, or `None` when the hook
/// there is not ours.
fn ours(d: &Path, hook: &Path) -> Option<String> {
    match installed(d) {
        Installed::Ours | Installed::Edited => Some(hook.display().to_string()),
        Installed::Chained => Some(format!(
            "{} (chained after the previous hook)",
            hook.display()
        )),
        Installed::Nothing | Installed::Foreign => None,
    }
}

/// The verdict when `manager` (if any) wrote `hook` (text `text`) in the hooks directory `d`.
fn manager_verdict(
    manager: Option<Manager>,
    wt: &Path,
    d: &Path,
    hook: &Path,
    text: &str,
) -> Result<String, String> {
    match manager {
        Some(Manager::Husky9) => husky9_verdict(wt, d, hook, text),
        Some(Manager::Husky) => husky_verdict(wt, d, text),
        Some(Manager::Husky4) => {
            if husky4_runs_us(wt) {
                Ok(format!(
                    "husky 4 ({} runs package.json's husky.hooks.post-commit)",
                    hook.display()
                ))
            } else {
                Err(format!(
                    "husky 4 runs {}, and package.json's husky.hooks.post-commit does not call {COMMAND}",
                    hook.display()
                ))
            }
        }
        Some(Manager::Lefthook) => match lefthook_runs_us(wt) {
            Some(cfg) => Ok(format!(
                "lefthook ({} runs the post-commit commands of {})",
                hook.display(),
                rel(&cfg, wt)
            )),
            None => Err(format!(
                "lefthook runs {}, and no post-commit command in lefthook.yml calls {COMMAND}",
                hook.display()
            )),
        },
        Some(Manager::PreCommit) => {
            if read(&wt.join(PRE_COMMIT_FILE)).is_some_and(|t| pre_commit_runs_us(&t)) {
                Ok(format!(
                    "pre-commit ({} runs the post-commit stage of {PRE_COMMIT_FILE})",
                    hook.display()
                ))
            } else {
                Err(format!(
                    "pre-commit runs {}, and no hook in {PRE_COMMIT_FILE} calls {COMMAND} with stages: [post-commit]",
                    hook.display()
                ))
            }
        }
        Some(Manager::SimpleGitHooks) => {
            if calls_us(text) {
                Ok(format!("simple-git-hooks ({})", hook.display()))
            } else if simple_config_runs_us(wt) {
                Err(format!(
                    "simple-git-hooks' configuration calls git-recode, but {} was not regenerated: run `npx simple-git-hooks`",
                    hook.display()
                ))
            } else {
                Err(format!(
                    "simple-git-hooks wrote {}, which does not call {COMMAND}",
                    hook.display()
                ))
            }
        }
        None => {
            if calls_us(text) {
                Ok(format!("{} (which calls {COMMAND})", hook.display()))
            } else {
                Err(format!(
                    "{} was not written by git-recode and does not call {COMMAND}",
                    hook.display()
                ))
            }
        }
    }
}

/// husky 9: `hook` must run husky's `_/h`, and the user's `.husky/post-commit` must call us.
fn husky9_verdict(wt: &Path, d: &Path, hook: &Path, text: &str) -> Result<String, String> {
    let runs_h = text.contains("/h\"") || text.contains("/h'") || text.contains("/h\n");
    let h = d.join("h");
    let user = d
        .parent()
        .map(|p| p.join("post-commit"))
        .unwrap_or_else(|| d.join("../post-commit"));
    let user_rel = rel(&user, wt);
    if !runs_h || !h.is_file() {
        Err(format!(
            "{} does not run husky's {} (regenerate it: run `npx husky` here)",
            hook.display(),
            h.display()
        ))
    } else {
        match read(&user) {
            None => Err(format!(
                "husky runs {user_rel}, which does not exist here: add the line `{LINE}` to it"
            )),
            Some(t) if calls_us(&t) => Ok(format!(
                "husky ({}/post-commit runs {user_rel})",
                rel(d, wt)
            )),
            Some(_) => Err(format!(
                "husky runs {user_rel}, which does not call {COMMAND}: add the line `{LINE}` to it"
            )),
        }
    }
}

/// husky 5–8: the tracked hook must call us, and the `_/husky.sh` it sources must exist.
fn husky_verdict(wt: &Path, d: &Path, text: &str) -> Result<String, String> {
    let hook = d.join("post-commit");
    let hook_rel = rel(&hook, wt);
    let sources_husky_sh = text.contains("_/husky.sh");
    if !calls_us(text) {
        Err(format!(
            "husky's {hook_rel} does not call {COMMAND}: add the line `{LINE}` to it"
        ))
    } else if sources_husky_sh && !d.join("_/husky.sh").is_file() {
        Err(format!(
            "husky's {hook_rel} sources {}/_/husky.sh, which is missing in this worktree (run `npx husky install` here): the hook stops before it calls git-recode, so milestones are lost",
            rel(d, wt)
        ))
    } else {
        Ok(format!("husky ({hook_rel})"))
    }
}

/// For every worktree (the main one first, then the linked ones), whether a commit there
/// reaches `git-recode hook post-commit`. When the worktree registry cannot be read, only
/// the worktree `repo` was opened from is answered.
pub fn reach(repo: &gix::Repository) -> Vec<WorktreeReach> {
    let current = repo.workdir().map(normalize);
    let trees: Vec<(PathBuf, PathBuf)> = match crate::worktree::list(repo) {
        Ok(list) => list.into_iter().map(|w| (w.path, w.git_dir)).collect(),
        Err(e) => {
            tracing::warn!(error = %e, "cannot list worktrees; answering for this one only");
            current
                .iter()
                .map(|c| (c.clone(), repo.git_dir().to_path_buf()))
                .collect()
        }
    };
    trees
        .into_iter()
        .map(|(path, git_dir)| {
            let path = normalize(&path);
            let dir = hooks_dir(repo, &path, &git_dir);
            let (manager, verdict) = reach_one(&path, &dir);
            let (reaches, via, why) = match verdict {
                Ok(via) => (true, Some(via), None),
                Err(why) => (false, None, Some(why)),
            };
            WorktreeReach {
                current: current.as_deref() == Some(path.as_path()),
                path,
                hooks_dir: dir.path,
                manager,
                reaches,
                via,
                why,
            }
        })
        .collect()
}
/// [`reach`], and for each worktree the hook reaches, a dry call of it
/// ([`super::runs::dry_call`]; once a hooks directory): a hook that is installed but does
/// not run (its interpreter or the binary it names moved) is not reached. For `hook
/// status` and `doctor`; `status` reads only [`reach`].
pub(crate) fn reach_and_run(repo: &gix::Repository) -> Vec<WorktreeReach> {
    let mut done: Vec<(PathBuf, Result<String, String>)> = Vec::new();
    let mut all = reach(repo);
    for r in all.iter_mut().filter(|r| r.reaches) {
        let verdict = match done.iter().find(|(d, _)| *d == r.hooks_dir) {
            Some((_, v)) => v.clone(),
            None => {
                let v = run_one(&r.path, &r.hooks_dir);
                done.push((r.hooks_dir.clone(), v.clone()));
                v
            }
        };
        if let Err(why) = verdict {
            (r.reaches, r.via, r.why) = (false, None, Some(why));
        }
    }
    all
}

/// The dry call of the hook in `hooks_dir` from the worktree `wt`: the whole hook when it
/// is git-recode's own alone, else the command its line runs.
fn run_one(wt: &Path, hooks_dir: &Path) -> Result<String, String> {
    let hook = hooks_dir.join("post-commit");
    let text = read(&hook).unwrap_or_default();
    let whole = installed(hooks_dir) == Installed::Ours;
    super::runs::dry_call(wt, &hook, whole, &text)
}

/// Whether `dir` is inside the working tree of some repository (any worktree of `repo`,
/// or another repository's), outside its git dir: a place git-recode never writes.
pub(crate) fn in_a_working_tree(repo: &gix::Repository, dir: &Path) -> bool {
    let dir = normalize(dir);
    let common = normalize(repo.common_dir());
    if dir.starts_with(&common) {
        return false;
    }
    let tops: Vec<PathBuf> = crate::worktree::list(repo)
        .map(|l| l.into_iter().map(|w| normalize(&w.path)).collect())
        .unwrap_or_default();
    if tops.iter().any(|t| dir.starts_with(t)) {
        return true;
    }
    // Another repository's working tree (a dotfiles repository holding shared hooks).
    let mut probe = dir.as_path();
    while !probe.exists() {
        match probe.parent() {
            Some(p) => probe = p,
            None => return false,
        }
    }
    match gix::discover(probe) {
        Ok(other) => other.workdir().map(normalize).is_some_and(|top| {
            dir.starts_with(&top) && !dir.starts_with(normalize(other.git_dir()))
        }),
        Err(_) => false,
    }
}
