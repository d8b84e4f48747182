//! The files backend (loose refs and `packed-refs`), read and written by gix.

use std::path::Path;

use gix::ObjectId;
use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};

use super::{Edit, Expect, Head, LogLine, Ref, RefsError, SwapError, Target};

fn read_err<E: std::error::Error + Send + Sync + 'static>(e: E) -> RefsError {
    RefsError(Box::new(e))
}

fn target_of(t: gix::refs::TargetRef<'_>) -> Target {
    match t {
        gix::refs::TargetRef::Object(id) => Target::Id(id.to_owned()),
        gix::refs::TargetRef::Symbolic(name) => Target::Symbolic(name.as_bstr().to_string()),
    }
}

/// [`super::find`] through gix.
pub(super) fn find(repo: &gix::Repository, name: &str) -> Result<Option<Target>, RefsError> {
    Ok(repo
        .try_find_reference(name)
        .map_err(read_err)?
        .map(|r| target_of(r.target())))
}

/// [`super::id`] through gix (`peel_to_id`: symbolic refs followed, tags peeled).
pub(super) fn id(repo: &gix::Repository, name: &str) -> Result<Option<ObjectId>, RefsError> {
    match repo.try_find_reference(name).map_err(read_err)? {
        None => Ok(None),
        Some(mut r) => Ok(Some(r.peel_to_id().map_err(read_err)?.detach())),
    }
}

/// [`super::list`] through gix's iterator (a ref it cannot read is left out).
pub(super) fn list(repo: &gix::Repository, prefix: &str) -> Result<Vec<Ref>, RefsError> {
    let platform = repo.references().map_err(read_err)?;
    let iter = if prefix.is_empty() {
        platform.all().map_err(read_err)?
    } else {
        platform.prefixed(prefix).map_err(read_err)?
    };
    let mut out: Vec<Ref> = iter
        .flatten()
        .map(|r| Ref {
            name: r.name().as_bstr().to_string(),
            target: target_of(r.target()),
        })
        .filter(|r| r.name.starts_with(prefix))
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// [`super::head`] through gix: the branch's tip as [`super::id`] reads it.
pub(super) fn head(repo: &gix::Repository) -> Option<Head> {
    Some(match repo.head().ok()?.kind {
        gix::head::Kind::Symbolic(r) => {
            let name = r.name.as_bstr().to_string();
            let id = id(repo, &name).ok().flatten();
            Head::Branch { name, id }
        }
        gix::head::Kind::Unborn(name) => Head::Branch {
            name: name.as_bstr().to_string(),
            id: None,
        },
        gix::head::Kind::Detached { target, .. } => Head::Detached(target),
    })
}

fn line_of(l: gix::refs::log::Line) -> LogLine {
    LogLine {
        previous: l.previous_oid,
        new: l.new_oid,
        message: l.message.to_string(),
    }
}

/// The HEAD reflog of the worktree whose own git dir is `git_dir`, newest first, parsed by
/// gix (`logs/HEAD`); lines gix cannot parse are skipped.
pub(super) fn head_log(git_dir: &Path) -> Vec<LogLine> {
    let Ok(file) = std::fs::File::open(git_dir.join("logs").join("HEAD")) else {
        return Vec::new();
    };
    let mut buf = [0u8; 4096];
    match gix::refs::file::log::iter::reverse(file, &mut buf) {
        Ok(lines) => lines.filter_map(Result::ok).map(line_of).collect(),
        Err(_) => Vec::new(),
    }
}

/// [`super::log`] through gix.
pub(super) fn log(repo: &gix::Repository, name: &str) -> Vec<LogLine> {
    let Ok(Some(r)) = repo.try_find_reference(name) else {
        return Vec::new();
    };
    let mut platform = r.log_iter();
    let Ok(Some(lines)) = platform.rev() else {
        return Vec::new();
    };
    lines.filter_map(Result::ok).map(line_of).collect()
}

/// [`super::swap`] through gix's transaction (its lock timeout, `core.filesRefLockTimeout`).
pub(super) fn swap(repo: &gix::Repository, edit: &Edit) -> Result<bool, SwapError> {
    let other = |e: Box<dyn std::error::Error + Send + Sync>| SwapError {
        moved: false,
        held: lock_was_held(e.as_ref()),
        source: e,
    };
    let name: gix::refs::FullName = edit
        .name
        .try_into()
        .map_err(|e: gix::validate::reference::name::Error| other(Box::new(e)))?;
    let expected = match edit.expect {
        Expect::Absent => PreviousValue::MustNotExist,
        Expect::Is(id) => PreviousValue::MustExistAndMatch(gix::refs::Target::Object(id)),
        Expect::Any => PreviousValue::Any,
    };
    let change = match edit.new {
        Some(id) => Change::Update {
            log: LogChange {
                mode: RefLog::AndReference,
                force_create_reflog: false,
                message: edit.message.into(),
            },
            expected,
            new: gix::refs::Target::Object(id),
        },
        None => Change::Delete {
            expected,
            log: RefLog::AndReference,
        },
    };
    let edits = repo
        .edit_reference(RefEdit {
            change,
            name,
            deref: false,
        })
        .map_err(|e| other(Box::new(e)))?;
    // gix accepts "must not exist" when the ref already holds exactly the new value: two
    // writers that computed the same commit from an absent ref would both win. The edit
    // it returns says what it found (`MustExistAndMatch` of the existing value).
    let found_created = edit.expect == Expect::Absent
        && edits.iter().any(|e| {
            matches!(
                &e.change,
                Change::Update {
                    expected: PreviousValue::MustExistAndMatch(_),
                    ..
                }
            )
        });
    Ok(!found_created)
}

/// Whether an error says a ref's lock file already existed (a writer held it): gix
/// classifies a lock it could not obtain as retryable (`gix::error::Class::Retryable`,
/// read through its error tree, not its message), and an `AlreadyExists` I/O error in the
/// chain is the lock file itself.
fn lock_was_held(e: &(dyn std::error::Error + 'static)) -> bool {
    if gix::error::classify(e).is_retryable() {
        return true;
    }
    let mut cur = Some(e);
    while let Some(err) = cur {
        if err
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::AlreadyExists)
        {
            return true;
        }
        cur = err.source();
    }
    false
}
