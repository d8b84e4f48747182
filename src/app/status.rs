//! `status` and `classify`: every worker, or one, classified.

use super::Session;
use crate::classify;
use crate::error::Error;
use crate::model::Worker;
use crate::snapshot::{self, Options};

/// What `status` is asked.
#[derive(Clone, Copy, Debug, Default)]
pub struct StatusRequest {
    /// Do not ask the forge (pull requests are then unknown).
    pub offline: bool,
    /// Also list tasks whose branch exists nowhere.
    pub all: bool,
    /// Also read the worktrees of workers whose recorded pid is alive.
    pub deep: bool,
    /// Show progress on stderr (human output on a terminal).
    pub progress: bool,
}

/// `status`: every worker of the repository, classified, in the census's order
/// (the task order of SPEC `status`). Warnings: the forge's, the gather's, ledger events
/// stamped in the future, worktrees whose commits do not reach the milestone hook.
///
/// Errors: as [`snapshot::gather_from`].
pub fn status(s: &Session, req: StatusRequest) -> Result<Vec<Worker>, Error> {
    let roster = snapshot::roster(&s.repo, &s.cfg, None)?;
    let forge = s.forge_view(req.offline, &roster, None, req.all);
    if !req.offline {
        // Once a run: the remote is on a forge whose token is not set (SPEC 1.2 "Forges").
        s.warn(crate::forge::missing_token(&s.repo, &s.cfg));
    }
    let opts = Options {
        all: req.all,
        only_branch: None,
        forge,
        progress: req.progress,
        deep: req.deep,
        watch: true,
    };
    let workers = workers(s, &opts, roster)?;
    s.warn(skew_warning(&workers));
    let paths: Vec<&std::path::Path> = workers
        .iter()
        .filter_map(|w| w.worktree.as_deref().map(std::path::Path::new))
        .collect();
    s.warn(crate::hook::pickup::unreached_warning(&s.repo, &paths));
    Ok(workers)
}

/// `classify <branch>`: the one worker on `branch`, with its evidence.
///
/// Errors: [`Error::UnknownBranch`] when the branch is nowhere (no local or remote
/// branch, no worktree, no ledger); [`Error::BaseBranch`].
pub fn classify(s: &Session, branch: &str, offline: bool) -> Result<Worker, Error> {
    let snap = s.one_worker(branch, offline)?;
    Ok(classify::classify(&snap))
}

/// Classify every worker the roster names, as `opts` asks.
///
/// Errors: as [`snapshot::gather_from`].
pub(crate) fn workers(
    s: &Session,
    opts: &Options,
    roster: snapshot::Roster,
) -> Result<Vec<Worker>, Error> {
    let census = snapshot::gather_from(&s.repo, &s.cfg, s.now, opts, roster)?;
    s.warn(census.warnings);
    Ok(census.snapshots.iter().map(classify::classify).collect())
}

/// One warning naming the workers whose ledger holds events stamped after now (a skewed
/// clock, or a ledger synced from one): that activity is ignored (SPEC 1.1 "Outcomes").
/// File and commit times are not looked at: only what the ledger says.
fn skew_warning(workers: &[Worker]) -> Option<String> {
    let skewed: Vec<&str> = workers
        .iter()
        .filter(|w| w.future_event.is_some())
        .map(|w| w.branch.as_str())
        .collect();
    (!skewed.is_empty()).then(|| {
        format!(
            "ledger events stamped in the future (a skewed clock, or a ledger synced from one) are ignored as activity for: {}",
            skewed.join(", ")
        )
    })
}
