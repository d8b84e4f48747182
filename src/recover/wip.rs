//! `wip-commit`: commit everything in a dead worker's worktree as a WIP snapshot with
//! git's own `add -A` and `commit` (hooks skipped), so `.gitattributes` filters, exec
//! bits, symlinks and deletions are exactly what git makes of them; then push it when
//! allowed ([`super::push`]).
//!
//! SPEC rules kept here: an untracked nested repository is never recorded as a gitlink
//! (left out, named in `left_out`, the result `held`); a failed `add` or `commit` leaves
//! the index byte-identical to before (safety rule 0); stale locks are handled before
//! any step (`super::settle`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::leftout::LeftOut;
use super::{
    Outcome, RecoverError, Run, Step, failed, failpoint, guard, push, refused, short, step,
};
use crate::git::{self, GitError};
use crate::model::Body;
use crate::model::{Action, Worker};

/// The WIP commit as pushed: its head and file count (after any rewrite without refused
/// files), and the push's result.
struct Pushed {
    head: gix::ObjectId,
    files: u32,
    pushed: bool,
    held: Option<String>,
    error: Option<GitError>,
}

/// Push the WIP commit `head` ([`push_wip`]). A remote that refuses files for their size:
/// our own commit, made just now and on no remote, is rewritten without them (kept on
/// disk, left out, added to `found.refused`), then pushed again (not when nothing else
/// was in it); a rewrite that fails is said in `held`.
fn push_refusing(
    r: &Run,
    (w, now_w): (&Worker, &Worker),
    dir: &Path,
    (head, files): (gix::ObjectId, u32),
    found: &mut LeftOut,
) -> Pushed {
    let (pushed, held, error) = push_wip(r, w, now_w, dir, found);
    let mut p = Pushed {
        head,
        files,
        pushed,
        held,
        error,
    };
    let Some(refused) = p
        .error
        .as_ref()
        .and_then(|e| refused_paths(dir, head, &e.to_string(), r.cfg.command_timeout))
    else {
        return p;
    };
    failpoint("wip-refused");
    match refused::rewrite_without(
        dir,
        &w.branch,
        head,
        &refused,
        wip_message,
        &git::own_identity_env(dir, r.cfg.command_timeout),
        r.cfg.command_timeout,
    ) {
        Ok((new, n)) => {
            (p.head, p.files) = (new, n);
            found.refused = refused;
            (p.pushed, p.held, p.error) = if p.files == 0 {
                (false, found.describe(), None)
            } else {
                push_wip(r, w, now_w, dir, found)
            };
        }
        Err(e) => {
            p.held = Some(format!(
                "{}; leaving out {} failed: {e}",
                p.held.unwrap_or_default(),
                refused.join(", ")
            ));
        }
    }
    p
}

/// Ledger the pushed WIP commit as a `wip` event (with what is left out and still
/// dirty), and say what was done: `failed` when the push was rejected (counted, three in
/// a row escalate), `held`, or `done`.
///
/// Errors: [`RecoverError`] when the ledger cannot be written.
fn ledger_wip(
    r: &Run,
    (w, now_w): (&Worker, &Worker),
    wt: &Bound,
    found: &LeftOut,
    p: Pushed,
) -> Result<Step, RecoverError> {
    let left_out = with_still_dirty(wt, found.paths());
    r.append(
        w,
        Some(p.head),
        Body::Wip {
            files: p.files,
            pushed: p.pushed,
            held: p.held.clone(),
            left_out: left_out.clone(),
        },
    )?;
    let made = if p.files == 0 {
        // Everything the commit held was refused: it was undone, the branch is where it was.
        format!(
            "WIP commit undone, nothing else in it (branch at {})",
            short(p.head)
        )
    } else {
        format!(
            "WIP commit {} ({})",
            short(p.head),
            crate::model::reason::plural(u64::from(p.files), "file")
        )
    };
    Ok(match (p.error, p.held) {
        (Some(e), _) => r.step_failed(now_w, format!("{made} made; push rejected: {e}"), true)?,
        (None, Some(why)) => step(w, Outcome::Held, format!("{made}; push held: {why}")),
        (None, None) if p.pushed => step(w, Outcome::Done, format!("{made}, pushed")),
        (None, None) => step(w, Outcome::Done, made),
    })
}

/// Carry out one `wip-commit`.
///
/// Errors: [`RecoverError`] when the ledger cannot be written; git failures are `failed`
/// steps (ledgered; three in a row on one head escalate).
pub(super) fn run(r: &Run, w: &Worker) -> Result<Step, RecoverError> {
    let (now_w, snap) = match guard::recheck(r, w, Action::WipCommit)? {
        Ok(v) => v,
        Err(s) => return Ok(s),
    };
    let Some(f) = snap.worktree.as_ref().filter(|f| !f.missing && !f.is_main) else {
        return Ok(failed(w, "no worktree to snapshot", false));
    };
    let dir = Path::new(&f.path);
    // SPEC 1.3: every git run here is bound to the admin directory this repository lists
    // for the worktree (the guard re-read it: its `.git` leads there).
    let timeout = r.cfg.command_timeout;
    let wt = Bound {
        dir,
        admin: Path::new(&f.admin),
        timeout,
        index: None,
    };
    let before = crate::model::replay::left_out_last(&snap.events, &w.branch);
    let mut found = match LeftOut::find(dir, r.cfg.wip_max_file_size, &before, timeout) {
        Ok(v) => v,
        Err(e) => return r.step_failed(&now_w, e.to_string(), false),
    };
    let left_out = found.paths();
    r.classified(&now_w)?;
    failpoint("wip-add");
    // Safety rule 0: the worktree's index is replaced only once the branch moved; a failed
    // step leaves it as it was. A run killed between the two left the branch at its
    // snapshot: the index goes in place first, and that snapshot is what is pushed.
    let made = finish_interrupted(&wt).map(|v| Ok(Some(v)));
    let made = match made.unwrap_or_else(|| add_and_commit(&wt, &left_out)) {
        Ok(Some(v)) => v,
        Ok(None) => return only_left_out(r, w, &now_w, &wt, left_out),
        Err(e) => return r.step_failed(&now_w, format!("WIP commit failed: {e}"), false),
    };
    failpoint("wip-push");
    let pushed = push_refusing(r, (w, &now_w), dir, made, &mut found);
    ledger_wip(r, (w, &now_w), &wt, &found, pushed)
}

/// The paths of our WIP commit `head` that the push's refusal `error` names for their
/// size (`refused.rs`); `None` when it is no size refusal or names none of them.
fn refused_paths(
    dir: &Path,
    head: gix::ObjectId,
    error: &str,
    timeout: Duration,
) -> Option<Vec<String>> {
    if !refused::size_refusal(error) {
        return None;
    }
    let added = refused::added_by(dir, head, timeout).ok()?;
    let named = refused::named(error, &added);
    (!named.is_empty()).then_some(named)
}

/// The step when nothing but left-out content was there to commit: `held`, and a `wip`
/// event with no new commit (`files` 0, `head` unchanged) naming what was left out, so
/// the next tick resumes instead of trying again (SPEC 1.2 "The loop settles").
///
/// Errors: [`RecoverError`] when the ledger cannot be written.
fn only_left_out(
    r: &Run,
    w: &Worker,
    now_w: &Worker,
    wt: &Bound,
    left_out: Vec<String>,
) -> Result<Step, RecoverError> {
    let left_out = with_still_dirty(wt, left_out);
    let held = format!(
        "nothing to commit but what a WIP commit leaves out: {}",
        left_out.join(", ")
    );
    r.append(
        w,
        now_w.head,
        Body::Wip {
            files: 0,
            pushed: false,
            held: Some(held.clone()),
            left_out,
        },
    )?;
    Ok(step(w, Outcome::Held, held))
}

/// `left_out` plus every path the worktree still shows as changed after the WIP step
/// (a dirty submodule, anything git would not stage): what no WIP commit captures.
fn with_still_dirty(wt: &Bound, mut left_out: Vec<String>) -> Vec<String> {
    let out = wt
        .read(&["status", "--porcelain=v1", "-z", "--no-renames"])
        .unwrap_or_default();
    for e in out.split(|b| *b == 0).filter(|e| e.len() > 3) {
        let p = String::from_utf8_lossy(&e[3..]);
        let p = p.trim_end_matches('/').to_string();
        // `?? vendor/` is the directory that holds a nested repository already named.
        let named = left_out
            .iter()
            .any(|l| l == &p || l.starts_with(&format!("{p}/")) || p.starts_with(&format!("{l}/")));
        if !named {
            left_out.push(p);
        }
    }
    left_out
}

/// Push the WIP commit when allowed: whether it was pushed, why it is held (with the
/// nested repositories left out), and the push's error when it was rejected.
fn push_wip(
    r: &Run,
    w: &Worker,
    now_w: &Worker,
    dir: &Path,
    left_out: &LeftOut,
) -> (bool, Option<String>, Option<GitError>) {
    let mut held = push::wip_hold(r, now_w, dir).unwrap_or_else(|e| Some(e.to_string()));
    let mut pushed = false;
    let mut push_error = None;
    if held.is_none() {
        match push::push(r, dir, &w.branch) {
            Ok(()) => pushed = true,
            Err(e) => {
                held = Some(format!("push rejected: {e}"));
                push_error = Some(e);
            }
        }
    }
    if let Some(nested) = left_out.describe() {
        held = Some(match held {
            Some(h) => format!("{h}; {nested}"),
            None => nested,
        });
    }
    (pushed, held, push_error)
}

/// `git add -A --sparse` (nested repositories excluded) into a temporary index of our own,
/// two trees, and one compare-and-swap of the branch (SPEC 1.2: a WIP snapshot is one ref
/// update; a kill leaves the branch where it was or at the complete snapshot, and the
/// worktree's own index untouched until the branch moved). `None` when nothing but the
/// excluded paths was there to commit. Returns the new head and the file count.
///
/// Errors: [`GitError`] from any git run; the worktree's index is then as it was.
fn add_and_commit(
    wt: &Bound,
    left_out: &[String],
) -> Result<Option<(gix::ObjectId, u32)>, GitError> {
    let index = wt.admin.join("index");
    let tmp = wt.admin.join("index.recode-wip");
    let _ = std::fs::remove_file(&tmp);
    if index.exists() {
        std::fs::copy(&index, &tmp).map_err(GitError::Spawn)?;
    }
    let staged = Bound {
        index: Some(&tmp),
        ..*wt
    };
    let made = snapshot(&staged, left_out);
    if !matches!(made, Ok(Some(_))) {
        let _ = std::fs::remove_file(&tmp);
        let _ = std::fs::remove_file(tmp.with_file_name("index.recode-wip.lock"));
    }
    let Some((old, new, files)) = made? else {
        return Ok(None);
    };
    failpoint("wip-commit");
    let mut update = wt
        .git()
        .args(["update-ref", "-m", "recode: WIP snapshot", "HEAD"]);
    update = update
        .arg(new.to_string())
        .arg(old.map(|o| o.to_string()).unwrap_or_default());
    if let Err(e) = update.output() {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    failpoint("wip-moved");
    replace_index(&tmp, &index);
    Ok(Some((new, files)))
}

/// A WIP step killed after its branch moved and before its index went in place left
/// `index.recode-wip` whose tree is `HEAD`'s: put it in place ([`replace_index`]). When
/// the worktree is then clean, the snapshot at `HEAD` is this step's (its head and the
/// paths it changed); `None` when there was nothing to finish or more is left to commit.
fn finish_interrupted(wt: &Bound) -> Option<(gix::ObjectId, u32)> {
    let tmp = wt.admin.join("index.recode-wip");
    if !tmp.is_file() {
        return None;
    }
    let staged = Bound {
        index: Some(&tmp),
        ..*wt
    };
    let tree = staged.git().args(["write-tree"]).output_id().ok()?;
    let head = wt
        .git()
        .args(["rev-parse", "-q", "--verify", "HEAD^{commit}"]);
    let head = head.output_id().ok()?;
    let head_tree = wt
        .git()
        .args(["rev-parse", "-q", "--verify", "HEAD^{tree}"]);
    if head_tree.output_id().ok()? != tree {
        let _ = std::fs::remove_file(&tmp);
        return None;
    }
    replace_index(&tmp, &wt.admin.join("index"));
    let status = wt.read(&["status", "--porcelain=v1", "-z", "--untracked-files=all"]);
    if !status.ok()?.is_empty() {
        return None;
    }
    let changed = wt.read(&["diff-tree", "-r", "--root", "--name-only", "-z", "HEAD"]);
    let files = changed
        .ok()?
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .count();
    Some((head, files.saturating_sub(1) as u32))
}

/// Build the WIP snapshot in `staged`'s own index: the staged versions a worktree change
/// would replace first (`MM`, `AM`, `MD`: their own commit, so they stay reachable, safety
/// rule 1), then everything `add -A --sparse` stages. No ref moves here. Returns the
/// branch's head before, the new commit and its file count; `None` when nothing was staged.
///
/// Errors: [`GitError`] from any git run.
fn snapshot(
    staged: &Bound,
    left_out: &[String],
) -> Result<Option<(Option<gix::ObjectId>, gix::ObjectId, u32)>, GitError> {
    let old = staged
        .git()
        .args(["rev-parse", "-q", "--verify", "HEAD^{commit}"])
        .output_id()
        .ok();
    // SPEC 1.3: what the commit captures does not depend on an index flag: entries marked
    // `assume-unchanged` (or `skip-worktree` with the file on disk) are staged like any
    // other, their flags put back after.
    let flagged = Flagged::clear(staged)?;
    let mut parent = old;
    let restaged = staged_then_changed(staged)?;
    if restaged > 0 {
        let message = format!(
            "wip: recode snapshot of the index ({restaged} files changed again after staging)\n\nRecode-Wip: true\n"
        );
        parent = Some(commit_tree(staged, parent, &message)?);
    }
    // `--sparse`: a file outside the sparse-checkout patterns that is on disk is staged too
    // (without it git skips it and says nothing).
    staged
        .git()
        .args(["add", "-A", "--sparse", "--", "."])
        .args(left_out.iter().map(|p| format!(":(exclude,literal){p}")))
        .output()?;
    // What the snapshot changes against its parent (against nothing on an unborn branch).
    let against = parent.map(|p| p.to_string());
    let mut diff = vec!["diff", "--cached", "--name-only", "-z"];
    diff.extend(against.as_deref());
    let files = staged.read(&diff)?;
    let files = files.split(|b| *b == 0).filter(|p| !p.is_empty()).count() as u32;
    flagged.restore(staged);
    let new = match (files, parent) {
        (0, Some(p)) if restaged > 0 => p,
        (0, _) => return Ok(None),
        (n, _) => commit_tree(staged, parent, &wip_message(n))?,
    };
    Ok(Some((old, new, files.max(restaged as u32))))
}

/// Put our temporary index in place of the worktree's own (under `index.lock`, as git
/// does); best effort: when the lock is held the index stays as it was and the next
/// status shows the snapshot's files as changed back, nothing lost.
fn replace_index(tmp: &Path, index: &Path) {
    let lock = index.with_file_name("index.lock");
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&lock)
    {
        Ok(_) => {
            if let Err(e) = std::fs::rename(tmp, index) {
                tracing::warn!("the worktree's index was not updated: {e}");
            }
            let _ = std::fs::remove_file(&lock);
        }
        Err(e) => {
            tracing::warn!(
                "{} is held ({e}): the worktree's index was not updated",
                lock.display()
            );
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// A worktree and the admin directory every git run for it is bound to (SPEC 1.3).
#[derive(Clone, Copy)]
pub(super) struct Bound<'a> {
    /// The worktree.
    pub(super) dir: &'a Path,
    /// Its own git dir, as this repository lists it.
    pub(super) admin: &'a Path,
    /// `recode.commandTimeout`: every run for it is killed past it.
    pub(super) timeout: Duration,
    /// The index its runs use (`GIT_INDEX_FILE`) when not the worktree's own.
    pub(super) index: Option<&'a Path>,
}

impl Bound<'_> {
    /// A git run for it ([`git::Git::bound`]).
    pub(super) fn git(&self) -> git::Git {
        self.with_index(git::Git::bound(self.dir, self.admin, self.timeout))
    }

    fn with_index(&self, g: git::Git) -> git::Git {
        match self.index {
            Some(i) => g.env("GIT_INDEX_FILE", i),
            None => g,
        }
    }

    /// A read-only git run for it: stdout.
    ///
    /// Errors: as [`git::Git::output`].
    pub(super) fn read(&self, args: &[&str]) -> Result<Vec<u8>, GitError> {
        self.with_index(git::Git::bound_read(self.dir, self.admin, self.timeout))
            .args(args)
            .output()
    }
}

/// The index entries whose flag made `git add` skip them, cleared for the WIP commit.
struct Flagged {
    assumed: Vec<String>,
    skipped: Vec<String>,
}

impl Flagged {
    /// Clear `assume-unchanged` on every entry that has it, and `skip-worktree` on those
    /// whose file is on disk (`git ls-files -v`: a lower-case tag, `S`).
    ///
    /// Errors: [`GitError`] when the index cannot be listed or updated.
    fn clear(wt: &Bound) -> Result<Flagged, GitError> {
        let out = wt.read(&["ls-files", "-v", "-z"])?;
        let mut f = Flagged {
            assumed: Vec::new(),
            skipped: Vec::new(),
        };
        for e in out.split(|b| *b == 0).filter(|e| e.len() > 2) {
            let path = String::from_utf8_lossy(&e[2..]).to_string();
            let on_disk = || std::fs::symlink_metadata(wt.dir.join(&path)).is_ok();
            if e[0].eq_ignore_ascii_case(&b'S') && on_disk() {
                f.skipped.push(path.clone());
            }
            if e[0].is_ascii_lowercase() {
                f.assumed.push(path);
            }
        }
        f.update(wt, "--no-assume-unchanged", "--no-skip-worktree")?;
        Ok(f)
    }

    fn update(&self, wt: &Bound, assume: &str, skip: &str) -> Result<(), GitError> {
        for (flag, paths) in [(assume, &self.assumed), (skip, &self.skipped)] {
            if !paths.is_empty() {
                wt.git()
                    .args(["update-index", flag, "--"])
                    .args(paths)
                    .output()?;
            }
        }
        Ok(())
    }

    /// Put the flags back (the entries now match the commit); best effort.
    fn restore(&self, wt: &Bound) {
        let _ = self.update(wt, "--assume-unchanged", "--skip-worktree");
    }
}

/// The WIP commit's message for `files` files. SPEC 1.2: `Recode-Wip: true` and never a
/// `Recode-Phase` trailer (a copied phase would be read as a fresh milestone, and a
/// stalled worker turn `running`).
fn wip_message(files: u32) -> String {
    format!(
        "wip: recode snapshot ({files} file{})\n\n{}: true\n",
        if files == 1 { "" } else { "s" },
        crate::trailer::WIP_TRAILER
    )
}

/// Write `wt`'s index as a tree and commit it on `parent` with `message` (no hook runs;
/// signed when the user signs, `commit.gpgSign`; bounded by `recode.commandTimeout` like
/// every git run; a fallback identity when none is set). No ref moves.
///
/// Errors: [`GitError`] from `write-tree` or `commit-tree`.
fn commit_tree(
    wt: &Bound,
    parent: Option<gix::ObjectId>,
    message: &str,
) -> Result<gix::ObjectId, GitError> {
    let tree = wt.git().args(["write-tree"]).output_id()?;
    let mut commit = wt.git().commit_step().args(["commit-tree", "-m", message]);
    // `commit-tree` does not read `commit.gpgSign`: a user who signs gets `-S` (their
    // `user.signingKey`), as `git commit` would sign.
    let signs = wt.read(&["config", "--type=bool", "--get", "commit.gpgsign"]);
    if signs.is_ok_and(|v| v.trim_ascii() == b"true") {
        commit = commit.arg("-S");
    }
    if let Some(p) = parent {
        commit = commit.arg("-p").arg(p.to_string());
    }
    for (k, v) in git::own_identity_env(wt.dir, wt.timeout) {
        commit = commit.env(k, v);
    }
    commit.arg(tree.to_string()).output_id()
}

/// How many paths have a staged version (added, modified, type-changed) that the worktree
/// changed or deleted again: `add -A` would replace that version.
///
/// Errors: [`GitError`] when the status cannot be read.
fn staged_then_changed(wt: &Bound) -> Result<usize, GitError> {
    let out = wt.read(&[
        "status",
        "--porcelain=v1",
        "-z",
        "--no-renames",
        "--untracked-files=no",
        "--ignore-submodules=all",
    ])?;
    Ok(out
        .split(|b| *b == 0)
        .filter(|e| e.len() > 3 && b"MAT".contains(&e[0]) && b"MTD".contains(&e[1]))
        .count())
}

/// The absolute path of `name` in the worktree's own git dir (`--git-path`; killed past
/// `timeout`, `recode.commandTimeout`).
pub(super) fn git_path(dir: &Path, name: &str, timeout: Duration) -> Result<PathBuf, GitError> {
    let out = git::read(
        dir,
        timeout,
        &["rev-parse", "--path-format=absolute", "--git-path", name],
    )?;
    Ok(PathBuf::from(String::from_utf8_lossy(&out).trim()))
}
