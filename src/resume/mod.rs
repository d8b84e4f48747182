//! `resume`: the successor's prompt, built from the repository and the ledger (never
//! from memory), and the command that resumes the agent's own session where it can.
//!
//! Agents key sessions by directory: when the recorded `cwd` is gone, or the last failure
//! was marked `fresh` (context window exceeded: resuming repeats it), the command starts a
//! fresh session with the prompt instead, and says why.
//!
//! A published worker whose pull request's checks fail or whose reviewer requests changes
//! gets the forge's feedback in its prompt ([`feedback`]), fenced as untrusted text.

use std::path::Path;

use serde::Serialize;

use crate::config::Config;
use crate::ledger;
use crate::ledger::Body;
use crate::model::{self, Snapshot, Worker};
use crate::{git, hook, repo};

pub mod feedback;
mod render;
pub mod start;
pub mod takeover;

pub use render::prompt;

/// The fence lines around untrusted output. Every line of the output inside is prefixed
/// with `| `, so no text in it can close the fence.
pub const FENCE_BEGIN: &str = "----- BEGIN UNTRUSTED OUTPUT OF THE PREVIOUS ATTEMPT -----";
/// See [`FENCE_BEGIN`].
pub const FENCE_END: &str = "----- END UNTRUSTED OUTPUT OF THE PREVIOUS ATTEMPT -----";
/// The fence lines around the commits' subjects (untrusted text, SPEC 1.2).
pub const COMMITS_BEGIN: &str = "----- BEGIN UNTRUSTED COMMIT SUBJECTS -----";
/// See [`COMMITS_BEGIN`].
pub const COMMITS_END: &str = "----- END UNTRUSTED COMMIT SUBJECTS -----";
/// The fence around the task's own prompt (SPEC 1.3: kept as untrusted text).
pub const TASK_BEGIN: &str = "----- BEGIN UNTRUSTED TASK PROMPT -----";
/// See [`TASK_BEGIN`].
pub const TASK_END: &str = "----- END UNTRUSTED TASK PROMPT -----";

/// One commit since the base.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct CommitFact {
    /// Commit id (40 hex digits in `resume --json`).
    #[serde(serialize_with = "crate::model::event::wire_head::one")]
    pub id: gix::ObjectId,
    /// First line of the message.
    pub subject: String,
    /// Its `Recode-Phase:` trailer.
    pub phase: Option<String>,
    /// A git-recode WIP snapshot (`Recode-Wip: true`).
    pub wip: bool,
}

/// The facts a prompt is built from (also `resume --json`'s `facts`).
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct Facts {
    /// Task key.
    pub task: String,
    /// Branch.
    pub branch: String,
    /// Base branch.
    pub base: String,
    /// The branch exists locally.
    pub branch_exists: bool,
    /// The remote-tracking branch, when it exists.
    pub remote_branch: Option<String>,
    /// Commits ahead of the base; null when unknown (a shallow history without a merge base).
    pub ahead: Option<u32>,
    /// Commits behind the base; null when unknown.
    pub behind: Option<u32>,
    /// Commits since the base, oldest first.
    pub commits: Vec<CommitFact>,
    /// `git diff --stat <base>...<head>`.
    pub diffstat: String,
    /// `git status --short` of the worktree (empty when clean or absent).
    pub uncommitted: Vec<String>,
    /// The worktree.
    pub worktree: Option<String>,
    /// The newest gate result for exactly the head: `passed` or `failed`.
    pub gate: Option<String>,
    /// The previous attempt's outcome.
    pub last_outcome: Option<String>,
    /// Its exit code.
    pub last_rc: Option<i32>,
    /// Its final message.
    pub last_message: Option<String>,
    /// Newest milestone.
    pub phase: Option<String>,
    /// The attempt this resume starts.
    pub attempt: u32,
    /// `recode.maxAttempts`.
    pub max_attempts: u32,
    /// What the branch's newest WIP step left out and is still in the worktree (SPEC 1.2
    /// "Never lose work: more states": the resume prompt names it), in the ledger's order.
    pub left_out: Vec<LeftOutFact>,
    /// Stash entries made on the branch, newest first (`stash@{N} (<message>)`: the message
    /// is untrusted text): work no status shows (SPEC 1.3).
    pub stashes: Vec<String>,
    /// The open pull request whose failing checks or requested changes this resume
    /// answers (SPEC "Pull request feedback"); null otherwise.
    pub pull_request: Option<feedback::PrFacts>,
    /// The worker's newest attempt ran on another host, silent for `recode.hostTimeout`:
    /// this resume takes it over (SPEC 1.2 "Several machines"). Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub takeover: Option<TakeoverFacts>,
    /// The task's own prompt, as the loop gave it to the newest attempt that recorded one
    /// (`record spawn --prompt-file`, its first 16 KiB): untrusted, fenced under "The
    /// task" (SPEC 1.3). Absent when no spawn recorded one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_prompt: Option<String>,
}

/// Where the work was before a takeover (SPEC 1.2: the prompt says where the work was and
/// that uncommitted work may remain there).
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct TakeoverFacts {
    /// The silent host.
    pub from_host: String,
    /// The directory its newest attempt ran in there, when recorded.
    pub path: Option<String>,
    /// When that host was last heard of (RFC 3339).
    pub last_seen: String,
}

/// The takeover this resume would be: the worker's newest attempt ran on another host
/// (SPEC 1.2 "Several machines"); the directory of that host's newest `spawn` on the branch.
pub fn takeover_facts(snap: &Snapshot) -> Option<TakeoverFacts> {
    let o = snap.hosts.other.as_ref()?;
    let path = snap.events.iter().rev().find_map(|e| match &e.body {
        Body::Spawn { host, cwd, .. }
            if *host == o.host && e.branch.as_deref().is_none_or(|b| b == snap.branch) =>
        {
            Some(cwd.clone())
        }
        _ => None,
    });
    Some(TakeoverFacts {
        from_host: o.host.clone(),
        path,
        last_seen: crate::clock::format_secs(o.last_seen()),
    })
}

/// Gather the facts for `w` from the repository and its ledger.
///
/// Errors: [`ResumeError::Repo`], [`ResumeError::Git`] when git cannot be read.
pub fn facts(
    repo: &gix::Repository,
    cfg: &Config,
    snap: &Snapshot,
    w: &Worker,
) -> Result<Facts, ResumeError> {
    let base_tips = repo::base_tips(repo, cfg, &w.base);
    let head = w.head;
    let commits = match head {
        Some(h) => commit_facts(repo, h, &base_tips)?,
        None => Vec::new(),
    };
    let diffstat = match (head, base_tips.first()) {
        (Some(h), Some(b)) if !commits.is_empty() => diffstat(repo, cfg, *b, h)?,
        _ => String::new(),
    };
    let uncommitted = uncommitted(snap, cfg)?;
    let gate = w
        .head
        .and_then(|h| ledger::gate_on(&snap.events, h))
        .map(|p| if p { "passed" } else { "failed" }.to_string());
    let (last_rc, last_message) = last_exit(snap);
    let remote_ref = repo::remote_tracking(repo, cfg, &w.branch);
    let attempt = ledger::next_attempt(&snap.events);
    Ok(Facts {
        task: w.task.clone(),
        branch: w.branch.clone(),
        base: w.base.clone(),
        branch_exists: snap.branch_local,
        remote_branch: snap
            .branch_remote
            .then(|| remote_ref.trim_start_matches("refs/remotes/").to_string()),
        ahead: w.ahead,
        behind: w.behind,
        commits,
        diffstat,
        uncommitted,
        worktree: w.worktree.clone(),
        gate,
        last_outcome: w.last_outcome.map(|o| o.as_str().to_string()),
        last_rc,
        last_message,
        phase: w.phase.clone(),
        attempt,
        max_attempts: w.max_attempts,
        left_out: left_out(snap, cfg),
        stashes: snap.stashes.clone(),
        pull_request: feedback::facts(w.pr.as_ref()),
        takeover: takeover_facts(snap),
        task_prompt: task_prompt(snap),
    })
}

/// One path a WIP commit left out, as it is on disk now.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct LeftOutFact {
    /// Repository-relative, `/`-separated.
    pub path: String,
    /// `submodule` (a registered gitlink holding work its remote lacks), `repository` (an
    /// untracked nested repository), `file` (an untracked file, too large for a WIP
    /// commit or refused by the remote), or `other`.
    pub kind: &'static str,
    /// The file's size in bytes (`file` only).
    pub bytes: Option<u64>,
}

/// The newest `wip` event's `left_out` paths (`ledger::left_out_last`) that are still in
/// the worker's worktree, each with its kind read from disk; empty without a worktree.
fn left_out(snap: &Snapshot, cfg: &Config) -> Vec<LeftOutFact> {
    let Some(f) = snap.worktree.as_ref().filter(|f| !f.missing) else {
        return Vec::new();
    };
    let dir = Path::new(&f.path);
    ledger::left_out_last(&snap.events, &snap.branch)
        .into_iter()
        .filter_map(|path| {
            let at = dir.join(&path);
            let meta = std::fs::symlink_metadata(&at).ok()?;
            let (kind, bytes) = if at.join(".git").exists() {
                let staged = git::read(dir, cfg.command_timeout, &["ls-files", "-s", "--", &path])
                    .unwrap_or_default();
                let gitlink = String::from_utf8_lossy(&staged).starts_with("160000 ");
                (if gitlink { "submodule" } else { "repository" }, None)
            } else if meta.is_file() {
                ("file", Some(meta.len()))
            } else {
                ("other", None)
            };
            Some(LeftOutFact { path, kind, bytes })
        })
        .collect()
}

/// The commits from the base tips to `head`, oldest first, with their subject, phase
/// trailer and WIP mark.
///
/// Errors: [`ResumeError::Repo`] when the history cannot be walked.
fn commit_facts(
    repo: &gix::Repository,
    head: gix::ObjectId,
    base_tips: &[gix::ObjectId],
) -> Result<Vec<CommitFact>, ResumeError> {
    let mut commits = Vec::new();
    for (id, _) in repo::commits_between(repo, head, base_tips)? {
        let msg = repo
            .find_commit(id)
            .ok()
            .and_then(|c| c.message_raw().ok().map(|m| m.to_string()))
            .unwrap_or_default();
        commits.push(CommitFact {
            id,
            subject: msg.lines().next().unwrap_or("").to_string(),
            phase: hook::phase_of(&msg),
            wip: hook::is_wip(&msg),
        });
    }
    commits.reverse();
    Ok(commits)
}

/// `git diff --stat <base>...<head>`, trailing whitespace trimmed.
///
/// Errors: [`ResumeError::Git`].
fn diffstat(
    repo: &gix::Repository,
    cfg: &Config,
    base: gix::ObjectId,
    head: gix::ObjectId,
) -> Result<String, ResumeError> {
    let range = format!("{base}...{head}");
    Ok(String::from_utf8_lossy(&git::read(
        repo.git_dir(),
        cfg.command_timeout,
        // No command of the repository's config: no external diff, no textconv.
        &["diff", "--no-ext-diff", "--no-textconv", "--stat", &range],
    )?)
    .trim_end()
    .to_string())
}

/// `git status --short --untracked-files=all` lines of the worker's worktree (none when
/// it has none or it is missing).
///
/// Errors: [`ResumeError::Git`].
fn uncommitted(snap: &Snapshot, cfg: &Config) -> Result<Vec<String>, ResumeError> {
    let Some(f) = snap.worktree.as_ref().filter(|f| !f.missing) else {
        return Ok(Vec::new());
    };
    let out = git::read(
        Path::new(&f.path),
        cfg.command_timeout,
        &["status", "--short", "--untracked-files=all"],
    )?;
    Ok(String::from_utf8_lossy(&out)
        .lines()
        .map(str::to_string)
        .collect())
}

/// The task's prompt recorded by the newest `spawn` of the task that kept one (any of its
/// branches: a retry on a new slug is the same task).
fn task_prompt(snap: &Snapshot) -> Option<String> {
    snap.events.iter().rev().find_map(|e| match &e.body {
        Body::Spawn {
            prompt: Some(p), ..
        } if !p.trim().is_empty() => Some(p.clone()),
        _ => None,
    })
}

/// The exit code and final message of the last recorded exit, if any.
fn last_exit(snap: &Snapshot) -> (Option<i32>, Option<String>) {
    let r = ledger::replay_for(&snap.events, &snap.branch);
    match r.last_exit.map(|i| &snap.events[i].body) {
        Some(Body::Exit { rc, message, .. }) => (Some(*rc), message.clone()),
        _ => (None, None),
    }
}

/// Prefix every line of untrusted text with `| ` so it cannot close its fence: lines end
/// at every break an agent or terminal honours, other control characters are escaped
/// ([`crate::fence::quote`], SPEC 1.2).
pub fn quote_untrusted(text: &str) -> String {
    crate::fence::quote(text)
}

/// How the agent is started.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Resume the agent's own session.
    Session,
    /// A fresh session with the prompt.
    Fresh,
}

/// The command a loop runs.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct Launch {
    /// Session or fresh.
    pub mode: Mode,
    /// Why this mode.
    pub why: String,
    /// The directory to run it in.
    pub cwd: String,
    /// A POSIX shell command line (values single-quoted; the prompt read from its file;
    /// the forge tokens unset first: `cd <cwd> && unset GH_TOKEN … && <agent>`).
    pub command: String,
    /// The session resumed.
    pub session_id: Option<String>,
}

/// `unset GH_TOKEN GITHUB_TOKEN …`: the printed command's step that keeps the forge
/// tokens ([`crate::redact::TOKEN_ENV`]) out of the agent's environment (SPEC 1.2: the
/// commands `resume` prints run without them). A POSIX shell builtin, so the command runs
/// as shown under `sh -c` and covers every word of a `recode.agent` template.
pub fn unset_tokens() -> String {
    format!("unset {}", crate::redact::TOKEN_ENV.join(" "))
}

/// Quote one argument for a POSIX shell: single quotes, `'` and `!` escaped
/// ([`gix::quote::single`], as git quotes aliases).
pub fn sh_quote(s: &str) -> String {
    use gix::bstr::ByteSlice;
    gix::quote::single(s.as_bytes().as_bstr()).to_string()
}

/// Fill a `recode.agent` template in one pass, left to right: each placeholder is replaced
/// by its value, and a value is never scanned again, so a session id, directory or prompt
/// path that contains `{cwd}` or `{prompt_file}` text stays as it is.
pub fn fill(template: &str, values: &[(&str, String)]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while !rest.is_empty() {
        if let Some((key, value)) = values.iter().find(|(k, _)| rest.starts_with(k)) {
            out.push_str(value);
            rest = &rest[key.len()..];
        } else {
            let c = rest.chars().next().expect("rest is not empty");
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// Whether `dir` lies inside `top` (both resolved; a path that does not exist is inside
/// nothing).
fn inside(dir: &str, top: &str) -> bool {
    match (Path::new(dir).canonicalize(), Path::new(top).canonicalize()) {
        (Ok(d), Ok(t)) => d.starts_with(t),
        _ => false,
    }
}

/// Whether the last exit asked for a fresh session (`fresh: true`: the session is gone or
/// its context exhausted).
fn last_exit_was_fresh(snap: &Snapshot, r: &ledger::Replay) -> bool {
    r.last_exit.is_some_and(|i| {
        matches!(
            snap.events[i].body,
            Body::Exit {
                fresh: Some(true),
                ..
            }
        )
    })
}

/// A known agent's command: its resume form when `in_session` (else its fresh form), with
/// `{args}` the attempt's recorded flags (else [`Profile::default_args`]; never both, so a
/// resume has no wider permissions than the attempt it continues) and the recorded
/// configuration directory in the profile's variable (SPEC 1.3 "Real agents").
fn profile_command(
    p: &crate::agent::Profile,
    in_session: bool,
    args: Option<&[String]>,
    config_dir: Option<&str>,
    values: &[(&str, String)],
) -> String {
    let template = match (in_session, p.resume) {
        (true, Some(r)) => r,
        _ => p.fresh,
    };
    let mut args: Vec<String> = match args {
        Some(a) => a.iter().map(|a| sh_quote(a)).collect(),
        None => p.default_args.iter().map(|a| a.to_string()).collect(),
    };
    // After `--` no word is an option: not the prompt (which an option taking several
    // values would swallow), not a session id (SPEC 1.2 "Untrusted input stays out").
    if p.args_end_with_dashes {
        args.push("--".into());
    }
    let template = if args.is_empty() {
        template.replace(" {args}", "")
    } else {
        template.to_string()
    };
    let mut values = values.to_vec();
    values.push(("{args}", args.join(" ")));
    let mut env: String = p.env.iter().map(|(k, v)| format!("{k}={v} ")).collect();
    if let (Some(var), Some(dir)) = (p.config_env, config_dir) {
        env.push_str(&format!("{var}={} ", sh_quote(dir)));
    }
    format!("{env}{}", fill(&template, &values))
}

/// Whether a template's placeholder sits inside the template's own quotes (SPEC
/// `recode.agent`: refused, since a value quoted again could leave its quotes). Returns
/// the first such placeholder.
pub fn quoted_placeholder(template: &str) -> Option<&'static str> {
    let (mut single, mut double, mut escaped) = (false, false, false);
    for (i, c) in template.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' if !single => escaped = true,
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '{' if single || double => {
                if let Some(p) = PLACEHOLDERS.iter().find(|p| template[i..].starts_with(**p)) {
                    return Some(p);
                }
            }
            _ => {}
        }
    }
    None
}

/// The placeholders of a `recode.agent` template.
pub const PLACEHOLDERS: [&str; 3] = ["{session_id}", "{cwd}", "{prompt_file}"];

/// Decide session or fresh and build the command for `recode.agent`: a known agent's
/// [`Profile`](crate::agent::Profile) (its resume command by session id, else its fresh
/// command), or a template whose placeholders become single-quoted words.
///
/// Errors: [`ResumeError::Template`] when the template puts a placeholder inside its own
/// quotes (exit 2).
pub fn launch(
    agent: &str,
    snap: &Snapshot,
    w: &Worker,
    prompt_file: &str,
    default_cwd: &str,
) -> Result<Launch, ResumeError> {
    // A known agent's profile, else the user's template (whose sessions are taken to
    // belong to their directory).
    let profile = crate::agent::profile(agent);
    let needs_cwd = profile.is_none_or(|p| p.resume_needs_cwd);
    if profile.is_none()
        && let Some(p) = quoted_placeholder(agent)
    {
        return Err(ResumeError::Template {
            value: agent.to_string(),
            placeholder: p,
        });
    }
    let r = ledger::replay_for(&snap.events, &snap.branch);
    let own = |e: &&ledger::Event| e.branch.as_deref().is_none_or(|b| b == snap.branch);
    let spawned = snap
        .events
        .iter()
        .rev()
        .filter(own)
        .find_map(|e| match &e.body {
            Body::Spawn {
                cwd,
                agent: spawned_by,
                agent_args,
                config_dir,
                ..
            } => {
                // Flags are the spawned agent's: another agent resuming gets its defaults.
                let same = spawned_by.as_deref().is_none_or(|a| a == agent);
                let args = agent_args.clone().filter(|_| same);
                Some((cwd.clone(), args, config_dir.clone().filter(|_| same)))
            }
            _ => None,
        });
    let (recorded_cwd, recorded_args, config_dir) = match spawned {
        Some((c, a, d)) => (Some(c), a, d),
        None => (None, None, None),
    };
    let last_fresh = last_exit_was_fresh(snap, &r);
    let no_resume = profile.is_some_and(|p| p.resume.is_none());
    let (mode, why, session, cwd) = match (&r.session_id, &recorded_cwd) {
        _ if no_resume => (
            Mode::Fresh,
            format!("{agent} has no sessions to resume by id: a fresh run with the prompt"),
            None,
            None,
        ),
        (None, _) => (
            Mode::Fresh,
            "no agent session id is recorded".to_string(),
            None,
            None,
        ),
        (Some(_), _) if last_fresh => (
            Mode::Fresh,
            "the last failure exhausted the context window: resuming the session would repeat it"
                .to_string(),
            None,
            None,
        ),
        (Some(_), Some(c)) if needs_cwd && !Path::new(c).is_dir() => (
            Mode::Fresh,
            format!(
                "the session's directory {c} no longer exists (agents find sessions by directory)"
            ),
            None,
            None,
        ),
        (Some(_), Some(c)) if needs_cwd && !inside(c, default_cwd) => (
            Mode::Fresh,
            format!(
                "the session's directory {c} is not in {}'s worktree {default_cwd} (the agent must run on its branch)",
                w.branch
            ),
            None,
            None,
        ),
        (Some(id), c) => (
            Mode::Session,
            format!("resuming session {id}"),
            Some(id.clone()),
            c.clone().filter(|_| needs_cwd),
        ),
    };
    // `default_cwd` is where the worker's branch is checked out (`place`): the recorded
    // cwd only when it lies inside it (SPEC `resume`: always on the worker's branch).
    let cwd = cwd.unwrap_or_else(|| default_cwd.to_string());
    let values = [
        ("{session_id}", sh_quote(session.as_deref().unwrap_or(""))),
        ("{cwd}", sh_quote(&cwd)),
        ("{prompt_file}", sh_quote(prompt_file)),
        ("{prompt}", format!("\"$(cat {})\"", sh_quote(prompt_file))),
    ];
    let body = match profile {
        Some(p) => profile_command(
            p,
            session.is_some(),
            recorded_args.as_deref(),
            config_dir.as_deref(),
            &values,
        ),
        None => fill(agent, &values[..3]),
    };
    Ok(Launch {
        mode,
        why,
        command: format!("cd {} && {} && {body}", sh_quote(&cwd), unset_tokens()),
        cwd,
        session_id: session,
    })
}

/// Whether this worker may be resumed: `Some(reason)` when it must not (running, hung
/// with its pid alive, or needing a human: capped, auth, an operation in progress). The
/// branch and the reason are untrusted (a synced ledger's): shown escaped
/// ([`crate::fence::shown`]), so the message is one line with no control character.
pub fn refusal(w: &Worker) -> Option<String> {
    let branch = crate::fence::shown(&w.branch);
    let reason = crate::fence::shown(&w.reason.to_string());
    if w.liveness == model::Liveness::Running {
        return Some(format!("{branch} is running: {reason}"));
    }
    if w.state == model::State::NeedsHuman {
        return Some(format!("{branch} needs a human: {reason}"));
    }
    // SPEC 1.3 "The loop as people run it": a hung agent's pid is alive; it is ended by
    // `recover` first, never resumed beside it.
    if w.action == model::Action::Kill {
        return Some(format!(
            "{branch} is hung and still alive: {reason} (run `git recode recover {branch}` to end it first)"
        ));
    }
    // SPEC 1.2 "Several machines": a worker of another host is never acted on here
    // until that host has been silent for `recode.hostTimeout`.
    if let Some(model::reason::Override::OtherHost { .. }) = w.reason.last_override() {
        return Some(format!("{branch} belongs to another host: {reason}"));
    }
    None
}

/// Where a resumed agent runs (SPEC `resume`: always an existing directory with the
/// worker's branch checked out).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// The worker's worktree (or the recorded `cwd` inside it), which exists.
    Existing(String),
    /// No worktree: one was added here with `git worktree add`.
    Added(String),
    /// No worktree, on a dry run: one would be added at `path`; `add` is the shell command
    /// that adds it (`git -C <common dir> worktree add …`, quoted), which the handed-out
    /// command runs first.
    WouldAdd {
        /// Where.
        path: String,
        /// The `git worktree add` command line.
        add: String,
    },
}

/// Errors of `resume`: reading the facts, deciding where to resume.
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    /// The repository cannot be read.
    #[error(transparent)]
    Repo(#[from] repo::RepoError),
    /// A git run failed.
    #[error(transparent)]
    Git(#[from] crate::git::GitError),
    /// The registered worktree's directory is missing (moved, deleted, or on a volume
    /// that is not mounted): refused, nothing ledgered.
    #[error("the worktree of {branch} is registered at {path}, which does not exist")]
    MissingWorktree {
        /// The branch.
        branch: String,
        /// The registered path.
        path: String,
    },
    /// The ledger could not be read or written.
    #[error(transparent)]
    Ledger(#[from] ledger::LedgerError),
    /// The prompt file could not be written.
    #[error("cannot {what} {path}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// `recode.agent` is a template that puts a placeholder inside its own quotes.
    #[error(
        "config recode.agent = '{value}' is refused: {placeholder} is inside quotes of the template's own (each placeholder becomes one single-quoted word: write it bare)"
    )]
    Template {
        /// The template.
        value: String,
        /// The quoted placeholder.
        placeholder: &'static str,
    },
    /// A takeover could not sync the ledger with the remote first (SPEC 1.2 "Several
    /// machines": the silent host may have come back).
    #[error("cannot take {branch} over: syncing the ledger with {remote} failed: {why}")]
    TakeoverSync {
        /// The branch.
        branch: String,
        /// The remote.
        remote: String,
        /// The sync's error.
        why: String,
    },
    /// `git worktree add` failed.
    #[error("cannot add a worktree for {branch} at {path}: {source}")]
    Add {
        /// The branch.
        branch: String,
        /// Where.
        path: String,
        /// git's error.
        #[source]
        source: crate::git::GitError,
    },
}

/// Where the worker resumes; adds a worktree under `recode.worktreeDir` when it has none
/// (not when `dry_run`).
///
/// Errors: [`ResumeError::MissingWorktree`] (exit 1, with the `git worktree repair` hint),
/// [`ResumeError::Add`].
pub fn place(
    repo: &gix::Repository,
    cfg: &crate::config::Config,
    snap: &Snapshot,
    dry_run: bool,
) -> Result<Place, ResumeError> {
    if let Some(w) = &snap.worktree {
        if w.missing {
            return Err(ResumeError::MissingWorktree {
                branch: snap.branch.clone(),
                path: w.path.clone(),
            });
        }
        return Ok(Place::Existing(w.path.clone()));
    }
    let path = crate::worktree::default_path(repo, cfg.worktree_dir.as_deref(), &snap.branch);
    let args = add_args(repo, cfg, snap, &path);
    if dry_run {
        // The command handed out adds the worktree itself, so it runs as shown.
        let mut add = vec![
            "git".to_string(),
            "-C".into(),
            repo.common_dir().display().to_string(),
        ];
        add.extend(args);
        let add = add
            .iter()
            .map(|a| sh_quote(a))
            .collect::<Vec<_>>()
            .join(" ");
        return Ok(Place::WouldAdd { path, add });
    }
    let added = crate::git::Git::new(repo.common_dir(), cfg.command_timeout)
        .args(&args)
        .output();
    // SPEC 1.2: a failing hook of the user's (post-checkout) never makes a completed step
    // look failed: judged by its result, the worktree on the branch.
    match added {
        Err(_)
            if crate::git::branch_checked_out(
                Path::new(&path),
                &snap.branch,
                cfg.command_timeout,
            ) => {}
        Err(source) => {
            return Err(ResumeError::Add {
                branch: snap.branch.clone(),
                path: path.clone(),
                source,
            });
        }
        Ok(_) => {}
    }
    Ok(Place::Added(path))
}

/// The `git worktree add` arguments for the worker at `path`: its local branch, else a new
/// branch tracking its remote one, else a new branch from the base.
fn add_args(
    repo: &gix::Repository,
    cfg: &crate::config::Config,
    snap: &Snapshot,
    path: &str,
) -> Vec<String> {
    let mut args: Vec<String> = vec!["worktree".into(), "add".into(), "--quiet".into()];
    if snap.branch_local {
        args.extend([path.to_string(), snap.branch.clone()]);
    } else if snap.branch_remote {
        let upstream = crate::repo::remote_tracking(repo, cfg, &snap.branch);
        let upstream = upstream.trim_start_matches("refs/remotes/").to_string();
        args.extend([
            "--track".into(),
            "-b".into(),
            snap.branch.clone(),
            path.to_string(),
            upstream,
        ]);
    } else {
        args.extend([
            "-b".into(),
            snap.branch.clone(),
            path.to_string(),
            snap.base.clone(),
        ]);
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_placeholder_inside_the_templates_own_quotes_is_found() {
        for (t, want) in [
            ("a --s {session_id} {prompt_file}", None),
            ("a --s '{session_id}'", Some("{session_id}")),
            ("a --in \"x {cwd}\"", Some("{cwd}")),
            ("a \"$(cat {prompt_file})\"", Some("{prompt_file}")),
            ("a \\'{session_id}", None),
            ("a 'it''s' {cwd} '{other}'", None),
            ("a \"it's\" {cwd}", None),
        ] {
            assert_eq!(quoted_placeholder(t), want, "{t}");
        }
    }
}
