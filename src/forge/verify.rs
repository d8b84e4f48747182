//! `verify`'s verdict (SPEC "Commands" `verify`, "Pull request feedback" `phantom`), asked
//! of any forge through the [`Forge`] seam: does the last claimed outcome hold?
//!
//! - `holds`: the branch has a pull request (any state), or the last exit claimed no
//!   success (nothing to confirm);
//! - `phantom`: the last exit claimed `success` and the forge has no pull request for the
//!   branch; a `phantom` event is due unless one was ledgered since that exit;
//! - `unknown`: no forge (none, no token), no outcome yet, or the forge did not answer.

use super::Forge;
use crate::model::Pr;
use crate::model::replay::replay;
use crate::model::{Body, Event};
use crate::outcome::Outcome;

/// The verdict's word (`holds`, `phantom`, `unknown`: the variant's name, lowercase).
#[derive(Clone, Copy, Debug, PartialEq, Eq, strum::IntoStaticStr)]
#[strum(serialize_all = "lowercase")]
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
        self.into()
    }
}

/// What `verify` found.
#[derive(Clone, Debug)]
pub(crate) struct Verification {
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
pub(crate) use crate::model::replay::PHANTOM_REASON;

/// The verdict on `branch`, whose task's ledger is `events`, asking `forge` (one lookup of
/// the branch's pull request; `None`: no forge, the verdict is `unknown`).
pub(crate) fn verify(forge: Option<&dyn Forge>, branch: &str, events: &[Event]) -> Verification {
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use jiff::Timestamp;

    use super::*;
    use crate::forge::ForgeError;
    use crate::model::{Checks, Feedback, PrState, Review};

    /// A forge with canned answers: `pull` for every branch, or an error.
    #[derive(Debug)]
    struct Canned(Option<Option<Pr>>);

    impl Forge for Canned {
        fn pulls(&self, _: Option<Timestamp>) -> Result<BTreeMap<String, Pr>, ForgeError> {
            unreachable!("verify asks one branch")
        }
        fn pull_for(&self, _: &str) -> Result<Option<Pr>, ForgeError> {
            self.0.clone().ok_or(ForgeError::Transport {
                forge: "GitLab",
                api: "http://x".into(),
                why: "down".into(),
            })
        }
        fn open_pull(&self, _: &str, _: &str, _: &str, _: &str) -> Result<Pr, ForgeError> {
            unreachable!()
        }
        fn issue_closed(&self, _: u64) -> Result<bool, ForgeError> {
            unreachable!()
        }
        fn feedback(
            &self,
            _: u64,
            _: &str,
        ) -> Result<(Option<Checks>, Option<Review>, Feedback), ForgeError> {
            unreachable!()
        }
    }

    const SPAWN: &str = r#""kind":"spawn","attempt":1,"cwd":"/w/7","host":"h""#;

    fn events(lines: &[&str]) -> Vec<Event> {
        lines
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let v = format!(
                    r#"{{"v":1,"ts":"2026-11-29T12:00:0{i}.000Z","seq":{},"task":"7","branch":"issue-7",{l}}}"#,
                    i + 1
                );
                serde_json::from_str(&v).unwrap()
            })
            .collect()
    }

    #[test]
    fn the_verdict_through_any_forge() {
        let claimed = events(&[SPAWN, r#""kind":"exit","rc":0,"outcome":"success""#]);
        let pr = Pr {
            number: 3,
            state: PrState::Open,
            url: "https://gitlab.example/acme/widget/-/merge_requests/3".into(),
            head: None,
            merging: false,
            checks: None,
            review: None,
            feedback: Default::default(),
        };
        let v = verify(Some(&Canned(Some(Some(pr.clone())))), "issue-7", &claimed);
        assert_eq!(
            (v.verdict, v.pr, v.ledger_phantom),
            (Verdict::Holds, Some(pr), false)
        );
        let v = verify(Some(&Canned(Some(None))), "issue-7", &claimed);
        assert_eq!((v.verdict, v.ledger_phantom), (Verdict::Phantom, true));
        // Already ledgered since the exit: phantom, not ledgered again.
        let mut again = claimed.clone();
        again.extend(events(&[r#""kind":"phantom","reason":"r""#]));
        let v = verify(Some(&Canned(Some(None))), "issue-7", &again);
        assert_eq!((v.verdict, v.ledger_phantom), (Verdict::Phantom, false));
        // No forge, or a forge that fails: unknown (with the reason for stderr).
        assert_eq!(verify(None, "issue-7", &claimed).verdict, Verdict::Unknown);
        let v = verify(Some(&Canned(None)), "issue-7", &claimed);
        assert_eq!(v.verdict, Verdict::Unknown);
        assert_eq!(
            v.warning.as_deref(),
            Some("the forge did not answer: cannot reach the GitLab API at http://x: down")
        );
        // No outcome yet: unknown; a failed exit: nothing to confirm, holds.
        let spawned = events(&[SPAWN]);
        assert_eq!(
            verify(Some(&Canned(Some(None))), "issue-7", &spawned).verdict,
            Verdict::Unknown
        );
        let failed = events(&[SPAWN, r#""kind":"exit","rc":1,"outcome":"failed""#]);
        assert_eq!(
            verify(Some(&Canned(Some(None))), "issue-7", &failed).verdict,
            Verdict::Holds
        );
    }
}
