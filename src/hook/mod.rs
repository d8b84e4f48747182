//! The post-commit milestone hook: a commit whose message carries a `Recode-Phase:`
//! trailer is ledgered as a `milestone` event (SPEC "milestone").

use gix::ObjectId;

use crate::model::Event;
use crate::repo::RepoError;

pub(crate) mod advice;
pub(crate) mod commit;
pub(crate) mod install;
pub(crate) mod journal;
pub(crate) mod managers;
pub(crate) mod pickup;
pub(crate) mod runs;
pub(crate) mod walk;
pub(crate) use managers::Manager;
pub use walk::reach;
pub(crate) use walk::{WorktreeReach, reach_and_run};

/// Environment variable carrying the agent's session id into the hook.
pub(crate) const SESSION_ENV: &str = "RECODE_SESSION_ID";

pub(crate) use crate::trailer::{PHASE_TRAILER, is_wip, phase_of};

/// Milestone commits the ledger lacks: commits reachable from `branch_tip` but from none
/// of `base_tips` (the branch's commits ahead of the base; the newest
/// [`pickup::SCAN_LIMIT`] of them) whose message declares a phase (`Recode-Phase:`
/// trailer), with no `milestone` event among `events` for that `(head, phase)`. Oldest
/// first. A hook that gave up on a busy ledger leaves exactly these behind; each can be
/// ledgered afterwards from the commit's own trailer ([`pickup`]).
///
/// Errors: [`RepoError::Git`] when the walk cannot read a commit.
pub fn unledgered_milestones<'a>(
    repo: &gix::Repository,
    branch_tip: ObjectId,
    base_tips: &[ObjectId],
    events: impl IntoIterator<Item = &'a Event>,
) -> Result<Vec<(ObjectId, String)>, RepoError> {
    let ahead = crate::repo::commits_between(repo, branch_tip, base_tips)?;
    Ok(pickup::unledgered_in(repo, &ahead, events)?
        .into_iter()
        .map(|(id, phase, _)| (id, phase))
        .collect())
}

/// The commit HEAD points to and its message.
pub(crate) fn head_commit(repo: &gix::Repository) -> Option<(ObjectId, String)> {
    let id = crate::refs::head(repo)?.id()?;
    let commit = repo.find_commit(id).ok()?;
    let msg = commit.message_raw().ok()?.to_string();
    Some((id, msg))
}

/// First line of the block git-recode writes into a hook.
pub(crate) const BEGIN: &str = "# BEGIN git-recode";
/// Last line of that block.
pub(crate) const END: &str = "# END git-recode";
/// Where a chained user hook is kept while git-recode's hook runs it first.
pub(crate) const CHAINED_SUFFIX: &str = ".pre-recode";

/// The post-commit hook git-recode installs. With `chained`, the previous hook (kept as
/// `post-commit.pre-recode`) runs first with the same arguments and its status is kept.
pub fn script(chained: bool) -> String {
    if chained {
        format!(
            "#!/bin/sh\n{BEGIN}\n# runs the hook that was here first, then logs milestones; never fails a commit on its own\n\"$(dirname \"$0\")/post-commit{CHAINED_SUFFIX}\" \"$@\"\nrc=$?\ngit-recode hook post-commit || true\nexit $rc\n{END}\n"
        )
    } else {
        format!(
            "#!/bin/sh\n{BEGIN}\n# logs commits with a Recode-Phase: trailer as milestones (a post-commit hook cannot fail a commit)\nexec git-recode hook post-commit\n{END}\n"
        )
    }
}

/// The lines after the first of a [`direct_script`].
const DIRECT_BODY: &str = "# BEGIN git-recode\n# git starts git-recode itself (no shell): it logs commits with a Recode-Phase: trailer as milestones\n# END git-recode\n";

/// The post-commit hook git-recode installs where nothing is chained and `exe` can be the
/// hook's interpreter: `#!<exe>` first, so git starts git-recode itself (no shell, one
/// process), which takes its one argument, the hook's own path, as `hook post-commit`
/// (see [`is_hook_path`]). Its lines are those of [`script`]`(false)` but the command.
pub fn direct_script(exe: &std::path::Path) -> String {
    format!("#!{}\n{DIRECT_BODY}", exe.display())
}

/// Whether `text` is a [`direct_script`] (for any interpreter path named `git-recode`).
fn is_direct(text: &str) -> bool {
    let Some((first, rest)) = text.split_once('\n') else {
        return false;
    };
    first.strip_prefix("#!").is_some_and(|p| {
        !p.contains(char::is_whitespace)
            && std::path::Path::new(p).file_name() == Some(std::ffi::OsStr::new("git-recode"))
    }) && rest == DIRECT_BODY
}

/// The interpreter a [`direct_script`] can name: the `git-recode` that `PATH` finds (the
/// path as found, so a package manager's symlink survives upgrades), when it is this very
/// binary and its absolute path has no whitespace (a `#!` line cannot quote). `None`: use
/// [`script`].
pub(crate) fn direct_interpreter() -> Option<std::path::PathBuf> {
    let me = std::env::current_exe().ok()?.canonicalize().ok()?;
    let found = std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join("git-recode"))
        .find(|p| p.is_file())?;
    let text = found.to_str()?;
    (found.is_absolute()
        && !text.contains(char::is_whitespace)
        && text.len() < 200
        && found.canonicalize().ok()? == me)
        .then_some(found)
}

/// Whether the arguments after the program name are those a [`direct_script`] gets: one
/// path (with a `/`) whose file name is `post-commit`.
pub(crate) fn is_hook_path(args: &[std::ffi::OsString]) -> bool {
    match args {
        [one] => {
            let p = std::path::Path::new(one);
            one.as_encoded_bytes().contains(&b'/')
                && p.file_name() == Some(std::ffi::OsStr::new("post-commit"))
        }
        _ => false,
    }
}

/// What is in the hooks directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Installed {
    /// No post-commit hook.
    Nothing,
    /// git-recode's hook, alone, exactly as written ([`script`] or [`direct_script`]).
    Ours,
    /// git-recode's hook, running a previous one first.
    Chained,
    /// A hook with git-recode's block and other lines someone added: uninstall splices the block out.
    Edited,
    /// A hook git-recode did not write.
    Foreign,
}

/// Inspect `dir/post-commit`.
pub(crate) fn installed(dir: &std::path::Path) -> Installed {
    match std::fs::read_to_string(dir.join("post-commit")) {
        Err(_) => Installed::Nothing,
        Ok(text) if text == script(true) => Installed::Chained,
        Ok(text) if text == script(false) || is_direct(&text) => Installed::Ours,
        Ok(text) if text.lines().any(|l| l == BEGIN) && text.lines().any(|l| l == END) => {
            Installed::Edited
        }
        Ok(_) => Installed::Foreign,
    }
}

/// `text` without git-recode's block (from the `BEGIN` line to the `END` line).
pub(crate) fn splice_out(text: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches('\n');
        if bare == BEGIN {
            inside = true;
        } else if bare == END && inside {
            inside = false;
        } else if !inside {
            out.push_str(line);
        }
    }
    out
}

/// The fast path of the post-commit hook (most commits are not milestones): `true` when
/// the commit certainly has no `Recode-Phase:` trailer, decided without opening the
/// repository. `git commit` always writes the message it used to `COMMIT_EDITMSG` in the
/// worktree's git dir; when that file does not mention the trailer and no rebase,
/// cherry-pick, revert or am is running (their picks do not go through that file), the
/// commit has none. Any doubt (no git dir found, an unreadable file) says `false`.
pub(crate) fn certainly_no_phase() -> bool {
    let Some(git_dir) = worktree_git_dir() else {
        return false;
    };
    for busy in [
        "rebase-merge",
        "rebase-apply",
        "sequencer",
        "CHERRY_PICK_HEAD",
        "REVERT_HEAD",
    ] {
        if git_dir.join(busy).exists() {
            return false;
        }
    }
    match std::fs::read(git_dir.join("COMMIT_EDITMSG")) {
        Ok(msg) => !msg
            .windows(PHASE_TRAILER.len())
            .any(|w| w.eq_ignore_ascii_case(PHASE_TRAILER.as_bytes())),
        Err(_) => false,
    }
}

/// The current worktree's git dir: `$GIT_DIR`, else `.git` here (a directory, or a
/// `gitdir:` file in a linked worktree); hooks run at the worktree's top.
fn worktree_git_dir() -> Option<std::path::PathBuf> {
    if let Some(d) = std::env::var_os("GIT_DIR") {
        return Some(std::path::PathBuf::from(d));
    }
    let dot = std::path::Path::new(".git");
    if dot.is_dir() {
        return Some(dot.to_path_buf());
    }
    let text = std::fs::read_to_string(dot).ok()?;
    let path = text.strip_prefix("gitdir:")?.trim();
    Some(std::path::PathBuf::from(path))
}

#[cfg(test)]
mod hook_file_tests {
    use super::*;

    #[test]
    fn splicing_keeps_the_users_lines() {
        let text = format!(
            "#!/bin/sh\necho before\n{}echo after\n",
            script(false).trim_start_matches("#!/bin/sh\n")
        );
        assert_eq!(splice_out(&text), "#!/bin/sh\necho before\necho after\n");
    }

    #[test]
    fn a_direct_hook_is_ours_for_any_git_recode_path() {
        let text = direct_script(std::path::Path::new("/opt/bin/git-recode"));
        assert!(is_direct(&text));
        assert!(is_direct(&text.replace("/opt/bin", "/usr/local/bin")));
        assert!(!is_direct(&text.replace("git-recode\n", "git-recodex\n")));
        assert!(!is_direct(&format!("{text}echo more\n")));
        assert!(!is_direct(&script(false)));
    }

    #[test]
    fn only_one_path_named_post_commit_is_the_hook() {
        let os = |v: &[&str]| v.iter().map(std::ffi::OsString::from).collect::<Vec<_>>();
        assert!(is_hook_path(&os(&["/r/.git/hooks/post-commit"])));
        assert!(is_hook_path(&os(&[".git/hooks/post-commit"])));
        assert!(!is_hook_path(&os(&["post-commit"])));
        assert!(!is_hook_path(&os(&["/r/.git/hooks/pre-commit"])));
        assert!(!is_hook_path(&os(&["/r/.git/hooks/post-commit", "x"])));
        assert!(!is_hook_path(&os(&[])));
    }
}
