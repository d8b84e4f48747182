//! The whole of `resume` below the command line: refuse (ledgering `escalated` once),
//! decide where and how the agent resumes, write the prompt and ledger the `resume`
//! event, its attempt number decided inside the compare-and-swap
//! ([`crate::model::replay::next_attempt`]) so concurrent resumes and spawns never share one (SPEC
//! `resume`, "attempt").

use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::ledger;
use crate::model::{Body, Event};
use crate::model::{Liveness, Snapshot, State, Worker};

use super::{Facts, Launch, Place, ResumeError};

/// What the command line asked of `resume`.
#[derive(Debug, Default, Clone)]
pub(crate) struct Request {
    /// `--output`, made absolute.
    pub output: Option<PathBuf>,
    /// `--json`: without `--output`, the prompt goes to
    /// `<common dir>/recode/prompts/<task>-<attempt>.md`.
    pub json: bool,
    /// `--dry-run`: write nothing (no ledger event, no file, no worktree).
    pub dry_run: bool,
}

/// How `resume` ended.
#[derive(Debug)]
pub(crate) enum Resumed {
    /// Refused (exit 3): the worker is running or needs a human (then `escalated` was
    /// ledgered once, unless a dry run).
    Refused {
        /// The sentence (`issue-7 needs a human: …`).
        why: String,
        /// The worker is running (else it needs a human).
        running: bool,
    },
    /// A new attempt, ledgered (unless a dry run).
    Started(Box<Started>),
}

/// A started attempt: everything `resume` shows.
#[derive(Debug)]
pub(crate) struct Started {
    /// The prompt's facts (`attempt` as ledgered).
    pub facts: Facts,
    /// The command that continues the agent.
    pub launch: Launch,
    /// The prompt text.
    pub prompt: String,
    /// Where the prompt was written (`None`: stdout).
    pub prompt_file: Option<PathBuf>,
    /// The git blob id (hex, the repository's object format) of the prompt, as ledgered in
    /// `prompt_sha`.
    pub prompt_sha: String,
    /// Lines for stderr (e.g. a rate limit that has not reset yet).
    pub warnings: Vec<String>,
}

/// The agent to resume with: `recode.agent` when set; else the agent the last spawn
/// recorded, when it is one with a profile (`agent::profile`); else `recode.agent`'s default.
pub(crate) fn agent_of(cfg: &Config, snap: &Snapshot) -> String {
    let recorded_agent = snap.events.iter().rev().find_map(|e| match &e.body {
        Body::Spawn { agent: Some(a), .. } if crate::agent::profile(a).is_some() => Some(a.clone()),
        _ => None,
    });
    match recorded_agent {
        Some(a) if !cfg.agent_configured => a,
        _ => cfg.agent.clone(),
    }
}

/// The git blob id (hex) of `text` in a repository of object format `kind`: what `git
/// hash-object` prints there (40 digits, 64 in a SHA-256 repository).
fn blob_sha(kind: gix::hash::Kind, text: &str) -> String {
    gix::objs::compute_hash(kind, gix::objs::Kind::Blob, text.as_bytes())
        .map(|id| id.to_hex().to_string())
        .unwrap_or_default()
}

/// What depends on the attempt number: the prompt, its file, the command.
struct Prepared {
    facts: Facts,
    prompt: String,
    prompt_sha: String,
    prompt_file: Option<PathBuf>,
    launch: Launch,
}

/// Everything `prepare` needs besides the attempt.
struct Inputs<'a> {
    repo: &'a gix::Repository,
    snap: &'a Snapshot,
    w: &'a Worker,
    req: &'a Request,
    facts: &'a Facts,
    place: &'a Place,
    agent: String,
}

impl Inputs<'_> {
    /// Errors: [`ResumeError::Template`] (a refused `recode.agent` template).
    fn prepare(&self, attempt: u32) -> Result<Prepared, ResumeError> {
        let mut facts = self.facts.clone();
        facts.attempt = attempt;
        let prompt = super::prompt(&facts);
        let prompt_file = match (&self.req.output, self.req.json) {
            (Some(p), _) => Some(p.clone()),
            (None, true) => Some(self.repo.common_dir().join("recode").join("prompts").join(
                format!("{}-{}.md", crate::fence::component(&self.w.task), attempt),
            )),
            (None, false) => None,
        };
        let shown = prompt_file
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "<prompt file>".into());
        let default_cwd = match self.place {
            Place::Existing(p) | Place::Added(p) => p.clone(),
            Place::WouldAdd { path, .. } => path.clone(),
        };
        let mut launch = super::launch(&self.agent, self.snap, self.w, &shown, &default_cwd)?;
        if let Place::WouldAdd { add, .. } = self.place {
            launch.command = format!("{add} && {}", launch.command);
        }
        Ok(Prepared {
            prompt_sha: blob_sha(self.repo.object_hash(), &prompt),
            facts,
            prompt,
            prompt_file,
            launch,
        })
    }
}

/// Write the prompt to `path`, creating its directory.
///
/// Errors: [`ResumeError::Io`].
fn write_prompt(path: &Path, prompt: &str) -> Result<(), ResumeError> {
    let io = |what: &'static str, p: &Path| {
        let path = p.display().to_string();
        move |source| ResumeError::Io { what, path, source }
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io("create", dir))?;
    }
    std::fs::write(path, prompt).map_err(io("write the prompt to", path))
}

/// Ledger `escalated` for `w` (which needs a human) unless an escalation already stands:
/// once per escalation, decided inside the compare-and-swap (SPEC).
///
/// Errors: [`ResumeError::Ledger`].
fn escalate_once(
    repo: &gix::Repository,
    cfg: &Config,
    now: jiff::Timestamp,
    w: &Worker,
) -> Result<(), ResumeError> {
    ledger::append_with(repo, cfg, &w.task, now, |events| {
        let body = Body::Escalated {
            reason: w.reason.to_string(),
        };
        crate::model::replay::standing_escalation(events)
            .is_none()
            .then(|| Event::new(now, &w.task, Some(&w.branch), body).with_head(w.head))
            .into_iter()
            .collect()
    })?;
    Ok(())
}

/// Refuse `w` with `why` (from [`super::refusal`]): a worker that needs a human gets
/// `escalated` ledgered once ([`escalate_once`]), unless a dry run or its checkout was
/// deregistered (`recover`'s to register again, SPEC 1.3: no escalation stands after it).
///
/// Errors: [`ResumeError::Ledger`].
fn refuse(
    repo: &gix::Repository,
    cfg: &Config,
    now: jiff::Timestamp,
    w: &Worker,
    req: &Request,
    why: String,
) -> Result<Resumed, ResumeError> {
    let repairable = matches!(w.reason.row, crate::model::reason::Row::Deregistered { .. });
    if !req.dry_run && w.state == State::NeedsHuman && !repairable {
        escalate_once(repo, cfg, now, w)?;
    }
    Ok(Resumed::Refused {
        why,
        running: w.liveness == Liveness::Running,
    })
}

/// The warning for a worker that exited on a limit that has not reset by `now`.
fn limit_warning(w: &Worker, now: jiff::Timestamp) -> Option<String> {
    match (w.retry_after, w.liveness) {
        (Some(t), Liveness::Exited) if t > now => Some(format!(
            "the limit resets at {}: resuming now will likely hit it again",
            crate::clock::format_secs(t)
        )),
        _ => None,
    }
}

/// Who this resume acts as and on whose attempt.
struct Hosts {
    /// This host's id.
    here: String,
    /// Its hostname (the `resume` event's `label`).
    label: String,
    /// The silent host a takeover takes the worker from (`None`: no takeover).
    from: Option<String>,
}

/// Claim the attempt on the remote before ledgering it (SPEC 1.2 "Several machines"):
/// one host takes a silent host's worker over, even when several see it silent at once,
/// and where other hosts share the repository every resume claims its attempt the same
/// way, so a host whose ledger is behind never resumes a worker another host has taken
/// over. No claim when no other host is known. A blocked claim adds a warning. Returns
/// the refusal's sentence when another host's claim won.
///
/// Errors: [`ResumeError`] from [`super::takeover::claim`].
fn claim_on_remote(
    repo: &gix::Repository,
    cfg: &Config,
    now: jiff::Timestamp,
    (snap, w): (&Snapshot, &Worker),
    hosts: &Hosts,
    warnings: &mut Vec<String>,
) -> Result<Option<String>, ResumeError> {
    let owner = hosts
        .from
        .clone()
        .or_else(|| snap.hosts.attempt_host.clone());
    let claims = hosts.from.is_some() || crate::hosts::other_hosts_known(repo, &hosts.here);
    let Some(owner) = owner.as_deref().filter(|_| claims) else {
        return Ok(None);
    };
    let attempt_ts = crate::hosts::newest_attempt(&snap.events, &w.branch)
        .and_then(|(i, _)| snap.events.get(i))
        .map(|e| e.ts.to_string())
        .unwrap_or_default();
    let resumed = super::takeover::Resumed {
        branch: &w.branch,
        from_host: owner,
        attempt_ts: &attempt_ts,
        events: &snap.events,
    };
    let claim = super::takeover::claim(repo, cfg, &resumed, &hosts.here, now, warnings)?;
    if let super::takeover::Claim::Blocked(why) = &claim {
        warnings.push(why.clone());
    }
    if claim == super::takeover::Claim::Won {
        // A host killed here leaves its claim and no attempt: the lease (SPEC 1.3 claims).
        crate::failpoint::hit("resume-claimed");
    }
    if claim != super::takeover::Claim::Lost {
        return Ok(None);
    }
    Ok(Some(match &hosts.from {
        Some(f) => format!(
            "{} was taken over from {f} by another host first (its claim is on {}): nothing ledgered",
            w.branch, cfg.remote
        ),
        None => format!(
            "{}'s attempt was resumed or taken over by another host first (its claim is on {}; this host's ledger is behind: run `git recode sync`): nothing ledgered",
            w.branch, cfg.remote
        ),
    }))
}

/// Ledger the `resume` event (after a `takeover` event when taking over) in one
/// compare-and-swap, its attempt number decided there ([`crate::model::replay::next_attempt`]): when a
/// concurrent start took the attempt `p` was prepared for, `p` is prepared again for the
/// one ledgered. A takeover is decided on the ledger as it stands: when the newest attempt
/// is no longer the silent host's, nothing is ledgered and the refusal's sentence is
/// returned.
///
/// Errors: [`ResumeError::Ledger`].
fn ledger_resume(
    (repo, cfg, now): (&gix::Repository, &Config, jiff::Timestamp),
    inputs: &Inputs,
    p: &mut Prepared,
    hosts: &Hosts,
) -> Result<Option<String>, ResumeError> {
    let w = inputs.w;
    let mut lost_to: Option<String> = None;
    let stored = ledger::append_with(repo, cfg, &w.task, now, |events| {
        // SPEC 1.2 "Several machines": a takeover is decided on the ledger as it
        // stands: when the newest attempt is no longer the silent host's, another
        // host got there first and nothing is ledgered.
        let owner = crate::hosts::newest_attempt(events, &w.branch).map(|(_, h)| h);
        lost_to = match &hosts.from {
            Some(f) if owner.as_deref() != Some(f.as_str()) => owner,
            _ => None,
        };
        if lost_to.is_some() {
            return Vec::new();
        }
        let attempt = crate::model::replay::next_attempt(events);
        // The template was accepted above: preparing again cannot fail.
        if attempt != p.facts.attempt
            && let Ok(again) = inputs.prepare(attempt)
        {
            *p = again;
        }
        let body = Body::Resume {
            attempt,
            session_id: p.launch.session_id.clone(),
            prompt_sha: Some(p.prompt_sha.clone()),
            host: Some(hosts.here.clone()),
            label: Some(hosts.label.clone()),
        };
        let takeover = hosts.from.as_ref().map(|f| Body::Takeover {
            from_host: f.clone(),
            host: hosts.here.clone(),
        });
        takeover
            .into_iter()
            .chain([body])
            .map(|b| Event::new(now, &w.task, Some(&w.branch), b).with_head(w.head))
            .collect()
    })?;
    if !stored.is_empty() {
        return Ok(None);
    }
    let by = lost_to.unwrap_or_else(|| "another host".into());
    Ok(Some(format!(
        "{} was taken over by {by} meanwhile: nothing ledgered",
        w.branch
    )))
}

/// A concurrent start took the attempt guessed first (`guessed`): write the prompt that
/// names the one ledgered, and remove the file `written` for the guess when it differs.
///
/// Errors: [`ResumeError::Io`].
fn rewrite_prompt(p: &Prepared, guessed: u32, written: Option<PathBuf>) -> Result<(), ResumeError> {
    if p.facts.attempt == guessed {
        return Ok(());
    }
    if let Some(f) = &p.prompt_file {
        write_prompt(f, &p.prompt)?;
        if let Some(old) = written.filter(|o| o != f) {
            let _ = std::fs::remove_file(old);
        }
    }
    Ok(())
}

/// Ledger the prepared attempt `p` (not on a dry run): write its prompt file, claim the
/// attempt on the remote ([`claim_on_remote`]), ledger it ([`ledger_resume`]), run a
/// takeover's after-steps, and write the prompt again if the attempt changed
/// ([`rewrite_prompt`]). Returns the refusal's sentence when another host won.
///
/// Errors: [`ResumeError`] (an unwritable prompt file before the `resume` event).
fn commit_attempt(
    (repo, cfg, now): (&gix::Repository, &Config, jiff::Timestamp),
    inputs: &Inputs,
    p: &mut Prepared,
    warnings: &mut Vec<String>,
) -> Result<Option<String>, ResumeError> {
    let (snap, w) = (inputs.snap, inputs.w);
    let written = p.prompt_file.clone();
    if let Some(f) = &written {
        write_prompt(f, &p.prompt)?;
    }
    let me = crate::hosts::me(repo, cfg.command_timeout);
    let hosts = Hosts {
        here: me.id,
        label: me.label,
        from: snap.hosts.other.as_ref().map(|o| o.host.clone()),
    };
    if let Some(why) = claim_on_remote(repo, cfg, now, (snap, w), &hosts, warnings)? {
        return Ok(Some(why));
    }
    if let Some(why) = ledger_resume((repo, cfg, now), inputs, p, &hosts)? {
        return Ok(Some(why));
    }
    if hosts.from.is_some() {
        warnings.extend(super::takeover::after(repo, cfg, now));
    }
    rewrite_prompt(p, inputs.facts.attempt, written)?;
    Ok(None)
}

/// Run `resume` for worker `w` (classified from `snap`, gathered `now`).
///
/// Errors: [`ResumeError`] (a missing worktree is refused before anything is ledgered;
/// an unwritable prompt file before the `resume` event).
pub(crate) fn start(
    repo: &gix::Repository,
    cfg: &Config,
    now: jiff::Timestamp,
    snap: &Snapshot,
    w: &Worker,
    req: &Request,
) -> Result<Resumed, ResumeError> {
    if let Some(why) = super::refusal(w) {
        return refuse(repo, cfg, now, w, req, why);
    }
    let mut warnings: Vec<String> = limit_warning(w, now).into_iter().collect();
    // Always an existing directory on the worker's branch (SPEC `resume`): a missing
    // registered worktree is refused before anything is ledgered; none gets one added.
    let place = super::place(repo, cfg, snap, req.dry_run)?;
    let facts = super::facts(repo, cfg, snap, w)?;
    let inputs = Inputs {
        repo,
        snap,
        w,
        req,
        facts: &facts,
        place: &place,
        agent: agent_of(cfg, snap),
    };
    let mut p = inputs.prepare(facts.attempt)?;
    if !req.dry_run
        && let Some(why) = commit_attempt((repo, cfg, now), &inputs, &mut p, &mut warnings)?
    {
        return Ok(Resumed::Refused { why, running: true });
    }
    Ok(Resumed::Started(Box::new(Started {
        facts: p.facts,
        launch: p.launch,
        prompt: p.prompt,
        prompt_file: p.prompt_file,
        prompt_sha: p.prompt_sha,
        warnings,
    })))
}
