//! The comeback (SPEC 1.2 "Several machines"): back on a host whose worker another host
//! took over while this one was silent, `recover` never pushes onto the branch and never
//! deletes. What this host holds — its worktree's content (staged, unstaged, untracked)
//! on top of its HEAD, or its local commits — is saved as one commit on
//! `recode/takeover/<branch>/<host>` (pushed there when a remote exists), and the worker
//! stays `needs-human` with both hosts named. No `escalated` event is written: it would
//! stand for the whole task, on the host that now runs it too.
//!
//! The worktree and its index are never touched: the snapshot is built in a temporary
//! index of git-recode's own (a copy of the worktree's), and the side branch moves by one
//! compare-and-swap. A newer save keeps the older one as a parent: nothing saved before
//! becomes unreachable.

use std::path::{Path, PathBuf};

use gix::ObjectId;

use super::leftout::LeftOut;
use super::{Outcome, RecoverError, Run, Step, failed, guard, push, short, step};
use crate::git::{self, GitError};
use crate::model::Body;
use crate::model::reason::Row;
use crate::model::{Action, Worker};

/// The side branch the comeback saves on, and the host that took the worker over.
struct Side<'a> {
    /// The host that took the worker over.
    by: &'a str,
    /// `recode/takeover/<branch>/<host>`.
    branch: &'a str,
    /// `refs/heads/<branch>`.
    full: String,
}

/// What [`save`] did.
enum Saved {
    /// This host's work was already saved on the side branch, at this commit.
    Already(ObjectId),
    /// A new commit, now the side branch's tip.
    New(ObjectId),
}

/// Carry out the comeback's save for `w` (its row is [`Row::TakenOver`]).
///
/// Errors: [`RecoverError`] when the ledger cannot be written; git failures are
/// `failed` steps.
pub(super) fn run(r: &Run, w: &Worker) -> Result<Step, RecoverError> {
    let (now_w, snap) = match guard::recheck(r, w, Action::Escalate)? {
        Ok(v) => v,
        Err(s) => return Ok(s),
    };
    let Row::TakenOver {
        by, side_branch, ..
    } = &now_w.reason.row
    else {
        return Ok(step(
            w,
            Outcome::Skipped,
            format!("re-checked: {}", now_w.reason),
        ));
    };
    let side = Side {
        by,
        branch: side_branch,
        full: format!("refs/heads/{side_branch}"),
    };
    let worktree = snap.worktree.as_ref().filter(|f| !f.missing);
    let dir = worktree.map_or_else(
        || r.repo.common_dir().to_path_buf(),
        |f| PathBuf::from(&f.path),
    );
    match save(r, w, worktree.map(|f| Path::new(&f.path)), &dir, &side) {
        Err(why) => Ok(failed(w, why, false)),
        Ok(Saved::Already(o)) => Ok(step(
            w,
            Outcome::Done,
            format!(
                "taken over by {by}: this host's work is already saved on {side_branch} ({})",
                short(o)
            ),
        )),
        Ok(Saved::New(commit)) => push_and_ledger(r, (w, &now_w), &dir, &side, commit),
    }
}

/// The commit this host's work sits on: the worktree's HEAD (`worktree`), else the local
/// branch's tip; `None` with neither.
fn base_of(r: &Run, w: &Worker, worktree: Option<&Path>) -> Option<ObjectId> {
    worktree
        .and_then(|dir| {
            git::read(
                dir,
                r.cfg.command_timeout,
                &["rev-parse", "--verify", "HEAD"],
            )
            .ok()
        })
        .and_then(|o| ObjectId::from_hex(String::from_utf8_lossy(&o).trim().as_bytes()).ok())
        .or_else(|| crate::repo::tip(r.repo, &format!("refs/heads/{}", w.branch)))
}

/// Save this host's work on the side branch: the worktree's content (else the base's
/// tree) as one commit on the base (with the side branch's old tip as a second parent),
/// the side branch moved to it by compare-and-swap. Nothing new when the side branch
/// already holds the same tree and contains the base.
///
/// Errors: the failed step's sentence (nothing to save, a tree or commit git could not
/// make, the side branch moved meanwhile).
fn save(
    r: &Run,
    w: &Worker,
    worktree: Option<&Path>,
    dir: &Path,
    side: &Side,
) -> Result<Saved, String> {
    let base = base_of(r, w, worktree).ok_or("nothing to save: no HEAD and no local branch")?;
    let tree = match worktree {
        Some(wt) => snapshot_tree(r, wt).map_err(|e| format!("cannot snapshot the worktree: {e}")),
        None => tree_of(r.repo, base).map_err(|e| format!("cannot read {base}: {e}")),
    }?;
    let old = crate::repo::tip(r.repo, &side.full);
    if let Some(o) = old
        && tree_of(r.repo, o).ok() == Some(tree)
        && contains(r.repo, o, base)
    {
        return Ok(Saved::Already(o));
    }
    let commit = commit_snapshot(r, w, dir, side.by, (tree, base, old))?;
    let edit = crate::refs::Edit {
        name: &side.full,
        expect: crate::refs::Expect::from(old),
        new: Some(commit),
        message: "recode: takeover snapshot",
    };
    // `Ok(false)`: created meanwhile with this very commit: saved all the same.
    crate::refs::swap(r.repo, &edit).map_err(|e| format!("cannot move {}: {e}", side.branch))?;
    Ok(Saved::New(commit))
}

/// `git commit-tree` of `tree` on `base` (and `old`, the side branch's tip, when it is
/// another commit), as git-recode's own identity, its message naming this host and `by`
/// with the WIP trailer.
///
/// Errors: the failed step's sentence.
fn commit_snapshot(
    r: &Run,
    w: &Worker,
    dir: &Path,
    by: &str,
    (tree, base, old): (ObjectId, ObjectId, Option<ObjectId>),
) -> Result<ObjectId, String> {
    let message = format!(
        "wip: recode takeover snapshot of {} on {} (taken over by {by})\n\n{}: true\n",
        w.branch,
        crate::hosts::me(r.repo, r.cfg.command_timeout).shown(),
        crate::trailer::WIP_TRAILER
    );
    let mut args = vec![
        "commit-tree".to_string(),
        tree.to_hex().to_string(),
        "-p".into(),
        base.to_hex().to_string(),
    ];
    if let Some(o) = old.filter(|o| *o != base) {
        args.extend(["-p".into(), o.to_hex().to_string()]);
    }
    args.extend(["-m".into(), message]);
    let mut run = git::Git::new(dir, r.cfg.command_timeout)
        .commit_step()
        .args(&args);
    for (k, v) in git::own_identity_env(dir, r.cfg.command_timeout) {
        run = run.env(k, v);
    }
    let made = run
        .output()
        .map_err(|e| format!("cannot commit the takeover snapshot: {e}"))?;
    ObjectId::from_hex(String::from_utf8_lossy(&made).trim().as_bytes())
        .map_err(|e| format!("commit-tree printed no id: {e}"))
}

/// Push the saved side branch ([`push_side`]), ledger the save as a `wip` event whose
/// `held` says it was never put onto the worker's branch, and say what was done: `done`,
/// `held` (the push held) or `failed` (the push rejected).
///
/// Errors: [`RecoverError`] when the ledger cannot be written.
fn push_and_ledger(
    r: &Run,
    (w, now_w): (&Worker, &Worker),
    dir: &Path,
    side: &Side,
    commit: ObjectId,
) -> Result<Step, RecoverError> {
    let (by, side_branch) = (side.by, side.branch);
    let (pushed, held, error) = push_side(r, now_w, dir, side_branch);
    r.append(
        w,
        Some(commit),
        Body::Wip {
            files: 0,
            pushed,
            held: Some(match &held {
                Some(h) => format!(
                    "taken over by {by}: saved on {side_branch}, never onto {}; push held: {h}",
                    w.branch
                ),
                None => format!(
                    "taken over by {by}: saved on {side_branch}, never onto {}",
                    w.branch
                ),
            }),
            left_out: Vec::new(),
        },
    )?;
    let said = format!(
        "taken over by {by}: this host's work saved on {side_branch} ({}){}",
        short(commit),
        if pushed { ", pushed" } else { "" }
    );
    Ok(match (error, held) {
        (Some(e), _) => failed(w, format!("{said}; push rejected: {e}"), true),
        (None, Some(h)) => step(w, Outcome::Held, format!("{said}; push held: {h}")),
        (None, None) => step(w, Outcome::Done, said),
    })
}

/// The tree id of commit `id`.
fn tree_of(repo: &gix::Repository, id: ObjectId) -> Result<ObjectId, String> {
    repo.find_commit(id)
        .map_err(|e| e.to_string())?
        .tree_id()
        .map(|t| t.detach())
        .map_err(|e| e.to_string())
}

/// Whether `tip` contains `commit`.
fn contains(repo: &gix::Repository, tip: ObjectId, commit: ObjectId) -> bool {
    tip == commit || crate::repo::count_between(repo, commit, &[tip]).is_ok_and(|n| n == 0)
}

/// The tree of everything in the worktree at `dir` (what `add -A` stages, nested
/// repositories and oversize files left out), built in a temporary copy of its index:
/// the worktree's own index is never written.
fn snapshot_tree(r: &Run, dir: &Path) -> Result<ObjectId, GitError> {
    let index = git::read(
        dir,
        r.cfg.command_timeout,
        &["rev-parse", "--path-format=absolute", "--git-path", "index"],
    )?;
    let index = PathBuf::from(String::from_utf8_lossy(&index).trim());
    let tmp = index.with_file_name("index.recode-takeover");
    let _ = std::fs::remove_file(&tmp);
    if index.exists() {
        std::fs::copy(&index, &tmp).map_err(GitError::Spawn)?;
    }
    let left_out = LeftOut::find(dir, r.cfg.wip_max_file_size, &[], r.cfg.command_timeout)
        .map(|l| l.paths())
        .unwrap_or_default();
    let with_tmp = |g: git::Git| g.env("GIT_INDEX_FILE", &tmp);
    let result = (|| {
        // `--sparse`: as the WIP commit, a file outside sparse-checkout patterns is staged.
        with_tmp(git::Git::new(dir, r.cfg.command_timeout))
            .args(["add", "-A", "--sparse", "--", "."])
            .args(left_out.iter().map(|p| format!(":(exclude,literal){p}")))
            .output()?;
        let out = with_tmp(git::Git::new(dir, r.cfg.command_timeout))
            .args(["write-tree"])
            .output()?;
        ObjectId::from_hex(String::from_utf8_lossy(&out).trim().as_bytes()).map_err(|e| {
            GitError::Failed {
                args: "write-tree".into(),
                stderr: e.to_string(),
            }
        })
    })();
    let _ = std::fs::remove_file(&tmp);
    result
}

/// Push the side branch when a remote exists and `recode.pushWip` allows, never with a
/// file matching `recode.secrets`: `(pushed, held, push error)`.
fn push_side(
    r: &Run,
    w: &Worker,
    dir: &Path,
    side: &str,
) -> (bool, Option<String>, Option<GitError>) {
    if !r.cfg.push_wip {
        return (false, Some("recode.pushWip is false".into()), None);
    }
    if crate::forge::remote_url(r.repo, &r.cfg.remote).is_none() {
        return (false, Some(format!("no remote '{}'", r.cfg.remote)), None);
    }
    let mut side_w = w.clone();
    side_w.branch = side.to_string();
    match push::secrets_hold(r, &side_w, dir) {
        Ok(Some(h)) => return (false, Some(h), None),
        Err(e) => return (false, Some(e.to_string()), None),
        Ok(None) => {}
    }
    match push::push(r, dir, side) {
        Ok(()) => (true, None, None),
        Err(e) => (false, Some(format!("push rejected: {e}")), Some(e)),
    }
}

/// SPEC 1.3 claims, before this host pushes onto `w.branch`: the remote's claim on the
/// branch (`claim`, its id as `ls-remote` listed it) is another host's, and this host's
/// ledger does not show the attempt it started ended (an exit, or a newer attempt after
/// it: what `sync` removes), so that host took over or resumed the worker and this ledger
/// is behind (its takeover not synced here yet, or decided on a ledger that lacked an
/// attempt of this host's that never reached the remote): nothing is pushed onto the
/// branch, and the sentence says why. A claim that cannot be fetched holds the push too;
/// a garbage claim is ignored (it is named where it is replaced).
pub(super) fn claim_hold(r: &Run, w: &Worker, claim: Option<ObjectId>) -> Option<String> {
    use crate::hosts::claim as c;
    let id = claim?;
    let name = c::claim_ref(&w.branch);
    if r.repo.find_header(id).is_err() {
        let fetched = git::Git::new(r.repo.common_dir(), r.cfg.command_timeout)
            .args(["fetch", "--quiet", "--no-write-fetch-head"])
            .args([r.cfg.remote.as_str(), name.as_str()])
            .network(r.cfg.network_timeout, &r.cfg.ssh)
            .capture();
        if !fetched.is_ok_and(|f| f.ok) {
            return Some(format!(
                "{} holds a claim on {} that cannot be fetched: another host may have taken it over",
                r.cfg.remote, w.branch
            ));
        }
    }
    let doc = c::read(r.repo, id).ok()?;
    let me = crate::hosts::me(r.repo, r.cfg.command_timeout).id;
    if doc.host == me {
        return None;
    }
    let refs = crate::snapshot::notes_refs(r.repo, r.cfg);
    let events: Vec<_> = crate::ledger::read_task(r.repo, &refs, &w.task)
        .map(|(l, _)| l.events().cloned().collect())
        .unwrap_or_default();
    if c::ended(&doc, &events) {
        return None;
    }
    Some(format!(
        "{} resumed {} after {}'s attempt of {} (its claim is on {}): this host's ledger is behind, nothing is pushed onto the branch (`git recode sync`, then `git recode recover {}`)",
        doc.host, w.branch, doc.from_host, doc.attempt_ts, r.cfg.remote, w.branch
    ))
}
