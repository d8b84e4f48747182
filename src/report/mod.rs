//! `git recode report`: loop health at a glance, from the ledger alone (SPEC Commands:
//! `report`). Nothing here reads a worktree or asks the forge, so any clone that synced
//! the ledger (`git recode sync`) can show the fleet.
//!
//! [`build`] is pure: ledgers (and heartbeats) in, one [`ReportDoc`] out — the document
//! `--json` prints and the text ([`text`]) and the page ([`html`]) render.
//! - [`workers`]: the attention queue (workers that need a human: why, what lifts it) and
//!   the workers waiting on a reset or a blocker.
//! - [`timeline`]: each task's attempts (spawn to exit, outcome, host) and marks.
//! - [`ticks`]: `recover` runs inferred from its own events, their period and gaps, and
//!   outcomes per day.
//! - [`hosts`]: every host named by an attempt and its heartbeat ref, if any.

pub(crate) mod hosts;
pub(crate) mod html;
pub(crate) mod text;
pub(crate) mod ticks;
pub(crate) mod timeline;
pub(crate) mod workers;

use std::collections::BTreeMap;

use jiff::Timestamp;

use crate::clock;
use crate::config::Config;
use crate::ledger::{self, LedgerError, Ledgers};
use crate::wire::{ReportDoc, SCHEMA};

pub(crate) use hosts::Heartbeat;
pub(crate) use workers::Human;

/// What a report is built from, besides the ledgers.
#[derive(Clone, Debug)]
pub(crate) struct Options {
    /// The report's clock.
    pub now: Timestamp,
    /// Start of the window (`--since`): history before it is left out; `None`: all of it.
    pub since: Option<Timestamp>,
    /// `recode.maxAttempts` (the cap a worker is `capped` at).
    pub max_attempts: u32,
    /// The base branch, as a shell word: named in the command that mails a pushed
    /// worker's request when no forge can open it (`<base>` when not known).
    pub base: String,
    /// `recode.remote`'s URL without credentials, as a shell word: named in that command
    /// (`<remote URL>` when there is no such remote).
    pub remote_url: String,
    /// The workers the classifier decided on this machine, where their branch or worktree
    /// is at hand, by branch: `Some` when `status` calls it `needs-human`, `None` when not.
    /// For these the queue is the classifier's verdict (it equals `status`'s
    /// `needs-human`); other workers are judged from the ledger alone.
    pub at_hand: BTreeMap<String, Option<Human>>,
}

/// Build the report from `ledgers` and the hosts' `heartbeats` (pure).
pub(crate) fn build(ledgers: &Ledgers, heartbeats: &[Heartbeat], opts: &Options) -> ReportDoc {
    let (queue, waiting) = workers::attention(ledgers, opts);
    ReportDoc {
        schema: SCHEMA,
        now: clock::whole_secs(opts.now),
        since: opts.since.map(clock::whole_secs),
        queue,
        waiting,
        tasks: timeline::tasks(ledgers, opts),
        ticks: ticks::ticks(ledgers, opts),
        days: ticks::days(ledgers, opts),
        hosts: hosts::hosts(ledgers, heartbeats),
    }
}

/// Read the ledgers (every notes ref `status` reads) and the heartbeat refs of `repo`, and
/// build the report. Bad ledger lines and unreadable heartbeats are warnings.
///
/// Errors: [`LedgerError`] when a notes ref or object cannot be read.
pub(crate) fn gather(
    repo: &gix::Repository,
    cfg: &Config,
    opts: &Options,
) -> Result<(ReportDoc, Vec<String>), LedgerError> {
    let refs = crate::snapshot::notes_refs(repo, cfg);
    let mut ledgers = ledger::read_all(repo, &refs)?;
    let mut warnings = std::mem::take(&mut ledgers.warnings);
    let (beats, more) = hosts::read_heartbeats(repo, opts.now);
    warnings.extend(more);
    Ok((build(&ledgers, &beats, opts), warnings))
}

/// A ledger or report time parsed; the epoch when unparseable (such lines sort first, as
/// in the ledger's own order).
pub(crate) fn at(text: &str) -> Timestamp {
    clock::parse(text).unwrap_or(Timestamp::UNIX_EPOCH)
}

/// Seconds from `a` to `b` (negative when `b` is earlier).
pub(crate) fn secs(a: Timestamp, b: Timestamp) -> i64 {
    b.as_second() - a.as_second()
}

/// The first line of `text`, at most `max` characters (an ellipsis marks a cut), with
/// control characters shown escaped (`\u{1b}`): final messages and reasons are untrusted
/// (SPEC 1.2 "Untrusted input stays out") and the text report goes to a terminal.
pub(crate) fn first_line(text: &str, max: usize) -> String {
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let clean: String = line
        .chars()
        .map(|c| {
            if c.is_control() {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect();
    if clean.chars().count() <= max {
        clean
    } else {
        let mut s: String = clean.chars().take(max.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

/// Ledgers from `(task, branch, ts, body)` rows, for the unit tests.
#[cfg(test)]
pub(crate) fn test_ledgers_on(events: &[(&str, &str, &str, crate::model::Body)]) -> Ledgers {
    let mut out = Ledgers::default();
    for (task, branch, ts, body) in events {
        let t = clock::parse(ts).unwrap();
        let l = out
            .by_task
            .entry(task.to_string())
            .or_insert_with(|| ledger::Ledger {
                task: task.to_string(),
                entries: Vec::new(),
            });
        l.entries.push(ledger::Entry {
            event: crate::model::Event::new(t, task, Some(branch), body.clone()),
            line: String::new(),
            ts: t,
        });
    }
    out
}

/// Ledgers from `(task, ts, body)` rows, every event on branch `b`.
#[cfg(test)]
pub(crate) fn test_ledgers(events: &[(&str, &str, crate::model::Body)]) -> Ledgers {
    let rows: Vec<(&str, &str, &str, crate::model::Body)> = events
        .iter()
        .map(|(task, ts, body)| (*task, "b", *ts, body.clone()))
        .collect();
    test_ledgers_on(&rows)
}

#[cfg(test)]
mod tests {
    #[test]
    fn first_line_escapes_control_characters_and_cuts() {
        assert_eq!(
            super::first_line("\n  \x1b[31mred\x07 done  \nsecond", 80),
            "\\u{1b}[31mred\\u{7} done"
        );
        assert_eq!(super::first_line("abcdef", 4), "abc…");
    }
}
