//! `git recode report [--html FILE] [--since DURATION] [--json]`.

use std::io::Write;
use std::path::PathBuf;

use crate::app::{self, EXIT_OK, Error};
use crate::cli::{Ui, out_err};

/// Show the loop's health from the ledger alone: who needs a human, attempts, ticks, hosts
///
/// Works in any clone that has the ledger (`git recode sync`), with no worktree and no
/// forge. The attention queue comes first: each worker that needs a human, why, and the
/// command that lifts it. `--since` limits the history shown (the queue is always now).
///
/// Example, in CI: `git recode sync && git recode report --since 7d --html report.html`
#[derive(clap::Args, Debug)]
pub(crate) struct ReportArgs {
    /// Also write the report as one self-contained HTML page (inline CSS and SVG, no script)
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Only history newer than this (a number and s, m, h or d, like 7d)
    #[arg(long, value_name = "DURATION")]
    pub since: Option<String>,
    /// Print one JSON document: {"schema": 1, "queue": [...], "tasks": [...], ...}
    #[arg(long)]
    pub json: bool,
}

/// Run `report`.
///
/// Errors: [`Error::Usage`] for a bad `--since`; ledger read errors; [`Error::Io`] when
/// the page cannot be written.
pub(crate) fn run(args: ReportArgs, ui: &Ui) -> Result<i32, Error> {
    let (s, ui) = ui.session()?;
    let doc = ui.after(&s, app::report(&s, args.since.as_deref()))?;
    if let Some(path) = &args.html {
        app::write_report_html(&doc, path)?;
    }
    if args.json {
        let text = serde_json::to_string_pretty(&doc).expect("the report always serializes");
        writeln!(ui.out(), "{text}").map_err(out_err)?;
    } else {
        let mut screen = ui.screen();
        write!(screen, "{}", app::report_text(&doc, ui.style())).map_err(out_err)?;
        screen.flush().map_err(out_err)?;
    }
    if let Some(path) = &args.html {
        let _ = writeln!(std::io::stderr(), "wrote {}", path.display());
    }
    Ok(EXIT_OK)
}
