//! Reading ledgers: task anchors, notes trees in any fanout, and the merged ledgers of
//! every notes ref.

use std::collections::{BTreeMap, BTreeSet};

use gix::ObjectId;
use gix::bstr::ByteSlice;
use jiff::Timestamp;

use super::{LedgerError, git_err};
use crate::model::Event;

/// One parsed ledger line with its sort key.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The event.
    pub event: Event,
    /// The line exactly as stored.
    pub line: String,
    /// `event.ts` (the sort key).
    pub ts: Timestamp,
}

/// A task's ledger, in ledger order (by `ts`, then `seq`, then line).
#[derive(Clone, Debug, Default)]
pub struct Ledger {
    /// Task key.
    pub task: String,
    /// Events in ledger order.
    pub entries: Vec<Entry>,
}

impl Ledger {
    /// Events in ledger order.
    pub fn events(&self) -> impl DoubleEndedIterator<Item = &Event> {
        self.entries.iter().map(|e| &e.event)
    }
}

/// Every ledger found, keyed by task, and the problems met while reading.
#[derive(Debug, Default)]
pub(crate) struct Ledgers {
    /// Ledgers by task key.
    pub by_task: BTreeMap<String, Ledger>,
    /// One message per unreadable line (`task 7: ledger line 3 is not valid JSON; skipped`).
    pub warnings: Vec<String>,
}

/// The notes refs whose union is the ledger: `local` (`recode.notesRef`) first, then the
/// fetched copies (`refs/recode/remotes/<remote>/notes`, written by `sync`).
pub(crate) fn notes_refs(repo: &gix::Repository, local: &str) -> Vec<String> {
    let mut refs = vec![local.to_string()];
    if let Ok(listed) = crate::refs::list(repo, "refs/recode/remotes/") {
        refs.extend(
            listed
                .into_iter()
                .map(|r| r.name)
                .filter(|n| n.ends_with("/notes")),
        );
    }
    refs
}

/// The anchor blob's content for task `key`: `recode-task <key>\n`.
pub(crate) fn anchor_content(key: &str) -> Vec<u8> {
    format!("recode-task {key}\n").into_bytes()
}

/// The anchor id of task `key` in a repository of object format `kind` (what `git
/// hash-object --stdin` prints there for [`anchor_content`]: 40 hex digits in a SHA-1
/// repository, 64 in a SHA-256 one).
pub(crate) fn anchor_id(kind: gix::hash::Kind, key: &str) -> ObjectId {
    gix::objs::compute_hash(kind, gix::objs::Kind::Blob, &anchor_content(key))
        .expect("hashing in memory cannot fail")
}

/// [`parse_note_in`] a SHA-1 repository (the unit tests').
#[cfg(test)]
pub(super) fn parse_note(text: &str, task_hint: &str, warnings: &mut Vec<String>) -> Vec<Entry> {
    parse_note_in(gix::hash::Kind::Sha1, text, task_hint, warnings)
}

/// Parse a note's text into entries for `task_hint`, pushing one warning per bad line. A
/// `head` of another object format than `kind`, the repository's (a SHA-1 id in a SHA-256
/// repository: no commit here can have it), is dropped from the event with a warning, as
/// a head that is no id at all: nothing looks it up.
pub(super) fn parse_note_in(
    kind: gix::hash::Kind,
    text: &str,
    task_hint: &str,
    warnings: &mut Vec<String>,
) -> Vec<Entry> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Event>(line) {
            Ok(mut event) => {
                if let Some(id) = event.drop_bad_session() {
                    warnings.push(format!(
                        "task {task_hint}: a ledger line's session id \"{}\" is not a session id \
                         (SPEC: ^[A-Za-z0-9._:@+-]{{1,200}}$, not starting with `-`); it is ignored",
                        id.chars().take(80).collect::<String>().escape_debug()
                    ));
                }
                if crate::model::event::retry_after_unreadable(line, &event) {
                    let excerpt: String = line.chars().take(60).collect();
                    warnings.push(format!(
                        "task {task_hint}: a ledger line's retry_after is not an RFC 3339 time; \
                         the event is kept without it (the line stays in the note as written): {excerpt}"
                    ));
                }
                if crate::model::event::head_unreadable(line, &event) {
                    let excerpt: String = line.chars().take(60).collect();
                    warnings.push(format!(
                        "task {task_hint}: a ledger line's head is not a commit id; \
                         the event is kept without it (the line stays in the note as written): {excerpt}"
                    ));
                }
                if let Some(head) = event.head.filter(|h| h.kind() != kind) {
                    let excerpt: String = line.chars().take(60).collect();
                    warnings.push(format!(
                        "task {task_hint}: a ledger line's head is a {} id in a {kind} repository; \
                         the event is kept without it (the line stays in the note as written): {excerpt}",
                        head.kind()
                    ));
                    event.head = None;
                }
                let ts = event.ts;
                out.push(Entry {
                    event,
                    line: line.to_string(),
                    ts,
                });
            }
            Err(e) => {
                let what = if serde_json::from_str::<serde_json::Value>(line).is_ok() {
                    format!("is not an event this version knows ({e})")
                } else {
                    "is not valid JSON".to_string()
                };
                let excerpt: String = line.chars().take(60).collect();
                warnings.push(format!(
                    "task {task_hint}: a ledger line {what}; skipped: {excerpt}"
                ));
            }
        }
    }
    out
}

pub(super) fn sort_entries(entries: &mut [Entry]) {
    entries.sort_by(|a, b| (a.ts, a.event.seq, &a.line).cmp(&(b.ts, b.event.seq, &b.line)));
}

/// The commit a notes ref points to, if it exists.
pub(super) fn ref_tip(repo: &gix::Repository, name: &str) -> Result<Option<ObjectId>, LedgerError> {
    crate::refs::id(repo, name).map_err(|e| git_err("read the ref", name)(Box::new(e)))
}

pub(super) fn tree_of(
    repo: &gix::Repository,
    commit: ObjectId,
    name: &str,
) -> Result<ObjectId, LedgerError> {
    let c = repo
        .find_commit(commit)
        .map_err(|e| git_err("read the notes commit", name)(Box::new(e)))?;
    Ok(c.tree_id()
        .map_err(|e| git_err("read the notes tree", name)(Box::new(e)))?
        .detach())
}

/// Walk a notes tree: every (annotated object id, note blob id), any fanout.
pub(super) fn walk_notes(
    repo: &gix::Repository,
    tree: ObjectId,
    prefix: &str,
    out: &mut Vec<(ObjectId, ObjectId)>,
    notes_ref: &str,
) -> Result<(), LedgerError> {
    let t = repo
        .find_tree(tree)
        .map_err(|e| git_err("read a notes tree", notes_ref)(Box::new(e)))?;
    let decoded = t
        .decode()
        .map_err(|e| git_err("decode a notes tree", notes_ref)(Box::new(e)))?;
    for entry in &decoded.entries {
        let Ok(name) = entry.filename.to_str() else {
            continue;
        };
        if !name.bytes().all(|b| b.is_ascii_hexdigit()) {
            continue;
        }
        let path = format!("{prefix}{name}");
        // A note's path spells the annotated object's id: 40 hex digits (SHA-1), 64 (SHA-256).
        let full = repo.object_hash().len_in_hex();
        if entry.mode.is_tree() {
            if path.len() < full {
                walk_notes(repo, entry.oid.to_owned(), &path, out, notes_ref)?;
            }
        } else if path.len() == full
            && let Ok(id) = ObjectId::from_hex(path.as_bytes())
        {
            out.push((id, entry.oid.to_owned()));
        }
    }
    Ok(())
}

/// Every `(annotated object, note blob)` of the notes tree `tree`, in any fanout `git notes` writes.
///
/// Errors: [`LedgerError::Git`].
pub(crate) fn notes_in_tree(
    repo: &gix::Repository,
    tree: ObjectId,
    notes_ref: &str,
) -> Result<Vec<(ObjectId, ObjectId)>, LedgerError> {
    let mut out = Vec::new();
    walk_notes(repo, tree, "", &mut out, notes_ref)?;
    Ok(out)
}

/// Read every ledger in `refs` (the local notes ref first, then any fetched copies),
/// merging the notes of one anchor by union of lines, one anchor at a time. For `status`:
/// each [`Entry::line`] is left empty once the entries are in ledger order (the events
/// are what a census needs; `log` reads lines through [`Stream`](super::Stream)).
///
/// Errors: [`LedgerError::Git`] when a ref or object cannot be read. Bad lines are not
/// errors: they land in [`Ledgers::warnings`], once each.
pub(crate) fn read_all(repo: &gix::Repository, refs: &[String]) -> Result<Ledgers, LedgerError> {
    let mut out = Ledgers::default();
    for (anchor, blobs) in super::stream::note_index(repo, refs)? {
        let entries = super::stream::read_note(repo, anchor, &blobs, &mut out.warnings)?;
        let task = entries
            .first()
            .map(|e| e.event.task.clone())
            .or_else(|| anchor_task(repo, anchor))
            .unwrap_or_else(|| format!("(a note on {}, not a task anchor)", anchor.to_hex()));
        let ledger = out.by_task.entry(task.clone()).or_insert_with(|| Ledger {
            task,
            entries: Vec::new(),
        });
        ledger.entries.extend(entries);
        sort_entries(&mut ledger.entries);
        for e in &mut ledger.entries {
            e.line = String::new();
        }
    }
    Ok(out)
}

/// The task key written in an anchor blob, if the blob exists and has the anchor shape.
pub(super) fn anchor_task(repo: &gix::Repository, anchor: ObjectId) -> Option<String> {
    let blob = repo.find_blob(anchor).ok()?;
    let text = std::str::from_utf8(&blob.data).ok()?;
    text.strip_prefix("recode-task ")?
        .strip_suffix('\n')
        .map(str::to_string)
}

/// Read one task's ledger from `refs`.
///
/// Errors: as [`read_all`].
pub fn read_task(
    repo: &gix::Repository,
    refs: &[String],
    task: &str,
) -> Result<(Ledger, Vec<String>), LedgerError> {
    let anchor = anchor_id(repo.object_hash(), task);
    let mut lines = BTreeSet::new();
    for name in refs {
        let Some(tip) = ref_tip(repo, name)? else {
            continue;
        };
        let tree = tree_of(repo, tip, name)?;
        if let Some(text) = note_text(repo, tree, anchor, name)? {
            lines.extend(super::append::note_lines(&text));
        }
    }
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let mut warnings = Vec::new();
    let mut entries = parse_note_in(repo.object_hash(), &text, task, &mut warnings);
    sort_entries(&mut entries);
    Ok((
        Ledger {
            task: task.to_string(),
            entries,
        },
        warnings,
    ))
}

pub(super) fn note_text(
    repo: &gix::Repository,
    tree: ObjectId,
    anchor: ObjectId,
    notes_ref: &str,
) -> Result<Option<String>, LedgerError> {
    Ok(
        note_bytes(repo, tree, anchor, notes_ref)?
            .map(|b| String::from_utf8_lossy(&b).into_owned()),
    )
}

/// The note on `anchor` in the notes tree `tree`, as stored: a line that is not UTF-8 is
/// kept byte for byte by an append (SPEC 1.2). `None` when there is no note.
///
/// Errors: [`LedgerError::Git`] when the tree or the blob cannot be read.
pub(super) fn note_bytes(
    repo: &gix::Repository,
    tree: ObjectId,
    anchor: ObjectId,
    notes_ref: &str,
) -> Result<Option<Vec<u8>>, LedgerError> {
    let mut state = gix::note::plumbing::State::new(tree, &repo.objects)
        .map_err(|e| git_err("open the notes tree", notes_ref)(e.into()))?;
    let Some(blob) = state
        .get(&anchor, &repo.objects)
        .map_err(|e| git_err("look up a note", notes_ref)(e.into()))?
    else {
        return Ok(None);
    };
    let mut blob = repo
        .find_blob(blob)
        .map_err(|e| git_err("read a note", notes_ref)(Box::new(e)))?;
    Ok(Some(blob.take_data()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchor_is_git_hash_object_of_text() {
        // `printf 'recode-task 7\n' | git hash-object --stdin`
        assert_eq!(
            anchor_id(gix::hash::Kind::Sha1, "7").to_hex().to_string(),
            "b7c52d68ad5acc81b55f88c841e31e3efc70b1fe"
        );
        // The same in a repository made with `git init --object-format=sha256`.
        assert_eq!(
            anchor_id(gix::hash::Kind::Sha256, "7").to_hex().to_string(),
            "61dc8c8c5ad7cc9a46727205a89c935b52b781d72339339749e03f8a49dfefba"
        );
    }

    #[test]
    fn bad_lines_warn_once_each() {
        let mut w = Vec::new();
        let good =
            r#"{"kind":"unblocked","seq":1,"task":"7","ts":"2026-11-29T12:00:00.000Z","v":1}"#;
        let entries = parse_note(
            &format!("{good}\nnot json\n{{\"kind\":\"teleport\"}}\n"),
            "7",
            &mut w,
        );
        assert_eq!(entries.len(), 1);
        assert_eq!(w.len(), 2);
        assert_eq!(
            w[0],
            "task 7: a ledger line is not valid JSON; skipped: not json"
        );
    }
}

#[cfg(test)]
mod head_tests {
    use super::*;

    /// The safer choice for never-lose: an `escalated` or `deleted` line whose `head` is
    /// not a commit id still counts (a skipped `escalated` would let `recover` act on a
    /// worker a human must look at), with a warning, and its bytes are never rewritten.
    #[test]
    fn an_unreadable_head_keeps_the_event_without_it_and_warns() {
        let mut w = Vec::new();
        let good = r#"{"branch":"issue-7","head":"0123456789abcdef0123456789abcdef01234567","kind":"deleted","seq":1,"task":"7","ts":"2026-11-29T12:00:00.000Z","v":1}"#;
        let short = r#"{"branch":"issue-7","head":"0123456","kind":"escalated","reason":"r","seq":2,"task":"7","ts":"2026-11-29T12:00:01.000Z","v":1}"#;
        let entries = parse_note(&format!("{good}\n{short}\n"), "7", &mut w);
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].event.canonical(), good, "bytes round-trip");
        assert_eq!(
            entries[0].event.head.map(|h| h.to_string()).as_deref(),
            Some("0123456789abcdef0123456789abcdef01234567")
        );
        assert_eq!(entries[1].event.head, None);
        assert!(matches!(
            entries[1].event.body,
            crate::model::Body::Escalated { .. }
        ));
        assert_eq!(entries[1].line, short, "the line as stored");
        assert_eq!(
            w,
            vec![format!(
                "task 7: a ledger line's head is not a commit id; the event is kept without it \
                 (the line stays in the note as written): {}",
                short.chars().take(60).collect::<String>()
            )]
        );
    }

    /// In a SHA-256 repository a SHA-1 head names nothing (and gix asserts an id's format
    /// on every lookup): kept out of the event, warned about; a 64-digit head is kept.
    #[test]
    fn a_head_of_another_object_format_is_kept_out_with_a_warning() {
        let mut w = Vec::new();
        let sha1 = r#"{"branch":"issue-7","head":"0123456789abcdef0123456789abcdef01234567","kind":"deleted","seq":1,"task":"7","ts":"2026-11-29T12:00:00.000Z","v":1}"#;
        let long = "0123456789abcdef".repeat(4);
        let sha256 = sha1.replace("0123456789abcdef0123456789abcdef01234567", &long);
        let text = format!("{sha1}\n{sha256}\n");
        let entries = parse_note_in(gix::hash::Kind::Sha256, &text, "7", &mut w);
        let heads: Vec<Option<String>> = entries
            .iter()
            .map(|e| e.event.head.map(|h| h.to_string()))
            .collect();
        assert_eq!(heads, [None, Some(long)]);
        assert_eq!(entries[0].line, sha1, "the line as stored");
        assert_eq!(
            w,
            [format!(
                "task 7: a ledger line's head is a sha1 id in a sha256 repository; the event is \
                 kept without it (the line stays in the note as written): {}",
                sha1.chars().take(60).collect::<String>()
            )]
        );
    }

    #[test]
    fn a_head_that_is_not_a_string_is_a_bad_line_and_null_is_no_head() {
        let mut w = Vec::new();
        let number = r#"{"head":7,"kind":"unblocked","seq":1,"task":"7","ts":"2026-11-29T12:00:00.000Z","v":1}"#;
        let null = r#"{"head":null,"kind":"unblocked","seq":2,"task":"7","ts":"2026-11-29T12:00:00.000Z","v":1}"#;
        let entries = parse_note(&format!("{number}\n{null}\n"), "7", &mut w);
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].event.head, None);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("is not an event this version knows"),
            "{}",
            w[0]
        );
    }
}

#[cfg(test)]
mod ts_tests {
    use super::*;

    #[test]
    fn an_unreadable_ts_is_a_bad_line_with_a_warning() {
        let mut w = Vec::new();
        let good =
            r#"{"kind":"unblocked","seq":1,"task":"7","ts":"2026-11-29T12:00:00.000Z","v":1}"#;
        let bad = r#"{"kind":"unblocked","seq":2,"task":"7","ts":"yesterday","v":1}"#;
        let entries = parse_note(&format!("{good}\n{bad}\n"), "7", &mut w);
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].event.canonical(), good, "bytes round-trip");
        assert_eq!(w.len(), 1);
        assert!(
            w[0].starts_with("task 7: a ledger line is not an event this version knows ("),
            "{}",
            w[0]
        );
        assert!(
            w[0].contains("'yesterday' is not an RFC 3339 timestamp"),
            "{}",
            w[0]
        );
    }
}

#[cfg(test)]
mod retry_after_tests {
    use super::*;
    use crate::outcome::Outcome;

    /// A typed `retry_after` keeps the string every release wrote; a value that is no
    /// time (a number, a word) loses only that field: the exit still counts, the reader
    /// warns, and the line's bytes stay as stored.
    #[test]
    fn an_unreadable_retry_after_keeps_the_exit_without_it_and_warns() {
        let mut w = Vec::new();
        let good = r#"{"branch":"issue-7","kind":"exit","outcome":"transient","rc":1,"retry_after":"2026-11-29T13:00:00Z","seq":1,"task":"7","ts":"2026-11-29T12:00:00.000Z","v":1}"#;
        let word = r#"{"branch":"issue-7","kind":"exit","outcome":"transient","rc":1,"retry_after":"soon","seq":2,"task":"7","ts":"2026-11-29T12:00:01.000Z","v":1}"#;
        let number = r#"{"branch":"issue-7","kind":"exit","outcome":"transient","rc":1,"retry_after":7,"seq":3,"task":"7","ts":"2026-11-29T12:00:02.000Z","v":1}"#;
        let null = r#"{"kind":"exit","outcome":"failed","rc":1,"retry_after":null,"seq":4,"task":"7","ts":"2026-11-29T12:00:03.000Z","v":1}"#;
        let entries = parse_note(&format!("{good}\n{word}\n{number}\n{null}\n"), "7", &mut w);
        assert_eq!(entries.len(), 4, "{w:?}");
        assert_eq!(entries[0].event.canonical(), good, "bytes round-trip");
        let retry = |i: usize| match &entries[i].event.body {
            crate::model::Body::Exit {
                retry_after,
                outcome,
                ..
            } => (*retry_after, *outcome),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            retry(0),
            (
                Some(crate::clock::parse("2026-11-29T13:00:00Z").unwrap()),
                Outcome::Transient
            )
        );
        assert_eq!(retry(1), (None, Outcome::Transient));
        assert_eq!(retry(2), (None, Outcome::Transient));
        assert_eq!(entries[1].line, word, "the line as stored");
        let warn = |line: &str| {
            format!(
                "task 7: a ledger line's retry_after is not an RFC 3339 time; the event is \
                 kept without it (the line stays in the note as written): {}",
                line.chars().take(60).collect::<String>()
            )
        };
        assert_eq!(
            w,
            vec![warn(word), warn(number)],
            "null is no value: no warning"
        );
        let events: Vec<Event> = entries.iter().take(2).map(|e| e.event.clone()).collect();
        let r = crate::model::replay::replay(&events);
        assert_eq!(r.last_outcome, Some(Outcome::Transient));
        assert_eq!(
            r.retry_after, None,
            "the newest exit's bad value is dropped"
        );
    }
}
