//! Claims (SPEC 1.3 "Several machines, by the observer's clock"): before a resume where
//! other hosts share the repository, the attempt it resumes is claimed on the remote, so
//! one host resumes it, however many see it stalled and however far behind their ledgers
//! are.
//!
//! One claim ref per branch, `refs/recode/claims/<hex>` (the hex: git's blob id of
//! `recode-claim <branch>`), pointing at a blob
//! `{"branch","from_host","attempt_ts","host"}`: the attempt resumed (its host and `ts`, as
//! ledgered) and the claimer. A claim is created where none exists (a push lease with an
//! empty expected value, checked by the remote under its ref lock) and replaced by
//! compare-and-swap (a lease on the value read) when it names an attempt older than the
//! one resumed, when it cannot be read (garbage: named and ignored), or when its claimer
//! has been silent for `recode.hostTimeout` on this host's clock (its lease ran out: a host
//! killed between its claim and its ledger append blocks nobody for ever). A claim naming
//! an attempt this ledger does not know is a newer one: this host's ledger is behind, and
//! the claim is lost. `sync` removes the claims whose started attempt has ended, and the
//! claimer's own `sync` its claims whose `resume` died before its ledger append (the claim
//! records that process: [`claimer_died`]), so a claimer that lives on blocks nobody.

use gix::ObjectId;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::model::event::Ends;
use crate::model::{Body, Event};

/// Where the claims live: `refs/recode/claims/<hex>`.
pub(crate) const CLAIMS_PREFIX: &str = "refs/recode/claims/";

/// The longest claim blob read; a larger one is garbage.
pub(crate) const MAX_CLAIM: u64 = 4 << 10;

/// A claim blob.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub(crate) struct ClaimDoc {
    /// The worker's branch.
    pub branch: String,
    /// The host of the attempt resumed (its id).
    pub from_host: String,
    /// That attempt's `ts`, as ledgered.
    pub attempt_ts: String,
    /// The claimer's id.
    pub host: String,
    /// The claiming `resume` process on the claimer's machine: its pid (absent in claims
    /// written before it). Only the claimer reads it ([`claimer_died`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// That process's start token ([`crate::process::start_token`]), so a recycled pid is
    /// never taken for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid_start: Option<String>,
}

impl ClaimDoc {
    /// The blob's text (one line, keys in this order).
    pub(crate) fn text(&self) -> String {
        // Serializing strings and a number cannot fail.
        format!("{}\n", serde_json::to_string(self).unwrap_or_default())
    }
}

/// The claim ref of `branch`.
pub(crate) fn claim_ref(branch: &str) -> String {
    format!(
        "{CLAIMS_PREFIX}{}",
        super::id::digest(&format!("recode-claim {branch}"))
    )
}

/// Whether `name` is a claim ref git-recode writes: one hex component under the prefix.
pub(crate) fn is_claim_name(name: &str) -> bool {
    name.strip_prefix(CLAIMS_PREFIX)
        .is_some_and(|h| (40..=64).contains(&h.len()) && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Read the claim blob `id` in bounded memory.
///
/// Errors: a message when it is not a blob, is larger than [`MAX_CLAIM`], or not a claim.
pub(crate) fn read(repo: &gix::Repository, id: ObjectId) -> Result<ClaimDoc, String> {
    let h = repo.find_header(id).map_err(|e| e.to_string())?;
    if h.kind() != gix::object::Kind::Blob {
        return Err(format!("a {}, not a claim blob", h.kind()));
    }
    if h.size() > MAX_CLAIM {
        return Err(format!("a claim of {} bytes", h.size()));
    }
    let blob = repo.find_blob(id).map_err(|e| e.to_string())?;
    let doc: ClaimDoc =
        serde_json::from_slice(&blob.data).map_err(|e| format!("not a claim ({e})"))?;
    // A claim names an attempt by its ledgered `ts`: one naming no time can match no
    // attempt, and would hold a takeover for a lease (its value never echoed: untrusted).
    if doc.attempt_ts.parse::<jiff::Timestamp>().is_err() || doc.host.is_empty() {
        return Err("not a claim (no attempt time, or no claimer)".into());
    }
    Ok(doc)
}

/// The attempts on `branch`, oldest first: `(index, host, ts as ledgered)`.
fn attempts<'a>(
    events: &'a [Event],
    branch: &'a str,
) -> impl Iterator<Item = (usize, String, String)> + 'a {
    let mut host: Option<String> = None;
    events
        .iter()
        .enumerate()
        .filter(move |(_, e)| e.branch.as_deref().is_none_or(|b| b == branch))
        .filter_map(move |(i, e)| {
            match &e.body {
                Body::Spawn { host: h, .. } => host = Some(h.clone()),
                Body::Resume { host: Some(h), .. } => host = Some(h.clone()),
                Body::Resume { .. } => {}
                _ => return None,
            }
            Some((i, host.clone()?, e.ts.to_string()))
        })
}

/// What a claim found on the remote means for resuming `(from_host, attempt_ts)` on
/// `branch` with `events` (this host's ledger).
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub(crate) enum Verdict {
    /// This host's own claim on that attempt (a retry): won.
    Ours,
    /// This host's own claim on another attempt, or the attempt its claimer started has
    /// ended in this ledger ([`ended`]): replace it.
    Stale,
    /// The attempt its claimer started is in this ledger and has not ended: the claimer's
    /// worker, lost unless the claimer's heartbeat has been silent for
    /// `recode.hostTimeout` on this host's clock.
    Running,
    /// Another host's claim whose attempt this ledger does not show: the claimer may be
    /// between its claim and its ledger append, or this ledger is behind (the claimer
    /// took over an attempt this host superseded with one that never reached the
    /// remote): lost, unless its claimer's lease ran out (its heartbeat and the claim
    /// itself unchanged that long).
    Held,
}

/// Judge the claim `doc` (SPEC 1.3 claims): see [`Verdict`]. Only what this ledger shows
/// ended makes another host's claim stale: an attempt of this host's that is newer than
/// the one the claim names proves nothing, as it may never have reached the remote.
pub(crate) fn judge(
    doc: &ClaimDoc,
    events: &[Event],
    branch: &str,
    resumed: (&str, &str),
    me: &str,
) -> Verdict {
    if doc.host == me {
        let same = doc.from_host == resumed.0 && doc.attempt_ts == resumed.1;
        return if same { Verdict::Ours } else { Verdict::Stale };
    }
    if doc.branch != branch {
        return Verdict::Held;
    }
    match started(doc, events) {
        Some(_) if ended(doc, events) => Verdict::Stale,
        Some(_) => Verdict::Running,
        None => Verdict::Held,
    }
}

/// The index in `events` of the attempt the claim `doc` started: its claimer's first
/// attempt after the one it resumed, when both are ledgered. The one it resumed is the
/// newest attempt with its host and `ts`: one host may start two attempts in one second
/// (a spawn and a resume), and taking the older would take the claimer's earlier attempt
/// for the one the claim started, leaving the claim leased by the heartbeat alone.
pub(crate) fn started(doc: &ClaimDoc, events: &[Event]) -> Option<usize> {
    let all: Vec<_> = attempts(events, &doc.branch).collect();
    let resumed = all
        .iter()
        .rposition(|(_, h, t)| *h == doc.from_host && *t == doc.attempt_ts)?;
    all[resumed + 1..]
        .iter()
        .find(|(_, h, _)| *h == doc.host)
        .map(|(i, _, _)| *i)
}

/// Whether the attempt the claim `doc` started has ended in `events` (SPEC 1.3: `sync`
/// removes such claims): the claimer's attempt after the one it resumed is ledgered, and
/// an `exit` or a newer attempt on the branch follows it. A claim whose attempt is not
/// ledgered yet stands (its claimer may be between its claim and its append; its lease
/// covers a claimer that died there).
pub(crate) fn ended(doc: &ClaimDoc, events: &[Event]) -> bool {
    let Some(started) = started(doc, events) else {
        return false;
    };
    let newer_attempt = attempts(events, &doc.branch).any(|(i, _, _)| i > started);
    // An exit ends the claimer's attempt only when it names it (or names none): the late
    // exit of the attempt the claim took over ends nothing of the claimer's.
    let theirs = match &events[started].body {
        Body::Spawn { attempt, .. } | Body::Resume { attempt, .. } => Ends {
            attempt: *attempt,
            host: doc.host.clone(),
        },
        _ => return newer_attempt,
    };
    let exited = events[started + 1..].iter().any(|e| {
        e.branch.as_deref().is_none_or(|b| b == doc.branch)
            && crate::model::replay::exit_ends(e, &theirs)
    });
    newer_attempt || exited
}

/// Whether `doc` is this host's (`me`, an id) and the `resume` that made it is gone: its
/// pid and start token are recorded and no process of this machine has both now. Probe
/// this before reading the ledger: a claimer that ended after its ledger append had
/// appended by then. A claim naming no process (written before the claim recorded it), or
/// another host's, is never proved dead here.
pub(crate) fn claimer_died(doc: &ClaimDoc, me: &str) -> bool {
    match (doc.pid, doc.pid_start.as_deref()) {
        (Some(pid), Some(token)) if doc.host == me => {
            crate::process::start_token(pid).as_deref() != Some(token)
        }
        _ => false,
    }
}

/// Whether the claimer `host` has been silent for `timeout` (`recode.hostTimeout`) on
/// this host's clock:
/// its heartbeat (first seen at its current value) or, with none, the claim itself (first
/// seen at its current value, `claim_seen`) is that old at `now`.
pub(crate) fn lease_ran_out(
    beat_seen: Option<Timestamp>,
    claim_seen: Timestamp,
    now: Timestamp,
    timeout: jiff::SignedDuration,
) -> bool {
    let last = beat_seen.map_or(claim_seen, |b| b.max(claim_seen));
    jiff::SignedDuration::from_secs(now.as_second() - last.as_second()) >= timeout
}

#[cfg(test)]
mod tests;
