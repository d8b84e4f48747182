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

use std::collections::{BTreeMap, BTreeSet};

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::refs::transaction::PreviousValue;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

mod replay;
mod stream;
pub use replay::{
    Replay, failure_streak, gate_on, phantom_since_last_exit, replay, standing_escalation,
};
pub use stream::{Line, Stream, task_order};

use crate::clock;
use crate::config::ANCHORS_REF;
use crate::outcome::Outcome;

/// Version written in every event's `v` field.
pub const EVENT_VERSION: u32 = 1;
/// A ref lock file at least this old (seconds) was left by a killed writer.
const STALE_LOCK_SECS: u64 = 3;
/// How long an append keeps retrying a lost compare-and-swap race, in milliseconds.
const RETRY_BUDGET_MS: u64 = 20_000;

/// Errors of the ledger.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// A git object or ref could not be read or written.
    #[error("cannot {what} in the ledger ({notes_ref}): {source}")]
    Git {
        /// What was being done.
        what: String,
        /// The notes ref.
        notes_ref: String,
        /// The underlying gix error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A ref's lock file was left behind by a killed writer.
    #[error("the ref lock {path} was left behind (no git process holds it for seconds)")]
    StaleLock {
        /// The lock file.
        path: String,
    },
    /// A ref could not be written for a reason other than a lost race (something at its
    /// lock path that is not a writer's lock, an unwritable refs directory): retrying
    /// would not help, so the append fails at once.
    #[error("cannot write {name}: {why}")]
    Unwritable {
        /// The ref.
        name: String,
        /// What is wrong, in a few words.
        why: String,
        /// The underlying gix error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The compare-and-swap kept losing for longer than the retry budget.
    #[error(
        "gave up appending to the ledger of task {task} after {tries} lost races on {notes_ref}"
    )]
    Contended {
        /// Task key.
        task: String,
        /// The notes ref.
        notes_ref: String,
        /// Attempts made.
        tries: u32,
    },
}

fn git_err(
    what: impl Into<String>,
    notes_ref: &str,
) -> impl FnOnce(Box<dyn std::error::Error + Send + Sync>) -> LedgerError {
    let what = what.into();
    let notes_ref = notes_ref.to_string();
    move |source| LedgerError::Git {
        what,
        notes_ref,
        source,
    }
}

/// Who ran a gate: `recover` (git-recode itself) or `record` (the worker or loop).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum GateBy {
    /// `git recode recover` ran the gate before publishing.
    Recover,
    /// `git recode record gate` ledgered a result from outside.
    Record,
}

/// One ledger line. Common fields live here; kind-specific ones in [`Body`].
///
/// Shape on disk: canonical JSON, e.g.
/// `{"attempt":1,"branch":"issue-7","cwd":"/w/7","host":"h","kind":"spawn","seq":1,"task":"7","ts":"2026-11-29T12:00:00.000Z","v":1}`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Event {
    /// Format version (1).
    pub v: u32,
    /// RFC 3339 UTC with milliseconds.
    pub ts: String,
    /// One more than the number of lines in the ledger it was appended to.
    pub seq: u64,
    /// Task key.
    pub task: String,
    /// The worker branch, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// A commit id, where known (for `wip` the new commit, for `deleted` the deleted tip).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
    /// Kind and kind-specific fields.
    #[serde(flatten)]
    pub body: Body,
}

/// The kinds of event (SPEC table of kinds); serialized as `kind`.
#[allow(missing_docs)] // fields are exactly the SPEC's, documented there
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Body {
    /// An attempt started (`record spawn`).
    Spawn {
        attempt: u32,
        cwd: String,
        host: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pid: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pid_start: Option<String>,
    },
    /// An attempt ended (`record exit`).
    Exit {
        rc: i32,
        outcome: Outcome,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fresh: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        blocker: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session_id: Option<String>,
    },
    /// A `Recode-Phase:` commit (post-commit hook).
    Milestone {
        phase: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session_id: Option<String>,
    },
    /// A gate result for `head`.
    Gate {
        passed: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        command: Option<String>,
        by: GateBy,
    },
    /// `recover` classified the worker.
    Classified {
        state: String,
        action: String,
        reason: String,
        /// The step failed with this error (additive; three in a row on one head escalate).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// `recover` made a WIP commit.
    Wip {
        files: u32,
        pushed: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        held: Option<String>,
        /// Nested repositories left out of the commit (SPEC special cases).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        left_out: Vec<String>,
    },
    /// `recover` opened (or found) a pull request.
    Published { pr: u64, url: String },
    /// `record unblock`.
    Unblocked,
    /// `record clear`: a human lifted an escalation.
    Cleared {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// `recover` deleted the worker's branch/worktree.
    Deleted {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        worktree: Option<String>,
        /// Ignored files that went with the worktree.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        ignored: Vec<String>,
    },
    /// The last success claim has no pull request.
    Phantom { reason: String },
    /// `resume` started a new attempt.
    Resume {
        attempt: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prompt_sha: Option<String>,
    },
    /// A worker was escalated to a human.
    Escalated { reason: String },
}

impl Body {
    /// The SPEC's `kind` string.
    pub fn kind(&self) -> &'static str {
        match self {
            Body::Spawn { .. } => "spawn",
            Body::Exit { .. } => "exit",
            Body::Milestone { .. } => "milestone",
            Body::Gate { .. } => "gate",
            Body::Classified { .. } => "classified",
            Body::Wip { .. } => "wip",
            Body::Published { .. } => "published",
            Body::Unblocked => "unblocked",
            Body::Cleared { .. } => "cleared",
            Body::Deleted { .. } => "deleted",
            Body::Phantom { .. } => "phantom",
            Body::Resume { .. } => "resume",
            Body::Escalated { .. } => "escalated",
        }
    }

    /// Whether git-recode itself wrote this event (not activity of the worker, SPEC "activity").
    pub fn is_own_action(&self) -> bool {
        matches!(
            self,
            Body::Classified { .. }
                | Body::Wip { .. }
                | Body::Published { .. }
                | Body::Deleted { .. }
                | Body::Phantom { .. }
                | Body::Escalated { .. }
                | Body::Gate {
                    by: GateBy::Recover,
                    ..
                }
        )
    }

    /// Whether this event is the worker's own signal (counts as activity).
    pub fn is_worker_activity(&self) -> bool {
        matches!(
            self,
            Body::Spawn { .. }
                | Body::Resume { .. }
                | Body::Exit { .. }
                | Body::Milestone { .. }
                | Body::Gate {
                    by: GateBy::Record,
                    ..
                }
        )
    }
}

impl Event {
    /// A new event stamped `now`; `seq` is filled in by [`append`].
    pub fn new(now: Timestamp, task: &str, branch: Option<&str>, body: Body) -> Event {
        Event {
            v: EVENT_VERSION,
            ts: clock::format(now),
            seq: 0,
            task: task.to_string(),
            branch: branch.map(str::to_string),
            head: None,
            body,
        }
    }

    /// Set `head`.
    pub fn with_head(mut self, head: Option<String>) -> Event {
        self.head = head;
        self
    }

    /// Canonical JSON: keys sorted at every level, no whitespace outside strings.
    pub fn canonical(&self) -> String {
        // serde_json's Map is a BTreeMap (no `preserve_order`), so a Value round trip sorts keys.
        let value = serde_json::to_value(self).expect("an Event always serializes");
        serde_json::to_string(&value).expect("a Value always serializes")
    }
}

/// One parsed ledger line with its sort key.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The event.
    pub event: Event,
    /// The line exactly as stored.
    pub line: String,
    /// `event.ts` parsed (the epoch when unparseable, so such lines sort first).
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
pub struct Ledgers {
    /// Ledgers by task key.
    pub by_task: BTreeMap<String, Ledger>,
    /// One message per unreadable line (`task 7: ledger line 3 is not valid JSON; skipped`).
    pub warnings: Vec<String>,
}

/// The anchor blob's content for task `key`: `recode-task <key>\n`.
pub fn anchor_content(key: &str) -> Vec<u8> {
    format!("recode-task {key}\n").into_bytes()
}

/// The anchor id of task `key` (what `git hash-object --stdin` prints for [`anchor_content`]).
pub fn anchor_id(key: &str) -> ObjectId {
    gix::objs::compute_hash(
        gix::hash::Kind::Sha1,
        gix::objs::Kind::Blob,
        &anchor_content(key),
    )
    .expect("hashing in memory cannot fail")
}

/// Parse a note's text into entries for `task_hint`, pushing one warning per bad line.
fn parse_note(text: &str, task_hint: &str, warnings: &mut Vec<String>) -> Vec<Entry> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Event>(line) {
            Ok(event) => {
                let ts = clock::parse(&event.ts).unwrap_or(Timestamp::UNIX_EPOCH);
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

fn sort_entries(entries: &mut [Entry]) {
    entries.sort_by(|a, b| (a.ts, a.event.seq, &a.line).cmp(&(b.ts, b.event.seq, &b.line)));
}

/// The commit a notes ref points to, if it exists.
fn ref_tip(repo: &gix::Repository, name: &str) -> Result<Option<ObjectId>, LedgerError> {
    let found = repo
        .try_find_reference(name)
        .map_err(|e| git_err("read the ref", name)(Box::new(e)))?;
    match found {
        None => Ok(None),
        Some(mut r) => {
            let id = r
                .peel_to_id()
                .map_err(|e| git_err("peel the ref", name)(Box::new(e)))?;
            Ok(Some(id.detach()))
        }
    }
}

fn tree_of(repo: &gix::Repository, commit: ObjectId, name: &str) -> Result<ObjectId, LedgerError> {
    let c = repo
        .find_commit(commit)
        .map_err(|e| git_err("read the notes commit", name)(Box::new(e)))?;
    Ok(c.tree_id()
        .map_err(|e| git_err("read the notes tree", name)(Box::new(e)))?
        .detach())
}

/// Walk a notes tree: every (annotated object id, note blob id), any fanout.
fn walk_notes(
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
        if entry.mode.is_tree() {
            if path.len() < 40 {
                walk_notes(repo, entry.oid.to_owned(), &path, out, notes_ref)?;
            }
        } else if path.len() == 40
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
pub fn notes_in_tree(
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
/// are what a census needs; `log` reads lines through [`Stream`]).
///
/// Errors: [`LedgerError::Git`] when a ref or object cannot be read. Bad lines are not
/// errors: they land in [`Ledgers::warnings`], once each.
pub fn read_all(repo: &gix::Repository, refs: &[String]) -> Result<Ledgers, LedgerError> {
    let mut out = Ledgers::default();
    for (anchor, blobs) in stream::note_index(repo, refs)? {
        let entries = stream::read_note(repo, anchor, &blobs, &mut out.warnings)?;
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
fn anchor_task(repo: &gix::Repository, anchor: ObjectId) -> Option<String> {
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
    let anchor = anchor_id(task);
    let mut lines = BTreeSet::new();
    for name in refs {
        let Some(tip) = ref_tip(repo, name)? else {
            continue;
        };
        let tree = tree_of(repo, tip, name)?;
        if let Some(text) = note_text(repo, tree, anchor, name)? {
            lines.extend(
                text.lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(|l| l.trim_end_matches('\r').to_string()),
            );
        }
    }
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let mut warnings = Vec::new();
    let mut entries = parse_note(&text, task, &mut warnings);
    sort_entries(&mut entries);
    Ok((
        Ledger {
            task: task.to_string(),
            entries,
        },
        warnings,
    ))
}

fn note_text(
    repo: &gix::Repository,
    tree: ObjectId,
    anchor: ObjectId,
    notes_ref: &str,
) -> Result<Option<String>, LedgerError> {
    let mut state = gix::note::plumbing::State::new(tree, &repo.objects)
        .map_err(|e| git_err("open the notes tree", notes_ref)(e.into()))?;
    let Some(blob) = state
        .get(&anchor, &repo.objects)
        .map_err(|e| git_err("look up a note", notes_ref)(e.into()))?
    else {
        return Ok(None);
    };
    let blob = repo
        .find_blob(blob)
        .map_err(|e| git_err("read a note", notes_ref)(Box::new(e)))?;
    Ok(Some(String::from_utf8_lossy(&blob.data).into_owned()))
}

/// The identity for ledger commits, as git resolves a committer: `GIT_COMMITTER_NAME`/
/// `GIT_COMMITTER_EMAIL`, else `committer.*`/`user.*` config, else `git-recode`. (Read
/// directly rather than through `Repository::committer()`, which also computes the local
/// time zone: a scan of the tz database that costs the post-commit hook milliseconds.)
pub(crate) fn signature(repo: &gix::Repository, now: Timestamp) -> gix::actor::Signature {
    let snap = repo.config_snapshot();
    let pick = |env: &str, keys: [&str; 2], default: &str| -> String {
        std::env::var(env)
            .ok()
            .filter(|v| !v.is_empty())
            .or_else(|| {
                keys.iter()
                    .find_map(|k| snap.string(*k).map(|v| v.to_string()))
            })
            .unwrap_or_else(|| default.to_string())
    };
    gix::actor::Signature {
        name: pick(
            "GIT_COMMITTER_NAME",
            ["committer.name", "user.name"],
            "git-recode",
        )
        .into(),
        email: pick(
            "GIT_COMMITTER_EMAIL",
            ["committer.email", "user.email"],
            "git-recode@localhost",
        )
        .into(),
        time: gix::date::Time::new(now.as_second(), 0),
    }
}

fn write_commit(
    repo: &gix::Repository,
    tree: ObjectId,
    parent: Option<ObjectId>,
    message: &str,
    now: Timestamp,
    notes_ref: &str,
) -> Result<ObjectId, LedgerError> {
    let sig = signature(repo, now);
    let commit = gix::objs::Commit {
        tree,
        parents: parent.into_iter().collect(),
        author: sig.clone(),
        committer: sig,
        encoding: None,
        message: message.into(),
        extra_headers: Vec::new(),
    };
    Ok(repo
        .write_object(&commit)
        .map_err(|e| git_err("write a commit", notes_ref)(Box::new(e)))?
        .detach())
}

/// How an append waits: on a ref lock, and for how long it keeps trying.
#[derive(Clone, Copy)]
enum Pace<'a> {
    /// Waits on a held ref lock (gix's lock timeout) and retries lost races for
    /// [`RETRY_BUDGET_MS`], with a growing jittered pause.
    Patient,
    /// The post-commit hook: never waits on a ref lock (a held lock is a lost race, at
    /// once), pauses a few ms between tries, gives up at the deadline; the reflog is
    /// written as this signature (no local time-zone lookup).
    Hurried(&'a gix::actor::Signature, std::time::Instant),
}

/// Move `name` from `expected` to `new` (compare-and-swap). `Ok(false)`: lost the race.
///
/// Errors: [`LedgerError::StaleLock`], [`LedgerError::Unwritable`] (see [`lost_race`]).
fn cas_ref(
    repo: &gix::Repository,
    name: &str,
    expected: Option<ObjectId>,
    new: ObjectId,
    log: &str,
    pace: Pace,
) -> Result<bool, LedgerError> {
    use gix::refs::transaction::RefEdit;
    let previous = match expected {
        Some(id) => PreviousValue::MustExistAndMatch(gix::refs::Target::Object(id)),
        None => PreviousValue::MustNotExist,
    };
    let result: Result<(), Box<dyn std::error::Error + Send + Sync>> = match pace {
        Pace::Patient => repo
            .reference(name, new, previous, log)
            .map(|_| ())
            .map_err(|e| Box::new(e) as _),
        Pace::Hurried(sig, _) => {
            let full: gix::refs::FullName =
                name.try_into()
                    .map_err(|e: gix::validate::reference::name::Error| {
                        git_err("name the ref", name)(Box::new(e))
                    })?;
            let fail = gix::lock::acquire::Fail::Immediately;
            let mut time = gix::date::parse::TimeBuf::default();
            repo.refs
                .transaction()
                .prepare([RefEdit::update(full, new, previous, log)], fail, fail)
                .and_then(|t| t.commit(Some(sig.to_ref(&mut time))))
                .map(|_| ())
                .map_err(|e| Box::new(e) as _)
        }
    };
    match result {
        Ok(()) => Ok(true),
        Err(e) => lost_race(repo, name, expected, e),
    }
}

/// Why a compare-and-swap of `name` failed. A lost race (`Ok(false)`, worth a retry): the
/// ref moved, or a writer's lock file stands (or stood: the lock could not be created
/// because it existed). Anything else fails at once with its cause: a lock file that has
/// stood for seconds ([`LedgerError::StaleLock`]: left by a killed writer), something that
/// is not a lock file at the lock path, an unwritable refs directory
/// ([`LedgerError::Unwritable`]).
fn lost_race(
    repo: &gix::Repository,
    name: &str,
    expected: Option<ObjectId>,
    e: Box<dyn std::error::Error + Send + Sync>,
) -> Result<bool, LedgerError> {
    let lock = repo.common_dir().join(format!("{name}.lock"));
    let unwritable = |why: String, source| LedgerError::Unwritable {
        name: name.to_string(),
        why,
        source,
    };
    match std::fs::symlink_metadata(&lock) {
        Ok(m) if m.is_file() => {
            // git holds a ref's lock for milliseconds: one that has stood for seconds was
            // left by a killed writer, and waiting will not help.
            let age = m.modified().ok().and_then(|t| t.elapsed().ok());
            if age.is_some_and(|a| a.as_secs() >= STALE_LOCK_SECS) {
                return Err(LedgerError::StaleLock {
                    path: lock.display().to_string(),
                });
            }
        }
        Ok(_) => {
            return Err(unwritable(
                format!(
                    "{} is in the way and is not a lock file a writer holds",
                    lock.display()
                ),
                e,
            ));
        }
        Err(_) if ref_tip(repo, name)? == expected && !lock_was_held(e.as_ref()) => {
            return Err(unwritable("the ref could not be written".into(), e));
        }
        Err(_) => {}
    }
    tracing::debug!(ref_name = name, error = %e, "compare-and-swap lost; retrying");
    Ok(false)
}

/// Whether an error says a ref's lock file already existed (a writer held it).
fn lock_was_held(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if err
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::AlreadyExists)
            || err.to_string().contains("could not be obtained")
        {
            return true;
        }
        cur = err.source();
    }
    false
}

/// Retry `attempt` until it wins its compare-and-swap, or the pace's budget runs out
/// ([`LedgerError::Contended`]); any other error returns at once.
fn with_retry<T>(
    task: &str,
    notes_ref: &str,
    pace: Pace,
    mut attempt: impl FnMut() -> Result<Option<T>, LedgerError>,
) -> Result<T, LedgerError> {
    let start = std::time::Instant::now();
    let deadline = match pace {
        Pace::Patient => start + std::time::Duration::from_millis(RETRY_BUDGET_MS),
        Pace::Hurried(_, deadline) => deadline,
    };
    let mut tries = 0u32;
    loop {
        tries += 1;
        if let Some(v) = attempt()? {
            return Ok(v);
        }
        // Jittered backoff, de-synchronised by pid and attempt: growing when patient, a
        // few ms when hurried; never past the deadline.
        let jitter = (std::process::id() as u64 * 7919 + tries as u64 * 104_729) % 7;
        let ms = match pace {
            Pace::Patient => (2u64 << tries.min(5)) + jitter,
            Pace::Hurried(..) => 1 + jitter % 3,
        };
        let pause = std::time::Duration::from_millis(ms);
        if std::time::Instant::now() + pause >= deadline {
            return Err(LedgerError::Contended {
                task: task.to_string(),
                notes_ref: notes_ref.to_string(),
                tries,
            });
        }
        std::thread::sleep(pause);
    }
}

/// Make sure task `key`'s anchor blob exists and is reachable from `refs/recode/anchors`.
///
/// Errors: [`LedgerError::Git`], [`LedgerError::Contended`], [`LedgerError::StaleLock`],
/// [`LedgerError::Unwritable`].
pub fn ensure_anchor(
    repo: &gix::Repository,
    key: &str,
    now: Timestamp,
) -> Result<ObjectId, LedgerError> {
    with_retry(key, ANCHORS_REF, Pace::Patient, || {
        try_anchor(repo, key, now, Pace::Patient)
    })
}

/// One try at making task `key`'s anchor reachable from `refs/recode/anchors`: the anchor
/// when it is (already, or now), `None` on a lost race.
fn try_anchor(
    repo: &gix::Repository,
    key: &str,
    now: Timestamp,
    pace: Pace,
) -> Result<Option<ObjectId>, LedgerError> {
    let anchor = repo
        .write_blob(anchor_content(key))
        .map_err(|e| git_err("write the anchor", ANCHORS_REF)(Box::new(e)))?
        .detach();
    let hex = anchor.to_hex().to_string();
    let tip = ref_tip(repo, ANCHORS_REF)?;
    let mut entries: Vec<gix::objs::tree::Entry> = Vec::new();
    if let Some(tip) = tip {
        let tree = tree_of(repo, tip, ANCHORS_REF)?;
        let t = repo
            .find_tree(tree)
            .map_err(|e| git_err("read the anchors tree", ANCHORS_REF)(Box::new(e)))?;
        let decoded = t
            .decode()
            .map_err(|e| git_err("decode the anchors tree", ANCHORS_REF)(Box::new(e)))?;
        if decoded.entries.iter().any(|e| e.filename == hex.as_bytes()) {
            return Ok(Some(anchor));
        }
        entries = decoded.entries.iter().map(|e| (*e).into()).collect();
    }
    entries.push(gix::objs::tree::Entry {
        mode: gix::objs::tree::EntryKind::Blob.into(),
        filename: hex.as_str().into(),
        oid: anchor,
    });
    entries.sort();
    let tree = repo
        .write_object(&gix::objs::Tree { entries })
        .map_err(|e| git_err("write the anchors tree", ANCHORS_REF)(Box::new(e)))?
        .detach();
    let msg = format!("recode: anchor task {key}");
    let commit = write_commit(repo, tree, tip, &msg, now, ANCHORS_REF)?;
    Ok(cas_ref(repo, ANCHORS_REF, tip, commit, "recode: anchor", pace)?.then_some(anchor))
}

/// Append `event` to its task's ledger in `notes_ref` with compare-and-swap, retrying on
/// a lost race (re-reading the ledger and recomputing `seq` each time) for up to
/// 20 s. Returns the event as stored.
///
/// Errors: [`LedgerError::Contended`] when races kept being lost; at once, without
/// retrying, [`LedgerError::StaleLock`], [`LedgerError::Unwritable`] (the ref cannot be
/// written: not a race), [`LedgerError::Git`].
pub fn append(repo: &gix::Repository, notes_ref: &str, event: Event) -> Result<Event, LedgerError> {
    append_paced(repo, notes_ref, event, |_| Pace::Patient)
}

/// [`append`] for the post-commit hook, which must never delay a commit: it never waits
/// on a ref lock and gives up once `deadline` has passed. The reflog is written with the
/// ledger commit's own signature (UTC), which spares the local time-zone lookup. Returns
/// the event as stored.
///
/// Errors: [`LedgerError::Contended`] when the deadline passed before a compare-and-swap
/// won (a held or contended ref lock); at once, [`LedgerError::StaleLock`],
/// [`LedgerError::Unwritable`], [`LedgerError::Git`].
pub fn append_with_deadline(
    repo: &gix::Repository,
    notes_ref: &str,
    event: Event,
    deadline: std::time::Instant,
) -> Result<Event, LedgerError> {
    append_paced(repo, notes_ref, event, |sig| Pace::Hurried(sig, deadline))
}

/// The one append loop of [`append`] and [`append_with_deadline`]: each try re-reads the
/// task's note, makes the anchor reachable first for a task's first note, recomputes
/// `seq`, and swaps the notes ref.
fn append_paced(
    repo: &gix::Repository,
    notes_ref: &str,
    mut event: Event,
    pace: impl FnOnce(&gix::actor::Signature) -> Pace,
) -> Result<Event, LedgerError> {
    let now = clock::parse(&event.ts).unwrap_or_else(|_| Timestamp::now());
    let sig = signature(repo, now);
    let pace = pace(&sig);
    let anchor = anchor_id(&event.task);
    let task = event.task.clone();
    let mut anchored = false;
    with_retry(&task, notes_ref, pace, || {
        let tip = ref_tip(repo, notes_ref)?;
        let root = match tip {
            Some(tip) => tree_of(repo, tip, notes_ref)?,
            None => ObjectId::empty_tree(gix::hash::Kind::Sha1),
        };
        let mut state = gix::note::plumbing::State::new(root, &repo.objects)
            .map_err(|e| git_err("open the notes tree", notes_ref)(e.into()))?;
        let mut text = match state
            .get(&anchor, &repo.objects)
            .map_err(|e| git_err("look up a note", notes_ref)(e.into()))?
        {
            Some(blob) => {
                let blob = repo
                    .find_blob(blob)
                    .map_err(|e| git_err("read a note", notes_ref)(Box::new(e)))?;
                String::from_utf8_lossy(&blob.data).into_owned()
            }
            None => String::new(),
        };
        // A task's first note makes its anchor reachable first (an existing note means an
        // earlier append, or a sync that merged the anchors too, already did).
        if text.is_empty() && !anchored {
            anchored = try_anchor(repo, &task, now, pace)?.is_some();
            if !anchored {
                return Ok(None);
            }
        }
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        event.seq = text.lines().filter(|l| !l.trim().is_empty()).count() as u64 + 1;
        text.push_str(&event.canonical());
        text.push('\n');
        let blob = repo
            .write_blob(text.as_bytes())
            .map_err(|e| git_err("write a note", notes_ref)(Box::new(e)))?
            .detach();
        let edit = state
            .replace(anchor, blob, &repo.objects)
            .map_err(|e| git_err("write the notes tree", notes_ref)(e.into()))?;
        let msg = format!(
            "Notes added by 'git recode' ({} {})",
            event.body.kind(),
            task
        );
        let commit = write_commit(repo, edit.tree, tip, &msg, now, notes_ref)?;
        Ok(
            cas_ref(repo, notes_ref, tip, commit, "notes: recode append", pace)?
                .then(|| event.clone()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_sorts_keys_and_skips_unknowns() {
        let t = clock::parse("2026-11-29T12:00:00Z").unwrap();
        let mut e = Event::new(
            t,
            "7",
            Some("issue-7"),
            Body::Exit {
                rc: 0,
                outcome: Outcome::Success,
                message: Some("done \"ok\"".into()),
                retry_after: None,
                fresh: None,
                blocker: None,
                session_id: None,
            },
        );
        e.seq = 2;
        assert_eq!(
            e.canonical(),
            r#"{"branch":"issue-7","kind":"exit","message":"done \"ok\"","outcome":"success","rc":0,"seq":2,"task":"7","ts":"2026-11-29T12:00:00.000Z","v":1}"#
        );
        let back: Event = serde_json::from_str(&e.canonical()).unwrap();
        assert_eq!(back, e);
    }

    #[test]
    fn anchor_is_git_hash_object_of_text() {
        // `printf 'recode-task 7\n' | git hash-object --stdin`
        assert_eq!(
            anchor_id("7").to_hex().to_string(),
            "b7c52d68ad5acc81b55f88c841e31e3efc70b1fe"
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
