//! `report`: the loop's health from the ledger alone.

use std::collections::BTreeMap;
use std::path::Path;

use super::Session;
use crate::error::Error;
use crate::model::State;
use crate::model::reason::Row;
use crate::render::Style;
use crate::report::{self, Human};
use crate::wire::ReportDoc;

/// `report`: the document from the ledgers and the hosts' heartbeats, history cut at
/// `since` (a number and `s`, `m`, `h` or `d`, like `7d`; the attention queue is always
/// now).
///
/// Errors: [`Error::Usage`] for a bad `since`; ledger read errors.
pub fn report(s: &Session, since: Option<&str>) -> Result<ReportDoc, Error> {
    let since = since
        .map(|t| crate::clock::parse_duration(t).map_err(|e| Error::Usage(format!("--since {e}"))))
        .transpose()?;
    let opts = report::Options {
        now: s.now,
        since: since.map(|secs| crate::clock::from_secs(s.now.as_second().saturating_sub(secs))),
        max_attempts: s.cfg.max_attempts,
        base: shell_word(&crate::repo::base_name(&s.repo, &s.cfg)),
        remote_url: crate::forge::remote_url(&s.repo, &s.cfg.remote)
            .map(|u| shell_word(&crate::forge::redact_url(&u)))
            .unwrap_or_else(|| "<remote URL>".into()),
        at_hand: at_hand(s)?,
    };
    let (doc, warnings) = report::gather(&s.repo, &s.cfg, &opts)?;
    s.warn(warnings);
    Ok(doc)
}

/// The classifier's verdict on every worker whose branch or worktree is here, as `status
/// --offline` decides it: `Some` for `needs-human` (one rule book: the report's queue
/// equals `status`'s `needs-human` wherever the worktrees are at hand). The gather's
/// warnings are the report's own ledger warnings again, so they are not repeated.
///
/// Errors: as [`crate::snapshot::gather_from`].
fn at_hand(s: &Session) -> Result<BTreeMap<String, Option<Human>>, Error> {
    let roster = crate::snapshot::roster(&s.repo, &s.cfg, None)?;
    let census = crate::snapshot::gather_from(
        &s.repo,
        &s.cfg,
        s.now,
        &crate::snapshot::Options::default(),
        roster,
    )?;
    let workers = census.snapshots.iter().map(crate::classify::classify);
    Ok(workers
        .filter(|w| w.head.is_some() || w.worktree.is_some())
        .map(|w| {
            let human = (w.state == State::NeedsHuman).then(|| Human {
                cause: cause(&w.reason.row),
                why: w.reason.to_string(),
                since: w.last_activity.unwrap_or(s.now),
                worktree: w.worktree.clone(),
                host: w.host.clone(),
                task: w.task.clone(),
            });
            (w.branch, human)
        })
        .collect())
}

/// The queue's `cause` of a `needs-human` worker, from the state-table row that decided it.
fn cause(row: &Row) -> &'static str {
    match row {
        Row::Escalated { .. } => "escalated",
        Row::LastNeedsHuman { .. } | Row::TransientBound { .. } => "needs-human",
        Row::Capped { .. }
        | Row::PrFeedback {
            capped: Some(_), ..
        } => "capped",
        _ => "classified",
    }
}

/// The report as text for a terminal.
pub fn report_text(doc: &ReportDoc, style: Style) -> String {
    report::text::render(doc, style)
}

/// Write the report as one self-contained HTML page (inline CSS and SVG, no script).
///
/// Errors: [`Error::Program`] when the page cannot be rendered; [`Error::Io`] when it
/// cannot be written.
pub fn write_report_html(doc: &ReportDoc, path: &Path) -> Result<(), Error> {
    let page = report::html::render(doc).map_err(|why| Error::Program {
        what: "cannot render the HTML report",
        why,
    })?;
    std::fs::write(path, page).map_err(|source| Error::Io {
        what: "write",
        path: path.display().to_string(),
        source,
    })
}

/// `s` as one word of a shell command: as it is when it holds only characters no shell
/// treats specially, else single-quoted.
fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._:@~+-,=%".contains(c));
    if plain {
        s.to_string()
    } else {
        crate::resume::sh_quote(s)
    }
}
