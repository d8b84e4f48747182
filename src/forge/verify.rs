//! `verify`'s verdict (SPEC "Commands" `verify`, "Pull request feedback" `phantom`), asked
//! of any forge through the [`Forge`] seam: does the last claimed outcome hold?
//!
//! - `holds`: the branch has a pull request (any state), or the last exit claimed no
//!   success (nothing to confirm);
//! - `phantom`: the last exit claimed `success` and the forge has no pull request for the
//!   branch; a `phantom` event is due unless one was ledgered since that exit;
//! - `unknown`: no forge (none, no token), no outcome yet, or the forge did not answer.

use super::Forge;
use crate::ledger::{Body, Event, replay};
use crate::model::Pr;
use crate::outcome::Outcome;

/// The verdict's word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The claim holds.
    Holds,
    /// A claimed success with no pull request.
    Phantom,
    /// Nothing is known.
    Unknown,
}

impl Verdict {
    /// `holds`, `phantom`, `unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::Phantom => "phantom",
            Verdict::Unknown => "unknown",
        }
    }
}

/// What `verify` found.
#[derive(Clone, Debug)]
pub struct Verification {
    /// The verdict.
    pub verdict: Verdict,
    /// The branch's pull request, when the forge has one.
    pub pr: Option<Pr>,
    /// A `phantom` event should be ledgered (none since the last exit).
    pub ledger_phantom: bool,
    /// Why the forge did not answer, for stderr.
    pub warning: Option<String>,
}

/// The reason a `phantom` event carries.
pub const PHANTOM_REASON: &str =
    "the last exit claimed success but the forge has no pull request for the branch";

/// The verdict on `branch`, whose task's ledger is `events`, asking `forge` (one lookup of
/// the branch's pull request; `None`: no forge, the verdict is `unknown`).
pub fn verify(forge: Option<&dyn Forge>, branch: &str, events: &[Event]) -> Verification {
    let mut v = Verification {
        verdict: Verdict::Unknown,
        pr: None,
        ledger_phantom: false,
        warning: None,
    };
    let Some(forge) = forge else {
        return v;
    };
    let r = replay(events);
    match forge.pull_for(branch) {
        Ok(Some(pr)) => {
            v.verdict = Verdict::Holds;
            v.pr = Some(pr);
        }
        Ok(None) if r.last_outcome == Some(Outcome::Success) => {
            let after_exit = r.last_exit.unwrap_or(0);
            v.verdict = Verdict::Phantom;
            v.ledger_phantom = !events
                .iter()
                .enumerate()
                .any(|(i, e)| i > after_exit && matches!(e.body, Body::Phantom { .. }));
        }
        Ok(None) if r.last_outcome.is_some() => v.verdict = Verdict::Holds,
        Ok(None) => {}
        Err(e) => v.warning = Some(format!("the forge did not answer: {e}")),
    }
    v
}
