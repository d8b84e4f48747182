//! `git recode log [<branch>]`.

use std::io::Write;

use crate::app::{self, EXIT_OK, Error};
use crate::cli::{Ui, out_err};
use crate::render;

/// Show the ledger of one task, or of all tasks, in ledger order
///
/// Example: `git recode log feat/issue-12-parser --json | jq -c 'select(.kind=="exit")'`
#[derive(clap::Args, Debug)]
pub(crate) struct LogArgs {
    /// A worker's branch (its task's ledger); all tasks when omitted
    #[arg(value_parser = crate::app::parse_branch)]
    pub branch: Option<String>,
    /// Print JSON Lines: one event a line, ordered by ts, then task, then seq, then line
    #[arg(long)]
    pub json: bool,
}

/// Run `log`: lines are written as they are produced (the first one flushed at once), so
/// `git recode log --json | head -1` ends early; a closed pipe ends the run quietly.
///
/// Errors: ledger read errors; [`Error::UnknownBranch`] when the branch's task has no ledger.
pub(crate) fn run(args: LogArgs, ui: &Ui) -> Result<i32, Error> {
    let (s, ui) = ui.session()?;
    let mut out = Out::new(args.json, &ui);
    let written = app::log(&s, args.branch.as_deref(), &mut |l| out.write(&l));
    if written.is_ok() {
        out.flush()?;
    }
    let written = ui.after(&s, written)?;
    if written == 0 && args.branch.is_none() && !args.json {
        writeln!(
            out.w,
            "no ledger events yet (`git recode record spawn <branch>` ledgers an attempt's start)"
        )
        .map_err(out_err)?;
    }
    out.flush()?;
    Ok(EXIT_OK)
}

/// Buffered stdout that flushes its first line at once: the ledger's lines as stored with
/// `--json`, else through the [`render::Screen`] (no control character raw).
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

    /// Write one ledger line: as stored with `--json`, else the human line.
    fn write(&mut self, l: &app::LogLine<'_>) -> Result<(), Error> {
        if self.json {
            writeln!(self.w, "{}", l.stored).map_err(out_err)?;
        } else {
            writeln!(self.w, "{}", render::log_line(&l.event())).map_err(out_err)?;
        }
        if std::mem::take(&mut self.first) {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Error> {
        self.w.flush().map_err(out_err)
    }
}
