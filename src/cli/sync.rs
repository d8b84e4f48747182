//! `git recode sync [<remote>]`.

use std::io::Write;

use crate::app::{self, EXIT_OK, Error};
use crate::cli::{Ui, out_err};
use crate::render;

/// Fetch, union-merge and push the ledger (refs/notes/recode) and its anchors
///
/// The remote's ledger is fetched into refs/recode/remotes/<remote>/notes (never over the
/// local one), merged by sorted union of lines per note (as `git notes merge -s
/// cat_sort_uniq`), and pushed with --force-with-lease, retrying on a lost race.
///
/// Example: `git recode sync origin` at the start of every loop tick
#[derive(clap::Args, Debug)]
pub(crate) struct SyncArgs {
    /// The remote [default: recode.remote]
    pub remote: Option<String>,
    /// Add refspecs so plain `git fetch`/`git push` carry the ledger too, then stop
    #[arg(long)]
    pub setup: bool,
}

/// Run `sync`.
///
/// Errors: as [`app::sync`].
pub(crate) fn run(args: SyncArgs, ui: &Ui) -> Result<i32, Error> {
    let (s, ui) = ui.session()?;
    if args.setup {
        let added = ui.after(&s, app::sync_setup(&s, args.remote))?;
        let mut out = ui.out();
        if added.is_empty() {
            writeln!(out, "already set up").map_err(out_err)?;
        }
        for a in added {
            writeln!(out, "added {a}").map_err(out_err)?;
        }
        return Ok(EXIT_OK);
    }
    let lines = ui.after(&s, app::sync(&s, args.remote))?;
    // A line may name another host's ref or ledger: shown escaped (SPEC 1.2).
    let mut out = ui.screen();
    for l in lines {
        writeln!(out, "{}", render::shown(&l)).map_err(out_err)?;
    }
    out.flush().map_err(out_err)?;
    Ok(EXIT_OK)
}
