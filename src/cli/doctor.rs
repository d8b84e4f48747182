//! `git recode doctor [--json]`.

use std::io::Write;

use crate::cli::{Ui, out_err};
use crate::error::{EXIT_OK, Error};
use crate::{doctor, wire};

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
pub struct DoctorArgs {
    /// Print {"schema": 1, "ok": bool, "checks": [{"check", "level", "message", "fix"}]}
    #[arg(long)]
    pub json: bool,
}

/// Run `doctor`.
///
/// Errors: [`Error::Repo`] outside a repository, [`Error::Clock`]; failed checks are
/// results (exit 1), not errors.
pub fn run(args: DoctorArgs, ui: &Ui) -> Result<i32, Error> {
    let now = crate::clock::now()?;
    let repo = crate::repo::open(None)?;
    let ui = ui.for_repo(&repo);
    let checks = doctor::run(&repo, now);
    let code = doctor::exit_code(&checks);
    if args.json {
        let mut out = ui.out();
        let doc = wire::DoctorDoc {
            schema: wire::SCHEMA,
            ok: code == EXIT_OK,
            checks: checks.iter().map(Into::into).collect(),
        };
        serde_json::to_writer_pretty(&mut out, &doc).map_err(|e| out_err(e.into()))?;
        writeln!(out).map_err(out_err)?;
    } else {
        // A message may quote a host's name, a path or a ref from another machine: every
        // control character shown escaped, one check a line (SPEC 1.2).
        let mut out = ui.screen();
        for c in &checks {
            let fix = c
                .fix
                .as_deref()
                .map(|f| format!(" (fix: {})", crate::fence::shown(f)))
                .unwrap_or_default();
            writeln!(
                out,
                "{:<4}  {:<11} {}{fix}",
                c.level.to_string(),
                c.check,
                crate::fence::shown(&c.message)
            )
            .map_err(out_err)?;
        }
        out.flush().map_err(out_err)?;
    }
    Ok(code)
}
