//! Merging the remote's ledger into the local one: fast-forward when one side contains
//! the other, else a merge commit whose tree unions both (per-note line union for notes,
//! entry union for anchors), the local ref moved with compare-and-swap.

use std::collections::{BTreeMap, BTreeSet};

use gix::ObjectId;

use super::{Pair, PushSpec, SyncError, other, tip};

pub(super) fn is_ancestor(
    repo: &gix::Repository,
    ancestor: ObjectId,
    of: ObjectId,
) -> Result<bool, SyncError> {
    if ancestor == of {
        return Ok(true);
    }
    Ok(crate::repo::count_between(repo, ancestor, &[of])? == 0)
}

/// `(annotated object, blob)` of every entry of a notes tree (any fanout), or of a flat anchors tree.
pub(super) fn notes_of(
    repo: &gix::Repository,
    commit: ObjectId,
) -> Result<BTreeMap<ObjectId, ObjectId>, SyncError> {
    let tree = repo
        .find_commit(commit)
        .map_err(other)?
        .tree_id()
        .map_err(other)?
        .detach();
    Ok(crate::ledger::notes_in_tree(repo, tree, "sync")?
        .into_iter()
        .collect())
}

/// Sorted union of the lines of two notes (`cat_sort_uniq`).
pub(super) fn union_lines(
    repo: &gix::Repository,
    a: ObjectId,
    b: ObjectId,
) -> Result<Vec<u8>, SyncError> {
    let mut lines = BTreeSet::new();
    for id in [a, b] {
        let blob = repo.find_blob(id).map_err(other)?;
        for l in blob.data.split(|c| *c == b'\n') {
            if !l.is_empty() {
                lines.insert(l.to_vec());
            }
        }
    }
    let mut out = Vec::new();
    for l in lines {
        out.extend_from_slice(&l);
        out.push(b'\n');
    }
    Ok(out)
}

/// Merge `theirs` into `ours` for one ref: fast-forward when one contains the other,
/// else a merge commit whose tree unions both (`notes`: per-note line union; anchors:
/// entry union). Returns the new tip and how many entries were merged.
pub(super) fn merge(
    repo: &gix::Repository,
    ours: Option<ObjectId>,
    theirs: Option<ObjectId>,
    notes: bool,
    now: jiff::Timestamp,
) -> Result<(Option<ObjectId>, usize), SyncError> {
    let (ours, theirs) = match (ours, theirs) {
        (o, None) => return Ok((o, 0)),
        (None, t) => return Ok((t, 0)),
        (Some(o), Some(t)) => (o, t),
    };
    if is_ancestor(repo, theirs, ours)? {
        return Ok((Some(ours), 0));
    }
    if is_ancestor(repo, ours, theirs)? {
        return Ok((Some(theirs), 0));
    }
    let mine = notes_of(repo, ours)?;
    let other_side = notes_of(repo, theirs)?;
    let root = repo
        .find_commit(ours)
        .map_err(other)?
        .tree_id()
        .map_err(other)?
        .detach();
    let mut changed = 0;
    let tree = if notes {
        let mut state = gix::note::plumbing::State::new(root, &repo.objects).map_err(other)?;
        for (anchor, blob) in &other_side {
            let merged = match mine.get(anchor) {
                Some(m) if m == blob => continue,
                Some(m) => repo
                    .write_blob(union_lines(repo, *m, *blob)?)
                    .map_err(other)?
                    .detach(),
                None => *blob,
            };
            state
                .edit(*anchor, Some(merged), &repo.objects)
                .map_err(other)?;
            changed += 1;
        }
        state.write(&repo.objects).map_err(other)?
    } else {
        let mut all = mine.clone();
        for (k, v) in &other_side {
            if all.insert(*k, *v).is_none() {
                changed += 1;
            }
        }
        let mut entries: Vec<gix::objs::tree::Entry> = all
            .iter()
            .map(|(k, v)| gix::objs::tree::Entry {
                mode: gix::objs::tree::EntryKind::Blob.into(),
                filename: k.to_hex().to_string().into(),
                oid: *v,
            })
            .collect();
        entries.sort();
        repo.write_object(&gix::objs::Tree { entries })
            .map_err(other)?
            .detach()
    };
    let sig = crate::ledger::signature(now);
    let commit = gix::objs::Commit {
        tree,
        parents: [ours, theirs].into_iter().collect(),
        author: sig.clone(),
        committer: sig,
        encoding: None,
        message: "Notes merged by 'git recode sync' (cat_sort_uniq)\n".into(),
        extra_headers: Vec::new(),
    };
    Ok((
        Some(repo.write_object(&commit).map_err(other)?.detach()),
        changed,
    ))
}

/// Point a remote-tracking ref at `id`, best effort (the next sync fetches it again).
pub(super) fn set_tracking(repo: &gix::Repository, tracking: &str, id: ObjectId) {
    let edit = crate::refs::Edit {
        name: tracking,
        expect: crate::refs::Expect::Any,
        new: Some(id),
        message: "recode: sync",
    };
    let _ = crate::refs::swap(repo, &edit);
}

/// Words of a ref's merge for the user: how `merged` came from `ours` and `theirs`.
pub(super) fn describe(
    ours: Option<ObjectId>,
    theirs: Option<ObjectId>,
    changed: usize,
    merged: ObjectId,
) -> String {
    match (ours, theirs) {
        (_, None) => "the remote had none".to_string(),
        (None, Some(_)) => "taken from the remote".to_string(),
        _ if changed == 1 => "merged 1 entry".to_string(),
        _ if changed > 0 => format!("merged {changed} entries"),
        _ if Some(merged) != ours => "fast-forwarded to the remote".to_string(),
        _ => "up to date".to_string(),
    }
}

/// Merge one ref with the remote's value `theirs` and move the local ref (compare-and-swap
/// on `ours`). Returns the user's line and the push it needs, or `None` when a local
/// writer moved the ref meanwhile (start over).
pub(super) fn merge_ref(
    repo: &gix::Repository,
    (local, tracking, notes): &Pair,
    theirs: Option<ObjectId>,
    now: jiff::Timestamp,
) -> Result<Option<(String, Option<PushSpec>)>, SyncError> {
    let ours = tip(repo, local);
    let (merged, changed) = merge(repo, ours, theirs, *notes, now)?;
    let Some(merged) = merged else {
        return Ok(Some((format!("{local}: nothing on either side"), None)));
    };
    if Some(merged) != ours {
        let edit = crate::refs::Edit {
            name: local,
            expect: crate::refs::Expect::from(ours),
            new: Some(merged),
            message: "recode: sync merge",
        };
        // A lost race (`Ok(false)`: created meanwhile with this very commit, taken as done
        // as before) or any failure: start over.
        if crate::refs::swap(repo, &edit).is_err() {
            return Ok(None);
        }
    }
    let what = describe(ours, theirs, changed, merged);
    if Some(merged) == theirs {
        set_tracking(repo, tracking, merged);
        return Ok(Some((format!("{local}: {what}"), None)));
    }
    let lease = format!(
        "--force-with-lease={local}:{}",
        theirs.map(|t| t.to_hex().to_string()).unwrap_or_default()
    );
    let push = PushSpec {
        lease,
        spec: format!("{merged}:{local}"),
        tracking: Some(tracking.clone()),
        merged,
    };
    Ok(Some((format!("{local}: {what}, pushed"), Some(push))))
}

/// What merging every ref decided.
pub(super) struct Merged {
    /// The user's line per ref.
    pub(super) lines: Vec<String>,
    /// The pushes needed.
    pub(super) pushes: Vec<PushSpec>,
}

/// Merge every ref of `pairs` in turn, or `None` when a local writer won a race (start
/// over).
pub(super) fn merge_all(
    repo: &gix::Repository,
    pairs: &[Pair],
    remote_values: &BTreeMap<String, ObjectId>,
    now: jiff::Timestamp,
) -> Result<Option<Merged>, SyncError> {
    let mut lines = Vec::new();
    let mut pushes = Vec::new();
    for pair in pairs {
        let theirs = remote_values.get(&pair.0).copied();
        let Some((line, push)) = merge_ref(repo, pair, theirs, now)? else {
            return Ok(None);
        };
        lines.push(line);
        pushes.extend(push);
    }
    Ok(Some(Merged { lines, pushes }))
}
