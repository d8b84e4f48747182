//! [`Session`], what every command opens first (the repository, its configuration, the
//! clock, the warnings of the run), with the steps several commands share: refusing the
//! base branch, gathering one worker, asking the forge, the milestone pickup.

use std::cell::RefCell;

use crate::config::Config;
use crate::error::Error;

/// One run of one command: the repository (opened from the current directory, after
/// `-C`), its `recode.*` configuration, the clock (`RECODE_NOW`) and the warnings the run
/// collected so far (the command line prints them: the library never prints).
pub struct Session {
    /// The repository.
    pub(crate) repo: gix::Repository,
    /// `recode.*` configuration.
    pub(crate) cfg: Config,
    /// The clock of the run.
    pub(crate) now: jiff::Timestamp,
    /// Warnings in the order they were met, each to be shown once.
    warnings: RefCell<Vec<String>>,
}

impl Session {
    /// Open the repository in the current directory.
    ///
    /// Errors: [`Error::Repo`], [`Error::Config`] (a bad `recode.*` value, a base branch
    /// that does not exist), [`Error::Clock`] (a bad `RECODE_NOW`).
    pub fn open() -> Result<Session, Error> {
        let now = crate::clock::now()?;
        let repo = crate::repo::open(None)?;
        let cfg = Config::load(&repo)?;
        crate::repo::check_base(&repo, &cfg)?;
        Ok(Session {
            repo,
            cfg,
            now,
            warnings: RefCell::new(Vec::new()),
        })
    }

    /// git's `color.ui` of the repository (the terminal's colour choice refines on it).
    pub fn color_ui(&self) -> Option<String> {
        crate::config::string(&self.repo, "color.ui")
    }

    /// The warnings collected since the last call, oldest first, then one for each stale
    /// lock the run moved aside (SPEC 1.2 "The loop settles").
    pub fn take_warnings(&self) -> Vec<String> {
        let mut w = std::mem::take(&mut *self.warnings.borrow_mut());
        w.extend(self.cfg.locks.moves.take().iter().map(|m| m.warning()));
        w
    }

    /// Collect warnings for the caller to show.
    pub(crate) fn warn(&self, warnings: impl IntoIterator<Item = String>) {
        self.warnings.borrow_mut().extend(warnings);
    }

    /// Refuse the base branch where a worker branch is needed.
    ///
    /// Errors: [`Error::BaseBranch`].
    pub(crate) fn not_base(&self, branch: &str) -> Result<(), Error> {
        if branch == crate::repo::base_name(&self.repo, &self.cfg) {
            return Err(Error::BaseBranch {
                branch: branch.to_string(),
            });
        }
        Ok(())
    }

    /// Ask the forge (unless `offline`) and gather the one worker on `branch`.
    ///
    /// Errors: [`Error::UnknownBranch`] when the branch is nowhere (no local or remote
    /// branch, no worktree, no ledger); gathering errors.
    pub(crate) fn one_worker(
        &self,
        branch: &str,
        offline: bool,
    ) -> Result<crate::model::Snapshot, Error> {
        self.not_base(branch)?;
        let roster = crate::snapshot::roster(&self.repo, &self.cfg, Some(branch))?;
        let forge = self.forge_view(offline, &roster, Some(branch), false);
        let (snap, warnings) = crate::snapshot::gather_one_from(
            &self.repo, &self.cfg, self.now, branch, forge, roster,
        )?;
        self.warn(warnings);
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
    pub(crate) fn unknown_branch(&self, branch: &str) -> Error {
        Error::UnknownBranch {
            branch: branch.to_string(),
            close: crate::repo::closest_workers(&self.repo, &self.cfg, branch),
        }
    }

    /// Ask the forge for this run (unless `offline`): one listing cut off at the oldest
    /// first ledger event of the workers shown (`only`: that one; `all`: tasks whose
    /// branch exists nowhere too), feedback for their open pull requests
    /// ([`crate::snapshot::forge_view`]), the workers taken from the run's `roster`.
    pub(crate) fn forge_view(
        &self,
        offline: bool,
        roster: &crate::snapshot::Roster,
        only: Option<&str>,
        all: bool,
    ) -> crate::forge::View {
        let (forge, warnings) = crate::forge::open_run(&self.repo, &self.cfg, offline);
        self.warn(warnings);
        let (view, more) =
            crate::snapshot::forge_view(&self.repo, &self.cfg, forge.as_deref(), roster, only, all);
        self.warn(more);
        view
    }

    /// Ledger the milestones `branches` (every worker branch when empty) carry only in
    /// their commits' trailers, before a command writes the ledger (SPEC `milestone`:
    /// nothing the hook could not write is lost). A failure is a warning: the command
    /// goes on.
    pub(crate) fn pick_up(&self, branches: &[String]) {
        if let Err(e) = crate::snapshot::pick_up_milestones(&self.repo, &self.cfg, branches) {
            self.warn([format!(
                "cannot ledger milestones from commit trailers: {e}"
            )]);
        }
    }
}
