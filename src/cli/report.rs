//! `git recode report [--html FILE] [--since DURATION] [--json]`.

use std::io::Write;
use std::path::PathBuf;

use crate::cli::{Ctx, Ui, out_err};
use crate::error::{EXIT_OK, Error};
use crate::report;

/// Show the loop's health from the ledger alone: who needs a human, attempts, ticks, hosts
///
/// Works in any clone that has the ledger (`git recode sync`), with no worktree and no
/// forge. The attention queue comes first: each worker that needs a human, why, and the
/// command that lifts it. `--since` limits the history shown (the queue is always now).
///
/// Example, in CI: `git recode sync && git recode report --since 7d --html report.html`
#[derive(clap::Args, Debug)]
pub struct ReportArgs {
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
pub fn run(args: ReportArgs, ui: &Ui) -> Result<i32, Error> {
    let since_secs = match &args.since {
        Some(s) => Some(
            crate::clock::parse_duration(s).map_err(|e| Error::Usage(format!("--since {e}")))?,
        ),
        None => None,
    };
    let ctx = Ctx::open(ui)?;
    let opts = report::Options {
        now: ctx.now,
        since: since_secs.map(|s| crate::clock::from_secs(ctx.now.as_second().saturating_sub(s))),
        max_attempts: ctx.cfg.max_attempts,
        base: shell_word(&crate::repo::base_name(&ctx.repo, &ctx.cfg)),
        remote_url: crate::forge::remote_url(&ctx.repo, &ctx.cfg.remote)
            .map(|u| shell_word(&crate::forge::redact_url(&u)))
            .unwrap_or_else(|| "<remote URL>".into()),
    };
    let (doc, warnings) = report::gather(&ctx.repo, &ctx.cfg, &opts)?;
    ctx.ui.warn(&warnings);
    if let Some(path) = &args.html {
        let page = report::html::render(&doc).map_err(|why| Error::Program {
            what: "cannot render the HTML report",
            why,
        })?;
        std::fs::write(path, page).map_err(|source| Error::Io {
            what: "write",
            path: path.display().to_string(),
            source,
        })?;
    }
    if args.json {
        let text = serde_json::to_string_pretty(&doc).expect("the report always serializes");
        writeln!(ctx.ui.out(), "{text}").map_err(out_err)?;
    } else {
        let mut screen = ctx.ui.screen();
        write!(screen, "{}", report::text::render(&doc, ctx.ui.style())).map_err(out_err)?;
        screen.flush().map_err(out_err)?;
    }
    if let Some(path) = &args.html {
        let _ = writeln!(std::io::stderr(), "wrote {}", path.display());
    }
    Ok(EXIT_OK)
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
