//! `log [<branch>]`: the ledger in ledger order, with the milestones still only in their
//! commits' trailers merged in where they sort.

use std::borrow::Cow;

use super::Session;
use crate::error::Error;
use crate::hook::pickup;
use crate::ledger::{self, Line};
use crate::model::Event;
use crate::snapshot;

/// One line of `log`: as stored in the ledger (`--json` prints it as it is), and the event
/// when already parsed.
pub struct LogLine<'a> {
    /// The ledger line as stored (a milestone not ledgered yet: its canonical line, `seq` 0).
    pub stored: &'a str,
    parsed: Option<&'a Event>,
}

impl LogLine<'_> {
    /// The event of the line.
    pub fn event(&self) -> Cow<'_, Event> {
        match self.parsed {
            Some(e) => Cow::Borrowed(e),
            None => Cow::Owned(
                serde_json::from_str::<Event>(self.stored)
                    .expect("the stream yields only lines that parsed as events"),
            ),
        }
    }
}

/// `log`: hand every line to `out` as it is produced (one task's ledger when `branch` is
/// given, else every task's, ordered by ts, then task, then seq, then line); returns how
/// many lines were handed. An error of `out` ends the run with it.
///
/// Errors: ledger read errors; [`Error::UnknownBranch`] when the branch's task has no
/// ledger and the branch does not exist.
pub fn log(
    s: &Session,
    branch: Option<&str>,
    out: &mut dyn FnMut(LogLine<'_>) -> Result<(), Error>,
) -> Result<usize, Error> {
    let refs = snapshot::notes_refs(&s.repo, &s.cfg);
    let mut n = 0usize;
    let mut emit = |l: LogLine<'_>| {
        n += 1;
        out(l)
    };
    match branch {
        Some(b) => {
            // One task's note: the only one read.
            let task = s.cfg.key_of(b);
            let (l, warnings) = ledger::read_task(&s.repo, &refs, &task)?;
            s.warn(warnings);
            if l.entries.is_empty()
                && crate::repo::tip(&s.repo, &format!("refs/heads/{b}")).is_none()
            {
                return Err(s.unknown_branch(b));
            }
            let events: Vec<Event> = l.events().cloned().collect();
            let mut found = unledgered(pickup::pending(&s.repo, &s.cfg, b, &task, &events)?);
            for e in &l.entries {
                write_before(&mut found, e.ts, &task, &mut emit)?;
                emit(LogLine {
                    stored: &e.line,
                    parsed: Some(&e.event),
                })?;
            }
            write_before(&mut found, jiff::Timestamp::MAX, "", &mut emit)?;
        }
        None => {
            let mut found = pending_everywhere(s, &refs)?;
            let mut stream = ledger::Stream::open(&s.repo, &refs)?;
            for line in stream.by_ref() {
                let Line { line, ts, task, .. } = line?;
                write_before(&mut found, ts, &task, &mut emit)?;
                emit(LogLine {
                    stored: &line,
                    parsed: None,
                })?;
            }
            write_before(&mut found, jiff::Timestamp::MAX, "", &mut emit)?;
            s.warn(std::mem::take(&mut stream.warnings));
        }
    }
    Ok(n)
}

/// Hand `out` the pending milestones (`found`, oldest last) that sort before `(ts, task)`.
fn write_before(
    found: &mut Vec<(jiff::Timestamp, Event)>,
    ts: jiff::Timestamp,
    task: &str,
    out: &mut dyn FnMut(LogLine<'_>) -> Result<(), Error>,
) -> Result<(), Error> {
    while let Some((t, e)) = found.last() {
        let before = *t < ts
            || (*t == ts && snapshot::task_order(&e.task, task) != std::cmp::Ordering::Greater);
        if !before {
            break;
        }
        let (_, e) = found.pop().expect("looked at it above");
        out(LogLine {
            stored: &e.canonical(),
            parsed: Some(&e),
        })?;
    }
    Ok(())
}

/// Milestones still only in their commits' trailers (the hook could not write them), each
/// with its time and task, oldest last (popped first): shown with `seq` 0 until a ledger
/// write picks them up.
fn unledgered(mut found: Vec<Event>) -> Vec<(jiff::Timestamp, Event)> {
    let mut out: Vec<(jiff::Timestamp, Event)> = found.drain(..).map(|e| (e.ts, e)).collect();
    // Stable ascending (a branch's milestones stay oldest commit first), then reversed.
    out.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| snapshot::task_order(&a.1.task, &b.1.task))
    });
    out.reverse();
    out
}

/// The pending milestones of every local worker branch, for `log` of all tasks: each
/// such branch's task note is read (the workers still at work, not the whole history).
fn pending_everywhere(
    s: &Session,
    refs: &[String],
) -> Result<Vec<(jiff::Timestamp, Event)>, Error> {
    let mut found = Vec::new();
    let none = ledger::Ledgers::default();
    for (branch, task) in pickup::local_worker_branches(&s.repo, &s.cfg, &none)? {
        let (l, _) = ledger::read_task(&s.repo, refs, &task)?;
        let events: Vec<Event> = l.events().cloned().collect();
        found.extend(pickup::pending(&s.repo, &s.cfg, &branch, &task, &events)?);
    }
    Ok(unledgered(found))
}
