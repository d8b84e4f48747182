//! `git recode log [<branch>]`.

use std::io::Write;

use crate::cli::{Ctx, Ui, out_err};
use crate::error::{EXIT_OK, Error};
use crate::hook::pickup;
use crate::ledger::{self, Event, Line};
use crate::snapshot;

/// Show the ledger of one task, or of all tasks, in ledger order
///
/// Example: `git recode log feat/issue-12-parser --json | jq -c 'select(.kind=="exit")'`
#[derive(clap::Args, Debug)]
pub struct LogArgs {
    /// A worker's branch (its task's ledger); all tasks when omitted
    #[arg(value_parser = crate::cli::branch::parse)]
    pub branch: Option<String>,
    /// Print JSON Lines: one event a line, ordered by ts, then task, then seq, then line
    #[arg(long)]
    pub json: bool,
}

/// Run `log`: lines are written as they are produced (the first one flushed at once), so
/// `git recode log --json | head -1` ends early; a closed pipe ends the run quietly.
///
/// Errors: ledger read errors; [`Error::UnknownBranch`] when the branch's task has no ledger.
pub fn run(args: LogArgs, ui: &Ui) -> Result<i32, Error> {
    let ctx = Ctx::open(ui)?;
    let refs = snapshot::notes_refs(&ctx.repo, &ctx.cfg);
    let mut out = Out::new(args.json, ui);
    match &args.branch {
        Some(b) => {
            // One task's note: the only one read.
            let task = ctx.cfg.key_of(b);
            let (l, warnings) = ledger::read_task(&ctx.repo, &refs, &task)?;
            ctx.ui.warn(&warnings);
            if l.entries.is_empty()
                && crate::repo::tip(&ctx.repo, &format!("refs/heads/{b}")).is_none()
            {
                return Err(ctx.unknown_branch(b));
            }
            let events: Vec<Event> = l.events().cloned().collect();
            let mut found = unledgered(pickup::pending(&ctx.repo, &ctx.cfg, b, &task, &events)?);
            for e in &l.entries {
                out.write_before(&mut found, e.ts, &task)?;
                out.write(&e.line, Some(&e.event))?;
            }
            out.write_before(&mut found, jiff::Timestamp::MAX, "")?;
        }
        None => {
            let mut found = pending_everywhere(&ctx, &refs)?;
            let mut stream = ledger::Stream::open(&ctx.repo, &refs)?;
            for line in stream.by_ref() {
                let Line { line, ts, task, .. } = line?;
                out.write_before(&mut found, ts, &task)?;
                out.write(&line, None)?;
            }
            out.write_before(&mut found, jiff::Timestamp::MAX, "")?;
            out.flush()?;
            ctx.ui.warn(&stream.warnings);
            if out.first && !args.json {
                writeln!(
                    out.w,
                    "no ledger events yet (`git recode record spawn <branch>` ledgers an attempt's start)"
                )
                .map_err(out_err)?;
            }
        }
    }
    out.flush()?;
    Ok(EXIT_OK)
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
fn pending_everywhere(ctx: &Ctx, refs: &[String]) -> Result<Vec<(jiff::Timestamp, Event)>, Error> {
    let mut found = Vec::new();
    let none = ledger::Ledgers::default();
    for (branch, task) in pickup::local_worker_branches(&ctx.repo, &ctx.cfg, &none)? {
        let (l, _) = ledger::read_task(&ctx.repo, refs, &task)?;
        let events: Vec<Event> = l.events().cloned().collect();
        found.extend(pickup::pending(
            &ctx.repo, &ctx.cfg, &branch, &task, &events,
        )?);
    }
    Ok(unledgered(found))
}

/// Buffered stdout that flushes its first line at once: the ledger's lines as stored with
/// `--json`, else through the [`crate::render::Screen`] (no control character raw).
struct Out {
    w: std::io::BufWriter<Box<dyn Write>>,
    json: bool,
    first: bool,
}

impl Out {
    fn new(json: bool, ui: &Ui) -> Out {
        let inner: Box<dyn Write> = if json {
            Box::new(ui.out())
        } else {
            Box::new(ui.screen())
        };
        Out {
            w: std::io::BufWriter::with_capacity(64 * 1024, inner),
            json,
            first: true,
        }
    }

    /// Write one ledger line: as stored with `--json`, else the human line (from `event`
    /// when already parsed).
    fn write(&mut self, line: &str, event: Option<&Event>) -> Result<(), Error> {
        if self.json {
            writeln!(self.w, "{line}").map_err(out_err)?;
        } else {
            let parsed;
            let ev = match event {
                Some(e) => e,
                None => {
                    parsed = serde_json::from_str::<Event>(line)
                        .expect("the stream yields only lines that parsed as events");
                    &parsed
                }
            };
            writeln!(self.w, "{}", human(ev)).map_err(out_err)?;
        }
        if std::mem::take(&mut self.first) {
            self.flush()?;
        }
        Ok(())
    }

    /// Write the pending milestones (`found`, oldest last) that sort before `(ts, task)`.
    fn write_before(
        &mut self,
        found: &mut Vec<(jiff::Timestamp, Event)>,
        ts: jiff::Timestamp,
        task: &str,
    ) -> Result<(), Error> {
        while let Some((t, e)) = found.last() {
            let before = *t < ts
                || (*t == ts && snapshot::task_order(&e.task, task) != std::cmp::Ordering::Greater);
            if !before {
                break;
            }
            let (_, e) = found.pop().expect("looked at it above");
            self.write(&e.canonical(), Some(&e))?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Error> {
        self.w.flush().map_err(out_err)
    }
}

/// One human line: `ts  task  #seq  kind  details`.
fn human(ev: &Event) -> String {
    let mut v = serde_json::to_value(ev).unwrap_or_default();
    if let Some(m) = v.as_object_mut() {
        for k in ["v", "ts", "seq", "task", "kind", "branch"] {
            m.remove(k);
        }
    }
    let details: Vec<String> = v
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| match v {
                    serde_json::Value::String(s) => {
                        let s = s.lines().next().unwrap_or("");
                        // A value with spaces is quoted, so it ends where its quote does.
                        if s.is_empty() || s.contains(|c: char| c.is_whitespace() || c == '"') {
                            format!(
                                "{k}={}",
                                crate::fence::shown(&serde_json::Value::from(s).to_string())
                            )
                        } else {
                            format!("{k}={}", crate::fence::shown(s))
                        }
                    }
                    other => format!("{k}={other}"),
                })
                .collect()
        })
        .unwrap_or_default();
    let mut line = format!(
        "{}  {:<6} #{:<3} {:<10} {}",
        crate::clock::format(ev.ts),
        crate::fence::shown(&ev.task),
        ev.seq,
        ev.body.kind(),
        details.join(" ")
    );
    if ev.seq == 0 {
        line.push_str(" (from the commit's trailer: not ledgered yet)");
    }
    line
}
