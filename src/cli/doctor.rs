//! `git recode doctor [--json]`.

use std::io::Write;

use crate::app::{self, Error};
use crate::cli::{Ui, out_err};
use crate::render;

/// Check the loop's set-up: one line per check (ok, warn or fail, with the fix)
///
/// Checks git's version and the repository's format, the git identity the agent's
/// commits need, every recode.* value (the base exists, the remote's HEAD resolves, the
/// branch pattern has its task group), that the milestone hook is reached from every
/// worktree and runs (a dry call), the forge (detected, its token set, answering), the
/// ssh command pushes use (core.sshCommand honoured, batch mode added), the agent's CLI
/// on PATH answering --version, that recode.agentConfigDirs are distinct accounts
/// (Claude: oauthAccount.accountUuid in each directory's .claude.json; no token is read),
/// stale lock files, a shallow or partial clone, and maintenance that could prune
/// worktrees. Exits 0 with no fail, else 1.
///
/// Example: `git recode doctor && ./loop.sh`
#[derive(clap::Args, Debug)]
pub(crate) struct DoctorArgs {
    /// Print {"schema": 1, "ok": bool, "checks": [{"check", "level", "message", "fix"}]}
    #[arg(long)]
    pub json: bool,
}

/// Run `doctor`.
///
/// Errors: [`Error::Repo`] outside a repository, [`Error::Clock`]; failed checks are
/// results (exit 1), not errors.
pub(crate) fn run(args: DoctorArgs, ui: &Ui) -> Result<i32, Error> {
    let d = app::doctor()?;
    let ui = ui.with_color_ui(d.color_ui.clone());
    if args.json {
        let mut out = ui.out();
        serde_json::to_writer_pretty(&mut out, &app::doctor_doc(&d))
            .map_err(|e| out_err(e.into()))?;
        writeln!(out).map_err(out_err)?;
    } else {
        // A message may quote a host's name, a path or a ref from another machine: every
        // control character shown escaped, one check a line (SPEC 1.2).
        let mut out = ui.screen();
        for c in &d.checks {
            let fix = c
                .fix
                .as_deref()
                .map(|f| format!(" (fix: {})", render::shown(f)))
                .unwrap_or_default();
            writeln!(
                out,
                "{:<4}  {:<11} {}{fix}",
                c.level.to_string(),
                c.check,
                render::shown(&c.message)
            )
            .map_err(out_err)?;
        }
        out.flush().map_err(out_err)?;
    }
    Ok(d.code)
}
