//! Writing this host's heartbeat (SPEC 1.2 "Several machines"): `refs/recode/hosts/<host>`
//! points at a commit whose tree holds one blob, [`super::HEARTBEAT_FILE`]. Written with
//! gix (three objects and one compare-and-swap ref edit), never the git binary.
//!
//! Each commit is parentless: a host's heartbeat has no history worth keeping, so the
//! remote holds three small objects per host whatever the number of ticks, a fetch of a
//! changed heartbeat carries exactly those three, and an old heartbeat becomes garbage
//! for `gc` instead of a chain every clone downloads. A parentless update is not a
//! fast-forward: `sync` pushes it with a lease on the value it saw on the remote.

use std::collections::BTreeMap;

use gix::ObjectId;
use jiff::Timestamp;

use super::{BeatEntry, HEARTBEAT_FILE, HeartbeatDoc, Me, heartbeat_ref, parse_heartbeat};

/// One worker to list: its branch and its entry.
pub(crate) type BeatWorker = (String, BeatEntry);

/// Errors writing the heartbeat.
#[derive(Debug, thiserror::Error)]
pub(crate) enum WriteError {
    /// Writing an object or the ref failed (not a lost race: another writer of this
    /// host's ref moved it first, which is retried once).
    #[error("cannot write the heartbeat {name}: {why}")]
    Write {
        /// The ref.
        name: String,
        /// What failed.
        why: String,
    },
}

/// Rewrite `refs/recode/hosts/<host>` with `workers` at `now`, only when the listed
/// workers (or the host name) changed or the current heartbeat is at least `refresh`
/// old (`recode.stallAfter` / 2). Returns the new commit when one was written, `None`
/// when the heartbeat stood.
///
/// Errors: [`WriteError::Write`] when an object or the ref cannot be written.
pub(crate) fn write_heartbeat(
    repo: &gix::Repository,
    me: &Me,
    now: Timestamp,
    workers: Vec<BeatWorker>,
    refresh: jiff::SignedDuration,
) -> Result<Option<ObjectId>, WriteError> {
    let host = me.id.as_str();
    let label = Some(me.label.clone()).filter(|l| *l != me.id);
    let name = heartbeat_ref(host);
    let err = |why: String| WriteError::Write {
        name: name.clone(),
        why,
    };
    let workers: BTreeMap<String, BeatEntry> = workers.into_iter().collect();
    for _try in 0..2 {
        let current = crate::refs::find(repo, &name).map_err(|e| err(e.to_string()))?;
        let (expected, old) = match current {
            Some(target) => {
                // A tag or anything else under this host's name is replaced by a heartbeat.
                let crate::refs::Target::Id(id) = target else {
                    return Err(err("a symbolic ref".into()));
                };
                let old = super::read_beat_blob(repo, id).ok().and_then(|t| {
                    serde_json::from_str::<HeartbeatDoc>(&t)
                        .ok()
                        .map(|d| (t, d))
                });
                (Some(id), old)
            }
            None => (None, None),
        };
        if let Some((text, doc)) = &old {
            let age = parse_heartbeat(host, text)
                .ok()
                .and_then(|h| h.at)
                .map(|t| jiff::SignedDuration::from_secs(now.as_second() - t.as_second()));
            let fresh = age.is_some_and(|a| !a.is_negative() && a < refresh);
            if fresh && doc.host == host && doc.label == label && doc.workers == workers {
                return Ok(None);
            }
        }
        let doc = HeartbeatDoc {
            host: host.to_string(),
            label: label.clone(),
            ts: crate::clock::format(now),
            workers: workers.clone(),
        };
        let text = serde_json::to_string(&doc).map_err(|e| err(e.to_string()))?;
        let id = commit(repo, &text, now).map_err(err)?;
        let edit = crate::refs::Edit {
            name: &name,
            expect: crate::refs::Expect::from(expected),
            new: Some(id),
            message: "recode: heartbeat",
        };
        match crate::refs::swap(repo, &edit) {
            // `Ok(false)`: created meanwhile with this very commit: written all the same.
            Ok(_) => return Ok(Some(id)),
            // Another run on this host moved it between the read and the edit: read again.
            Err(e) if _try == 0 => tracing::debug!(error = %e, "heartbeat race; retrying"),
            Err(e) => return Err(err(e.to_string())),
        }
    }
    Ok(None)
}

/// The parentless commit of a tree holding one blob, `text`.
fn commit(repo: &gix::Repository, text: &str, now: Timestamp) -> Result<ObjectId, String> {
    let blob = repo
        .write_blob(text.as_bytes())
        .map_err(|e| e.to_string())?
        .detach();
    let tree = gix::objs::Tree {
        entries: vec![gix::objs::tree::Entry {
            mode: gix::objs::tree::EntryKind::Blob.into(),
            filename: HEARTBEAT_FILE.into(),
            oid: blob,
        }],
    };
    let tree = repo
        .write_object(&tree)
        .map_err(|e| e.to_string())?
        .detach();
    let sig = crate::git::own_signature(now.as_second());
    let c = gix::objs::Commit {
        tree,
        parents: Default::default(),
        author: sig.clone(),
        committer: sig,
        encoding: None,
        message: "recode heartbeat\n".into(),
        extra_headers: Vec::new(),
    };
    Ok(repo.write_object(&c).map_err(|e| e.to_string())?.detach())
}
