//! Hosts: every machine an attempt ran on (SPEC `spawn` `host`), and each one's last
//! heartbeat when its ref exists (SPEC 1.2 "Several machines": `refs/recode/hosts/<host>`
//! points at a commit whose tree holds one JSON blob,
//! `{"host", "ts", "workers": {"<branch>": {"pid", "alive": bool}}}`).

use std::collections::BTreeMap;

use gix::bstr::ByteSlice;

use crate::ledger::{Body, Ledgers};
use crate::wire::{HeartbeatJson, HostJson};

/// Where heartbeats live, one ref a host.
pub const HOSTS_PREFIX: &str = "refs/recode/hosts/";

/// One host's heartbeat as read from its ref.
#[derive(Clone, Debug, PartialEq)]
pub struct Heartbeat {
    /// The host (the ref's last component; the blob's `host` when it names one).
    pub host: String,
    /// The blob's `ts` (RFC 3339), as written.
    pub ts: String,
    /// Workers the blob lists.
    pub workers: u32,
    /// Of those, the ones marked `"alive": true`.
    pub alive: u32,
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
    let workers = v.get("workers").and_then(|w| w.as_object());
    Ok(Heartbeat {
        host,
        ts,
        workers: workers.map_or(0, |w| w.len() as u32),
        alive: workers.map_or(0, |w| {
            w.values()
                .filter(|x| x.get("alive").and_then(|a| a.as_bool()) == Some(true))
                .count() as u32
        }),
    })
}

/// Every heartbeat under [`HOSTS_PREFIX`], and one warning per ref that cannot be read.
pub fn read_heartbeats(repo: &gix::Repository) -> (Vec<Heartbeat>, Vec<String>) {
    let mut out = Vec::new();
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
        match read_one(repo, r).and_then(|text| parse_heartbeat(&host, &text)) {
            Ok(h) => out.push(h),
            Err(e) => warnings.push(format!("heartbeat {name} cannot be read: {e}")),
        }
    }
    (out, warnings)
}

/// The text of the one blob in the tree of the commit `r` points at.
fn read_one(repo: &gix::Repository, mut r: gix::Reference<'_>) -> Result<String, String> {
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

/// Every host named by a `spawn` or a heartbeat, in name order: its attempts, the workers
/// whose newest attempt ran there, its newest attempt's start, its heartbeat.
pub fn hosts(ledgers: &Ledgers, heartbeats: &[Heartbeat]) -> Vec<HostJson> {
    let mut by: BTreeMap<String, HostJson> = BTreeMap::new();
    let blank = |host: &str| HostJson {
        host: host.to_string(),
        workers: 0,
        attempts: 0,
        last_attempt: None,
        heartbeat: None,
    };
    for l in ledgers.by_task.values() {
        let mut owner: BTreeMap<Option<&str>, &str> = BTreeMap::new();
        for e in l.entries.iter() {
            if let Body::Spawn { host, .. } = &e.event.body {
                let h = by.entry(host.clone()).or_insert_with(|| blank(host));
                h.attempts += 1;
                let at = crate::clock::format_secs(e.ts);
                if h.last_attempt.as_ref().is_none_or(|l| *l < at) {
                    h.last_attempt = Some(at);
                }
                owner.insert(e.event.branch.as_deref(), host);
            }
        }
        for host in owner.values() {
            if let Some(h) = by.get_mut(*host) {
                h.workers += 1;
            }
        }
    }
    for b in heartbeats {
        by.entry(b.host.clone())
            .or_insert_with(|| blank(&b.host))
            .heartbeat = Some(HeartbeatJson {
            ts: b.ts.clone(),
            workers: b.workers,
            alive: b.alive,
        });
    }
    by.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heartbeat_counts_workers_and_the_alive_ones() {
        let h = parse_heartbeat(
            "ref-name",
            r#"{"host":"box","ts":"2026-11-20T11:00:00Z","workers":{"a":{"pid":1,"alive":true},"b":{"pid":2,"alive":false},"c":{}}}"#,
        )
        .unwrap();
        assert_eq!(
            h,
            Heartbeat {
                host: "box".into(),
                ts: "2026-11-20T11:00:00Z".into(),
                workers: 3,
                alive: 1
            }
        );
        assert_eq!(
            parse_heartbeat("r", r#"{"ts":"x"}"#).unwrap().host,
            "r",
            "no host in the blob: the ref's"
        );
        assert_eq!(parse_heartbeat("r", "{}").unwrap_err(), "no \"ts\" string");
        assert!(
            parse_heartbeat("r", "nope")
                .unwrap_err()
                .starts_with("not JSON")
        );
    }
}
