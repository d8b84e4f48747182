//! `git recode resume <branch>`.

use std::io::Write;

use serde::Serialize;

use crate::classify;
use crate::cli::{Ctx, Ui, out_err};
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
pub fn run(args: ResumeArgs, ui: &Ui) -> Result<i32, Error> {
    let ctx = Ctx::open(ui)?;
    if !args.dry_run {
        crate::cli::pick_up(&ctx, std::slice::from_ref(&args.branch));
    }
    let snap = ctx.one_worker(&args.branch, false)?;
    let w = classify::classify(&snap);
    if let Some(why) = resume::refusal(&w) {
        return Err(refuse(&ctx, &snap, &w, why, args.dry_run)?);
    }
    warn_limit(&ctx, &w);
    // Always an existing directory on the worker's branch (SPEC `resume`): a missing
    // registered worktree is refused before anything is ledgered; none gets one added.
    let place = resume::place(&ctx.repo, &ctx.cfg, &snap, args.dry_run)?;
    let facts = resume::facts(&ctx.repo, &ctx.cfg, &snap, &w)?;
    let prompt = resume::prompt(&facts);
    let prompt_sha = blob_sha(&prompt);
    let prompt_file = prompt_file(&ctx, &args, &w.task, facts.attempt);
    let shown_file = prompt_file
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "<prompt file>".into());
    let default_cwd = match &place {
        resume::Place::Existing(p) | resume::Place::Added(p) => p.clone(),
        resume::Place::WouldAdd { path, .. } => path.clone(),
    };
    let agent = agent_of(&ctx, &snap);
    let mut launch: Launch = resume::launch(&agent, &snap, &w, &shown_file, &default_cwd);
    if let resume::Place::WouldAdd { add, .. } = &place {
        launch.command = format!("{add} && {}", launch.command);
    }
    if !args.dry_run {
        if let Some(p) = &prompt_file {
            write_prompt(p, &prompt)?;
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
    let shown = Shown {
        w: &w,
        facts: &facts,
        launch: &launch,
        prompt: &prompt,
        prompt_file: prompt_file.as_deref(),
        prompt_sha,
    };
    print(&args, shown)?;
    Ok(EXIT_OK)
}

/// The refusal of a worker that is running or needs a human; a worker that needs a
/// human gets `escalated` ledgered once (not on a dry run).
///
/// Errors: [`Error::Ledger`] when the event cannot be written (else the refusal is the
/// `Ok` value, for the caller to return).
fn refuse(
    ctx: &Ctx,
    snap: &crate::model::Snapshot,
    w: &crate::model::Worker,
    why: String,
    dry_run: bool,
) -> Result<Error, Error> {
    let r = crate::ledger::replay_for(&snap.events, &snap.branch);
    if !dry_run && w.state == crate::model::State::NeedsHuman && r.escalated.is_none() {
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
    Ok(Error::Refused {
        message: why,
        hint: if w.liveness == crate::model::Liveness::Running {
            "wait for it to exit (or stall), then resume".into()
        } else {
            "a human must look: fix the cause, then `git recode record clear <branch>`".into()
        },
    })
}

/// Warn on stderr when an exited worker's rate limit has not reset yet.
fn warn_limit(ctx: &Ctx, w: &crate::model::Worker) {
    let now = ctx.now;
    if let (Some(t), Some(crate::model::Liveness::Exited)) = (w.retry_after, Some(w.liveness))
        && t > now
    {
        ctx.ui.warn(&[format!(
            "the limit resets at {}: resuming now will likely hit it again",
            crate::clock::format_secs(t)
        )]);
    }
}

/// The git blob id (SHA-1, hex) of `text`, as ledgered in `prompt_sha`.
fn blob_sha(text: &str) -> String {
    gix::objs::compute_hash(
        gix::hash::Kind::Sha1,
        gix::objs::Kind::Blob,
        text.as_bytes(),
    )
    .map(|id| id.to_hex().to_string())
    .unwrap_or_default()
}

/// Where the prompt is written: `--output` made absolute, else with `--json`
/// `<common dir>/recode/prompts/<task>-<attempt>.md`, else nowhere (stdout).
fn prompt_file(
    ctx: &Ctx,
    args: &ResumeArgs,
    task: &str,
    attempt: u32,
) -> Option<std::path::PathBuf> {
    match (&args.output, args.json) {
        (Some(p), _) => Some(absolute(p)),
        (None, true) => Some(
            ctx.repo
                .common_dir()
                .join("recode")
                .join("prompts")
                .join(format!("{}-{}.md", sanitize(task), attempt)),
        ),
        (None, false) => None,
    }
}

/// The agent to resume with: recode.agent when set; else the agent the last spawn
/// recorded, when it is one we know; else recode.agent's default.
fn agent_of(ctx: &Ctx, snap: &crate::model::Snapshot) -> String {
    let recorded_agent = snap.events.iter().rev().find_map(|e| match &e.body {
        Body::Spawn { agent: Some(a), .. } if a == "claude" || a == "codex" => Some(a.clone()),
        _ => None,
    });
    match recorded_agent {
        Some(a) if !ctx.cfg.agent_configured => a,
        _ => ctx.cfg.agent.clone(),
    }
}

/// Write the prompt to `path`, creating its directory.
///
/// Errors: [`Error::Io`].
fn write_prompt(path: &std::path::Path, prompt: &str) -> Result<(), Error> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|source| Error::Io {
            what: "create",
            path: dir.display().to_string(),
            source,
        })?;
    }
    std::fs::write(path, prompt).map_err(|source| Error::Io {
        what: "write the prompt to",
        path: path.display().to_string(),
        source,
    })
}

/// What `resume` shows once decided.
struct Shown<'a> {
    w: &'a crate::model::Worker,
    facts: &'a Facts,
    launch: &'a Launch,
    prompt: &'a str,
    prompt_file: Option<&'a std::path::Path>,
    prompt_sha: String,
}

/// Print the outcome: the JSON document; or with --output the command on stdout; or the
/// prompt on stdout and the command on stderr.
///
/// Errors: [`Error`] when stdout cannot be written.
fn print(args: &ResumeArgs, s: Shown<'_>) -> Result<(), Error> {
    let mut out = std::io::stdout().lock();
    if args.json {
        let doc = ResumeDoc {
            schema: crate::wire::SCHEMA,
            task: &s.w.task,
            branch: &s.w.branch,
            attempt: s.facts.attempt,
            mode: s.launch.mode,
            why: &s.launch.why,
            session_id: s.launch.session_id.as_deref(),
            cwd: &s.launch.cwd,
            command: &s.launch.command,
            prompt_file: s.prompt_file.map(|p| p.display().to_string()),
            prompt_sha: s.prompt_sha,
            dry_run: args.dry_run,
            facts: s.facts,
        };
        serde_json::to_writer_pretty(&mut out, &doc).map_err(|e| out_err(e.into()))?;
        writeln!(out).map_err(out_err)?;
    } else if args.output.is_some() {
        writeln!(out, "{}", s.launch.command).map_err(out_err)?;
        eprint_attempt(s.facts, s.launch);
    } else {
        write!(out, "{}", s.prompt).map_err(out_err)?;
        eprint_attempt(s.facts, s.launch);
        eprintln!(
            "# save the prompt above to a file, then run: {}",
            s.launch.command
        );
    }
    Ok(())
}

/// The `# attempt N of M, MODE mode: WHY` line on stderr.
fn eprint_attempt(facts: &Facts, launch: &Launch) {
    eprintln!(
        "# attempt {} of {}, {} mode: {}",
        facts.attempt,
        facts.max_attempts,
        mode_name(launch.mode),
        launch.why
    );
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
