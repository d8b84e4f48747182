//! Where a worktree's `.git` leads (SPEC 1.3 "Committing"): every git run for a worktree
//! is bound to the admin directory this repository lists for it, so a worktree whose
//! `.git` now leads anywhere else (a fresh `git init`, another repository, another
//! worktree's admin directory) is found before anything reads or commits there; and a
//! checkout whose registration is gone (its `.git` file naming an admin directory of
//! this repository that is gone or is another worktree's) is found so it can be
//! registered again, its content kept.

use std::path::{Path, PathBuf};

/// What `<dir>/.git` leads to: `<dir>/.git` itself when it is a directory (a repository
/// of its own), the `gitdir:` of a `.git` file (relative to `dir` when relative), each
/// canonicalized when it exists. `None` when there is no `.git` or its file has no
/// `gitdir:` line.
pub(crate) fn dot_git_target(dir: &Path) -> Option<PathBuf> {
    let dot = dir.join(".git");
    let meta = std::fs::symlink_metadata(&dot).ok()?;
    if meta.is_dir() || (meta.is_symlink() && dot.is_dir()) {
        return Some(canonical(&dot));
    }
    let text = std::fs::read_to_string(&dot).ok()?;
    let target = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
    if target.is_empty() {
        return None;
    }
    Some(canonical(&dir.join(target)))
}

/// Where the `.git` of the worktree at `dir` leads when that is not `admin` (the admin
/// directory this repository lists for it): `None` when it leads there, or when there is
/// no `.git` to follow (what cannot be read is reported by the status read).
pub(crate) fn foreign(dir: &Path, admin: &Path) -> Option<PathBuf> {
    let target = dot_git_target(dir)?;
    (target != canonical(admin)).then_some(target)
}

/// The admin directory a checkout at `dir` names when it is a deregistered worktree of
/// the repository whose common dir is `common`: `dir` holds a `.git` file whose `gitdir:`
/// is `<common>/worktrees/<id>`, and that directory is gone or is registered for another
/// path (its `gitdir` file does not lead back to `<dir>/.git`). `None` for anything else
/// (no directory, a repository of its own, another repository's worktree, a registered
/// worktree).
pub(crate) fn deregistered(common: &Path, dir: &Path) -> Option<PathBuf> {
    let dot = dir.join(".git");
    if !std::fs::symlink_metadata(&dot).ok()?.is_file() {
        return None;
    }
    let names = dot_git_target(dir)?;
    if names.parent()? != canonical(&common.join("worktrees")) {
        return None;
    }
    let back = std::fs::read_to_string(names.join("gitdir")).ok();
    let leads_back = back.is_some_and(|b| canonical(Path::new(b.trim())) == canonical(&dot));
    (!leads_back).then_some(names)
}

/// `p` canonicalized; a path that does not exist keeps its canonical parent.
fn canonical(p: &Path) -> PathBuf {
    if let Ok(c) = p.canonicalize() {
        return c;
    }
    match (p.parent(), p.file_name()) {
        (Some(parent), Some(name)) => parent
            .canonicalize()
            .map(|c| c.join(name))
            .unwrap_or_else(|_| p.to_path_buf()),
        _ => p.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_git_file_leads_where_it_says_and_a_directory_is_its_own() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let common = root.join("r/.git");
        let admin = common.join("worktrees/wt1");
        std::fs::create_dir_all(&admin).unwrap();
        let wt = root.join("wt1");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(wt.join(".git"), format!("gitdir: {}\n", admin.display())).unwrap();
        assert_eq!(dot_git_target(&wt), Some(admin.clone()));
        assert_eq!(foreign(&wt, &admin), None);
        // The registration is gone: deregistered, naming the admin directory.
        assert_eq!(deregistered(&common, &wt), Some(admin.clone()));
        std::fs::write(
            admin.join("gitdir"),
            format!("{}\n", wt.join(".git").display()),
        )
        .unwrap();
        assert_eq!(deregistered(&common, &wt), None, "registered again");
        // `git init` in it: a repository of its own.
        std::fs::remove_file(wt.join(".git")).unwrap();
        std::fs::create_dir_all(wt.join(".git")).unwrap();
        assert_eq!(foreign(&wt, &admin), Some(wt.join(".git")));
        assert_eq!(deregistered(&common, &wt), None);
        // No `.git` at all: nothing to follow.
        std::fs::remove_dir_all(wt.join(".git")).unwrap();
        assert_eq!(foreign(&wt, &admin), None);
    }
}
