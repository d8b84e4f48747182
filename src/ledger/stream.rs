//! Every ledger as one stream in `log` order (SPEC `log --json`: by `ts`, then task, then
//! `seq`, then line), read task by task as the stream reaches each one.
//!
//! The order is global, so the first line needs every task's first key: a scan reads each
//! note once and keeps only the smallest key of each task (each line's `ts`, `task` and
//! `seq`, borrowed, no event built). A task's note is then read again, parsed into events
//! (bad lines warned about, as [`super::read_all`] does) and sorted only when its first
//! key comes up in the merge; its lines are dropped as they are written. A fleet whose
//! tasks ran one after another holds one task in memory at a time.

use std::borrow::Cow;
use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};
use std::rc::Rc;

use gix::ObjectId;
use jiff::Timestamp;
use serde::Deserialize;

use super::{
    Entry, LedgerError, git_err, parse_note_in, ref_tip, sort_entries, tree_of, walk_notes,
};
use crate::clock;

/// Compare task keys: numbers numerically, before names.
pub(crate) fn task_order(a: &str, b: &str) -> Ordering {
    match (a.parse::<u64>(), b.parse::<u64>()) {
        (Ok(x), Ok(y)) => x.cmp(&y),
        (Ok(_), Err(_)) => Ordering::Less,
        (Err(_), Ok(_)) => Ordering::Greater,
        _ => a.cmp(b),
    }
}

/// One stored ledger line with its place in `log` order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Line {
    /// `ts` parsed (the epoch when unparseable, so such lines sort first).
    pub ts: Timestamp,
    /// The event's task key (shared by the lines of a task).
    pub task: Rc<str>,
    /// The event's `seq`.
    pub seq: u64,
    /// The line exactly as stored.
    pub line: String,
}

impl Ord for Line {
    fn cmp(&self, o: &Self) -> Ordering {
        self.ts
            .cmp(&o.ts)
            .then_with(|| task_order(&self.task, &o.task))
            .then_with(|| self.seq.cmp(&o.seq))
            .then_with(|| self.line.cmp(&o.line))
    }
}

impl PartialOrd for Line {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// The sort fields of a line, borrowed from it (no event is built).
#[derive(Deserialize)]
struct KeyFields<'a> {
    #[serde(borrow)]
    ts: Cow<'a, str>,
    #[serde(default)]
    seq: u64,
    #[serde(borrow, default)]
    task: Cow<'a, str>,
}

/// A line's key; a line whose fields cannot be read sorts first (its task is then read
/// early, and the line warned about there).
fn key_of(line: &str) -> Line {
    match serde_json::from_str::<KeyFields>(line) {
        Ok(k) => Line {
            ts: clock::parse(&k.ts).unwrap_or(Timestamp::UNIX_EPOCH),
            task: Rc::from(k.task.as_ref()),
            seq: k.seq,
            line: line.to_string(),
        },
        Err(_) => Line {
            ts: Timestamp::UNIX_EPOCH,
            task: Rc::from(""),
            seq: 0,
            line: String::new(),
        },
    }
}

/// A task in the merge: not read yet (its note blobs, one per notes ref), or read and
/// partly written.
enum Slot {
    Pending(ObjectId, Vec<ObjectId>),
    Read(std::vec::IntoIter<Line>),
}

/// Every ledger's lines in `log` order, read lazily (see the module doc). Bad lines are
/// skipped and described in [`Stream::warnings`], once each.
pub(crate) struct Stream<'r> {
    repo: &'r gix::Repository,
    slots: Vec<Slot>,
    heap: BinaryHeap<Reverse<(Line, usize)>>,
    /// One message per unreadable line met so far.
    pub warnings: Vec<String>,
}

/// Every anchor with a note in `refs`, and that note's blob in each ref that has one.
///
/// Errors: [`LedgerError::Git`] when a ref or a notes tree cannot be read.
pub(super) fn note_index(
    repo: &gix::Repository,
    refs: &[String],
) -> Result<BTreeMap<ObjectId, Vec<ObjectId>>, LedgerError> {
    let mut index: BTreeMap<ObjectId, Vec<ObjectId>> = BTreeMap::new();
    for name in refs {
        let Some(tip) = ref_tip(repo, name)? else {
            continue;
        };
        let tree = tree_of(repo, tip, name)?;
        let mut notes = Vec::new();
        walk_notes(repo, tree, "", &mut notes, name)?;
        for (anchor, blob) in notes {
            index.entry(anchor).or_default().push(blob);
        }
    }
    Ok(index)
}

/// Read the note of `anchor` (its `blobs`, one per notes ref): the union of their lines,
/// parsed into entries in ledger order; bad lines skipped with one warning each.
///
/// Errors: [`LedgerError::Git`] when a note cannot be read.
pub(super) fn read_note(
    repo: &gix::Repository,
    anchor: ObjectId,
    blobs: &[ObjectId],
    warnings: &mut Vec<String>,
) -> Result<Vec<Entry>, LedgerError> {
    let mut lines = BTreeSet::new();
    for_each_line(repo, blobs, |l| {
        lines.insert(l.to_string());
    })?;
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    drop(lines);
    let hint = super::read::anchor_task(repo, anchor)
        .unwrap_or_else(|| format!("(a note on {}, not a task anchor)", anchor.to_hex()));
    let mut entries = parse_note_in(repo.object_hash(), &text, &hint, warnings);
    sort_entries(&mut entries);
    Ok(entries)
}

/// Call `f` with each non-empty line of the notes `blobs`.
fn for_each_line(
    repo: &gix::Repository,
    blobs: &[ObjectId],
    mut f: impl FnMut(&str),
) -> Result<(), LedgerError> {
    for b in blobs {
        let blob = repo
            .find_blob(*b)
            .map_err(|e| git_err("read a note", "the ledger")(Box::new(e)))?;
        let text = String::from_utf8_lossy(&blob.data);
        for line in text.lines() {
            let line = line.trim_end_matches('\r');
            if !line.trim().is_empty() {
                f(line);
            }
        }
    }
    Ok(())
}

impl<'r> Stream<'r> {
    /// Open the stream over the notes refs `refs` (the local one first, then fetched
    /// copies): one scan of every note for its task's first key.
    ///
    /// Errors: [`LedgerError::Git`] when a ref or a note cannot be read.
    pub(crate) fn open(
        repo: &'r gix::Repository,
        refs: &[String],
    ) -> Result<Stream<'r>, LedgerError> {
        let mut s = Stream {
            repo,
            slots: Vec::new(),
            heap: BinaryHeap::new(),
            warnings: Vec::new(),
        };
        for (anchor, blobs) in note_index(repo, refs)? {
            let mut first: Option<Line> = None;
            for_each_line(repo, &blobs, |line| {
                let k = key_of(line);
                if first.as_ref().is_none_or(|f| k < *f) {
                    first = Some(k);
                }
            })?;
            if let Some(k) = first {
                s.heap.push(Reverse((k, s.slots.len())));
                s.slots.push(Slot::Pending(anchor, blobs));
            }
        }
        Ok(s)
    }
}

impl Iterator for Stream<'_> {
    type Item = Result<Line, LedgerError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let Reverse((key, i)) = self.heap.pop()?;
            match std::mem::replace(&mut self.slots[i], Slot::Read(Vec::new().into_iter())) {
                Slot::Pending(anchor, blobs) => {
                    // Every line of the task sorts at or after its first key: read it now.
                    let entries = match read_note(self.repo, anchor, &blobs, &mut self.warnings) {
                        Ok(e) => e,
                        Err(e) => return Some(Err(e)),
                    };
                    let mut shared: Rc<str> = Rc::from("");
                    let mut lines: Vec<Line> = entries
                        .into_iter()
                        .map(|e| {
                            if *shared != *e.event.task {
                                shared = Rc::from(e.event.task);
                            }
                            Line {
                                ts: e.ts,
                                task: Rc::clone(&shared),
                                seq: e.event.seq,
                                line: e.line,
                            }
                        })
                        .collect();
                    lines.sort();
                    let mut lines = lines.into_iter();
                    if let Some(first) = lines.next() {
                        self.heap.push(Reverse((first, i)));
                    }
                    self.slots[i] = Slot::Read(lines);
                }
                Slot::Read(mut rest) => {
                    if let Some(next) = rest.next() {
                        self.heap.push(Reverse((next, i)));
                    }
                    self.slots[i] = Slot::Read(rest);
                    return Some(Ok(key));
                }
            }
        }
    }
}
