//! Test-only kill points: the never-lose tests SIGKILL git-recode at named steps of a
//! removal, a WIP commit, a publish or the milestone pickup, to prove a kill there loses
//! nothing.
//!
//! They are compiled into every build (so `cargo run` and `cargo test` share one build of
//! the dependencies) and armed only at run time, by two variables together:
//! [`FAILPOINT_ENV`] names the step, and [`ARM_ENV`] must be set to exactly [`ARM_VALUE`].
//! A `RECODE_FAILPOINT` left in a user's environment alone does nothing. Both are for the
//! project's tests only; no user needs them.

/// The step to be killed at: `delete-worktree`, `delete-moved`, `delete-inside`,
/// `delete-gitfile`, `delete-branch`, `wip-add`, `wip-commit`, `wip-push`, `wip-refused`,
/// `publish-push`, `publish-pr`, `journal-renamed`, `journal-folded`, `resume-claimed` (a
/// resume that won its claim on the remote, before its ledger append).
pub(crate) const FAILPOINT_ENV: &str = "RECODE_FAILPOINT";

/// The variable that arms [`FAILPOINT_ENV`]; honoured only with the value [`ARM_VALUE`].
pub const ARM_ENV: &str = "RECODE_TEST_ONLY_ARM_FAILPOINTS";

/// The one value of [`ARM_ENV`] that arms the failpoints: long on purpose, so that no
/// environment sets it by accident.
pub const ARM_VALUE: &str = "sigkill-git-recode-at-the-named-step";

/// The armed step, if the environment arms one (see the module docs).
pub(crate) fn armed() -> Option<String> {
    if std::env::var(ARM_ENV).ok().as_deref() != Some(ARM_VALUE) {
        return None;
    }
    std::env::var(FAILPOINT_ENV).ok().filter(|s| !s.is_empty())
}

/// Kill this process with SIGKILL when `step` is the armed step; else nothing.
pub(crate) fn hit(step: &str) {
    if armed().as_deref() == Some(step) {
        // SAFETY: kill(2) on our own pid with a constant signal has no memory effects.
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
        std::thread::sleep(std::time::Duration::from_secs(5));
        std::process::abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_step_alone_arms_nothing() {
        // The test process's own environment arms nothing (the suite arms only the
        // children it kills), so `hit` returns.
        assert_eq!(armed(), None);
        hit("wip-add");
    }
}
