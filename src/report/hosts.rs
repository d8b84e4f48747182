//! Hosts: every machine an attempt ran on (SPEC `spawn` `host`), and each one's last
//! heartbeat when its ref exists (SPEC 1.2 "Several machines": `refs/recode/hosts/<host>`
//! points at a commit whose tree holds one JSON blob,
//! `{"host", "ts", "workers": {"<branch>": {"pid", "alive": bool}}}`).

use std::collections::BTreeMap;

use crate::ledger::Ledgers;
use crate::model::Body;
use crate::wire::{HeartbeatJson, HostJson};

pub(crate) use crate::hosts::Heartbeat;

/// Every heartbeat under [`crate::hosts::HOSTS_PREFIX`] (read by [`crate::hosts::read_heartbeats`]),
/// in ref order, and one warning per ref that cannot be read.
pub(crate) fn read_heartbeats(
    repo: &gix::Repository,
    now: jiff::Timestamp,
) -> (Vec<Heartbeat>, Vec<String>) {
    let mut seen = crate::hosts::Seen::load(repo);
    let (beats, warnings) = crate::hosts::read_heartbeats(repo, &mut seen, now);
    seen.save();
    (beats.into_values().collect(), warnings)
}

/// Every host named by a `spawn` or a heartbeat, in name order: its attempts, the workers
/// whose newest attempt ran there, its newest attempt's start, its heartbeat.
pub(crate) fn hosts(ledgers: &Ledgers, heartbeats: &[Heartbeat]) -> Vec<HostJson> {
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
                let at = crate::clock::whole_secs(e.ts);
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
            workers: b.worker_count(),
            alive: b.alive_count(),
        });
    }
    by.into_values().collect()
}
