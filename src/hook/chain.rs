//! Following the hook chain: for each worktree, the hooks directory git uses there
//! (`core.hooksPath`, worktree config included), the `post-commit` file in it, and — when
//! a hook manager wrote that file — the manager's own configuration in that worktree, to
//! answer whether a commit there reaches `git-recode hook post-commit` (SPEC `hook status`).
//!
//! Managers known: husky 9 (`core.hooksPath=.husky/_`, generated; `_/h` runs
//! `.husky/<hook>`), husky 5–8 (`core.hooksPath=.husky`, tracked scripts sourcing
//! `_/husky.sh`), husky 4 (`.git/hooks` scripts, config in `package.json`), lefthook,
//! the pre-commit framework and simple-git-hooks. Everything here only reads.

use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use super::{Installed, installed};

/// The command a manager's configuration must run.
pub const COMMAND: &str = "git-recode hook post-commit";
/// The line to add to a hook script (`|| true`: husky runs its scripts with `sh -e`, and a
/// missing binary must not stop the user's later lines).
pub const LINE: &str = "git-recode hook post-commit || true";
/// Spellings of the command that count as calling it.
const SPELLINGS: [&str; 2] = ["git-recode hook post-commit", "git recode hook post-commit"];

/// A hook manager that writes the `post-commit` file git runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Manager {
    /// husky 9 (`core.hooksPath=.husky/_`, a generated, ignored directory).
    Husky9,
    /// husky 5–8 (`core.hooksPath=.husky`, tracked hook scripts).
    Husky,
    /// husky 4 (scripts in `.git/hooks`, configuration in `package.json` or `.huskyrc`).
    Husky4,
    /// lefthook (`lefthook.yml`).
    Lefthook,
    /// The pre-commit framework (`.pre-commit-config.yaml`).
    PreCommit,
    /// simple-git-hooks (`package.json` key `simple-git-hooks`, or `.simple-git-hooks.*`).
    SimpleGitHooks,
}

impl Manager {
    /// Its name as people write it.
    pub fn name(self) -> &'static str {
        match self {
            Manager::Husky9 => "husky 9",
            Manager::Husky => "husky",
            Manager::Husky4 => "husky 4",
            Manager::Lefthook => "lefthook",
            Manager::PreCommit => "pre-commit",
            Manager::SimpleGitHooks => "simple-git-hooks",
        }
    }
}

/// The hooks directory git uses in one worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HooksDir {
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
pub fn normalize(p: &Path) -> PathBuf {
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|c| c.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    };
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
pub fn hooks_dir(repo: &gix::Repository, wt: &Path, wt_git_dir: &Path) -> HooksDir {
    let configured = configured_hooks_path(repo, wt_git_dir).filter(|v| !v.is_empty());
    let path = match &configured {
        None => normalize(&repo.common_dir().join("hooks")),
        Some(v) => {
            let expanded = match v.strip_prefix("~/") {
                Some(rest) => std::env::var_os("HOME")
                    .map(|h| PathBuf::from(h).join(rest))
                    .unwrap_or_else(|| PathBuf::from(v)),
                None => PathBuf::from(v),
            };
            normalize(&wt.join(expanded))
        }
    };
    HooksDir { path, configured }
}

/// Whether a non-comment line of `text` runs the command.
pub fn calls_us(text: &str) -> bool {
    text.lines().any(|l| {
        let l = l.trim_start();
        !l.starts_with('#') && SPELLINGS.iter().any(|s| l.contains(s))
    })
}

fn read(p: &Path) -> Option<String> {
    std::fs::read_to_string(p).ok()
}

/// The first of `names` that exists under `wt`.
fn first_file(wt: &Path, names: &[&str]) -> Option<PathBuf> {
    names.iter().map(|n| wt.join(n)).find(|p| p.is_file())
}

const LEFTHOOK_FILES: [&str; 6] = [
    "lefthook.yml",
    ".lefthook.yml",
    "lefthook.yaml",
    ".lefthook.yaml",
    ".config/lefthook.yml",
    ".config/lefthook.yaml",
];
const LEFTHOOK_LOCAL: [&str; 4] = [
    "lefthook-local.yml",
    ".lefthook-local.yml",
    "lefthook-local.yaml",
    ".lefthook-local.yaml",
];
const PRE_COMMIT_FILE: &str = ".pre-commit-config.yaml";
const SIMPLE_FILES: [&str; 8] = [
    ".simple-git-hooks.cjs",
    ".simple-git-hooks.js",
    ".simple-git-hooks.mjs",
    ".simple-git-hooks.json",
    "simple-git-hooks.cjs",
    "simple-git-hooks.js",
    "simple-git-hooks.mjs",
    "simple-git-hooks.json",
];
const HUSKYRC_FILES: [&str; 5] = [
    ".huskyrc",
    ".huskyrc.json",
    ".huskyrc.js",
    ".huskyrc.yaml",
    "husky.config.js",
];

/// The `package.json` of `wt` parsed, if any.
fn package_json(wt: &Path) -> Option<serde_json::Value> {
    serde_json::from_str(&read(&wt.join("package.json"))?).ok()
}

/// Which manager wrote `hook_text` (the `post-commit` file in `dir`), or whose configuration
/// in `wt` claims the hooks.
pub fn detect(wt: &Path, dir: &Path, hook_text: Option<&str>) -> Option<Manager> {
    let dir_is = |rel: &str| dir == normalize(&wt.join(rel));
    if dir_is(".husky/_") || dir.ends_with(".husky/_") {
        return Some(Manager::Husky9);
    }
    if dir_is(".husky") || dir.ends_with(".husky") {
        return Some(Manager::Husky);
    }
    if let Some(text) = hook_text {
        if text.contains("File generated by pre-commit") {
            return Some(Manager::PreCommit);
        }
        if text.contains("lefthook") || text.contains("LEFTHOOK") {
            return Some(Manager::Lefthook);
        }
        if text.contains("SIMPLE_GIT_HOOKS") || text.contains("simple-git-hooks") {
            return Some(Manager::SimpleGitHooks);
        }
        if text.contains("husky") {
            return Some(Manager::Husky4);
        }
    }
    // No hook written yet: a configuration in the worktree claims the hooks.
    let pkg = package_json(wt);
    if first_file(wt, &LEFTHOOK_FILES).is_some() {
        Some(Manager::Lefthook)
    } else if wt.join(PRE_COMMIT_FILE).is_file() {
        Some(Manager::PreCommit)
    } else if first_file(wt, &SIMPLE_FILES).is_some()
        || pkg
            .as_ref()
            .is_some_and(|p| p.get("simple-git-hooks").is_some())
    {
        Some(Manager::SimpleGitHooks)
    } else if first_file(wt, &HUSKYRC_FILES).is_some()
        || pkg
            .as_ref()
            .is_some_and(|p| p.pointer("/husky/hooks").is_some())
    {
        Some(Manager::Husky4)
    } else {
        None
    }
}

/// Lines of the YAML block under the top-level key `key:` (until the next top-level key).
fn yaml_block<'a>(text: &'a str, key: &str) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        let top = !line.starts_with([' ', '\t']) && !line.trim().is_empty();
        if top && !line.starts_with('#') {
            inside = line.trim_end().trim_end_matches(':') == key
                || line.starts_with(&format!("{key}:"));
            continue;
        }
        if inside {
            out.push(line);
        }
    }
    out
}

/// The lefthook configuration in `wt` that runs the command on post-commit, if any.
fn lefthook_runs_us(wt: &Path) -> Option<PathBuf> {
    LEFTHOOK_FILES
        .iter()
        .chain(LEFTHOOK_LOCAL.iter())
        .map(|n| wt.join(n))
        .find(|p| read(p).is_some_and(|t| calls_us(&yaml_block(&t, "post-commit").join("\n"))))
}

/// Whether `.pre-commit-config.yaml` text has a hook running the command with the
/// `post-commit` stage (each `- id:` item is read on its own).
fn pre_commit_runs_us(text: &str) -> bool {
    let mut items: Vec<Vec<&str>> = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("- id:") || t.starts_with("- repo:") {
            items.push(Vec::new());
        }
        if let Some(item) = items.last_mut() {
            item.push(line);
        }
    }
    items.iter().any(|item| {
        calls_us(&item.join("\n"))
            && item.iter().any(|l| {
                !calls_us(l) && !l.trim_start().starts_with('#') && l.contains("post-commit")
            })
    })
}

/// Whether `package.json` (or `.huskyrc*`) in `wt` gives husky 4 a post-commit calling us.
fn husky4_runs_us(wt: &Path) -> bool {
    let in_pkg = package_json(wt)
        .and_then(|p| {
            p.pointer("/husky/hooks/post-commit")
                .and_then(|v| v.as_str())
                .map(calls_us)
        })
        .unwrap_or(false);
    in_pkg
        || HUSKYRC_FILES
            .iter()
            .filter_map(|n| read(&wt.join(n)))
            .any(|t| t.contains("post-commit") && calls_us(&t))
}

/// Whether simple-git-hooks' configuration in `wt` lists the command for post-commit.
fn simple_config_runs_us(wt: &Path) -> bool {
    let in_pkg = package_json(wt)
        .and_then(|p| {
            p.pointer("/simple-git-hooks/post-commit")
                .and_then(|v| v.as_str())
                .map(calls_us)
        })
        .unwrap_or(false);
    in_pkg
        || SIMPLE_FILES
            .iter()
            .filter_map(|n| read(&wt.join(n)))
            .any(|t| t.contains("post-commit") && calls_us(&t))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

/// `p` relative to `base` when inside it, for shorter messages.
fn rel(p: &Path, base: &Path) -> String {
    p.strip_prefix(base)
        .map(|r| r.display().to_string())
        .unwrap_or_else(|_| p.display().to_string())
}

/// The verdict for one worktree at `wt` whose hooks directory is `dir`.
pub fn reach_one(wt: &Path, dir: &HooksDir) -> (Option<Manager>, Result<String, String>) {
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
        return (
            manager,
            Err(match (&dir.configured, manager) {
                (Some(v), Some(Manager::Husky9)) => format!(
                    "core.hooksPath {v} does not exist in this worktree (husky generates it: run `npx husky` here): git runs no hooks here, so milestones are lost"
                ),
                (Some(v), _) => format!(
                    "core.hooksPath {v} does not exist in this worktree ({}): git runs no hooks here, so milestones are lost",
                    d.display()
                ),
                (None, _) => format!("no post-commit hook in {}", d.display()),
            }),
        );
    }
    let Some(text) = text else {
        let hint = match manager {
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
        };
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
    match installed(d) {
        Installed::Ours | Installed::Edited => return (None, Ok(hook.display().to_string())),
        Installed::Chained => {
            return (
                None,
                Ok(format!(
                    "{} (chained after the previous hook)",
                    hook.display()
                )),
            );
        }
        Installed::Nothing | Installed::Foreign => {}
    }
    let verdict = match manager {
        Some(Manager::Husky9) => {
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
        Some(Manager::Husky) => {
            let hook_rel = rel(&hook, wt);
            let sources_husky_sh = text.contains("_/husky.sh");
            if !calls_us(&text) {
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
            if calls_us(&text) {
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
            if calls_us(&text) {
                Ok(format!("{} (which calls {COMMAND})", hook.display()))
            } else {
                Err(format!(
                    "{} was not written by git-recode and does not call {COMMAND}",
                    hook.display()
                ))
            }
        }
    };
    (manager, verdict)
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

/// What `hook install` must ask the user to add, for a manager (or a hooks directory in a
/// working tree) that keeps hooks in the repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Advice {
    /// Why git-recode does not write the hook itself.
    pub reason: String,
    /// The exact line or stanza to add (printed on stdout).
    pub text: String,
    /// Where to add it.
    pub file: String,
    /// A command to run afterwards, if any.
    pub then: Option<String>,
    /// What `hook status` reports once it is done.
    pub status: String,
}

/// The advice for `manager` in the worktree `wt` whose hooks directory is `dir`.
pub fn advice(manager: Option<Manager>, wt: &Path, dir: &HooksDir) -> Advice {
    let d = &dir.path;
    let hook = d.join("post-commit");
    let configured = dir.configured.clone().unwrap_or_default();
    match manager {
        Some(Manager::Husky9) => Advice {
            reason: format!(
                "the hooks directory {} belongs to husky, which regenerates it",
                d.display()
            ),
            text: format!("{LINE}\n"),
            file: ".husky/post-commit (tracked: commit it, so every worktree has it)".into(),
            then: None,
            status: format!("installed: husky ({configured}/post-commit runs .husky/post-commit)"),
        },
        Some(Manager::Husky) => Advice {
            reason: format!(
                "the hooks directory {} is husky's, tracked in the repository: git-recode never writes a tracked file",
                d.display()
            ),
            text: format!("{LINE}\n"),
            file: format!(
                "{}/post-commit (tracked: commit it, so every worktree has it)",
                rel(d, wt)
            ),
            then: None,
            status: format!("installed: husky ({}/post-commit)", rel(d, wt)),
        },
        Some(Manager::Husky4) => Advice {
            reason: format!(
                "{} is run by husky 4, configured in package.json",
                hook.display()
            ),
            text: format!(
                "\"husky\": {{\n  \"hooks\": {{\n    \"post-commit\": \"{COMMAND}\"\n  }}\n}}\n"
            ),
            file: "package.json (merge into an existing \"husky\" key)".into(),
            then: None,
            status: format!(
                "installed: husky 4 ({} runs package.json's husky.hooks.post-commit)",
                hook.display()
            ),
        },
        Some(Manager::Lefthook) => {
            let cfg = first_file(wt, &LEFTHOOK_FILES)
                .map(|p| rel(&p, wt))
                .unwrap_or_else(|| "lefthook.yml".into());
            Advice {
                reason: format!("post-commit hooks here are lefthook's, configured in {cfg}"),
                text: format!("post-commit:\n  commands:\n    git-recode:\n      run: {COMMAND}\n"),
                file: format!("{cfg} (merge into an existing post-commit: key)"),
                then: Some("lefthook install".into()),
                status: format!(
                    "installed: lefthook ({} runs the post-commit commands of {cfg})",
                    hook.display()
                ),
            }
        }
        Some(Manager::PreCommit) => Advice {
            reason: format!(
                "post-commit hooks here are pre-commit's, configured in {PRE_COMMIT_FILE}"
            ),
            text: format!(
                "- repo: local\n  hooks:\n    - id: git-recode\n      name: git-recode milestones\n      entry: {COMMAND}\n      language: system\n      stages: [post-commit]\n      always_run: true\n      pass_filenames: false\n"
            ),
            file: format!("{PRE_COMMIT_FILE} (under repos:)"),
            then: Some("pre-commit install --hook-type post-commit".into()),
            status: format!(
                "installed: pre-commit ({} runs the post-commit stage of {PRE_COMMIT_FILE})",
                hook.display()
            ),
        },
        Some(Manager::SimpleGitHooks) => Advice {
            reason:
                "git hooks here are simple-git-hooks', which rewrites them from its configuration"
                    .into(),
            text: format!("\"simple-git-hooks\": {{\n  \"post-commit\": \"{COMMAND}\"\n}}\n"),
            file:
                "package.json (merge into the \"simple-git-hooks\" key), or .simple-git-hooks.json"
                    .into(),
            then: Some("npx simple-git-hooks".into()),
            status: format!("installed: simple-git-hooks ({})", hook.display()),
        },
        None => Advice {
            reason: format!(
                "the hooks directory {} (core.hooksPath {configured}) is inside a working tree: git-recode never writes there",
                d.display()
            ),
            text: format!("{LINE}\n"),
            file: format!(
                "{} (create it with a #!/bin/sh first line and make it executable; if it is tracked, commit it, so every worktree has it)",
                hook.display()
            ),
            then: None,
            status: format!("installed: {} (which calls {COMMAND})", hook.display()),
        },
    }
}

/// Whether `dir` is inside the working tree of some repository (any worktree of `repo`,
/// or another repository's), outside its git dir: a place git-recode never writes.
pub fn in_a_working_tree(repo: &gix::Repository, dir: &Path) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_us_ignores_comments() {
        assert!(calls_us("#!/bin/sh\ngit-recode hook post-commit || true\n"));
        assert!(calls_us("  run: git recode hook post-commit\n"));
        assert!(!calls_us("# git-recode hook post-commit\n"));
        assert!(!calls_us("git-recode hook status\n"));
    }

    #[test]
    fn lefthook_block_is_the_post_commit_key_only() {
        let yml = "pre-commit:\n  commands:\n    x:\n      run: git-recode hook post-commit\npost-commit:\n  commands:\n    lint:\n      run: echo\n";
        assert!(!calls_us(&yaml_block(yml, "post-commit").join("\n")));
        let yml =
            "post-commit:\n  commands:\n    git-recode:\n      run: git-recode hook post-commit\n";
        assert!(calls_us(&yaml_block(yml, "post-commit").join("\n")));
    }

    #[test]
    fn pre_commit_needs_the_post_commit_stage_on_the_same_hook() {
        let ok = "repos:\n- repo: local\n  hooks:\n    - id: git-recode\n      entry: git-recode hook post-commit\n      language: system\n      stages: [post-commit]\n";
        assert!(pre_commit_runs_us(ok));
        let listed = "repos:\n- repo: local\n  hooks:\n    - id: git-recode\n      entry: git-recode hook post-commit\n      stages:\n        - post-commit\n";
        assert!(pre_commit_runs_us(listed));
        let wrong_stage = "repos:\n- repo: local\n  hooks:\n    - id: git-recode\n      entry: git-recode hook post-commit\n      language: system\n    - id: other\n      entry: x\n      stages: [post-commit]\n";
        assert!(!pre_commit_runs_us(wrong_stage));
    }
}
