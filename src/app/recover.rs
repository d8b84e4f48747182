//! `recover`: carry out the mechanical actions.

use super::Session;
use crate::error::Error;
use crate::recover::{self, Request, Step};

/// What `recover` did: its steps, and how the run ends.
#[derive(Debug)]
pub struct Recovered {
    /// One step per worker considered, in order.
    pub steps: Vec<Step>,
    /// The forge was asked and failed (the run then ends in an error).
    forge_error: Option<String>,
}

impl Recovered {
    /// How the run ends once its steps are shown: [`Error::Partial`] (exit 1) when the
    /// forge failed or a step failed ("the rest was done"), else `None`.
    pub fn failure(&self) -> Option<Error> {
        if let Some(e) = &self.forge_error {
            return Some(Error::Partial(e.clone()));
        }
        let failed = self.steps.iter().filter(|s| s.error).count();
        (failed > 0).then(|| {
            Error::Partial(format!(
                "{} failed (each result says why); the rest was done",
                crate::render::plural(failed as u64, "step")
            ))
        })
    }
}

/// `recover`: refuse an invalid `recode.secrets` (SPEC 1.2: it stops every command that
/// deletes or pushes), pick up milestones (unless a dry run), then [`recover::run`].
///
/// Errors: [`Error::Usage`] when neither branches nor `all` is given; as
/// [`recover::run`].
pub fn recover(s: &Session, req: Request) -> Result<Recovered, Error> {
    if req.branches.is_empty() && !req.all {
        return Err(usage());
    }
    s.cfg.check_secrets()?;
    if !req.dry_run {
        s.pick_up(&req.branches);
    }
    let report = recover::run(&s.repo, &s.cfg, s.now, &req)?;
    s.warn(report.warnings);
    Ok(Recovered {
        steps: report.steps,
        forge_error: report.forge_error,
    })
}

/// The bad usage of `recover` with neither branches nor `--all` ([`Error::Usage`]).
pub fn usage() -> Error {
    Error::Usage(
        "name the workers' branches to recover, or --all for every worker (`git recode recover --all`)".into(),
    )
}
