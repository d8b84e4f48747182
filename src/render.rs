//! Human and porcelain renderings of workers and ledgers. Renderers take `&mut impl Write`.
//!
//! Untrusted text (branch names, reasons quoting agents' messages, host names, pull
//! request checks) never reaches a terminal raw (SPEC 1.2 "Untrusted input stays out"):
//! every value is shown through [`crate::fence::shown`] where it is rendered, and human
//! output goes through [`Screen`], which escapes any control character left but the line
//! break and this palette's own colour codes. `--porcelain` fields are escaped the same way,
//! so no field holds a tab or a line break.

use std::io::{self, Write};

use crate::clock;
pub(crate) use crate::fence::shown;
use crate::model::{Action, State, Worker};

/// How human output looks: colour on or off. Decided once per run by the command layer
/// (`cli::Ui`, through [`decide_color`]) and passed to each renderer; machine output never
/// has any.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Style {
    /// Wrap cells in ANSI SGR codes.
    pub color: bool,
}

impl Style {
    /// `text` between `look`'s ANSI SGR codes and their reset when colour is on; `text`
    /// as it is otherwise.
    pub fn paint(&self, text: &str, look: Look) -> String {
        if self.color {
            format!("{}{text}{}", look.render(), look.render_reset())
        } else {
            text.to_string()
        }
    }
}

/// One look of a painted cell ([`anstyle::Style`]): the palette below.
pub(crate) type Look = anstyle::Style;

/// A writer for human output on a terminal: whatever is written to it reaches `W` with
/// every control character but `\n` escaped as [`crate::fence::shown`] does (C0, DEL, C1,
/// ESC and so every CSI and OSC sequence, CR, the bidirectional controls), except, when
/// colour is on, the SGR codes of this module's palette. Text is passed on a line at a time
/// (the rest at [`Write::flush`] and on drop), so a colour code split over two writes is
/// still recognised.
pub(crate) struct Screen<W: Write> {
    out: W,
    /// The palette's codes that pass (none without colour).
    allowed: Vec<String>,
    /// Bytes written since the last line break.
    pending: Vec<u8>,
}

impl<W: Write> Screen<W> {
    /// A screen over `out`, letting this palette's colour codes through when `style` has colour.
    pub(crate) fn new(out: W, style: Style) -> Screen<W> {
        let mut allowed: Vec<String> = if style.color {
            [BOLD, ALARM, GOOD, PENDING, QUIET, STRAY, DIM]
                .iter()
                .flat_map(|l| [l.render().to_string(), l.render_reset().to_string()])
                .collect()
        } else {
            Vec::new()
        };
        // Longest first, so a code is never cut at a shorter one's end.
        allowed.sort_by_key(|a| std::cmp::Reverse(a.len()));
        allowed.dedup();
        Screen {
            out,
            allowed,
            pending: Vec::new(),
        }
    }

    /// Write `line` (one line, its break included when it has one), escaped.
    fn emit(&mut self, line: &[u8]) -> io::Result<()> {
        let text = String::from_utf8_lossy(line);
        let mut shown = String::with_capacity(text.len());
        let mut rest: &str = &text;
        while let Some(c) = rest.chars().next() {
            if let Some(code) = self.allowed.iter().find(|a| rest.starts_with(a.as_str())) {
                shown.push_str(code);
                rest = &rest[code.len()..];
                continue;
            }
            if c == '\n' {
                shown.push(c);
            } else {
                shown.push_str(&crate::fence::shown(c.encode_utf8(&mut [0; 4])));
            }
            rest = &rest[c.len_utf8()..];
        }
        self.out.write_all(shown.as_bytes())
    }
}

impl<W: Write> Write for Screen<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        while let Some(i) = self.pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=i).collect();
            self.emit(&line)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        let rest = std::mem::take(&mut self.pending);
        if !rest.is_empty() {
            self.emit(&rest)?;
        }
        self.out.flush()
    }
}

impl<W: Write> Drop for Screen<W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

const fn fg(c: anstyle::AnsiColor) -> Look {
    anstyle::Style::new().fg_color(Some(anstyle::Color::Ansi(c)))
}

/// Headers and names: bold.
pub(crate) const BOLD: Look = anstyle::Style::new().bold();
/// Needs a human, failed: bold red.
pub(crate) const ALARM: Look = fg(anstyle::AnsiColor::Red).bold();
/// Published, succeeded: green.
pub(crate) const GOOD: Look = fg(anstyle::AnsiColor::Green);
/// Half done, transient, blocked: yellow.
pub(crate) const PENDING: Look = fg(anstyle::AnsiColor::Yellow);
/// Empty: cyan.
pub(crate) const QUIET: Look = fg(anstyle::AnsiColor::Cyan);
/// Orphaned, WIP and milestone marks: magenta.
pub(crate) const STRAY: Look = fg(anstyle::AnsiColor::Magenta);
/// Reasons, waiting: dim.
pub(crate) const DIM: Look = anstyle::Style::new().dimmed();

fn state_look(s: State) -> Look {
    match s {
        State::NeedsHuman => ALARM,
        State::Published | State::Publishable => GOOD,
        State::HalfDone => PENDING,
        State::Empty => QUIET,
        State::Orphaned => STRAY,
    }
}

fn action_look(a: Action) -> Look {
    match a {
        Action::Escalate => ALARM,
        Action::Wait | Action::None => DIM,
        _ => BOLD,
    }
}

/// Decide colour for stdout, as git does with the environment's conventions first:
/// `--color always|never`; then `NO_COLOR` (no colour) and `CLICOLOR_FORCE` (colour), read
/// by `anstyle-query`; then git's `color.ui` (`false`/`never`/`no`/`off`/`0`: none,
/// `always`: colour); then [`anstream`]'s terminal rule (a terminal, `CLICOLOR` not `0`,
/// `TERM` not `dumb`).
pub(crate) fn decide_color(choice: clap::ColorChoice, color_ui: Option<&str>) -> bool {
    match choice {
        clap::ColorChoice::Always => return true,
        clap::ColorChoice::Never => return false,
        clap::ColorChoice::Auto => {}
    }
    if anstyle_query::no_color() {
        return false;
    }
    if anstyle_query::clicolor_force() {
        return true;
    }
    match color_ui.map(|v| v.trim().to_ascii_lowercase()).as_deref() {
        Some("false" | "never" | "no" | "off" | "0") => false,
        Some("always") => true,
        _ => anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never,
    }
}

/// A count of commits for the table, `?` when unknown (a shallow history without a merge
/// base).
fn count_cell(n: Option<u32>) -> String {
    n.map_or_else(|| "?".to_string(), |n| n.to_string())
}

/// `--porcelain`: one line a worker, tab-separated: `task branch liveness state action
/// attempts`; `task` and `branch` escaped ([`crate::fence::shown`]: a tab or a line break in
/// a synced ledger line's branch reads `\t`, `\n`), so every row has six fields.
pub(crate) fn porcelain(out: &mut impl Write, workers: &[Worker]) -> io::Result<()> {
    for w in workers {
        writeln!(
            out,
            "{}\t{}\t{}\t{}\t{}\t{}",
            shown(&w.task),
            shown(&w.branch),
            w.liveness,
            w.state,
            w.action,
            w.attempts
        )?;
    }
    Ok(())
}

fn dirty_cell(w: &Worker) -> String {
    match (w.dirty, &w.worktree) {
        // SPEC 1.2 "Several machines": another host's worker is listed with its host.
        (_, None) if w.other_host => format!("on {}", shown(w.host.as_deref().unwrap_or("?"))),
        (_, None) => "-".into(),
        (None, Some(_)) if w.dirty_not_read => "not read (live)".into(),
        (None, Some(_)) => "?".into(),
        (Some(d), _) if d.is_clean() => "clean".into(),
        (Some(d), _) => plural(d.total() as u64, "file"),
    }
}

/// The `PR` cell: `-` without one; `#12 open`, with the head's checks and the review
/// when known (`#12 open checks:failing review:changes_requested`).
fn pr_cell(w: &Worker) -> String {
    let Some(p) = &w.pr else {
        return "-".into();
    };
    let mut cell = format!("#{} {}", p.number, p.state.as_str());
    if let Some(c) = p.checks {
        cell.push_str(&format!(" checks:{}", c.as_str()));
    }
    if let Some(r) = p.review {
        cell.push_str(&format!(" review:{}", r.as_str()));
    }
    cell
}

/// The human table: a header, one row a worker, and the reason under each row.
pub(crate) fn table(out: &mut impl Write, workers: &[Worker], style: Style) -> io::Result<()> {
    if workers.is_empty() {
        return writeln!(
            out,
            "no workers (no branch matches recode.branchPattern, and no ledgered branch exists; `--all` lists those too)"
        );
    }
    let rows: Vec<[String; 9]> = workers
        .iter()
        .map(|w| {
            [
                shown(&w.task),
                shown(&w.branch),
                w.liveness.to_string(),
                w.state.to_string(),
                w.action.to_string(),
                format!("{}/{}", w.attempts, w.max_attempts),
                format!("+{} -{}", count_cell(w.ahead), count_cell(w.behind)),
                pr_cell(w),
                dirty_cell(w),
            ]
        })
        .collect();
    let header = [
        "TASK", "BRANCH", "LIVENESS", "STATE", "ACTION", "TRIES", "AHEAD", "PR", "WORKTREE",
    ];
    let mut widths = header.map(str::len);
    for r in &rows {
        for (i, c) in r.iter().enumerate() {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let line = |cells: &[&str]| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                s.push_str(c);
            } else {
                s.push_str(&format!("{c:<w$}  ", w = widths[i]));
            }
        }
        s.trim_end().to_string()
    };
    writeln!(out, "{}", style.paint(&line(&header), BOLD))?;
    for (r, w) in rows.iter().zip(workers) {
        // Pad first, then paint, so escape codes never skew the columns.
        let mut cells: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i + 1 == r.len() {
                    c.clone()
                } else {
                    format!("{c:<w$}", w = widths[i])
                }
            })
            .collect();
        cells[3] = style.paint(&cells[3], state_look(w.state));
        cells[4] = style.paint(&cells[4], action_look(w.action));
        writeln!(out, "{}", cells.join("  ").trim_end())?;
        let idle = w
            .idle_seconds
            .map(|i| format!(" (idle {})", clock::human_secs(i)))
            .unwrap_or_default();
        writeln!(
            out,
            "    {}",
            style.paint(&format!("{}{idle}", shown(&w.reason.to_string())), DIM)
        )?;
    }
    Ok(())
}

/// `classify` without `--json`: the worker's fields and the evidence for each decision.
pub(crate) fn classify_text(out: &mut impl Write, w: &Worker, style: Style) -> io::Result<()> {
    writeln!(out, "task      {}", shown(&w.task))?;
    writeln!(out, "branch    {}", shown(&w.branch))?;
    writeln!(
        out,
        "worktree  {}",
        shown(w.worktree.as_deref().unwrap_or("-"))
    )?;
    match w.head {
        Some(h) => writeln!(out, "head      {h}")?,
        None => writeln!(out, "head      -")?,
    }
    writeln!(out, "liveness  {}", w.liveness)?;
    writeln!(
        out,
        "state     {}",
        style.paint(w.state.as_str(), state_look(w.state))
    )?;
    writeln!(
        out,
        "action    {}",
        style.paint(w.action.as_str(), action_look(w.action))
    )?;
    writeln!(out, "reason    {}", shown(&w.reason.to_string()))?;
    writeln!(out, "attempts  {}/{}", w.attempts, w.max_attempts)?;
    if let Some(o) = w.last_outcome {
        writeln!(out, "outcome   {}", o.as_str())?;
    }
    if let Some(p) = &w.phase {
        writeln!(out, "phase     {}", shown(p))?;
    }
    writeln!(out, "evidence:")?;
    for e in &w.evidence {
        writeln!(out, "  - {}", shown(e))?;
    }
    Ok(())
}

/// What `recover` would do with a worker, in one sentence (for `demo` and dry runs).
pub(crate) fn explain(w: &Worker) -> String {
    match w.action {
        Action::Delete => match &w.worktree {
            Some(p) if !w.ignored.is_empty() => format!(
                "remove the clean worktree {p} (without force) with its ignored files {} and delete {} with its tip checked first",
                w.ignored.join(", "),
                w.branch
            ),
            Some(p) => format!(
                "remove the clean worktree {p} (without force) and delete {} with its tip checked first",
                w.branch
            ),
            None => format!(
                "delete {} with its tip checked first (nothing ahead of {})",
                w.branch, w.base
            ),
        },
        Action::WipCommit => format!(
            "commit every changed and untracked file on {} as a WIP snapshot (hooks skipped), then push it",
            w.branch
        ),
        Action::Publish => format!(
            "re-run recode.gate, push {} and open a pull request",
            w.branch
        ),
        Action::Resume => format!(
            "leave it to the loop: `git recode resume {}` writes the successor's prompt",
            w.branch
        ),
        Action::Escalate => {
            "ledger an `escalated` event once and touch nothing: a human must look".into()
        }
        Action::Wait => "leave it alone for now".into(),
        Action::None => "do nothing".into(),
        Action::Kill => {
            "end the hung agent's process group (its start token re-checked) and ledger its exit (rc 137): the next tick resumes it".into()
        }
    }
}

pub(crate) use crate::model::reason::plural;

/// Text with every forge credential replaced ([`crate::redact::redact`], SPEC 1.2: no
/// token in any output).
pub(crate) use crate::redact::{Writer as RedactedWriter, redact};

/// One human line of `log`: `ts  task  #seq  kind  details` (`key=value`, a value with
/// spaces quoted; every control character shown escaped); a milestone not ledgered yet
/// (`seq` 0) says so.
pub(crate) fn log_line(ev: &crate::model::Event) -> String {
    let mut v = serde_json::to_value(ev).unwrap_or_default();
    if let Some(m) = v.as_object_mut() {
        for k in ["v", "ts", "seq", "task", "kind", "branch"] {
            m.remove(k);
        }
    }
    let details: Vec<String> = v
        .as_object()
        .map(|m| m.iter().map(|(k, v)| detail(k, v)).collect())
        .unwrap_or_default();
    let mut line = format!(
        "{}  {:<6} #{:<3} {:<10} {}",
        clock::format(ev.ts),
        shown(&ev.task),
        ev.seq,
        ev.body.kind(),
        details.join(" ")
    );
    if ev.seq == 0 {
        line.push_str(" (from the commit's trailer: not ledgered yet)");
    }
    line
}

/// `key=value` of [`log_line`]: a string's first line, quoted when it holds a space or a
/// quote (so it ends where its quote does).
fn detail(k: &str, v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => {
            let s = s.lines().next().unwrap_or("");
            if s.is_empty() || s.contains(|c: char| c.is_whitespace() || c == '"') {
                format!("{k}={}", shown(&serde_json::Value::from(s).to_string()))
            } else {
                format!("{k}={}", shown(s))
            }
        }
        other => format!("{k}={other}"),
    }
}
