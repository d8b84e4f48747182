//! `git recode log [<branch>]`.

use std::io::Write;

use crate::cli::{Ctx, out_err, warn_all};
use crate::error::{EXIT_OK, Error};
use crate::hook::pickup;
use crate::ledger::{self, Entry};
use crate::snapshot;

/// Show the ledger of one task, or of all tasks, in ledger order
///
/// Example: `git recode log feat/issue-12-parser --json | jq -c 'select(.kind=="exit")'`
#[derive(clap::Args, Debug)]
pub struct LogArgs {
    /// A worker's branch (its task's ledger); all tasks when omitted
    pub branch: Option<String>,
    /// Print JSON Lines: one event a line, ordered by ts, then task, then seq, then line
    #[arg(long)]
    pub json: bool,
}

/// Run `log`.
///
/// Errors: ledger read errors; [`Error::UnknownBranch`] when the branch's task has no ledger.
pub fn run(args: LogArgs) -> Result<i32, Error> {
    let ctx = Ctx::open()?;
    let refs = snapshot::notes_refs(&ctx.repo, &ctx.cfg);
    let mut entries: Vec<Entry> = match &args.branch {
        Some(b) => {
            let task = ctx.cfg.key_of(b);
            let (l, warnings) = ledger::read_task(&ctx.repo, &refs, &task)?;
            warn_all(&warnings);
            if l.entries.is_empty()
                && crate::repo::tip(&ctx.repo, &format!("refs/heads/{b}")).is_none()
            {
                return Err(Error::UnknownBranch { branch: b.clone() });
            }
            let events: Vec<ledger::Event> = l.events().cloned().collect();
            let found = pickup::pending(&ctx.repo, &ctx.cfg, b, &task, &events)?;
            l.entries.into_iter().chain(unledgered(found)).collect()
        }
        None => {
            let all = ledger::read_all(&ctx.repo, &refs)?;
            warn_all(&all.warnings);
            let found = pickup::pending_all(&ctx.repo, &ctx.cfg, &all)?;
            all.by_task
                .into_values()
                .flat_map(|l| l.entries)
                .chain(unledgered(found))
                .collect()
        }
    };
    entries.sort_by(|a, b| {
        a.ts.cmp(&b.ts)
            .then_with(|| snapshot::task_order(&a.event.task, &b.event.task))
            .then_with(|| a.event.seq.cmp(&b.event.seq))
            .then_with(|| a.line.cmp(&b.line))
    });
    let mut out = std::io::stdout().lock();
    for e in &entries {
        if args.json {
            writeln!(out, "{}", e.line).map_err(out_err)?;
        } else {
            writeln!(out, "{}", human(e)).map_err(out_err)?;
        }
    }
    Ok(EXIT_OK)
}

/// Milestones still only in their commits' trailers (the hook could not write them) as
/// entries: `seq` 0 until a ledger write picks them up.
fn unledgered(found: Vec<ledger::Event>) -> impl Iterator<Item = Entry> {
    found.into_iter().map(|event| Entry {
        line: event.canonical(),
        ts: crate::clock::parse(&event.ts).unwrap_or(jiff::Timestamp::UNIX_EPOCH),
        event,
    })
}

/// One human line: `ts  task  #seq  kind  details`.
fn human(e: &Entry) -> String {
    let ev = &e.event;
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
                        format!("{k}={s}")
                    }
                    other => format!("{k}={other}"),
                })
                .collect()
        })
        .unwrap_or_default();
    let mut line = format!(
        "{}  {:<6} #{:<3} {:<10} {}",
        ev.ts,
        ev.task,
        ev.seq,
        ev.body.kind(),
        details.join(" ")
    );
    if ev.seq == 0 {
        line.push_str(" (from the commit's trailer: not ledgered yet)");
    }
    line
}
