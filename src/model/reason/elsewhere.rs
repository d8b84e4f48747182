//! The sentence of work no status shows ([`Row::Stashed`]): stash
//! entries made on the branch, commits its reflog alone holds (SPEC 1.3 "Empty needs proof").

use std::fmt;

use super::Row;

/// Write the reason of `row`, a [`Row::Stashed`] (nothing for any other): the branch's
/// stash `entries` and its `reset` commits (each described, newest first; at least one of
/// the two is not empty).
pub(super) fn write(f: &mut fmt::Formatter<'_>, row: &Row) -> fmt::Result {
    let Row::Stashed {
        branch,
        entries,
        reset,
    } = row
    else {
        return Ok(());
    };
    f.write_str("nothing ahead and the worktree clean, but ")?;
    if !entries.is_empty() {
        write!(
            f,
            "work made on {branch} sits in the stash: {}",
            entries.join(", ")
        )?;
    }
    if !reset.is_empty() {
        let and = if entries.is_empty() { "" } else { "; and " };
        write!(
            f,
            "{and}commits made on {branch} were dropped from it, only its reflog holds them: {}",
            reset.join(", ")
        )?;
    }
    match (entries.is_empty(), reset.is_empty()) {
        (false, true) => f.write_str("; resume, so the agent applies it (`git stash list`)"),
        (true, _) => write!(
            f,
            "; resume, so the agent restores them (`git reflog show {branch}`)"
        ),
        (false, false) => write!(
            f,
            "; resume, so the agent restores them (`git stash list`, `git reflog show {branch}`)"
        ),
    }
}
