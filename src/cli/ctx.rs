//! [`Ctx`], what every command opens first (the repository, its configuration, the
//! clock, the terminal), with the steps several commands share: refusing the base
//! branch, gathering one worker, asking the forge, the milestone pickup; and `say!`.

use crate::cli::Ui;
use crate::config::Config;
use crate::error::Error;

/// What every command needs: the repository, its configuration and the clock.
pub struct Ctx {
    /// The repository (opened from the current directory, after `-C`).
    pub repo: gix::Repository,
    /// `recode.*` configuration.
    pub cfg: Config,
    /// The clock (`RECODE_NOW`).
    pub now: jiff::Timestamp,
    /// The terminal: stdout, stderr and colour (git's `color.ui` included).
    pub ui: Ui,
}

impl Ctx {
    /// Open the repository in the current directory.
    ///
    /// Errors: [`Error::Repo`], [`Error::Config`], [`Error::Clock`].
    pub fn open(ui: &Ui) -> Result<Ctx, Error> {
        let now = crate::clock::now()?;
        let repo = crate::repo::open(None)?;
        let mut cfg = Config::load(&repo)?;
        cfg.locks.moves = ui.moves().clone();
        cfg.check_base(&repo)?;
        let ui = ui.for_repo(&repo);
        Ok(Ctx { repo, cfg, now, ui })
    }
}

/// `println!` that treats a closed stdout (`git recode … | head`) as the end of output
/// instead of a panic.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

impl Ctx {
    /// Refuse the base branch where a worker branch is needed.
    ///
    /// Errors: [`Error::BaseBranch`].
    pub fn not_base(&self, branch: &str) -> Result<(), Error> {
        if branch == crate::repo::base_name(&self.repo, &self.cfg) {
            return Err(Error::BaseBranch {
                branch: branch.to_string(),
            });
        }
        Ok(())
    }

    /// Ask the forge (unless `offline`) and gather the one worker on `branch`, printing
    /// warnings on stderr.
    ///
    /// Errors: [`Error::UnknownBranch`] when the branch is nowhere (no local or remote
    /// branch, no worktree, no ledger); gathering errors.
    pub fn one_worker(&self, branch: &str, offline: bool) -> Result<crate::model::Snapshot, Error> {
        self.not_base(branch)?;
        let roster = crate::snapshot::roster(&self.repo, &self.cfg, Some(branch))?;
        let forge = self.forge_view(offline, &roster, Some(branch), false);
        let (snap, warnings) = crate::snapshot::gather_one_from(
            &self.repo, &self.cfg, self.now, branch, forge, roster,
        )?;
        self.ui.warn(&warnings);
        // The task's ledger alone does not make a branch known: `issue-1` is not
        // `issue-1-empty` because both are task 1 (SPEC 1.2 "Errors a newcomer meets").
        let names_it = |s: &crate::model::Snapshot| {
            s.events
                .iter()
                .any(|e| e.branch.as_deref().is_none_or(|b| b == branch))
        };
        match snap {
            Some(s) if s.head.is_some() || s.worktree.is_some() || names_it(&s) => Ok(s),
            _ => Err(self.unknown_branch(branch)),
        }
    }

    /// [`Error::UnknownBranch`] for `branch`, naming the closest worker branches.
    pub fn unknown_branch(&self, branch: &str) -> Error {
        Error::UnknownBranch {
            branch: branch.to_string(),
            close: crate::repo::closest_workers(&self.repo, &self.cfg, branch),
        }
    }
}

impl Ctx {
    /// Ask the forge for this run (unless `offline`), printing its warnings on stderr: one
    /// listing cut off at the oldest first ledger event of the workers shown (`only`: that
    /// one; `all`: tasks whose branch exists nowhere too), feedback for their open pull
    /// requests ([`crate::snapshot::forge_view`]), the workers taken from the run's
    /// `roster`.
    pub fn forge_view(
        &self,
        offline: bool,
        roster: &crate::snapshot::Roster,
        only: Option<&str>,
        all: bool,
    ) -> crate::forge::View {
        let (forge, mut warnings) = crate::forge::open_run(&self.repo, &self.cfg, offline);
        let (view, more) =
            crate::snapshot::forge_view(&self.repo, &self.cfg, forge.as_deref(), roster, only, all);
        warnings.extend(more);
        self.ui.warn(&warnings);
        view
    }
}

/// Ledger the milestones `branches` (every worker branch when empty) carry only in their
/// commits' trailers, before a command writes the ledger (SPEC `milestone`: nothing the
/// hook could not write is lost). A failure is a warning: the command goes on.
pub fn pick_up(ctx: &Ctx, branches: &[String]) {
    if let Err(e) = crate::snapshot::pick_up_milestones(&ctx.repo, &ctx.cfg, branches) {
        ctx.ui.warn(&[format!(
            "cannot ledger milestones from commit trailers: {e}"
        )]);
    }
}
