//! `report`: the loop's health from the ledger alone.

use std::path::Path;

use super::Session;
use crate::error::Error;
use crate::render::Style;
use crate::report;
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
    };
    let (doc, warnings) = report::gather(&s.repo, &s.cfg, &opts)?;
    s.warn(warnings);
    Ok(doc)
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
