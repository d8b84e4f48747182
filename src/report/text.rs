//! The report as text for a terminal: every line fits 80 columns (long sentences wrap
//! with a hanging indent); colour only through [`Style`] (a terminal, no `NO_COLOR`).

use jiff::Timestamp;

use super::secs;
use crate::clock;
use crate::fence::shown;
use crate::render::{ALARM, BOLD, DIM, GOOD, Look, PENDING, QUIET, STRAY, Style};
use crate::wire::{AttemptJson, ReportDoc, TaskHistoryJson};

/// The width every line fits in.
pub(crate) const WIDTH: usize = 80;
/// Columns of a task's lane on the timeline.
const LANE: usize = 44;

fn t(s: &Timestamp) -> Timestamp {
    *s
}

/// `2026-11-20 12:00`.
fn when(s: &Timestamp) -> String {
    t(s).strftime("%Y-%m-%d %H:%M").to_string()
}

/// `12:00` on the report's day, else `11-19 12:00`.
fn short(s: &Timestamp, now: &Timestamp) -> String {
    if s.strftime("%Y-%m-%d").to_string() == now.strftime("%Y-%m-%d").to_string() {
        t(s).strftime("%H:%M").to_string()
    } else {
        t(s).strftime("%m-%d %H:%M").to_string()
    }
}

/// `3m ago` (or `in 3m` for a time after `now`).
fn ago(s: &Timestamp, now: &Timestamp) -> String {
    let d = secs(t(s), t(now));
    if d >= 0 {
        format!("{} ago", clock::human_secs(d))
    } else {
        format!("in {}", clock::human_secs(-d))
    }
}

/// Wrap `text` to [`WIDTH`], the first line after `first`, the rest after `indent` spaces.
fn wrap(out: &mut String, first: &str, indent: usize, text: &str) {
    let mut line = first.to_string();
    let mut empty = first.trim().is_empty();
    for word in text.split(' ') {
        let len = line.chars().count();
        if !empty && len + 1 + word.chars().count() > WIDTH {
            out.push_str(&line);
            out.push('\n');
            line = " ".repeat(indent);
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(&line);
    out.push('\n');
}

/// `1 host`, `2 hosts`.
fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// `text` cut to `n` characters (an ellipsis marks a cut), padded to `n`.
fn fit(text: &str, n: usize) -> String {
    let count = text.chars().count();
    if count <= n {
        format!("{text:<n$}")
    } else {
        let mut s: String = text.chars().take(n - 1).collect();
        s.push('…');
        s
    }
}

/// The lane letter of an outcome.
pub(crate) fn outcome_letter(outcome: Option<&str>) -> char {
    match outcome {
        Some("success") => 'S',
        Some("failed") => 'F',
        Some("transient") => 'T',
        Some("needs-human") => 'H',
        Some("blocked") => 'B',
        _ => '>',
    }
}

fn letter_look(c: char) -> Look {
    match c {
        'S' | 'P' => GOOD,
        'F' | 'H' | 'E' => ALARM,
        'T' | 'B' => PENDING,
        'D' => QUIET,
        'w' | 'm' => STRAY,
        _ => DIM,
    }
}

/// The lane letter of a mark kind.
fn mark_letter(kind: &str) -> Option<char> {
    Some(match kind {
        "milestone" => 'm',
        "wip" => 'w',
        "published" => 'P',
        "deleted" => 'D',
        "escalated" => 'E',
        "cleared" => 'c',
        _ => return None,
    })
}

/// The span a timeline shows (text and page): the window's start, else the oldest
/// attempt's start (else the oldest mark), to `now`; older marks sit at its left edge.
pub(crate) fn span_of(doc: &ReportDoc) -> (Timestamp, Timestamp) {
    let now = t(&doc.now);
    let starts = doc
        .tasks
        .iter()
        .flat_map(|k| k.attempts.iter().map(|a| t(&a.start)));
    let marks = doc
        .tasks
        .iter()
        .flat_map(|k| k.marks.iter().map(|m| t(&m.ts)));
    let oldest = starts.min().or_else(|| marks.min()).unwrap_or(now);
    let from = doc.since.as_ref().map(t).unwrap_or(oldest).min(now);
    (from, now)
}

fn column(at: Timestamp, from: Timestamp, now: Timestamp) -> usize {
    let total = secs(from, now).max(1) as f64;
    let x = secs(from, at).clamp(0, secs(from, now).max(0)) as f64;
    ((x / total) * (LANE - 1) as f64).round() as usize
}

/// One task's lane: attempts as `=` from start to end, the outcome's letter at the end
/// (`>` still open), marks' letters on top.
fn lane(k: &TaskHistoryJson, from: Timestamp, now: Timestamp) -> Vec<char> {
    let mut cells = vec![' '; LANE];
    for a in &k.attempts {
        let s = column(t(&a.start), from, now);
        let e = column(a.end.as_ref().map(t).unwrap_or(now), from, now);
        for c in cells.iter_mut().take(e + 1).skip(s) {
            *c = '=';
        }
        cells[e] = outcome_letter(a.outcome.as_deref());
    }
    for m in &k.marks {
        if let Some(c) = mark_letter(&m.kind) {
            cells[column(t(&m.ts), from, now)] = c;
        }
    }
    cells
}

fn attempt_line(a: &AttemptJson, now: &Timestamp) -> String {
    let mut s = format!("#{} ", a.attempt);
    if let Some(agent) = &a.agent {
        s.push_str(&shown(agent));
        s.push(' ');
    }
    s.push_str(&format!("on {} ", shown(a.host.as_deref().unwrap_or("?"))));
    s.push_str(&short(&a.start, now));
    match (&a.end, &a.outcome) {
        (Some(e), Some(o)) => {
            s.push_str(&format!("–{} {o}", short(e, now)));
            if let Some(m) = a.message.as_deref().filter(|m| !m.is_empty()) {
                s.push_str(&format!(": {}", shown(m)));
            }
        }
        _ => s.push_str(" (no exit yet)"),
    }
    s
}

/// The counts line: `9 tasks, 2 need a human, 0 waiting, 2 recover runs, 1 host`.
pub(crate) fn summary(doc: &ReportDoc) -> String {
    format!(
        "{}, {} need a human, {} waiting, {}, {}",
        plural(doc.tasks.len(), "task"),
        doc.queue.len(),
        doc.waiting.len(),
        plural(doc.ticks.runs.len(), "recover run"),
        plural(doc.hosts.len(), "host")
    )
}

/// The title line (`git recode report: <now> UTC, <window>`) and the counts line.
fn header(o: &mut String, doc: &ReportDoc, style: Style) {
    let window = match &doc.since {
        Some(s) => format!("since {}", when(s)),
        None => "whole ledger".to_string(),
    };
    o.push_str(&format!(
        "{} {} UTC, {window}\n",
        style.paint("git recode report:", BOLD),
        when(&doc.now)
    ));
    o.push_str(&format!("{}\n", summary(doc)));
}

/// `NEEDS A HUMAN (n)`: each queued worker with its cause, since when, why, and the
/// numbered steps that lift it (`none` when the queue is empty).
fn needs_human(o: &mut String, doc: &ReportDoc, style: Style) {
    o.push_str(&format!(
        "{}\n",
        style.paint(&format!("NEEDS A HUMAN ({})", doc.queue.len()), ALARM)
    ));
    if doc.queue.is_empty() {
        o.push_str("  none\n");
    }
    for q in &doc.queue {
        let on = q
            .host
            .as_ref()
            .map(|h| format!(" on {}", shown(h)))
            .unwrap_or_default();
        wrap(
            o,
            &format!(
                "  {} {}",
                style.paint(&shown(&q.branch), BOLD),
                shown(&q.cause)
            ),
            4,
            &format!("{}{on}", ago(&q.since, &doc.now)),
        );
        wrap(o, "    why:", 6, &q.why);
        for (i, step) in q.lift.iter().enumerate() {
            wrap(o, &format!("    {}.", i + 1), 7, &shown(step));
        }
    }
}

/// `WAITING (n)`: each waiting worker with what it waits on (a reset, a blocker) and
/// what lifts it (`none` when nothing waits).
fn waiting(o: &mut String, doc: &ReportDoc, style: Style) {
    o.push_str(&format!(
        "{}\n",
        style.paint(&format!("WAITING ({})", doc.waiting.len()), BOLD)
    ));
    if doc.waiting.is_empty() {
        o.push_str("  none\n");
    }
    for w in &doc.waiting {
        let what = match (&w.until, &w.blocker) {
            (Some(u), _) => format!("a reset until {} ({})", when(u), ago(u, &doc.now)),
            (None, Some(b)) => format!("blocker {} since {}", shown(b), when(&w.since)),
            (None, None) => format!("since {}", when(&w.since)),
        };
        wrap(
            o,
            &format!("  {}", shown(&w.branch)),
            4,
            &format!("waits on {what}"),
        );
        if let Some(l) = &w.lift {
            wrap(o, "    lift:", 6, l);
        }
    }
}

/// `TIMELINE` with the span's ends over the lanes: each task's lane (its letters
/// painted), then one line per attempt, then the lane legend.
fn timeline(o: &mut String, doc: &ReportDoc, style: Style) {
    let (from, now) = span_of(doc);
    let left = short(&from, &doc.now);
    let right = short(&doc.now, &doc.now);
    let pad = LANE.saturating_sub(left.chars().count() + right.chars().count());
    o.push_str(&format!(
        "{}{}{left}{}{right}\n",
        style.paint("TIMELINE", BOLD),
        " ".repeat(2 + 4 + 1 + 20 + 1 - 8),
        " ".repeat(pad)
    ));
    if doc.tasks.is_empty() {
        o.push_str("  no attempts in the window\n");
    }
    for k in &doc.tasks {
        let cells: String = lane(k, from, now)
            .into_iter()
            .map(|c| {
                if c == ' ' || c == '=' {
                    c.to_string()
                } else {
                    style.paint(&c.to_string(), letter_look(c))
                }
            })
            .collect();
        let branch = shown(&k.branches.join(","));
        o.push_str(&format!(
            "  {:>4} {} {cells}\n",
            fit(&shown(&k.task), 4).trim_end(),
            fit(&branch, 20)
        ));
        for a in &k.attempts {
            o.push_str(&format!(
                "{}\n",
                fit(&format!("         {}", attempt_line(a, &doc.now)), WIDTH).trim_end()
            ));
        }
    }
    o.push_str(
        "  lane: = attempt  S success  F failed  T transient  H needs-human  B blocked\n        > no exit yet  m milestone  w WIP  P published  D deleted  E escalated\n",
    );
}

/// `TICKS (recover runs)`: the runs' count, median period and last run, then each gap
/// (the loop down), painted as pending.
fn ticks(o: &mut String, doc: &ReportDoc, style: Style) {
    o.push_str(&format!("{}\n", style.paint("TICKS (recover runs)", BOLD)));
    let runs = &doc.ticks.runs;
    match (runs.last(), doc.ticks.period_seconds) {
        (None, _) => o.push_str("  no recover run in the window\n"),
        (Some(last), p) => {
            let every = p
                .map(|p| format!(", every {} (median)", clock::human_secs(p)))
                .unwrap_or_default();
            o.push_str(&format!(
                "  {} runs{every}; last {} ({})\n",
                runs.len(),
                when(&last.start),
                ago(&last.end, &doc.now)
            ));
        }
    }
    for g in &doc.ticks.gaps {
        let line = match &g.to {
            Some(to) => format!(
                "  gap: {} to {} ({}): the loop was down",
                when(&g.from),
                when(to),
                clock::human_secs(g.seconds)
            ),
            None => format!(
                "  gap: no run since {} ({}): the loop is down",
                when(&g.from),
                clock::human_secs(g.seconds)
            ),
        };
        o.push_str(&format!("{}\n", style.paint(&line, PENDING)));
    }
}

/// `OUTCOMES PER DAY`: one row of counts per day with an exit.
fn outcomes(o: &mut String, doc: &ReportDoc, style: Style) {
    o.push_str(&format!("{}\n", style.paint("OUTCOMES PER DAY", BOLD)));
    if doc.days.is_empty() {
        o.push_str("  no exit in the window\n");
        return;
    }
    o.push_str("  day          success  failed  transient  needs-human  blocked\n");
    for d in &doc.days {
        let n = |k: &str| d.outcomes.get(k).copied().unwrap_or(0);
        o.push_str(&format!(
            "  {}  {:>7}  {:>6}  {:>9}  {:>11}  {:>7}\n",
            d.date,
            n("success"),
            n("failed"),
            n("transient"),
            n("needs-human"),
            n("blocked")
        ));
    }
}

/// `HOSTS`: one row per host (workers, attempts, last attempt, heartbeat), cut to
/// [`WIDTH`].
fn hosts(o: &mut String, doc: &ReportDoc, style: Style) {
    o.push_str(&format!("{}\n", style.paint("HOSTS", BOLD)));
    if doc.hosts.is_empty() {
        o.push_str("  no host recorded\n");
        return;
    }
    o.push_str("  host                 workers  attempts  last attempt      heartbeat\n");
    for h in &doc.hosts {
        let beat = match &h.heartbeat {
            // Another host's own claim, as it wrote it: a time when it reads as one.
            Some(b) => match clock::parse(&b.ts) {
                Ok(at) => format!("{} ({}/{} alive)", ago(&at, &doc.now), b.alive, b.workers),
                Err(_) => format!("{} ({}/{} alive)", shown(&b.ts), b.alive, b.workers),
            },
            None => "none".to_string(),
        };
        let line = format!(
            "  {} {:>7}  {:>8}  {:<16}  {beat}",
            fit(&shown(&h.host), 20),
            h.workers,
            h.attempts,
            h.last_attempt
                .as_ref()
                .map(when)
                .unwrap_or_else(|| "-".into()),
        );
        o.push_str(&format!("{}\n", fit(&line, WIDTH).trim_end()));
    }
}

/// Render the whole report: its sections in order, a blank line between them.
pub(crate) fn render(doc: &ReportDoc, style: Style) -> String {
    let mut o = String::new();
    header(&mut o, doc, style);
    let sections: [fn(&mut String, &ReportDoc, Style); 6] =
        [needs_human, waiting, timeline, ticks, outcomes, hosts];
    for section in sections {
        o.push('\n');
        section(&mut o, doc, style);
    }
    o
}
