//! `git recode verify <branch>`.

use crate::cli::{Ctx, Ui};
use crate::error::{EXIT_OK, Error};
use crate::forge::verify::{PHANTOM_REASON, verify};
use crate::ledger::{self, Body, Event};
use crate::model::PrState;
use crate::{forge, snapshot, wire};

/// Ask the forge whether the last claimed outcome holds: prints holds, phantom or unknown
///
/// `phantom`: the last exit claimed success and the forge has no pull request for the
/// branch (ledgered once as a `phantom` event). `unknown`: no forge (no token) or it did
/// not answer. Exits 0 for each.
///
/// Example: `[ "$(git recode verify "$branch")" = phantom ] && git recode resume "$branch"`
#[derive(clap::Args, Debug)]
pub struct VerifyArgs {
    /// The worker's branch
    #[arg(value_parser = crate::cli::branch::parse)]
    pub branch: String,
    /// Print {"schema": 1, "verdict": ..., "pr": ...}
    #[arg(long)]
    pub json: bool,
}

/// Run `verify`: the verdict comes from [`crate::forge::verify`] through the forge seam.
///
/// Errors: repository and ledger errors; forge failures are the verdict `unknown`.
pub fn run(args: VerifyArgs, ui: &Ui) -> Result<i32, Error> {
    let ctx = Ctx::open(ui)?;
    let task = ctx.cfg.key_of(&args.branch);
    let refs = snapshot::notes_refs(&ctx.repo, &ctx.cfg);
    let (ledger, warnings) = ledger::read_task(&ctx.repo, &refs, &task)?;
    ctx.ui.warn(&warnings);
    let events: Vec<Event> = ledger.events().cloned().collect();
    let (forge, warnings) = forge::open_run(&ctx.repo, &ctx.cfg, false);
    ctx.ui.warn(&warnings);
    let v = verify(forge.as_deref(), &args.branch, &events);
    ctx.ui.warn(&v.warning.iter().cloned().collect::<Vec<_>>());
    if v.ledger_phantom {
        // Once per claimed success, decided inside the compare-and-swap.
        ledger::append_with(&ctx.repo, &ctx.cfg, &task, ctx.now, |events| {
            let body = Body::Phantom {
                reason: PHANTOM_REASON.into(),
            };
            (!ledger::phantom_since_last_exit(events))
                .then(|| Event::new(ctx.now, &task, Some(&args.branch), body))
                .into_iter()
                .collect()
        })?;
    }
    if args.json {
        let doc = wire::VerifyDoc {
            schema: wire::SCHEMA,
            branch: args.branch.clone(),
            task,
            verdict: v.verdict.as_str().into(),
            pr: v.pr.map(|p| wire::VerifyPrJson {
                number: p.number,
                state: match p.state {
                    PrState::Open => "open",
                    PrState::Closed => "closed",
                    PrState::Merged => "merged",
                }
                .into(),
                url: p.url,
            }),
        };
        let text = serde_json::to_string(&doc).map_err(|e| crate::cli::out_err(e.into()))?;
        crate::say!("{text}");
    } else {
        crate::say!("{}", v.verdict.as_str());
    }
    Ok(EXIT_OK)
}
