//! `git recode verify <branch>`.

use crate::cli::{Ctx, Ui};
use crate::error::{EXIT_OK, Error};
use crate::ledger::{self, Body, Event};
use crate::outcome::Outcome;
use crate::{forge, snapshot};

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

/// Run `verify`.
///
/// Errors: repository and ledger errors; forge failures are the verdict `unknown`.
pub fn run(args: VerifyArgs, ui: &Ui) -> Result<i32, Error> {
    let ctx = Ctx::open(ui)?;
    let task = ctx.cfg.key_of(&args.branch);
    let refs = snapshot::notes_refs(&ctx.repo, &ctx.cfg);
    let (ledger, warnings) = ledger::read_task(&ctx.repo, &refs, &task)?;
    ctx.ui.warn(&warnings);
    let events: Vec<Event> = ledger.events().cloned().collect();
    let replay = crate::ledger::replay(&events);
    let mut pr_json = serde_json::Value::Null;
    let verdict = match forge::for_repo(&ctx.repo, &ctx.cfg.remote) {
        Ok(Some(gh)) => match gh.find_pull(&args.branch) {
            Ok(Some(pr)) => {
                pr_json = serde_json::json!({"number": pr.number, "state": pr.to_pr().state, "url": pr.html_url});
                "holds"
            }
            Ok(None) if replay.last_outcome == Some(Outcome::Success) => {
                let after_exit = replay.last_exit.unwrap_or(0);
                let already = events
                    .iter()
                    .enumerate()
                    .any(|(i, e)| i > after_exit && matches!(e.body, Body::Phantom { .. }));
                if !already {
                    let e = Event::new(ctx.now, &task, Some(&args.branch), Body::Phantom {
                        reason: "the last exit claimed success but the forge has no pull request for the branch".into(),
                    });
                    ledger::append(&ctx.repo, &ctx.cfg.notes_ref, e)?;
                }
                "phantom"
            }
            Ok(None) if replay.last_outcome.is_some() => "holds",
            Ok(None) => "unknown",
            Err(e) => {
                ctx.ui.warn(&[format!("the forge did not answer: {e}")]);
                "unknown"
            }
        },
        Ok(None) => "unknown",
        Err(e) => {
            ctx.ui.warn(&[e.to_string()]);
            "unknown"
        }
    };
    if args.json {
        crate::say!(
            "{}",
            serde_json::json!({"schema": crate::wire::SCHEMA, "branch": args.branch, "task": task, "verdict": verdict, "pr": pr_json})
        );
    } else {
        crate::say!("{verdict}");
    }
    Ok(EXIT_OK)
}
