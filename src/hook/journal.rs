//! The milestone journal (SPEC "milestone", `hook`): the post-commit hook's one
//! cheap write. The hook appends one line, the canonical `milestone` event (`seq` 0), to
//! `<git common dir>/recode/milestones.journal` with one `O_APPEND` write, and reads or
//! writes no ledger. Readers (`status`, `classify`, `log`) show the journal's milestones
//! the ledger lacks at once ([`super::pickup`]); the next ledger-writing command folds
//! the journal into the ledger (`snapshot::pick_up_milestones`) and deletes it.
//!
//! Files, all in [`dir`]: the live journal [`LIVE`], which hooks append to, and journals a
//! fold renamed aside (`milestones.journal.folding-<pid>-<nanos>`); a fold killed midway
//! leaves these behind, and every reader and the next fold read them too
//! ([`is_journal`]). Lines are `\n`-terminated; a line that is not a milestone event with
//! a `head` (a torn write on a full disk) is skipped: the commit's `Recode-Phase:` trailer
//! still carries that milestone.

use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use crate::model::{Body, Event};

/// The live journal's file name, in [`dir`].
pub(crate) const LIVE: &str = "milestones.journal";

/// The directory holding the journals: `<git common dir>/recode` (one for every worktree
/// of the repository).
pub(crate) fn dir(repo: &gix::Repository) -> PathBuf {
    repo.common_dir().join("recode")
}

/// Whether `name` is a journal's file name: `milestones*.journal*` (the live one, and the
/// ones a fold renamed aside).
pub(crate) fn is_journal(name: &str) -> bool {
    name.strip_prefix("milestones")
        .is_some_and(|rest| rest.contains(".journal"))
}

/// Append `event` (a `milestone`), as one canonical line, to the live journal in `dir`
/// (created, with its directory, when missing): one `write` on a file opened with
/// `O_APPEND`, so concurrent hooks never interleave their lines. Returns the journal's
/// path.
///
/// Errors: the I/O error, with the path it concerns.
pub(crate) fn append(dir: &Path, event: &Event) -> Result<PathBuf, (PathBuf, std::io::Error)> {
    let path = dir.join(LIVE);
    let mut line = event.canonical();
    line.push('\n');
    let open = || {
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&path)
    };
    let mut file = match open() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir).map_err(|e| (dir.to_path_buf(), e))?;
            open()
        }
        other => other,
    }
    .map_err(|e| (path.clone(), e))?;
    file.write_all(line.as_bytes())
        .map_err(|e| (path.clone(), e))?;
    Ok(path)
}

/// The milestone events in `text` (a journal's content), in file order; other lines are
/// skipped.
pub(crate) fn parse(text: &str) -> Vec<Event> {
    text.lines()
        .filter_map(|l| serde_json::from_str::<Event>(l).ok())
        .filter(|e| matches!(e.body, Body::Milestone { .. }) && e.head.is_some())
        .collect()
}

/// Every journal file in `dir` ([`is_journal`], regular files only): those renamed aside
/// by name, then the live one. None when `dir` does not exist.
pub(crate) fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter(|e| e.file_name().to_str().is_some_and(is_journal))
        .map(|e| e.path())
        .collect();
    // The live journal holds the newest lines: last.
    out.sort_by_key(|p| (p.file_name() == Some(std::ffi::OsStr::new(LIVE)), p.clone()));
    out
}

/// Every milestone in every journal of `repo` (the live one, and those renamed aside by a
/// fold not yet finished), file by file in [`files`] order, each file's lines in order. A file
/// that vanishes while being read (a fold deleted it: its lines are in the ledger) is
/// skipped.
pub(crate) fn read(repo: &gix::Repository) -> Vec<Event> {
    files(&dir(repo))
        .iter()
        .filter_map(|p| std::fs::read(p).ok())
        .flat_map(|bytes| parse(&String::from_utf8_lossy(&bytes)))
        .collect()
}

/// The journal a fold took: renamed aside from the live name (so hooks start a new live
/// journal), held open so that it can be read again for a hook that opened it before the
/// rename and wrote after it.
pub(crate) struct Taken {
    /// Its name after the rename.
    pub path: PathBuf,
    file: std::fs::File,
    read: u64,
}

impl Taken {
    /// Rename the live journal in `dir` aside to a unique name
    /// (`milestones.journal.folding-<pid>-<nanos>`) and open it. `None` when there is no
    /// live journal, or something else than a file is in its place (the hook says so on
    /// each commit; the trailers still carry the milestones).
    ///
    /// Errors: the I/O error of the rename or the open.
    pub(crate) fn take(dir: &Path) -> std::io::Result<Option<Taken>> {
        match std::fs::symlink_metadata(dir.join(LIVE)) {
            Ok(m) if m.is_file() => {}
            Ok(_) => return Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        }
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let path = dir.join(format!("{LIVE}.folding-{}-{nanos}", std::process::id()));
        match std::fs::rename(dir.join(LIVE), &path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            other => other?,
        }
        let file = std::fs::File::open(&path)?;
        Ok(Some(Taken {
            path,
            file,
            read: 0,
        }))
    }

    /// The milestones written since the last call (all of them at the first): complete
    /// lines only, so a line being written is left for the next call.
    ///
    /// Errors: the I/O error of the read.
    pub(crate) fn more(&mut self) -> std::io::Result<Vec<Event>> {
        self.file.seek(std::io::SeekFrom::Start(self.read))?;
        let mut bytes = Vec::new();
        self.file.read_to_end(&mut bytes)?;
        let complete = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        self.read += complete as u64;
        Ok(parse(&String::from_utf8_lossy(&bytes[..complete])))
    }
}

/// `(head, phase)` of a milestone event.
pub(crate) fn key(e: &Event) -> Option<(gix::ObjectId, &str)> {
    match (&e.body, e.head) {
        (Body::Milestone { phase, .. }, Some(head)) => Some((head, phase.as_str())),
        _ => None,
    }
}

/// A test-only kill point of the pickup (see [`crate::failpoint`]): `journal-renamed`
/// (the live journal renamed aside, nothing ledgered yet), `journal-folded` (its
/// milestones ledgered, the files not yet deleted).
pub(crate) fn failpoint(step: &str) {
    crate::failpoint::hit(step);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_names() {
        assert!(is_journal("milestones.journal"));
        assert!(is_journal("milestones.journal.folding-12-34"));
        assert!(!is_journal("milestones.txt"));
        assert!(!is_journal("other.journal"));
    }

    #[test]
    fn parse_keeps_milestones_with_a_head_only() {
        let text = "{\"branch\":\"issue-7\",\"head\":\"abcabcabcabcabcabcabcabcabcabcabcabcabca\",\"kind\":\"milestone\",\"phase\":\"scoped\",\"seq\":0,\"task\":\"7\",\"ts\":\"2026-11-20T12:00:00.000Z\",\"v\":1}\n\
                    not json\n\
                    {\"kind\":\"milestone\",\"phase\":\"x\",\"seq\":0,\"task\":\"7\",\"ts\":\"2026-11-20T12:00:00.000Z\",\"v\":1}\n\
                    {\"branch\":\"issue-7\",\"head\":\"abcabcabcabcabcabcabcabcabcabcabcabcabca\",\"kind\":\"milestone\",\"phase\":\"impl";
        let got = parse(text);
        assert_eq!(got.len(), 1);
        assert_eq!(
            key(&got[0]),
            Some((
                crate::model::commit_id("abcabcabcabcabcabcabcabcabcabcabcabcabca").unwrap(),
                "scoped"
            ))
        );
    }
}
