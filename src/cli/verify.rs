//! `git recode verify <branch>`.

use std::io::Write;

use crate::app::{self, EXIT_OK, Error};
use crate::cli::{Ui, out_err};

/// Ask the forge whether the last claimed outcome holds: prints holds, phantom or unknown
///
/// `phantom`: the last exit claimed success and the forge has no pull request for the
/// branch (ledgered once as a `phantom` event). `unknown`: no forge (no token) or it did
/// not answer. Exits 0 for each.
///
/// Example: `[ "$(git recode verify "$branch")" = phantom ] && git recode resume "$branch"`
#[derive(clap::Args, Debug)]
pub(crate) struct VerifyArgs {
    /// The worker's branch
    #[arg(value_parser = crate::app::parse_branch)]
    pub branch: String,
    /// Print {"schema": 1, "verdict": ..., "pr": ...}
    #[arg(long)]
    pub json: bool,
}

/// Run `verify`: the verdict comes from [`app::verify`] through the forge seam.
///
/// Errors: repository and ledger errors; forge failures are the verdict `unknown`.
pub(crate) fn run(args: VerifyArgs, ui: &Ui) -> Result<i32, Error> {
    let (s, ui) = ui.session()?;
    let doc = ui.after(&s, app::verify(&s, &args.branch))?;
    if args.json {
        let text = serde_json::to_string(&doc).map_err(|e| out_err(e.into()))?;
        writeln!(ui.out(), "{text}").map_err(out_err)?;
    } else {
        writeln!(ui.out(), "{}", doc.verdict).map_err(out_err)?;
    }
    Ok(EXIT_OK)
}
