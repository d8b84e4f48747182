//! Several machines (SPEC 1.2 "Several machines"): a worker belongs to the host of its
//! newest attempt (`spawn`/`resume` `host`); each host publishes a heartbeat ref,
//! `refs/recode/hosts/<host>`, a commit whose tree holds one blob `heartbeat.json`,
//! `{"host", "ts", "workers": {"<branch>": {"pid", "alive": bool}}}`.
//!
//! This module holds the pure rules over the ledger (whose a worker is, whether this
//! host's work was taken over) and the heartbeat's name and reading; `write.rs` writes
//! this host's heartbeat (gix objects and one compare-and-swap ref edit).

pub(crate) mod claim;
pub(crate) mod id;
pub(crate) mod prune;
pub(crate) mod seen;
mod write;
pub(crate) use id::{Me, me};
pub(crate) use seen::Seen;
pub(crate) use write::{BeatWorker, write_heartbeat};

use std::collections::BTreeMap;

use gix::bstr::ByteSlice;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::model::{Body, Event};

/// Where heartbeats live, one ref a host.
pub(crate) const HOSTS_PREFIX: &str = "refs/recode/hosts/";

/// The one blob's name in a heartbeat commit's tree.
pub(crate) const HEARTBEAT_FILE: &str = "heartbeat.json";

/// Where a host's WIP goes when its worker was taken over by another host:
/// `recode/takeover/<branch>/<host>` (a branch name; the host sanitized like its ref).
pub(crate) fn side_branch(branch: &str, host: &str) -> String {
    format!("recode/takeover/{branch}/{}", ref_component(host))
}

/// `host` as one valid ref component (git's `check-ref-format` rules), never the same for
/// two hosts (SPEC 1.3: identities never collide): a plain id (`box-1.lan`, a generated
/// id) is kept as it is; any other gets [`sanitized`] plus `-` and 8 hex digits of a hash
/// of the id itself (`hostB.` → `hostB-<hash>`, beside `hostB`).
pub(crate) fn ref_component(host: &str) -> String {
    let s = sanitized(host);
    if s == host {
        return s;
    }
    let hash = id::digest(&format!("recode-host {host}"));
    format!("{s}-{}", &hash[..8])
}

/// `host` made a valid ref component ([`crate::fence::component`]); empty →
/// `unknown-host`.
pub(crate) fn sanitized(host: &str) -> String {
    let s = crate::fence::component(host);
    if s.is_empty() {
        "unknown-host".into()
    } else {
        s
    }
}

/// The heartbeat ref of `host`: `refs/recode/hosts/<ref_component(host)>`.
pub(crate) fn heartbeat_ref(host: &str) -> String {
    format!("{HOSTS_PREFIX}{}", ref_component(host))
}

/// Whether another host than `here` (an id) has a heartbeat ref in this repository (fetched by
/// `sync`): the repository is shared by several machines, so every resume claims its
/// attempt on the remote first (SPEC 1.2 "Several machines"). Only ref names are read.
pub(crate) fn other_hosts_known(repo: &gix::Repository, here: &str) -> bool {
    let mine = heartbeat_ref(here);
    crate::refs::list(repo, HOSTS_PREFIX).is_ok_and(|refs| refs.iter().any(|r| r.name != mine))
}

/// One worker in a heartbeat: its newest spawn's pid (none recorded: null) and whether
/// it is alive on that host.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub(crate) struct BeatEntry {
    /// The pid of the worker's newest `spawn`, when recorded.
    pub pid: Option<u32>,
    /// Whether the worker is running on its host (its pid probed alive, or recent activity).
    pub alive: bool,
}

/// The heartbeat blob, as written (keys in this order; `workers` sorted by branch).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub(crate) struct HeartbeatDoc {
    /// The host's id (`recode.hostId`, unsanitized).
    pub host: String,
    /// Its hostname, when it differs from the id (SPEC 1.3: a label shown beside it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// When it was written (RFC 3339 UTC, milliseconds).
    pub ts: String,
    /// The workers whose newest attempt ran on this host: branch → entry.
    pub workers: BTreeMap<String, BeatEntry>,
}

/// One host's heartbeat as read from its ref.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Heartbeat {
    /// The host (the blob's `host`; the ref's last component when it names none).
    pub host: String,
    /// The host's label (its hostname), when the blob names one.
    pub label: Option<String>,
    /// The ref's last component (the sanitized host).
    pub ref_host: String,
    /// The blob's `ts` (RFC 3339), as written.
    pub ts: String,
    /// `ts` parsed (`None`: unreadable): the writer's opinion, shown, never aged.
    pub at: Option<Timestamp>,
    /// When this host first saw the ref at its current value, on this host's clock (SPEC
    /// 1.3: what ages); set by [`read_heartbeats`], `None` from [`parse_heartbeat`] alone.
    pub seen: Option<seen::Sighting>,
    /// Branch → whether the host says it is alive (an entry without `alive`: false).
    pub workers: BTreeMap<String, bool>,
}

impl Heartbeat {
    /// Workers the blob lists.
    pub(crate) fn worker_count(&self) -> u32 {
        self.workers.len() as u32
    }

    /// Of those, the ones marked `"alive": true`.
    pub(crate) fn alive_count(&self) -> u32 {
        self.workers.values().filter(|a| **a).count() as u32
    }
}

/// Parse a heartbeat blob (`ref_host` names the ref's host, used when the blob has none).
///
/// Errors: a message when the text is not a JSON object with a string `ts`.
pub(crate) fn parse_heartbeat(ref_host: &str, text: &str) -> Result<Heartbeat, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("not JSON ({e})"))?;
    let ts = v
        .get("ts")
        .and_then(|t| t.as_str())
        .ok_or("no \"ts\" string")?
        .to_string();
    let host = v
        .get("host")
        .and_then(|h| h.as_str())
        .unwrap_or(ref_host)
        .to_string();
    let label = v.get("label").and_then(|h| h.as_str()).map(str::to_string);
    let workers = v
        .get("workers")
        .and_then(|w| w.as_object())
        .map(|w| {
            w.iter()
                .map(|(b, x)| {
                    let alive = x.get("alive").and_then(|a| a.as_bool()) == Some(true);
                    (b.clone(), alive)
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Heartbeat {
        host,
        label,
        ref_host: ref_host.to_string(),
        at: crate::clock::parse(&ts).ok(),
        seen: None,
        ts,
        workers,
    })
}

/// The longest heartbeat blob read (a heartbeat of 100 workers is 4 KiB): a larger one
/// is named and ignored, never read whole (SPEC 1.3: refs on the remote are untrusted).
pub(crate) const MAX_HEARTBEAT: u64 = 1 << 20;

/// Every heartbeat under [`HOSTS_PREFIX`], by ref component, each with when this host first
/// saw it at its current value (`seen`, at `now` when new), and one warning per ref that
/// cannot be read (a tag, a blob, a nested name, a huge or garbled blob): ignored.
pub(crate) fn read_heartbeats(
    repo: &gix::Repository,
    seen: &mut Seen,
    now: Timestamp,
) -> (BTreeMap<String, Heartbeat>, Vec<String>) {
    let mut out = BTreeMap::new();
    let mut warnings = Vec::new();
    let Ok(listed) = crate::refs::list(repo, HOSTS_PREFIX) else {
        return (out, warnings);
    };
    for r in listed {
        let name = r.name;
        let host = name.trim_start_matches(HOSTS_PREFIX).to_string();
        let crate::refs::Target::Id(id) = r.target else {
            continue;
        };
        let read = if host.contains('/') {
            Err("a nested name, not a host's heartbeat".to_string())
        } else {
            read_beat_blob(repo, id).and_then(|text| parse_heartbeat(&host, &text))
        };
        match read {
            Ok(mut h) => {
                let skew = h.at.map_or(0, |t| t.as_second() - now.as_second());
                h.seen = Some(seen.sight(&format!("beat {name}"), &id.to_string(), now, skew));
                out.insert(host, h);
            }
            Err(e) => warnings.push(untrusted_warning(&name, &e)),
        }
    }
    seen.retain("beat ", |k| {
        out.contains_key(
            k.trim_start_matches("beat ")
                .trim_start_matches(HOSTS_PREFIX),
        )
    });
    (out, warnings)
}

/// The warning for a ref under `refs/recode/` that is not what git-recode writes: named,
/// ignored, and how to remove it from the remote and here.
pub(crate) fn untrusted_warning(name: &str, why: &str) -> String {
    format!(
        "ignoring {name}: {why}; remove it with `git push origin :{name}` and `git update-ref -d {name}`"
    )
}

/// The text of the one blob in the tree of the commit `id`, read in bounded memory: the
/// object must be a commit (an annotated tag is refused, not peeled), its blob at most
/// [`MAX_HEARTBEAT`] bytes.
pub(crate) fn read_beat_blob(repo: &gix::Repository, id: gix::ObjectId) -> Result<String, String> {
    let header = |id: gix::ObjectId| repo.find_header(id).map_err(|e| e.to_string());
    let h = header(id)?;
    if h.kind() != gix::object::Kind::Commit {
        return Err(format!("a {}, not a heartbeat commit", h.kind()));
    }
    if h.size() > 64 << 10 {
        return Err(format!("a commit of {} bytes", h.size()));
    }
    let commit = repo
        .find_commit(id)
        .map_err(|e| format!("not a commit ({e})"))?;
    let tree_id = commit.tree_id().map_err(|e| e.to_string())?.detach();
    if header(tree_id)?.size() > 64 << 10 {
        return Err("a huge tree".into());
    }
    let tree = repo.find_tree(tree_id).map_err(|e| e.to_string())?;
    let decoded = tree.decode().map_err(|e| e.to_string())?;
    let entry = decoded
        .entries
        .iter()
        .find(|e| e.mode.is_blob())
        .ok_or("its tree holds no blob")?;
    let oid = entry.oid.to_owned();
    let size = header(oid)?.size();
    if size > MAX_HEARTBEAT {
        return Err(format!(
            "a heartbeat of {size} bytes (at most {MAX_HEARTBEAT} are read)"
        ));
    }
    let blob = repo.find_blob(oid).map_err(|e| e.to_string())?;
    blob.data
        .to_str()
        .map(str::to_string)
        .map_err(|_| "the blob is not UTF-8".to_string())
}

/// Whether `e` is about `branch` (an event naming no branch is about every branch of its
/// task, SPEC 1.2 "Several branches of one task").
fn on_branch(e: &Event, branch: &str) -> bool {
    e.branch.as_deref().is_none_or(|b| b == branch)
}

/// The host an attempt entry names, and whether it names it by id (the entry carries its
/// writer's `label`, SPEC 1.3; without one it may be a 1.2 hostname): a `spawn`'s; a
/// `resume`'s when it names one. `None` for any other entry, and for a resume written
/// before 1.2 (its host is the attempt's before it).
pub(crate) fn named_host(e: &Event) -> Option<(&str, bool)> {
    match &e.body {
        Body::Spawn { host, label, .. } => Some((host, label.is_some())),
        Body::Resume {
            host: Some(h),
            label,
            ..
        } => Some((h, label.is_some())),
        _ => None,
    }
}

/// An attempt on a branch: its index in the events, its number, its host, and whether
/// that host is named by id ([`named_host`]).
struct Attempt {
    at: usize,
    attempt: u32,
    host: String,
    by_id: bool,
}

/// The attempts on `branch`, oldest first, each with its host (a resume naming none: the
/// attempt's before it); attempts before any host is known are left out.
fn attempts_on<'a>(events: &'a [Event], branch: &'a str) -> impl Iterator<Item = Attempt> + 'a {
    let mut host: Option<(String, bool)> = None;
    events
        .iter()
        .enumerate()
        .filter(move |(_, e)| on_branch(e, branch))
        .filter_map(move |(i, e)| {
            let attempt = match &e.body {
                Body::Spawn { attempt, .. } | Body::Resume { attempt, .. } => *attempt,
                _ => return None,
            };
            if let Some((h, by_id)) = named_host(e) {
                host = Some((h.to_string(), by_id));
            }
            let (host, by_id) = host.clone()?;
            Some(Attempt {
                at: i,
                attempt,
                host,
                by_id,
            })
        })
}

/// What an `exit` written now on `branch` by this host (`here` says whether an attempt's
/// host, named by id or not, is it: [`Me::is_named`]) names as the attempt it ends
/// ([`crate::model::event::Ends`]): this host's newest attempt on the branch
/// (the agent that ended ran here, though this ledger may already show another host's
/// takeover), else the newest attempt ([`newest_attempt`]'s host rule); `None` without one.
pub(crate) fn ends_now(
    events: &[Event],
    branch: &str,
    here: impl Fn(&str, bool) -> bool,
) -> Option<crate::model::event::Ends> {
    let (mut newest, mut ours) = (None, None);
    for a in attempts_on(events, branch) {
        let mine = here(&a.host, a.by_id);
        let this = crate::model::event::Ends {
            attempt: a.attempt,
            host: a.host,
        };
        if mine {
            ours = Some(this.clone());
        }
        newest = Some(this);
    }
    ours.or(newest)
}

/// The newest attempt (`spawn` or `resume`) on `branch` and its host: a `spawn`'s `host`;
/// a `resume`'s `host`, or, for a resume written before 1.2 without one, the host of the
/// attempt before it. Returns `(index into events, host)`; `None` without an attempt or
/// when no host is known.
pub(crate) fn newest_attempt(events: &[Event], branch: &str) -> Option<(usize, String)> {
    // Once a host is known every later attempt is listed: the last one is the newest.
    attempts_on(events, branch).last().map(|a| (a.at, a.host))
}

/// Whether the newest attempt on `branch` ran on this host (`me`), its host named by id
/// or not ([`Me::is_named`]).
pub(crate) fn newest_is_mine(events: &[Event], branch: &str, me: &Me) -> bool {
    attempts_on(events, branch)
        .last()
        .is_some_and(|a| me.is_named(&a.host, a.by_id))
}

/// The newest `takeover` of `branch` away from `this_host` that is newer than this host's
/// own newest attempt on it: `(index, the host that took it)`. SPEC 1.2: back on the old
/// host, `recover` sees the takeover and never pushes onto the branch. A takeover's
/// `from_host` is this host when it is this host's id, or when it names the attempt before
/// it and that attempt was this host's ([`Me::is_named`]: a 1.2 hostname only where that
/// attempt names no id).
pub(crate) fn taken_from(events: &[Event], branch: &str, me: &Me) -> Option<(usize, String)> {
    let mut own = None;
    let mut newest: Option<(String, bool)> = None;
    let mut taken = None;
    for (i, e) in events
        .iter()
        .enumerate()
        .filter(|(_, e)| on_branch(e, branch))
    {
        if let Some((h, by_id)) = named_host(e) {
            let mine = me.is_named(h, by_id);
            if mine {
                own = Some(i);
            }
            newest = Some((h.to_string(), mine));
        }
        if let Body::Takeover { from_host, host } = &e.body {
            let from_me = *from_host == me.id
                || newest
                    .as_ref()
                    .is_some_and(|(h, mine)| *mine && h == from_host);
            if from_me {
                taken = Some((i, host.clone()));
            }
        }
    }
    taken.filter(|(i, _)| own.is_none_or(|o| *i > o))
}

#[cfg(test)]
mod tests;
