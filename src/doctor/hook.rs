//! The `hook` check: the milestone hook is reached from every worktree.

use super::{Check, Level, check, ok};

/// Whether a commit in each worktree reaches the milestone hook and the hook runs
/// ([`crate::hook::walk::reach_and_run`]).
pub(super) fn hook(repo: &gix::Repository) -> Vec<Check> {
    let reach = crate::hook::walk::reach_and_run(repo);
    let missing: Vec<_> = reach.iter().filter(|r| !r.reaches).collect();
    if missing.is_empty() {
        let n = reach.len();
        return vec![ok(
            "hook",
            format!(
                "the milestone hook is reached from {}",
                crate::render::plural(n as u64, "worktree")
            ),
        )];
    }
    missing
        .into_iter()
        .map(|r| {
            check(
                "hook",
                Level::Fail,
                format!(
                    "a commit in {} does not reach the milestone hook: {}",
                    r.path.display(),
                    r.why.as_deref().unwrap_or("no post-commit hook")
                ),
                Some(fix(r)),
            )
        })
        .collect()
}

/// The fix for a worktree whose commits do not reach the hook: `hook install` (which
/// installs or repairs git-recode's own hook, or prints a manager's line), unless the hook
/// there is someone else's and cannot start, which `hook install` refuses to rewrite.
fn fix(r: &crate::hook::walk::WorktreeReach) -> String {
    let install = format!("git -C '{}' recode hook install", r.path.display());
    match crate::hook::install::unrunnable(&r.hooks_dir) {
        Some(hook) => crate::hook::install::unrunnable_hint(&hook, &install),
        None => install,
    }
}
