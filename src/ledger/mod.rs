//! The ledger: each task's append-only event list, stored in git notes (SPEC "Where state lives").
//!
//! - Each task has an anchor: the blob `recode-task <key>\n`; its ledger is the note on
//!   that anchor in `recode.notesRef` (default `refs/notes/recode`), one canonical JSON
//!   event per line (keys sorted, no spaces outside strings), so ledgers merge by sorted
//!   union of lines.
//! - Appends are compare-and-swap updates of the notes ref, retried on a lost race: a
//!   concurrent writer never loses an event.
//! - Anchors are kept reachable from `refs/recode/anchors` (a commit whose tree names each
//!   anchor by its hex id), so `git gc --prune=now && git notes prune` keeps every ledger.

mod append;
mod error;
#[cfg(test)]
mod fuzz;
mod read;
mod stream;
pub(crate) use append::signature;
pub(crate) use append::{append, append_with};
pub(crate) use error::LedgerError;
use error::git_err;
#[cfg(test)]
use read::parse_note;
pub use read::read_task;
pub(crate) use read::{
    Entry, Ledger, Ledgers, anchor_content, anchor_id, notes_in_tree, notes_refs, read_all,
};
use read::{note_bytes, note_text, parse_note_in, ref_tip, sort_entries, tree_of, walk_notes};
pub(crate) use stream::{Line, Stream, task_order};
