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
mod event;
mod read;
mod replay;
mod stream;
pub(crate) use append::signature;
pub use append::{append, append_with_deadline, ensure_anchor};
pub use error::LedgerError;
use error::git_err;
pub use event::{Body, Event, GateBy};
pub use read::{
    Entry, Ledger, Ledgers, anchor_content, anchor_id, notes_in_tree, read_all, read_task,
};
use read::{parse_note, ref_tip, sort_entries, tree_of, walk_notes};
pub use replay::{
    Replay, failure_streak, gate_on, last_classified, left_out_last, phantom_since_last_exit,
    pushed_by_hand, replay, standing_escalation,
};
pub use stream::{Line, Stream, task_order};

/// Version written in every event's `v` field.
pub const EVENT_VERSION: u32 = 1;
