//! `verify <branch>`: does the last claimed outcome hold on the forge?

use super::Session;
use crate::error::Error;
use crate::forge::verify::{PHANTOM_REASON, verify as ask};
use crate::ledger;
use crate::model::{Body, Event};
use crate::wire;

/// `verify`: ask the forge (through its seam, [`crate::forge::verify`]) whether the last
/// exit's claimed success has its pull request; a `phantom` verdict is ledgered once per
/// claimed success, decided inside the compare-and-swap. Returns the document `verify
/// --json` prints (its `verdict` is the line plain `verify` prints).
///
/// Errors: repository and ledger errors; forge failures are the verdict `unknown`.
pub fn verify(s: &Session, branch: &str) -> Result<wire::VerifyDoc, Error> {
    let task = s.cfg.key_of(branch);
    let refs = crate::snapshot::notes_refs(&s.repo, &s.cfg);
    let (ledger, warnings) = ledger::read_task(&s.repo, &refs, &task)?;
    s.warn(warnings);
    let events: Vec<Event> = ledger.events().cloned().collect();
    let (forge, warnings) = crate::forge::open_run(&s.repo, &s.cfg, false);
    s.warn(warnings);
    let v = ask(forge.as_deref(), branch, &events);
    s.warn(v.warning.clone());
    if v.ledger_phantom {
        ledger::append_with(&s.repo, &s.cfg, &task, s.now, |events| {
            let body = Body::Phantom {
                reason: PHANTOM_REASON.into(),
            };
            (!crate::model::replay::phantom_since_last_exit(events))
                .then(|| Event::new(s.now, &task, Some(branch), body))
                .into_iter()
                .collect()
        })?;
    }
    Ok(wire::VerifyDoc {
        schema: wire::SCHEMA,
        branch: branch.to_string(),
        task,
        verdict: v.verdict.as_str().into(),
        pr: v.pr.map(|p| wire::VerifyPrJson {
            number: p.number,
            state: p.state.as_str().into(),
            url: p.url,
        }),
    })
}
