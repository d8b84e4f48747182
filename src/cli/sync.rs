//! `git recode sync [<remote>]`.

use std::io::Write;

use crate::cli::{Ctx, Ui};
use crate::error::{EXIT_OK, Error};
use crate::sync;

/// Fetch, union-merge and push the ledger (refs/notes/recode) and its anchors
///
/// The remote's ledger is fetched into refs/recode/remotes/<remote>/notes (never over the
/// local one), merged by sorted union of lines per note (as `git notes merge -s
/// cat_sort_uniq`), and pushed with --force-with-lease, retrying on a lost race.
///
/// Example: `git recode sync origin` at the start of every loop tick
#[derive(clap::Args, Debug)]
pub struct SyncArgs {
    /// The remote [default: recode.remote]
    pub remote: Option<String>,
    /// Add refspecs so plain `git fetch`/`git push` carry the ledger too, then stop
    #[arg(long)]
    pub setup: bool,
}

/// Run `sync`.
///
/// Errors: as [`sync::sync`].
pub fn run(args: SyncArgs, ui: &Ui) -> Result<i32, Error> {
    let ctx = Ctx::open(ui)?;
    ctx.cfg.check_secrets()?; // SPEC 1.2: an invalid recode.secrets stops every command that pushes
    let remote = args.remote.unwrap_or_else(|| ctx.cfg.remote.clone());
    if crate::forge::remote_url(&ctx.repo, &remote).is_none() {
        return Err(Error::NoRemote { remote });
    }
    if args.setup {
        let added = sync::setup(&ctx.cfg, &remote)?;
        if added.is_empty() {
            crate::say!("already set up");
        }
        for a in added {
            crate::say!("added {a}");
        }
        return Ok(EXIT_OK);
    }
    // SPEC 1.3 "The milestone journal": `sync` folds the journal (and the milestones
    // only in commit trailers) into the ledger before it pushes.
    crate::cli::pick_up(&ctx, &[]);
    let report = sync::sync(&ctx.repo, &ctx.cfg, &remote, ctx.now)?;
    ctx.ui.warn(&report.warnings);
    // A line may name another host's ref or ledger: shown escaped (SPEC 1.2).
    let mut out = ctx.ui.screen();
    for l in report.lines {
        writeln!(out, "{}", crate::fence::shown(&l)).map_err(crate::cli::out_err)?;
    }
    out.flush().map_err(crate::cli::out_err)?;
    Ok(EXIT_OK)
}
