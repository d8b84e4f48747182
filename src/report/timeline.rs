//! Each task's history: attempts as spans from `spawn`/`resume` to the `exit` naming the
//! same branch (SPEC 1.2: only an exit naming a branch ends its attempt), and the other
//! events as marks.

use jiff::Timestamp;

use super::{Options, first_line};
use crate::clock;
use crate::ledger::{Ledger, Ledgers};
use crate::model::{Body, Event};
use crate::wire::{AttemptJson, MarkJson, TaskHistoryJson};

fn ts(e: &Event) -> Timestamp {
    e.ts
}

/// Every task with an attempt or a mark in the window, in task order.
pub(crate) fn tasks(ledgers: &Ledgers, opts: &Options) -> Vec<TaskHistoryJson> {
    let mut out: Vec<TaskHistoryJson> = ledgers
        .by_task
        .values()
        .map(|l| task(l, opts))
        .filter(|t| !t.attempts.is_empty() || !t.marks.is_empty())
        .collect();
    out.sort_by(|a, b| crate::ledger::task_order(&a.task, &b.task));
    out
}

/// The attempts read so far, in ledger order, and which of them are still open.
#[derive(Default)]
struct Spans {
    attempts: Vec<AttemptJson>,
    /// Indexes into `attempts` with no exit yet.
    open: Vec<usize>,
}

impl Spans {
    /// Open attempt `a`: an attempt still open on its branch never gets its exit now.
    fn begin(&mut self, a: AttemptJson) {
        self.open.retain(|&i| self.attempts[i].branch != a.branch);
        self.open.push(self.attempts.len());
        self.attempts.push(a);
    }

    /// Where a resume on `branch` runs (the host of the branch's newest attempt), and the
    /// agent of the newest attempt.
    fn resumed_on(&self, branch: &Option<String>) -> (Option<String>, Option<String>) {
        let host = self
            .attempts
            .iter()
            .rev()
            .find(|a| a.branch == *branch)
            .and_then(|a| a.host.clone());
        let agent = self.attempts.iter().rev().find_map(|a| a.agent.clone());
        (host, agent)
    }

    /// The open attempt exit `e` ends: the newest open one of its branch; for an exit
    /// naming no branch the newest open one; else the newest open one naming no branch.
    /// With none, an attempt started by the exit itself (numbered after the others).
    fn ending(&mut self, e: &Event, at: jiff::Timestamp) -> &mut AttemptJson {
        let (attempts, open) = (&mut self.attempts, &mut self.open);
        let found = open
            .iter()
            .rposition(|&i| attempts[i].branch == e.branch)
            .or_else(|| (e.branch.is_none() && !open.is_empty()).then(|| open.len() - 1))
            .or_else(|| open.iter().rposition(|&i| attempts[i].branch.is_none()));
        let i = match found {
            Some(k) => open.remove(k),
            None => {
                let n = attempts.len() as u32 + 1;
                attempts.push(start(n, "exit", e, None, None, at));
                attempts.len() - 1
            }
        };
        &mut attempts[i]
    }
}

/// One task's history in the window.
pub(crate) fn task(l: &Ledger, opts: &Options) -> TaskHistoryJson {
    let mut spans = Spans::default();
    let mut marks = Vec::new();
    let mut hosts: Vec<String> = Vec::new();
    for e in l.events() {
        let at = clock::whole_secs(ts(e));
        match &e.body {
            Body::Spawn {
                attempt,
                host,
                agent,
                ..
            } => {
                if !hosts.contains(host) {
                    hosts.push(host.clone());
                }
                let a = start(*attempt, "spawn", e, Some(host.clone()), agent.clone(), at);
                spans.begin(a);
            }
            Body::Resume { attempt, .. } => {
                // A resume runs where the branch's newest attempt ran.
                let (host, agent) = spans.resumed_on(&e.branch);
                spans.begin(start(*attempt, "resume", e, host, agent, at));
            }
            Body::Exit {
                rc,
                outcome,
                message,
                ..
            } => {
                let a = spans.ending(e, at);
                a.end = Some(at);
                a.outcome = Some(outcome.as_str().to_string());
                a.rc = Some(*rc);
                a.message = message.as_deref().map(|m| first_line(m, 120));
            }
            body => {
                if let Some(detail) = mark_detail(body)
                    && opts.since.is_none_or(|s| ts(e) >= s)
                {
                    marks.push(MarkJson {
                        ts: at,
                        kind: body.kind().to_string(),
                        branch: e.branch.clone(),
                        detail,
                    });
                }
            }
        }
    }
    let mut attempts = spans.attempts;
    attempts.retain(|a| {
        let end = a.end.unwrap_or(opts.now);
        opts.since.is_none_or(|s| end >= s)
    });
    TaskHistoryJson {
        task: l.task.clone(),
        branches: super::workers::branches(l),
        hosts,
        attempts,
        marks,
    }
}

fn start(
    attempt: u32,
    by: &str,
    e: &Event,
    host: Option<String>,
    agent: Option<String>,
    at: jiff::Timestamp,
) -> AttemptJson {
    AttemptJson {
        attempt,
        started_by: by.into(),
        branch: e.branch.clone(),
        host,
        agent,
        start: at,
        end: None,
        outcome: None,
        rc: None,
        message: None,
    }
}

/// A mark's phrase, or `None` for events that are not marks (`classified`: a tick's
/// bookkeeping, shown with the ticks).
fn mark_detail(body: &Body) -> Option<String> {
    Some(match body {
        Body::Milestone { phase, .. } => format!("phase {}", first_line(phase, 40)),
        Body::Gate { passed, by, .. } => format!(
            "gate {} ({})",
            if *passed { "passed" } else { "failed" },
            match by {
                crate::model::GateBy::Recover => "recover",
                crate::model::GateBy::Record => "record",
            }
        ),
        Body::Wip {
            files,
            pushed,
            held,
            ..
        } => {
            let push = match (pushed, held) {
                (true, _) => "pushed".to_string(),
                (false, Some(h)) => format!("push held: {}", first_line(h, 60)),
                (false, None) => "not pushed".to_string(),
            };
            format!("WIP commit, {files} files, {push}")
        }
        Body::Published { pr, .. } => format!("published #{pr}"),
        Body::Deleted { worktree, .. } => match worktree {
            Some(w) => format!("deleted (worktree {w})"),
            None => "deleted".into(),
        },
        Body::Escalated { reason } => format!("escalated: {}", first_line(reason, 80)),
        Body::Cleared { reason } => match reason {
            Some(r) => format!("cleared: {}", first_line(r, 80)),
            None => "cleared".into(),
        },
        Body::Unblocked => "unblocked".into(),
        Body::Phantom { reason } => format!("phantom: {}", first_line(reason, 80)),
        // Attempts' starts and ends, `classified`, and kinds this version does not mark.
        _ => return None,
    })
}
