//! The ledger's event types, [`Event`] and [`Body`], and their canonical JSON form (SPEC
//! table of kinds). They are vocabulary, like the rest of the model: the ledger
//! ([`crate::ledger`]) stores and replays them, and the model imports no ledger.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::{Action, State};
use crate::outcome::Outcome;

/// Version written in every event's `v` field.
pub(crate) const EVENT_VERSION: u32 = 1;

/// Largest task prompt kept in a `spawn` event, in bytes (its first 16 KiB).
pub(crate) const PROMPT_KEEP_BYTES: usize = 16 * 1024;

/// The exit code ledgered for an agent git-recode ended (a hung one, SPEC 1.3): 128 +
/// SIGKILL, as a shell reports it.
pub(crate) const KILLED_RC: i32 = 137;

/// How the message of the `exit` git-recode ledgers for an agent it ended ends.
pub(crate) const ENDED_BY_US: &str = "ended by git-recode (SIGKILL)";

/// Who ran a gate: `recover` (git-recode itself) or `record` (the worker or loop).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum GateBy {
    /// `git recode recover` ran the gate before publishing.
    Recover,
    /// `git recode record gate` ledgered a result from outside.
    Record,
}

/// The attempt an `exit` ends (SPEC 1.3 "Several machines, by the observer's clock"): the
/// branch's newest `spawn` or `resume` in the writer's ledger, by its `attempt` number and
/// its host (`recode.hostId`). Shape: `{"attempt":2,"host":"a1b2…"}`.
///
/// Readers order events by `ts`, and hosts' clocks differ: the exit of a host that was
/// cut off, synced after another host took its worker over, can sort after the taker's
/// `resume`. Naming the attempt keeps it the end of the attempt it ended, never of the
/// taker's (which would read a live agent as exited and start a second one beside it).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Ends {
    /// The attempt's number (its `spawn`'s or `resume`'s `attempt`).
    pub attempt: u32,
    /// The host of that attempt.
    pub host: String,
}

/// Reads an `exit`'s `ends`; anything that is not an [`Ends`] (a hand's or a broken
/// host's line) is none, and the event is kept.
fn lenient_ends<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Ends>, D::Error> {
    let value = Option::<serde_json::Value>::deserialize(d)?;
    Ok(value.and_then(|v| serde_json::from_value(v).ok()))
}

/// One ledger line. Common fields live here; kind-specific ones in [`Body`].
///
/// Shape on disk: canonical JSON, e.g.
/// `{"attempt":1,"branch":"issue-7","cwd":"/w/7","host":"h","kind":"spawn","seq":1,"task":"7","ts":"2026-11-29T12:00:00.000Z","v":1}`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Event {
    /// Format version (1).
    pub v: u32,
    /// When, to the millisecond; on the wire RFC 3339 UTC with milliseconds
    /// (`2026-11-29T12:00:00.000Z`). A line whose `ts` is not RFC 3339 is not an event
    /// (a bad line, warned about).
    #[serde(with = "wire_ts")]
    pub ts: Timestamp,
    /// One more than the number of lines in the ledger it was appended to.
    pub seq: u64,
    /// Task key.
    pub task: String,
    /// The worker branch, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// A commit id, where known (for `wip` the new commit, for `deleted` the deleted tip);
    /// on the wire its full lowercase hex (40 digits, 64 in a SHA-256 repository). A
    /// `head` that is not one is read as no head
    /// (the event is kept: see `wire_head`).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "wire_head")]
    pub head: Option<gix::ObjectId>,
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
        /// The writer's hostname, shown beside `host` (SPEC 1.3). Its presence says `host`
        /// is a `recode.hostId`: only an attempt without it (1.2, where `host` was the
        /// hostname) may match this host by hostname ([`crate::hosts::Me::is_named`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        label: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pid: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pid_start: Option<String>,
        /// The file the loop sends the agent's stdout to (`record spawn --output`), read
        /// for a limit the live agent waits on (SPEC 1.2 "parked on a limit").
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output: Option<String>,
        /// The prompt the loop gave the agent (`record spawn --prompt-file`): its first
        /// 16 KiB ([`PROMPT_KEEP_BYTES`]), untrusted text, carried fenced into every
        /// resume prompt under "The task" (SPEC 1.3 "The loop as people run it").
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prompt: Option<String>,
        /// The agent's own flags (`record spawn -- ARGS…`: permission mode, model, allowed
        /// tools), replayed by the command `resume` prints (SPEC 1.3 "Real agents"); absent:
        /// not recorded (the profile's defaults are used).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent_args: Option<Vec<String>>,
        /// The agent's configuration directory (`record spawn --config-dir`, e.g.
        /// `CLAUDE_CONFIG_DIR`), set again on the resumed agent (SPEC 1.3).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        config_dir: Option<String>,
    },
    /// An attempt ended (`record exit`).
    Exit {
        rc: i32,
        outcome: Outcome,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        /// When a transient limit resets; on the wire RFC 3339 UTC to the second, as
        /// written by every release (see `wire_retry_after`: a value that is no time is
        /// read as none, the event kept, [`retry_after_unreadable`]).
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            with = "wire_retry_after"
        )]
        retry_after: Option<Timestamp>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fresh: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        blocker: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session_id: Option<String>,
        /// The attempt this exit ends, as its writer's ledger knew it; absent in ledgers
        /// written before it, and then the exit ends whichever attempt is newest. A value
        /// that is not an [`Ends`] is read as absent.
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "lenient_ends"
        )]
        ends: Option<Ends>,
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
        state: State,
        action: Action,
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
        /// This host's id (SPEC 1.2 "Several machines": a worker belongs to the host of
        /// its newest `spawn`/`resume`; 1.2 wrote the hostname); absent in ledgers written
        /// before 1.2.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        host: Option<String>,
        /// The writer's hostname, as in `spawn` (its presence: `host` is an id).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        label: Option<String>,
    },
    /// `resume` took over a worker of a host silent for `recode.hostTimeout` (SPEC 1.2
    /// "Several machines"), in the same compare-and-swap as its `resume`.
    Takeover { from_host: String, host: String },
    /// A worker was escalated to a human.
    Escalated { reason: String },
    /// `recover` recreated a branch deleted under its worktree at the newest commit of
    /// that worktree's HEAD reflog (the event's `branch` and `head`; SPEC 1.2).
    Restored {
        /// The worktree whose reflog it came from.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        worktree: Option<String>,
    },
    /// A stale lock was moved aside (SPEC 1.2 "The loop settles"): its path and its age
    /// in seconds.
    Unlocked { path: String, age: u64 },
}

impl Body {
    /// Whether this is the `exit` git-recode ledgered when it ended the agent itself
    /// ([`KILLED_RC`], its message ending [`ENDED_BY_US`]): the loop that started that
    /// agent reports the same end again (rc 137), which is not a second attempt.
    pub fn ended_by_us(&self) -> bool {
        matches!(self, Body::Exit { rc, message: Some(m), .. } if *rc == KILLED_RC && m.ends_with(ENDED_BY_US))
    }

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
            Body::Takeover { .. } => "takeover",
            Body::Escalated { .. } => "escalated",
            Body::Restored { .. } => "restored",
            Body::Unlocked { .. } => "unlocked",
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
                | Body::Restored { .. }
                | Body::Unlocked { .. }
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

/// `ts` on the wire: written as [`crate::clock::format`] (RFC 3339 UTC, milliseconds),
/// read as any RFC 3339 time ([`crate::clock::parse`]).
mod wire_ts {
    use jiff::Timestamp;
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::clock;

    pub(super) fn serialize<S: Serializer>(ts: &Timestamp, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&clock::format(*ts))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Timestamp, D::Error> {
        let text = std::borrow::Cow::<str>::deserialize(d)?;
        clock::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// `head` on the wire: written as the full lowercase hex (40 digits; 64 in a SHA-256
/// repository) ([`gix::ObjectId`]'s
/// `Display`), read with [`gix::ObjectId::from_hex`]. A string that is not a full hex id
/// (an old or hand-edited line) reads as no head and the event is kept, unlike a bad
/// `ts`: the line may be an `escalated` or `deleted` event that must still count, and its
/// bytes stay in the note as written (appends never rewrite a line), so the text is
/// still there to restore from; the ledger reader warns about it
/// ([`head_unreadable`]). A `head` that is not a string at all is a bad line, as before.
pub(crate) mod wire_head {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(
        head: &Option<gix::ObjectId>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match head {
            Some(id) => s.collect_str(id),
            None => s.serialize_none(),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<gix::ObjectId>, D::Error> {
        let text = Option::<std::borrow::Cow<str>>::deserialize(d)?;
        Ok(text.and_then(|t| gix::ObjectId::from_hex(t.as_bytes()).ok()))
    }

    /// One commit id written as its full lowercase hex, 40 or 64 digits (`serialize_with` for a field
    /// that always holds one, e.g. `resume --json`'s `facts.commits[].id`).
    pub(crate) fn one<S: Serializer>(id: &gix::ObjectId, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(id)
    }
}

/// `retry_after` on the wire: written as [`crate::clock::format_secs`] (RFC 3339 UTC to
/// the second: the string `record exit` has always written), read as any RFC 3339 time.
/// A value that is not one (a hand-edited line, a number) reads as none and the event is
/// kept, as with `head`: the line's bytes stay in the note as written; the ledger reader
/// warns about it ([`retry_after_unreadable`]).
pub(crate) mod wire_retry_after {
    use jiff::Timestamp;
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::clock;

    pub(crate) fn serialize<S: Serializer>(t: &Option<Timestamp>, s: S) -> Result<S::Ok, S::Error> {
        match t {
            Some(t) => s.serialize_str(&clock::format_secs(*t)),
            None => s.serialize_none(),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Timestamp>, D::Error> {
        let value = Option::<serde_json::Value>::deserialize(d)?;
        Ok(value
            .as_ref()
            .and_then(serde_json::Value::as_str)
            .and_then(|t| clock::parse(t).ok()))
    }
}

/// Whether a ledger `line` that parsed as `event` (an `exit`) had a `retry_after` that is
/// not an RFC 3339 time (read as none by `wire_retry_after`), for the reader's warning.
pub(crate) fn retry_after_unreadable(line: &str, event: &Event) -> bool {
    matches!(
        event.body,
        Body::Exit {
            retry_after: None,
            ..
        }
    ) && line.contains("\"retry_after\"")
        && serde_json::from_str::<serde_json::Value>(line)
            .is_ok_and(|v| v.get("retry_after").is_some_and(|r| !r.is_null()))
}

/// Whether a ledger `line` that parsed as `event` had a `head` string that is not a
/// commit id (read as no head by `wire_head`), for the reader's warning.
pub(crate) fn head_unreadable(line: &str, event: &Event) -> bool {
    event.head.is_none()
        && line.contains("\"head\"")
        && serde_json::from_str::<serde_json::Value>(line)
            .is_ok_and(|v| v.get("head").is_some_and(serde_json::Value::is_string))
}

impl Event {
    /// Drop a session id this event carries that [`crate::fence::session_id_ok`] refuses
    /// (one that an agent would read as an option word, written by a hand or a hostile
    /// host and synced here), returning it for the reader's warning. The line's bytes stay
    /// in the note as written; only what is read from it loses the id.
    pub fn drop_bad_session(&mut self) -> Option<String> {
        let slot = match &mut self.body {
            Body::Spawn { session_id, .. }
            | Body::Exit { session_id, .. }
            | Body::Milestone { session_id, .. }
            | Body::Resume { session_id, .. } => session_id,
            _ => return None,
        };
        if slot
            .as_deref()
            .is_some_and(|id| !crate::fence::session_id_ok(id))
        {
            slot.take()
        } else {
            None
        }
    }

    /// A new event stamped `now`; `seq` is filled in by [`append`](crate::ledger::append()).
    pub fn new(now: Timestamp, task: &str, branch: Option<&str>, body: Body) -> Event {
        Event {
            v: EVENT_VERSION,
            ts: Timestamp::from_millisecond(now.as_millisecond()).unwrap_or(now),
            seq: 0,
            task: task.to_string(),
            branch: branch.map(str::to_string),
            head: None,
            body,
        }
    }

    /// Set `head`.
    pub fn with_head(mut self, head: Option<gix::ObjectId>) -> Event {
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

/// Bare bodies for the unit tests of every module: each optional field empty, so a test
/// names only what it is about.
#[cfg(test)]
impl Body {
    /// A spawn of attempt 1 in `/w` on `host`.
    pub(crate) fn test_spawn(host: &str) -> Body {
        Body::Spawn {
            attempt: 1,
            cwd: "/w".into(),
            host: host.into(),
            label: None,
            session_id: None,
            agent: None,
            pid: None,
            pid_start: None,
            output: None,
            prompt: None,
            agent_args: None,
            config_dir: None,
        }
    }

    /// A resume starting `attempt` by `host` (`None`: a line written before resumes named
    /// their host).
    pub(crate) fn test_resume(attempt: u32, host: Option<&str>) -> Body {
        Body::Resume {
            attempt,
            session_id: None,
            prompt_sha: None,
            host: host.map(str::to_string),
            label: None,
        }
    }

    /// An exit with `outcome` (rc 0 for a success, else 1), naming the `(attempt, host)` it
    /// ends if any.
    pub(crate) fn test_exit(outcome: Outcome, ends: Option<(u32, &str)>) -> Body {
        Body::Exit {
            rc: if outcome == Outcome::Success { 0 } else { 1 },
            outcome,
            message: None,
            retry_after: None,
            fresh: None,
            blocker: None,
            session_id: None,
            ends: ends.map(|(attempt, host)| Ends {
                attempt,
                host: host.into(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock;

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
                ends: None,
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
}
