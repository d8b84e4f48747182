//! Several machines (SPEC 1.2 "Several machines"): a worker belongs to the host of its
//! newest attempt (`spawn`/`resume` `host`); each host publishes a heartbeat ref,
//! `refs/recode/hosts/<host>`, a commit whose tree holds one blob `heartbeat.json`,
//! `{"host", "ts", "workers": {"<branch>": {"pid", "alive": bool}}}`.
//!
//! This module holds the pure rules over the ledger (whose a worker is, whether this
//! host's work was taken over) and the heartbeat's name and reading; `write.rs` writes
//! this host's heartbeat (gix objects and one compare-and-swap ref edit).

mod write;
pub use write::{BeatWorker, WriteError, write_heartbeat};

use std::collections::BTreeMap;

use gix::bstr::ByteSlice;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::model::{Body, Event};

/// Where heartbeats live, one ref a host.
pub const HOSTS_PREFIX: &str = "refs/recode/hosts/";

/// The one blob's name in a heartbeat commit's tree.
pub const HEARTBEAT_FILE: &str = "heartbeat.json";

/// Where a host's WIP goes when its worker was taken over by another host:
/// `recode/takeover/<branch>/<host>` (a branch name; the host sanitized like its ref).
pub fn side_branch(branch: &str, host: &str) -> String {
    format!("recode/takeover/{branch}/{}", ref_component(host))
}

/// `host` as one valid ref component (git's `check-ref-format` rules): every byte but
/// `[A-Za-z0-9._-]` becomes `-`, runs of `.` collapse to one, no leading `.`, no
/// trailing `.` or `.lock` (a leading `-` is fine inside a ref); empty → `unknown-host`. A plain host name (`box-1.lan`) is
/// kept as it is.
pub fn ref_component(host: &str) -> String {
    let mut s = String::with_capacity(host.len());
    for c in host.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' {
            c
        } else {
            '-'
        };
        if c == '.' && s.ends_with('.') {
            continue;
        }
        s.push(c);
    }
    let mut s = s.trim_start_matches('.').to_string();
    loop {
        if let Some(t) = s.strip_suffix(".lock") {
            s = t.to_string();
        } else if let Some(t) = s.strip_suffix('.') {
            s = t.to_string();
        } else {
            break;
        }
    }
    if s.is_empty() {
        "unknown-host".into()
    } else {
        s
    }
}

/// The heartbeat ref of `host`: `refs/recode/hosts/<ref_component(host)>`.
pub fn heartbeat_ref(host: &str) -> String {
    format!("{HOSTS_PREFIX}{}", ref_component(host))
}

/// Whether another host than `here` has a heartbeat ref in this repository (fetched by
/// `sync`): the repository is shared by several machines, so every resume claims its
/// attempt on the remote first (SPEC 1.2 "Several machines"). Only ref names are read.
pub fn other_hosts_known(repo: &gix::Repository, here: &str) -> bool {
    let mine = heartbeat_ref(here);
    repo.references()
        .ok()
        .and_then(|p| {
            p.prefixed(HOSTS_PREFIX).ok().map(|iter| {
                iter.flatten()
                    .any(|r| r.name().as_bstr() != mine.as_bytes())
            })
        })
        .unwrap_or(false)
}

/// One worker in a heartbeat: its newest spawn's pid (none recorded: null) and whether
/// it is alive on that host.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct BeatEntry {
    /// The pid of the worker's newest `spawn`, when recorded.
    pub pid: Option<u32>,
    /// Whether the worker is running on its host (its pid probed alive, or recent activity).
    pub alive: bool,
}

/// The heartbeat blob, as written (keys in this order; `workers` sorted by branch).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct HeartbeatDoc {
    /// The host's own name (`process::hostname()`, unsanitized).
    pub host: String,
    /// When it was written (RFC 3339 UTC, milliseconds).
    pub ts: String,
    /// The workers whose newest attempt ran on this host: branch → entry.
    pub workers: BTreeMap<String, BeatEntry>,
}

/// One host's heartbeat as read from its ref.
#[derive(Clone, Debug, PartialEq)]
pub struct Heartbeat {
    /// The host (the blob's `host`; the ref's last component when it names none).
    pub host: String,
    /// The ref's last component (the sanitized host).
    pub ref_host: String,
    /// The blob's `ts` (RFC 3339), as written.
    pub ts: String,
    /// `ts` parsed (`None`: unreadable, treated as a silent host).
    pub at: Option<Timestamp>,
    /// Branch → whether the host says it is alive (an entry without `alive`: false).
    pub workers: BTreeMap<String, bool>,
}

impl Heartbeat {
    /// Workers the blob lists.
    pub fn worker_count(&self) -> u32 {
        self.workers.len() as u32
    }

    /// Of those, the ones marked `"alive": true`.
    pub fn alive_count(&self) -> u32 {
        self.workers.values().filter(|a| **a).count() as u32
    }
}

/// Parse a heartbeat blob (`ref_host` names the ref's host, used when the blob has none).
///
/// Errors: a message when the text is not a JSON object with a string `ts`.
pub fn parse_heartbeat(ref_host: &str, text: &str) -> Result<Heartbeat, String> {
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
        ref_host: ref_host.to_string(),
        at: crate::clock::parse(&ts).ok(),
        ts,
        workers,
    })
}

/// Every heartbeat under [`HOSTS_PREFIX`], by ref component, and one warning per ref that
/// cannot be read.
pub fn read_heartbeats(repo: &gix::Repository) -> (BTreeMap<String, Heartbeat>, Vec<String>) {
    let mut out = BTreeMap::new();
    let mut warnings = Vec::new();
    let Ok(platform) = repo.references() else {
        return (out, warnings);
    };
    let Ok(iter) = platform.prefixed(HOSTS_PREFIX) else {
        return (out, warnings);
    };
    for r in iter.flatten() {
        let name = r.name().as_bstr().to_string();
        let host = name.trim_start_matches(HOSTS_PREFIX).to_string();
        match read_blob(repo, r).and_then(|text| parse_heartbeat(&host, &text)) {
            Ok(h) => {
                out.insert(host, h);
            }
            Err(e) => warnings.push(format!("heartbeat {name} cannot be read: {e}")),
        }
    }
    (out, warnings)
}

/// The text of the one blob in the tree of the commit `r` points at.
pub(crate) fn read_blob(
    repo: &gix::Repository,
    mut r: gix::Reference<'_>,
) -> Result<String, String> {
    let commit = r
        .peel_to_commit()
        .map_err(|e| format!("not a commit ({e})"))?;
    let tree = commit.tree().map_err(|e| e.to_string())?;
    let decoded = tree.decode().map_err(|e| e.to_string())?;
    let entry = decoded
        .entries
        .iter()
        .find(|e| e.mode.is_blob())
        .ok_or("its tree holds no blob")?;
    let blob = repo
        .find_blob(entry.oid.to_owned())
        .map_err(|e| e.to_string())?;
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

/// The newest attempt (`spawn` or `resume`) on `branch` and its host: a `spawn`'s `host`;
/// a `resume`'s `host`, or, for a resume written before 1.2 without one, the host of the
/// attempt before it. Returns `(index into events, host)`; `None` without an attempt or
/// when no host is known.
pub fn newest_attempt(events: &[Event], branch: &str) -> Option<(usize, String)> {
    let mut host: Option<String> = None;
    let mut at = None;
    for (i, e) in events
        .iter()
        .enumerate()
        .filter(|(_, e)| on_branch(e, branch))
    {
        match &e.body {
            Body::Spawn { host: h, .. } => {
                host = Some(h.clone());
                at = Some(i);
            }
            Body::Resume { host: h, .. } => {
                if let Some(h) = h {
                    host = Some(h.clone());
                }
                at = Some(i);
            }
            _ => {}
        }
    }
    Some((at?, host?))
}

/// Whether two host names are the same machine (compared as ref components, so a name
/// and its sanitized form agree).
pub fn same_host(a: &str, b: &str) -> bool {
    a == b || ref_component(a) == ref_component(b)
}

/// The newest `takeover` of `branch` away from `this_host` that is newer than this host's
/// own newest attempt on it: `(index, the host that took it)`. SPEC 1.2: back on the old
/// host, `recover` sees the takeover and never pushes onto the branch.
pub fn taken_from(events: &[Event], branch: &str, this_host: &str) -> Option<(usize, String)> {
    let own = events
        .iter()
        .enumerate()
        .filter(|(_, e)| on_branch(e, branch))
        .filter(|(_, e)| match &e.body {
            Body::Spawn { host, .. } => same_host(host, this_host),
            Body::Resume { host: Some(h), .. } => same_host(h, this_host),
            _ => false,
        })
        .map(|(i, _)| i)
        .next_back();
    events
        .iter()
        .enumerate()
        .filter(|(_, e)| on_branch(e, branch))
        .filter_map(|(i, e)| match &e.body {
            Body::Takeover { from_host, host } if same_host(from_host, this_host) => {
                Some((i, host.clone()))
            }
            _ => None,
        })
        .next_back()
        .filter(|(i, _)| own.is_none_or(|o| *i > o))
}

#[cfg(test)]
mod tests;
