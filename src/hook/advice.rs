//! What `hook install` asks the user to add when a hook manager (or a hooks directory in a
//! working tree) keeps the hooks in the repository (SPEC `hook install`).

use std::path::Path;

use super::managers::{COMMAND, LEFTHOOK_FILES, LINE, Manager, PRE_COMMIT_FILE, first_file};
use super::walk::{HooksDir, rel};

/// What `hook install` must ask the user to add, for a manager (or a hooks directory in a
/// working tree) that keeps hooks in the repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Advice {
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
pub(crate) fn advice(manager: Option<Manager>, wt: &Path, dir: &HooksDir) -> Advice {
    let d = &dir.path;
    let hook = d.join("post-commit");
    let configured = dir.configured.clone().unwrap_or_default();
    match manager {
        Some(Manager::Husky9) => husky9_advice(d, &configured),
        Some(Manager::Husky) => husky_advice(wt, d),
        Some(Manager::Husky4) => husky4_advice(&hook),
        Some(Manager::Lefthook) => lefthook_advice(wt, &hook),
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

/// husky 9: add the line to the tracked `.husky/post-commit`.
fn husky9_advice(d: &Path, configured: &str) -> Advice {
    Advice {
        reason: format!(
            "the hooks directory {} belongs to husky, which regenerates it",
            d.display()
        ),
        text: format!("{LINE}\n"),
        file: ".husky/post-commit (tracked: commit it, so every worktree has it)".into(),
        then: None,
        status: format!("installed: husky ({configured}/post-commit runs .husky/post-commit)"),
    }
}

/// husky 5–8: add the line to the tracked hook in the hooks directory `d`.
fn husky_advice(wt: &Path, d: &Path) -> Advice {
    Advice {
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
    }
}

/// husky 4: add the command to `package.json`'s `husky.hooks`.
fn husky4_advice(hook: &Path) -> Advice {
    Advice {
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
    }
}

/// lefthook: add a post-commit command to its configuration, then `lefthook install`.
fn lefthook_advice(wt: &Path, hook: &Path) -> Advice {
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
