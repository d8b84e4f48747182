//! Appends: the anchor kept reachable from `refs/recode/anchors`, and compare-and-swap
//! updates of the notes ref, retried on a lost race.

use gix::ObjectId;
use jiff::Timestamp;

use std::collections::BTreeSet;

use super::{
    LedgerError, anchor_content, anchor_id, git_err, note_bytes, note_text, parse_note_in, ref_tip,
    sort_entries, tree_of,
};
use crate::config::{ANCHORS_REF, Config};
use crate::lock::Settle;
use crate::model::Event;

/// How long an append keeps retrying a lost compare-and-swap race (or waits on a lock of
/// its own ref until it is stale, [`crate::lock::OWN_REF_STALE_SECS`]), in milliseconds.
const RETRY_BUDGET_MS: u64 = 35_000;
/// A lock of every ref (`packed-refs.lock`; a reftable's `tables.list.lock`) this old
/// (seconds) makes an append fail at once instead of retrying, unless it is older than
/// `recode.staleLockAfter`: then it is moved aside.
const PACKED_REFS_STUCK_SECS: u64 = 30;

/// The identity of ledger commits: always git-recode's own ([`crate::git::OWN_NAME`]),
/// whatever the user has configured, so a ledger write never depends on a git identity
/// (a fresh container has none: SPEC 1.3 "Errors a newcomer meets (more)").
pub(crate) fn signature(now: Timestamp) -> gix::actor::Signature {
    crate::git::own_signature(now.as_second())
}

fn write_commit(
    repo: &gix::Repository,
    tree: ObjectId,
    parent: Option<ObjectId>,
    message: &str,
    now: Timestamp,
    notes_ref: &str,
) -> Result<ObjectId, LedgerError> {
    let sig = signature(now);
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
enum Pace {
    /// Waits on a held ref lock (gix's lock timeout) and retries lost races for
    /// [`RETRY_BUDGET_MS`], with a growing jittered pause. (The post-commit hook, which
    /// never waited, journals instead of appending: SPEC 1.3 "The milestone journal".)
    Patient,
}

/// Move `name` from `expected` to `new` (compare-and-swap, through the ref store
/// [`crate::refs::swap`]). `Ok(false)`: lost the race (the ref moved, was created meanwhile
/// even with the same value, or a writer's lock stood), so each writer re-decides its
/// events.
///
/// Errors: [`LedgerError::StaleLock`], [`LedgerError::Unwritable`] (see [`lost_race`]).
fn cas_ref(
    repo: &gix::Repository,
    locks: &Settle,
    name: &str,
    expected: Option<ObjectId>,
    new: ObjectId,
    log: &str,
    pace: Pace,
) -> Result<bool, LedgerError> {
    let edit = crate::refs::Edit {
        name,
        expect: crate::refs::Expect::from(expected),
        new: Some(new),
        message: log,
    };
    let result = match pace {
        Pace::Patient => crate::refs::swap(repo, &edit),
    };
    match result {
        Ok(true) => Ok(true),
        Ok(false) => {
            tracing::debug!(ref_name = name, "another writer created the ref; retrying");
            Ok(false)
        }
        Err(e) => lost_race(repo, locks, name, expected, e),
    }
}

/// Why a compare-and-swap of `name` failed. A lost race (`Ok(false)`, worth a retry): the
/// ref moved, or a writer's lock file stands (or stood: the lock could not be created
/// because it existed). Anything else fails at once with its cause: a lock file that has
/// stood for seconds ([`LedgerError::StaleLock`]: left by a killed writer), something that
/// is not a lock file at the lock path, an unwritable refs directory
/// ([`LedgerError::Unwritable`]). A lock moved aside is reported to `locks.moves`, its
/// `unlocked` event owed there ([`crate::lock::Moves::owe`]). The lock files are the ref
/// store's ([`crate::refs::locks`]): the ref's own and `packed-refs.lock` for files, the
/// stack's `tables.list.lock` for reftable.
fn lost_race(
    repo: &gix::Repository,
    locks: &Settle,
    name: &str,
    expected: Option<ObjectId>,
    e: crate::refs::SwapError,
) -> Result<bool, LedgerError> {
    let paths = crate::refs::locks(repo, name);
    let unwritable = |why: String, source| LedgerError::Unwritable {
        name: name.to_string(),
        why,
        source,
    };
    let own = paths
        .own
        .as_ref()
        .map(|lock| (lock, std::fs::symlink_metadata(lock)));
    match own {
        // SPEC 1.2 "The loop settles": a lock on git-recode's own ref older than 30 s was
        // left by a killed writer (an append holds it for milliseconds): move it aside,
        // owe its `unlocked` event, and try again. A younger one: wait.
        Some((lock, Ok(m)))
            if m.is_file()
                && crate::lock::age_secs(lock)
                    .is_some_and(|a| a >= crate::lock::OWN_REF_STALE_SECS) =>
        {
            match crate::lock::move_aside(lock, &locks.moves) {
                Ok(moved) => locks.moves.owe(moved),
                Err(_) if !lock.exists() => {}
                Err(_) => {
                    return Err(LedgerError::StaleLock {
                        path: lock.display().to_string(),
                    });
                }
            }
        }
        Some((_, Ok(m))) if m.is_file() => {}
        Some((lock, Ok(_))) => {
            return Err(unwritable(
                format!(
                    "{} is in the way and is not a lock file a writer holds",
                    lock.display()
                ),
                e.source,
            ));
        }
        _ if !e.lost() && ref_tip(repo, name)? == expected => {
            return Err(unwritable("the ref could not be written".into(), e.source));
        }
        _ if crate::lock::age_secs(&paths.shared).is_some_and(|a| a >= PACKED_REFS_STUCK_SECS) => {
            // SPEC 1.2: stale past `recode.staleLockAfter`: moved aside, and try again;
            // younger but stuck for seconds: fail at once rather than retry for 35 s.
            let shared = &paths.shared;
            let stale =
                crate::lock::age_secs(shared).is_some_and(|a| a >= locks.stale_after.as_secs());
            match stale.then(|| crate::lock::move_aside(shared, &locks.moves)) {
                Some(Ok(moved)) => locks.moves.owe(moved),
                _ => {
                    return Err(LedgerError::StaleLock {
                        path: shared.display().to_string(),
                    });
                }
            }
        }
        _ => {}
    }
    tracing::debug!(ref_name = name, error = %e, "compare-and-swap lost; retrying");
    Ok(false)
}

/// A patient writer's pause between lost races: 4 ms doubling to 64 ms, plus up to 6 ms
/// of jitter; a hurried one (the hook) pauses 1–3 ms.
const PATIENT: crate::retry::Pause = crate::retry::Pause {
    first: std::time::Duration::from_millis(4),
    growth: crate::retry::Growth::Doubling,
    cap: std::time::Duration::from_millis(64),
    jitter: std::time::Duration::from_millis(7),
};

/// Retry `attempt` until it wins its compare-and-swap, or the pace's budget runs out
/// ([`LedgerError::Contended`]); any other error returns at once. The loop is
/// [`crate::retry::retry`]: never a pause past the deadline.
fn with_retry<T>(
    task: &str,
    notes_ref: &str,
    pace: Pace,
    mut attempt: impl FnMut() -> Result<Option<T>, LedgerError>,
) -> Result<T, LedgerError> {
    use crate::retry::{Limit, Policy, Try};
    let policy = match pace {
        Pace::Patient => Policy {
            pause: PATIENT,
            limit: Limit::Until(
                std::time::Instant::now() + std::time::Duration::from_millis(RETRY_BUDGET_MS),
            ),
        },
    };
    crate::retry::retry(policy, |tries| match attempt() {
        Ok(Some(v)) => Try::Done(v),
        Ok(None) => Try::Lost(LedgerError::Contended {
            task: task.to_string(),
            notes_ref: notes_ref.to_string(),
            tries,
        }),
        Err(e) => Try::Fail(e),
    })
}

/// One try at making task `key`'s anchor reachable from `refs/recode/anchors`: the anchor
/// when it is (already, or now), `None` on a lost race.
fn try_anchor(
    repo: &gix::Repository,
    locks: &Settle,
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
    Ok(cas_ref(
        repo,
        locks,
        ANCHORS_REF,
        tip,
        commit,
        "recode: anchor",
        pace,
    )?
    .then_some(anchor))
}

/// Append `event` to its task's ledger in `cfg.notes_ref` with compare-and-swap, retrying on
/// a lost race (re-reading the ledger and recomputing `seq` each time) for up to
/// 20 s. Returns the event as stored. For an event whose content depends on the ledger
/// (an attempt number, a once-only rule), use [`append_with`]. A stale lock of the notes
/// ref (or `packed-refs.lock` past `recode.staleLockAfter`) is moved aside, reported to
/// the command's sink `cfg.locks.moves` ([`crate::lock::Moves`]), and its `unlocked`
/// event appended after this one, with any other `unlocked` event owed there.
///
/// Errors: [`LedgerError::Contended`] when races kept being lost; at once, without
/// retrying, [`LedgerError::StaleLock`], [`LedgerError::Unwritable`] (the ref cannot be
/// written: not a race), [`LedgerError::Git`].
pub(crate) fn append(
    repo: &gix::Repository,
    cfg: &Config,
    event: Event,
) -> Result<Event, LedgerError> {
    let now = event.ts;
    let task = event.task.clone();
    let mut stored = append_with(repo, cfg, &task, now, |_| vec![event.clone()])?;
    Ok(stored.pop().expect("one event decided, one stored"))
}

/// Ledger the `unlocked` events owed in `locks.moves` ([`crate::lock::Moves::owe`]: locks
/// an append or an earlier step moved aside), in task `task`, stamped `now`. A failure
/// leaves the warning, which the command prints anyway (SPEC 1.2 "The loop settles").
fn ledger_owed(
    repo: &gix::Repository,
    notes_ref: &str,
    locks: &Settle,
    task: &str,
    now: Timestamp,
    pace: impl Fn(&gix::actor::Signature) -> Pace + Copy,
) {
    let owed: Vec<Event> = locks
        .moves
        .take_owed()
        .into_iter()
        .map(|m| {
            Event::new(
                now,
                task,
                None,
                crate::model::Body::Unlocked {
                    path: m.path,
                    age: m.age,
                },
            )
        })
        .collect();
    if !owed.is_empty() {
        let _ = append_paced(repo, notes_ref, locks, task, now, |_| owed.clone(), pace);
    }
}

/// Append to task `task`'s ledger in `cfg.notes_ref` the events `decide` returns, as a
/// function of that ledger: `decide` is called on every try of the compare-and-swap with
/// the task's events as they stand at that try (the local note, merged by union of lines
/// with the fetched copies `refs/recode/remotes/*/notes`, in ledger order), so a fact it
/// reads (the next attempt, "already ledgered", a streak: [`crate::model::replay`]) is decided
/// against exactly the ledger the events join. An empty `Vec` appends nothing (a dedupe
/// said so) and writes nothing. `now` stamps the ledger commit. Returns the events as
/// stored (`seq` filled in), in order. Stale locks: as [`append`].
///
/// Errors: as [`append`].
pub(crate) fn append_with(
    repo: &gix::Repository,
    cfg: &Config,
    task: &str,
    now: Timestamp,
    decide: impl FnMut(&[Event]) -> Vec<Event>,
) -> Result<Vec<Event>, LedgerError> {
    let (notes_ref, locks) = (cfg.notes_ref.as_str(), &cfg.locks);
    let stored = append_paced(repo, notes_ref, locks, task, now, decide, |_| Pace::Patient)?;
    ledger_owed(repo, notes_ref, locks, task, now, |_| Pace::Patient);
    Ok(stored)
}

/// The lines of task `task`'s note in each fetched copy of the ledger (every notes ref
/// [`super::notes_refs`] names but `notes_ref`): read once per append, since only `sync`
/// moves them.
fn fetched_lines(
    repo: &gix::Repository,
    notes_ref: &str,
    task: &str,
) -> Result<BTreeSet<String>, LedgerError> {
    let mut lines = BTreeSet::new();
    for name in super::notes_refs(repo, notes_ref).iter().skip(1) {
        if let Some(tip) = ref_tip(repo, name)? {
            let tree = tree_of(repo, tip, name)?;
            if let Some(text) = note_text(repo, tree, anchor_id(repo.object_hash(), task), name)? {
                lines.extend(note_lines(&text));
            }
        }
    }
    Ok(lines)
}

/// The non-blank lines of a note, without a trailing `\r`.
pub(super) fn note_lines(text: &str) -> impl Iterator<Item = String> + '_ {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.trim_end_matches('\r').to_string())
}

/// Add `events` to the note's bytes `text` as canonical lines, each numbered: `seq` one
/// more than the non-blank lines before it (SPEC "Where state lives").
fn extend_note(text: &mut Vec<u8>, events: &mut [Event]) {
    if !text.is_empty() && !text.ends_with(b"\n") {
        text.push(b'\n');
    }
    let mut lines = text
        .split(|b| *b == b'\n')
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .count() as u64;
    for event in events {
        lines += 1;
        event.seq = lines;
        text.extend_from_slice(event.canonical().as_bytes());
        text.push(b'\n');
    }
}

/// How far ahead of the writer's clock the newest event of a task may be and still be
/// followed by [`causal_stamp`]: skew between hosts, not a clock set years off.
const CAUSAL_LEAD_SECS: i64 = 24 * 3600;

/// SPEC 1.3 "clocks that lie": an event decided now is never ordered before an event of
/// its task that its writer had read. Readers order by `ts`, so an event stamped `now`
/// on a ledger holding a newer `ts` (written by a host whose clock runs ahead) is stamped
/// 1 ms after it, when that is at most [`CAUSAL_LEAD_SECS`] ahead: a takeover sorts after
/// the attempt it took over, a host's exit after its own resume. Events carrying an
/// earlier time of their own (a milestone picked up at its commit's time) keep it.
fn causal_stamp(events: &mut [Event], current: &[Event], now: Timestamp) {
    let Some(newest) = current.iter().map(|e| e.ts).max() else {
        return;
    };
    // Events are stamped to the millisecond (`Event::new`).
    let now = Timestamp::from_millisecond(now.as_millisecond()).unwrap_or(now);
    if newest <= now || newest.as_second() - now.as_second() > CAUSAL_LEAD_SECS {
        return;
    }
    let after = newest
        .checked_add(jiff::SignedDuration::from_millis(1))
        .unwrap_or(newest);
    for e in events.iter_mut().filter(|e| e.ts == now) {
        e.ts = after;
    }
}

/// The one append loop of [`append_with`]: each try re-reads
/// the task's note, asks `decide` what to append to it, makes the anchor reachable first
/// for a task's first note, numbers `seq`, and swaps the notes ref.
fn append_paced(
    repo: &gix::Repository,
    notes_ref: &str,
    locks: &Settle,
    task: &str,
    now: Timestamp,
    mut decide: impl FnMut(&[Event]) -> Vec<Event>,
    pace: impl FnOnce(&gix::actor::Signature) -> Pace,
) -> Result<Vec<Event>, LedgerError> {
    let sig = signature(now);
    let pace = pace(&sig);
    let anchor = anchor_id(repo.object_hash(), task);
    let fetched = fetched_lines(repo, notes_ref, task)?;
    let mut anchored = false;
    with_retry(task, notes_ref, pace, || {
        let tip = ref_tip(repo, notes_ref)?;
        let root = match tip {
            Some(tip) => tree_of(repo, tip, notes_ref)?,
            None => ObjectId::empty_tree(repo.object_hash()),
        };
        // The note's bytes as stored: a line that is not UTF-8 is kept byte for byte
        // (SPEC 1.2), never rewritten as U+FFFD; only the decision reads it as text.
        let mut text: Vec<u8> = note_bytes(repo, root, anchor, notes_ref)?.unwrap_or_default();
        let mut union = fetched.clone();
        union.extend(note_lines(&String::from_utf8_lossy(&text)));
        let joined: String = union.iter().map(|l| format!("{l}\n")).collect();
        let mut entries = parse_note_in(repo.object_hash(), &joined, task, &mut Vec::new());
        sort_entries(&mut entries);
        let current: Vec<Event> = entries.into_iter().map(|e| e.event).collect();
        let mut events = decide(&current);
        if events.is_empty() {
            return Ok(Some(events));
        }
        causal_stamp(&mut events, &current, now);
        // A task's first note makes its anchor reachable first (an existing note means an
        // earlier append, or a sync that merged the anchors too, already did).
        if text.is_empty() && !anchored {
            anchored = try_anchor(repo, locks, task, now, pace)?.is_some();
            if !anchored {
                return Ok(None);
            }
        }
        extend_note(&mut text, &mut events);
        let blob = repo
            .write_blob(&text)
            .map_err(|e| git_err("write a note", notes_ref)(Box::new(e)))?
            .detach();
        let mut state = gix::note::plumbing::State::new(root, &repo.objects)
            .map_err(|e| git_err("open the notes tree", notes_ref)(e.into()))?;
        let edit = state
            .replace(anchor, blob, &repo.objects)
            .map_err(|e| git_err("write the notes tree", notes_ref)(e.into()))?;
        let kinds: Vec<&str> = events.iter().map(|e| e.body.kind()).collect();
        let msg = format!(
            "Notes added by 'git recode' ({} {})",
            kinds.join(", "),
            task
        );
        let commit = write_commit(repo, edit.tree, tip, &msg, now, notes_ref)?;
        Ok(cas_ref(
            repo,
            locks,
            notes_ref,
            tip,
            commit,
            "notes: recode append",
            pace,
        )?
        .then_some(events))
    })
}
