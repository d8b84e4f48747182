//! `git recode resume <branch>`.

use std::io::Write;

use serde::Serialize;

use crate::classify;
use crate::cli::{Ctx, out_err};
use crate::error::{EXIT_OK, Error};
use crate::ledger::{self, Body, Event};
use crate::resume::{self, Facts, Launch};

/// Write the resume prompt and the command that continues the agent's session
///
/// The prompt is built from the repository and the ledger: commits since the base with
/// their milestones, the diffstat, WIP snapshots, uncommitted changes, the last gate,
/// and the previous attempt's final message fenced as untrusted output. A `resume` event
/// is ledgered with the new attempt number. At recode.maxAttempts (or when the worker
/// needs a human) it refuses with exit 3 and ledgers `escalated` once.
///
/// Without --output the prompt goes to stdout and the command to stderr; with --output F
/// the prompt goes to F and the command to stdout. The agent comes from recode.agent.
///
/// Example: `cmd=$(git recode resume "$branch" --output /tmp/p.md) && sh -c "$cmd"; git recode record exit "$branch" --rc $?`
#[derive(clap::Args, Debug)]
pub struct ResumeArgs {
    /// The worker's branch
    pub branch: String,
    /// Write the prompt to this file
    #[arg(long, short, value_name = "F")]
    pub output: Option<std::path::PathBuf>,
    /// Print what would be done; write nothing (no ledger event, no file)
    #[arg(long)]
    pub dry_run: bool,
    /// Print {"schema": 1, ...} with the prompt path, command, attempt, mode and facts
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct ResumeDoc<'a> {
    schema: u32,
    task: &'a str,
    branch: &'a str,
    attempt: u32,
    mode: resume::Mode,
    why: &'a str,
    session_id: Option<&'a str>,
    cwd: &'a str,
    command: &'a str,
    prompt_file: Option<String>,
    prompt_sha: String,
    dry_run: bool,
    facts: &'a Facts,
}

/// Run `resume`.
///
/// Errors: [`Error::UnknownBranch`]; [`Error::Refused`] (exit 3) when capped, needing a
/// human, or running.
pub fn run(args: ResumeArgs) -> Result<i32, Error> {
    let ctx = Ctx::open()?;
    if !args.dry_run {
        crate::cli::pick_up(&ctx, std::slice::from_ref(&args.branch));
    }
    let snap = ctx.one_worker(&args.branch, false)?;
    let w = classify::classify(&snap);
    if let Some(why) = resume::refusal(&w) {
        let r = crate::ledger::replay(&snap.events);
        if !args.dry_run && w.state == crate::model::State::NeedsHuman && r.escalated.is_none() {
            let e = Event::new(
                ctx.now,
                &w.task,
                Some(&w.branch),
                Body::Escalated {
                    reason: w.reason.to_string(),
                },
            )
            .with_head(w.head.clone());
            ledger::append(&ctx.repo, &ctx.cfg.notes_ref, e)?;
        }
        return Err(Error::Refused {
            message: why,
            hint: if w.liveness == crate::model::Liveness::Running {
                "wait for it to exit (or stall), then resume".into()
            } else {
                "a human must look: fix the cause, then `git recode record clear <branch>`".into()
            },
        });
    }
    if let (Some(t), Some(crate::model::Liveness::Exited)) = (w.retry_after, Some(w.liveness))
        && t > ctx.now
    {
        eprintln!(
            "warning: the limit resets at {}: resuming now will likely hit it again",
            crate::clock::format_secs(t)
        );
    }
    // Always an existing directory on the worker's branch (SPEC `resume`): a missing
    // registered worktree is refused before anything is ledgered; none gets one added.
    let place = resume::place(&ctx.repo, &ctx.cfg, &snap, args.dry_run)?;
    let facts = resume::facts(&ctx.repo, &ctx.cfg, &snap, &w)?;
    let prompt = resume::prompt(&facts);
    let prompt_sha = gix::objs::compute_hash(
        gix::hash::Kind::Sha1,
        gix::objs::Kind::Blob,
        prompt.as_bytes(),
    )
    .map(|id| id.to_hex().to_string())
    .unwrap_or_default();
    let prompt_file = match (&args.output, args.json) {
        (Some(p), _) => Some(absolute(p)),
        (None, true) => Some(
            ctx.repo
                .common_dir()
                .join("recode")
                .join("prompts")
                .join(format!("{}-{}.md", sanitize(&w.task), facts.attempt)),
        ),
        (None, false) => None,
    };
    let shown_file = prompt_file
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "<prompt file>".into());
    let default_cwd = match &place {
        resume::Place::Existing(p) | resume::Place::Added(p) => p.clone(),
    };
    // recode.agent when set; else the agent the last spawn recorded, when it is one we know.
    let recorded_agent = snap.events.iter().rev().find_map(|e| match &e.body {
        Body::Spawn { agent: Some(a), .. } if a == "claude" || a == "codex" => Some(a.clone()),
        _ => None,
    });
    let agent = match recorded_agent {
        Some(a) if !ctx.cfg.agent_configured => a,
        _ => ctx.cfg.agent.clone(),
    };
    let launch: Launch = resume::launch(&agent, &snap, &w, &shown_file, &default_cwd);
    if !args.dry_run {
        if let Some(p) = &prompt_file {
            if let Some(dir) = p.parent() {
                std::fs::create_dir_all(dir).map_err(|source| Error::Io {
                    what: "create",
                    path: dir.display().to_string(),
                    source,
                })?;
            }
            std::fs::write(p, &prompt).map_err(|source| Error::Io {
                what: "write the prompt to",
                path: p.display().to_string(),
                source,
            })?;
        }
        let e = Event::new(
            ctx.now,
            &w.task,
            Some(&w.branch),
            Body::Resume {
                attempt: facts.attempt,
                session_id: launch.session_id.clone(),
                prompt_sha: Some(prompt_sha.clone()),
            },
        )
        .with_head(w.head.clone());
        ledger::append(&ctx.repo, &ctx.cfg.notes_ref, e)?;
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        let doc = ResumeDoc {
            schema: crate::wire::SCHEMA,
            task: &w.task,
            branch: &w.branch,
            attempt: facts.attempt,
            mode: launch.mode,
            why: &launch.why,
            session_id: launch.session_id.as_deref(),
            cwd: &launch.cwd,
            command: &launch.command,
            prompt_file: prompt_file.as_ref().map(|p| p.display().to_string()),
            prompt_sha,
            dry_run: args.dry_run,
            facts: &facts,
        };
        serde_json::to_writer_pretty(&mut out, &doc).map_err(|e| out_err(e.into()))?;
        writeln!(out).map_err(out_err)?;
    } else if args.output.is_some() {
        writeln!(out, "{}", launch.command).map_err(out_err)?;
        eprintln!(
            "# attempt {} of {}, {} mode: {}",
            facts.attempt,
            facts.max_attempts,
            mode_name(launch.mode),
            launch.why
        );
    } else {
        write!(out, "{prompt}").map_err(out_err)?;
        eprintln!(
            "# attempt {} of {}, {} mode: {}",
            facts.attempt,
            facts.max_attempts,
            mode_name(launch.mode),
            launch.why
        );
        eprintln!(
            "# save the prompt above to a file, then run: {}",
            launch.command
        );
    }
    Ok(EXIT_OK)
}

fn mode_name(m: resume::Mode) -> &'static str {
    match m {
        resume::Mode::Session => "session",
        resume::Mode::Fresh => "fresh",
    }
}

fn absolute(p: &std::path::Path) -> std::path::PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|c| c.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    }
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
