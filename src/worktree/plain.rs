//! gix's status on reftable. Without its submodule reader, for a worktree whose index
//! holds no submodule. gix's status platform reads `.gitmodules` before anything
//! else, from HEAD's tree when neither the worktree nor the index has one, and gix cannot
//! read a reftable HEAD; with no submodule in the index there is nothing to ask it, so
//! the same two lower-level steps run here: the HEAD-to-index diff (HEAD's tree as the ref
//! store read it) and the index-to-worktree status, with the same options. With
//! submodules, gix's own status runs, and a submodule it calls changed only because it
//! could not read the submodule's (reftable) HEAD is checked again here
//! ([`clean_submodule`]).

use gix::ObjectId;

use super::Changed;
use crate::repo::{RepoError, git};

/// The submodule status of an index with no submodule: never asked for one.
#[derive(Clone, Copy)]
struct NoSubmodules;

impl gix::status::plumbing::index_as_worktree::traits::SubmoduleStatus for NoSubmodules {
    type Output = gix::submodule::Status;

    fn status(
        &mut self,
        _entry: &gix::index::Entry,
        _rela_path: &gix::bstr::BStr,
    ) -> gix::Result<Option<Self::Output>> {
        Ok(None)
    }
}

/// Each index-to-worktree entry into [`Changed`], as gix's status iterator hands it over.
struct Sink<'c>(&'c mut Changed);

impl<'index> gix::status::plumbing::index_as_worktree_with_renames::VisitEntry<'index>
    for Sink<'_>
{
    type ContentChange = ();
    type SubmoduleStatus = gix::submodule::Status;

    fn visit_entry(
        &mut self,
        entry: gix::status::plumbing::index_as_worktree_with_renames::Entry<
            'index,
            Self::ContentChange,
            Self::SubmoduleStatus,
        >,
    ) {
        self.0.worktree_item(entry.into());
    }
}

/// The status [`super::gix_status`] takes, for an index without submodules: the
/// HEAD-to-index changes into `c.staged` unless `nothing_staged` (renames as configured,
/// as gix's status counts them), then the index-to-worktree changes, with `walk` (the
/// directory walk's options) when untracked files are to be listed.
///
/// Errors: [`RepoError`] when a step fails.
pub(super) fn status(
    repo: &gix::Repository,
    index: &gix::index::File,
    (walk, nothing_staged, head_tree): (Option<gix::dirwalk::Options>, bool, ObjectId),
    c: &mut Changed,
) -> Result<(), RepoError> {
    if !nothing_staged {
        repo.tree_index_status(
            &head_tree,
            index,
            None,
            gix::status::tree_index::TrackRenames::default(),
            |change, _, _| {
                c.staged.insert(change.location().to_owned());
                Ok(gix::diff::index::Action::Continue(()))
            },
        )
        .map_err(git)?;
    }
    let options = gix::status::index_worktree::Options {
        sorting: None,
        dirwalk_options: walk,
        rewrites: None,
        // Worktrees are already read in parallel, one per thread: no nested pools.
        thread_limit: Some(1),
    };
    let interrupt = std::sync::atomic::AtomicBool::new(false);
    repo.index_worktree_status(
        index,
        Vec::<gix::bstr::BString>::new(),
        &mut Sink(c),
        gix::status::plumbing::index_as_worktree::traits::FastEq,
        NoSubmodules,
        &mut gix::progress::Discard,
        &interrupt,
        options,
    )
    .map_err(git)?;
    Ok(())
}

/// Whether `item` is a submodule gix reads as changed only because it cannot read a
/// reftable HEAD (no checked-out commit known): the submodule's HEAD, read through the
/// ref store, is the commit the superproject's index records, and its worktree has no
/// change at all ([`super::changed`]: untracked files count, whatever its `ignore`
/// setting). Anything unclear: `false`, the change stands.
pub(super) fn clean_submodule(
    repo: &gix::Repository,
    item: &gix::status::index_worktree::Item,
) -> bool {
    use gix::status::plumbing::index_as_worktree::{Change, EntryStatus};
    let gix::status::index_worktree::Item::Modification {
        rela_path,
        status: EntryStatus::Change(Change::SubmoduleModification(sm)),
        ..
    } = item
    else {
        return false;
    };
    let (Some(workdir), Some(index_id), None) =
        (repo.workdir(), sm.index_id, sm.checked_out_head_id)
    else {
        return false;
    };
    if !(sm.state.repository_exists && sm.state.worktree_checkout) {
        return false;
    }
    let Ok(path) = gix::path::from_bstr(gix::bstr::ByteSlice::as_bstr(rela_path.as_slice())) else {
        return false;
    };
    let Ok(sub) = super::open_here(&workdir.join(path)) else {
        return false;
    };
    if !crate::refs::is_reftable(&sub)
        || crate::refs::head(&sub).and_then(|h| h.id()) != Some(index_id)
    {
        return false;
    }
    super::changed(&sub).is_ok_and(|c| {
        c.staged.is_empty()
            && c.unstaged.is_empty()
            && c.untracked.is_empty()
            && c.conflicted.is_empty()
    })
}
