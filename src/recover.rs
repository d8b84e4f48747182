//! `recover`: carry out the mechanical actions — `delete`, `wip-commit`, `publish`,
//! `escalate` — ledgering every step (SPEC "Commands", "Safety rules").
//!
//! Safety, in order: nothing reachable or uncommitted is lost (a delete re-checks the
//! worker at the moment of acting, removes a worktree the way `git worktree remove` does
//! without force, and deletes the branch with its expected old tip); a running worker or
//! a worktree with an operation in progress is never touched; only the named worktree is
//! acted on (no `git worktree prune`).
//!
//! The WIP snapshot uses git's own `add -A` and `commit` (hooks skipped via
//! `core.hooksPath=/dev/null`), so `.gitattributes` filters, exec bits, symlinks and
//! deletions are exactly what `git add` makes of them, and the index matches the commit.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::refs::transaction::{Change, PreviousValue, RefEdit, RefLog};
use serde::Serialize;

use crate::classify;
use crate::config::{self, Config};
use crate::error::Error;
use crate::forge::{self, GitHub};
use crate::ledger::{self, Body, Event, GateBy};
use crate::model::{Action, PrState, Snapshot, State, Worker};
use crate::snapshot::{self, Options};
use crate::{gitbin, render, repo};

/// Test-only failpoint: `RECODE_FAILPOINT=<step>` kills the process with SIGKILL when
/// the step is reached (steps: `delete-worktree`, `delete-branch`, `wip-add`,
/// `wip-commit`, `wip-push`, `publish-push`, `publish-pr`).
pub const FAILPOINT_ENV: &str = "RECODE_FAILPOINT";

fn failpoint(step: &str) {
    if std::env::var(FAILPOINT_ENV).ok().as_deref() == Some(step) {
        let pid = std::process::id().to_string();
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &pid])
            .status();
        std::thread::sleep(std::time::Duration::from_secs(5));
        std::process::abort();
    }
}

/// The result of one worker (SPEC: `done`, `held`, `skipped`, `failed`).
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Carried out.
    Done,
    /// Partly done and held back, with the reason (e.g. a WIP commit made but its push held).
    Held,
    /// Not something recover carries out (`wait`, `resume`, `none`), or a dry run.
    Skipped,
    /// Could not be done.
    Failed,
}

/// One worker's line in the report.
#[derive(Serialize, Clone, Debug)]
pub struct Step {
    /// Task key.
    pub task: String,
    /// Branch.
    pub branch: String,
    /// The action.
    pub action: String,
    /// What became of it.
    pub result: Outcome,
    /// Why, in one sentence.
    pub reason: String,
    /// This failure is an error for the exit code (a rejected push, a forge error).
    #[serde(skip)]
    pub error: bool,
}

/// What to recover.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Branches named; empty with `all`.
    pub branches: Vec<String>,
    /// Every worker.
    pub all: bool,
    /// Print the plan, change nothing.
    pub dry_run: bool,
    /// Show progress on stderr (not in `--json`).
    pub progress: bool,
}

struct Run<'a> {
    repo: &'a gix::Repository,
    cfg: &'a Config,
    now: jiff::Timestamp,
    github: Option<GitHub>,
    forge_view: forge::View,
}

impl Run<'_> {
    fn append(&self, w: &Worker, head: Option<String>, body: Body) -> Result<(), Error> {
        // Stamped when written, after the step it records: files the step touched (the
        // index after a WIP commit) are then no newer than it, so not taken for activity.
        let ts = crate::clock::now()?.max(self.now);
        let e = Event::new(ts, &w.task, Some(&w.branch), body).with_head(head);
        ledger::append(self.repo, &self.cfg.notes_ref, e)?;
        Ok(())
    }

    fn events(&self, task: &str) -> Result<Vec<Event>, Error> {
        let refs = snapshot::notes_refs(self.repo, self.cfg);
        Ok(ledger::read_task(self.repo, &refs, task)?
            .0
            .events()
            .cloned()
            .collect())
    }

    /// Re-gather and re-classify one worker now (the moment of acting).
    fn recheck(&self, branch: &str) -> Result<Option<(Worker, Snapshot)>, Error> {
        let (snap, _) = snapshot::gather_one(
            self.repo,
            self.cfg,
            self.now,
            branch,
            self.forge_view.clone(),
        )?;
        Ok(snap.map(|s| (classify::classify(&s), s)))
    }
}

fn step(w: &Worker, result: Outcome, reason: impl Into<String>) -> Step {
    Step {
        task: w.task.clone(),
        branch: w.branch.clone(),
        action: w.action.as_str().to_string(),
        result,
        reason: reason.into(),
        error: false,
    }
}

fn failed(w: &Worker, reason: impl Into<String>, error: bool) -> Step {
    Step {
        error,
        ..step(w, Outcome::Failed, reason)
    }
}

/// Plan or carry out recovery; returns one step per worker considered.
///
/// Errors: repository, ledger or lock errors stop the run ([`Error`]); a failure on one
/// worker is a `failed` step, and the run goes on.
pub fn run(
    repo: &gix::Repository,
    cfg: &Config,
    now: jiff::Timestamp,
    req: &Request,
) -> Result<Report, Error> {
    let _lock = if req.dry_run {
        None
    } else {
        Some(
            crate::lock::acquire(repo.common_dir(), now)
                .map_err(|e| Error::Other(e.to_string()))?,
        )
    };
    let (forge_view, warning) = forge::view(repo, &cfg.remote, false);
    if let Some(w) = &warning {
        eprintln!("warning: {w}");
    }
    let forge_failed = matches!(forge_view, forge::View::Failed);
    let github = forge::for_repo(repo, &cfg.remote).ok().flatten();
    let r = Run {
        repo,
        cfg,
        now,
        github,
        forge_view: forge_view.clone(),
    };
    let census = snapshot::gather(
        repo,
        cfg,
        now,
        &Options {
            all: false,
            only_branch: None,
            forge: forge_view,
            progress: req.progress,
        },
    )?;
    crate::cli::warn_all(&census.warnings);
    let mut workers: Vec<Worker> = census.snapshots.iter().map(classify::classify).collect();
    if !req.all {
        for b in &req.branches {
            if !workers.iter().any(|w| &w.branch == b) {
                return Err(Error::UnknownBranch { branch: b.clone() });
            }
        }
        workers.retain(|w| req.branches.contains(&w.branch));
    }
    let mut steps = Vec::new();
    let progress = crate::progress::Progress::new(
        workers.len() as u64,
        "recovering",
        req.progress && !req.dry_run,
    );
    for w in &workers {
        progress.inc();
        if req.dry_run {
            steps.push(step(
                w,
                Outcome::Skipped,
                format!("dry run: would {}", render::explain(w)),
            ));
            continue;
        }
        let s = match act(&r, w) {
            Ok(s) => s,
            Err(e) => failed(w, e.to_string(), true),
        };
        steps.push(s);
    }
    progress.finish();
    Ok(Report {
        steps,
        // SPEC: a forge error is an error, after what could be done safely was done.
        forge_error: warning.filter(|_| forge_failed && !req.dry_run),
    })
}

/// What a run did.
#[derive(Debug)]
pub struct Report {
    /// One step per worker considered.
    pub steps: Vec<Step>,
    /// The forge was asked and failed (the exit code is then 1).
    pub forge_error: Option<String>,
}

impl Report {
    /// Whether the run ends in an error (a rejected push, a forge error).
    pub fn is_error(&self) -> bool {
        self.forge_error.is_some() || self.steps.iter().any(|s| s.error)
    }
}

fn act(r: &Run, w: &Worker) -> Result<Step, Error> {
    // A success claim the forge cannot back is ledgered once as `phantom`.
    if w.phantom {
        let events = r.events(&w.task)?;
        let last_exit = events
            .iter()
            .rposition(|e| matches!(e.body, Body::Exit { .. }));
        let already = events.iter().enumerate().any(|(i, e)| {
            matches!(e.body, Body::Phantom { .. }) && last_exit.is_none_or(|x| i > x)
        });
        if !already {
            r.append(w, w.head.clone(), Body::Phantom {
                reason: "the last exit claimed success but the forge has no pull request for the branch".into(),
            })?;
        }
    }
    match w.action {
        Action::Wait | Action::Resume | Action::None => {
            Ok(step(w, Outcome::Skipped, w.reason.clone()))
        }
        Action::Escalate => escalate(r, w),
        Action::Delete => delete(r, w),
        Action::WipCommit => wip_commit(r, w),
        Action::Publish => publish(r, w),
    }
}

fn classified(r: &Run, w: &Worker) -> Result<(), Error> {
    r.append(
        w,
        w.head.clone(),
        Body::Classified {
            state: w.state.as_str().into(),
            action: w.action.as_str().into(),
            reason: w.reason.clone(),
        },
    )
}

fn escalate(r: &Run, w: &Worker) -> Result<Step, Error> {
    let standing = ledger::replay(&r.events(&w.task)?).escalated;
    if let Some(reason) = standing {
        return Ok(step(
            w,
            Outcome::Done,
            format!("escalated earlier: {reason}"),
        ));
    }
    r.append(
        w,
        w.head.clone(),
        Body::Escalated {
            reason: w.reason.clone(),
        },
    )?;
    Ok(step(w, Outcome::Done, format!("escalated: {}", w.reason)))
}

fn delete(r: &Run, w: &Worker) -> Result<Step, Error> {
    // Re-check at the moment of acting.
    let Some((now_w, snap)) = r.recheck(&w.branch)? else {
        return Ok(failed(w, "the worker vanished before the delete", false));
    };
    if now_w.action != Action::Delete {
        return Ok(step(
            w,
            Outcome::Skipped,
            format!(
                "re-checked: now {} / {}: {}",
                now_w.state, now_w.action, now_w.reason
            ),
        ));
    }
    let merged = now_w.state == State::Published
        && now_w
            .pr
            .as_ref()
            .is_some_and(|p| p.state == PrState::Merged);
    let wt = snap.worktree.as_ref();
    if let Some(f) = wt {
        let main = r.repo.main_repo().ok().and_then(|m| {
            m.workdir()
                .map(|p| p.canonicalize().unwrap_or(p.to_path_buf()))
        });
        if main.as_deref() == Some(Path::new(&f.path)) {
            return Ok(failed(
                w,
                format!(
                    "{} is checked out in the main worktree {}: not removed",
                    w.branch, f.path
                ),
                false,
            ));
        }
    }
    let local_tip = repo::tip(r.repo, &format!("refs/heads/{}", w.branch));
    // The branch goes only when nothing it holds would become unreachable.
    let keep_branch_reason = match local_tip {
        None => None,
        Some(tip) => {
            let mut keep = repo::base_tips(r.repo, r.cfg, &w.base);
            if let Some(t) = repo::tip(r.repo, &repo::remote_tracking(r.repo, r.cfg, &w.branch)) {
                keep.push(t);
            }
            let unique = repo::count_between(r.repo, tip, &keep)?;
            (unique > 0).then(|| format!("{unique} commits of {} are in neither {} nor its remote-tracking branch: branch kept", w.branch, w.base))
        }
    };
    if !merged && keep_branch_reason.is_some() {
        return Ok(failed(w, keep_branch_reason.unwrap_or_default(), false));
    }
    let ignored = match wt {
        Some(f) => snapshot::summarize(&snapshot::ignored_paths(Path::new(&f.path))),
        None => Vec::new(),
    };
    classified(r, &now_w)?;
    let mut done = Vec::new();
    if let Some(f) = wt {
        failpoint("delete-worktree");
        if let Err(e) = gitbin::run(r.repo.common_dir(), &["worktree", "remove", &f.path]) {
            return Ok(failed(
                w,
                format!("git worktree remove refused: {e}"),
                false,
            ));
        }
        done.push(format!("removed worktree {}", f.path));
        if !ignored.is_empty() {
            done.push(format!("with its ignored files {}", ignored.join(", ")));
        }
    }
    // Ledgered once something is gone (never for a refused removal), and before the
    // branch goes: the event holds the tip to restore it from.
    r.append(
        w,
        local_tip.map(|t| t.to_hex().to_string()),
        Body::Deleted {
            worktree: wt.map(|f| f.path.clone()),
            ignored: ignored.clone(),
        },
    )?;
    if let (Some(tip), None) = (local_tip, &keep_branch_reason) {
        failpoint("delete-branch");
        delete_branch(r.repo, &w.branch, tip)?;
        done.push(format!(
            "deleted {} (was {}; undo: git branch {} {})",
            w.branch,
            short(tip),
            w.branch,
            tip
        ));
    } else if let Some(why) = keep_branch_reason {
        done.push(why);
    }
    Ok(step(w, Outcome::Done, done.join("; ")))
}

fn short(id: ObjectId) -> String {
    id.to_hex_with_len(12).to_string()
}

/// Delete `refs/heads/<branch>` only if it still points at `tip` (compare-and-swap).
fn delete_branch(repo: &gix::Repository, branch: &str, tip: ObjectId) -> Result<(), Error> {
    let name = format!("refs/heads/{branch}");
    repo.edit_reference(RefEdit {
        change: Change::Delete {
            expected: PreviousValue::MustExistAndMatch(gix::refs::Target::Object(tip)),
            log: RefLog::AndReference,
        },
        name: name
            .as_str()
            .try_into()
            .map_err(|e: gix::validate::reference::name::Error| Error::Other(e.to_string()))?,
        deref: false,
    })
    .map_err(|e| {
        Error::Other(format!(
            "{branch} moved or could not be deleted (nothing was lost): {e}"
        ))
    })?;
    Ok(())
}

fn identity_env(repo: &gix::Repository) -> Vec<(&'static str, &'static str)> {
    if repo.committer().and_then(|c| c.ok()).is_some() {
        Vec::new()
    } else {
        vec![
            ("GIT_AUTHOR_NAME", "git-recode"),
            ("GIT_AUTHOR_EMAIL", "git-recode@localhost"),
            ("GIT_COMMITTER_NAME", "git-recode"),
            ("GIT_COMMITTER_EMAIL", "git-recode@localhost"),
        ]
    }
}

fn wip_commit(r: &Run, w: &Worker) -> Result<Step, Error> {
    let Some((now_w, snap)) = r.recheck(&w.branch)? else {
        return Ok(failed(w, "the worker vanished", false));
    };
    if now_w.action != Action::WipCommit {
        return Ok(step(
            w,
            Outcome::Skipped,
            format!(
                "re-checked: now {} / {}: {}",
                now_w.state, now_w.action, now_w.reason
            ),
        ));
    }
    let Some(f) = snap.worktree.as_ref() else {
        return Ok(failed(w, "no worktree to snapshot", false));
    };
    let dir = Path::new(&f.path);
    // An index.lock that has stood for seconds was left by a killed agent: git add would
    // refuse; say which file, rather than relay git's complaint.
    let lock = PathBuf::from(
        String::from_utf8_lossy(&gitbin::read(
            dir,
            &[
                "rev-parse",
                "--path-format=absolute",
                "--git-path",
                "index.lock",
            ],
        )?)
        .trim(),
    );
    if let Some(age) = std::fs::metadata(&lock)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        && age.as_secs() >= 3
    {
        return Ok(failed(
            w,
            format!(
                "{} was left by a killed process; if no git runs in {}, remove it (rm '{}') and recover again",
                lock.display(),
                f.path,
                lock.display()
            ),
            false,
        ));
    }
    classified(r, &now_w)?;
    failpoint("wip-add");
    gitbin::run(dir, &["add", "-A", "--", "."])?;
    let staged = gitbin::read(dir, &["diff", "--cached", "--name-only", "-z"])?;
    let files = staged.split(|b| *b == 0).filter(|p| !p.is_empty()).count() as u32;
    let mut message = format!("wip: recode snapshot ({files} files)\n\nRecode-Wip: true\n");
    if let Some(p) = &now_w.phase {
        message.push_str(&format!("Recode-Phase: {p}\n"));
    }
    failpoint("wip-commit");
    let env = identity_env(r.repo);
    gitbin::run_env(
        dir,
        &[
            "-c",
            "core.hooksPath=/dev/null",
            "commit",
            "-q",
            "--no-verify",
            "--allow-empty-message",
            "-m",
            &message,
        ],
        &env,
    )?;
    let head = gitbin::read(dir, &["rev-parse", "HEAD"])?;
    let head = String::from_utf8_lossy(&head).trim().to_string();
    failpoint("wip-push");
    let (pushed, held) = match wip_push_decision(r, &now_w, dir)? {
        Some(why) => (false, Some(why)),
        None => match push(r, dir, &w.branch) {
            Ok(()) => (true, None),
            Err(e) => {
                r.append(
                    w,
                    Some(head.clone()),
                    Body::Wip {
                        files,
                        pushed: false,
                        held: Some(format!("push rejected: {e}")),
                    },
                )?;
                return Ok(failed(
                    w,
                    format!(
                        "WIP commit {} made; push rejected: {e}",
                        &head[..12.min(head.len())]
                    ),
                    true,
                ));
            }
        },
    };
    r.append(
        w,
        Some(head.clone()),
        Body::Wip {
            files,
            pushed,
            held: held.clone(),
        },
    )?;
    let short = &head[..12.min(head.len())];
    Ok(match held {
        None if pushed => step(
            w,
            Outcome::Done,
            format!("WIP commit {short} ({files} files), pushed"),
        ),
        Some(why) => step(
            w,
            Outcome::Held,
            format!("WIP commit {short} ({files} files); push held: {why}"),
        ),
        None => step(
            w,
            Outcome::Done,
            format!("WIP commit {short} ({files} files)"),
        ),
    })
}

/// Why a WIP push must not happen (`None`: push it).
fn wip_push_decision(r: &Run, w: &Worker, dir: &Path) -> Result<Option<String>, Error> {
    if !r.cfg.push_wip {
        return Ok(Some("recode.pushWip is false".into()));
    }
    if forge::remote_url(r.repo, &r.cfg.remote).is_none() {
        return Ok(Some(format!("no remote '{}'", r.cfg.remote)));
    }
    let remote_ref = repo::remote_tracking(r.repo, r.cfg, &w.branch);
    let remote_tip = repo::tip(r.repo, &remote_ref);
    match (&r.forge_view, &w.pr) {
        (forge::View::Known(_), Some(pr)) if pr.state == PrState::Open => {
            return Ok(Some(format!(
                "pull request #{} is open on {}",
                pr.number, w.branch
            )));
        }
        (forge::View::Known(_), _) => {}
        _ if remote_tip.is_some() => {
            return Ok(Some(format!(
                "{} exists on the remote and the forge is unknown: it may have an open pull request",
                w.branch
            )));
        }
        _ => {}
    }
    secrets_in_push(r, w, dir)
}

/// Why pushing `w.branch` must not happen because of secrets: a file matching
/// `recode.secrets` added by any commit the push would send (reachable from the branch,
/// not from its remote-tracking branch or, when there is none, the base). Applies to WIP
/// and publish pushes alike.
///
/// Errors: [`Error::Git`] when the log cannot be read.
fn secrets_in_push(r: &Run, w: &Worker, dir: &Path) -> Result<Option<String>, Error> {
    let remote_tip = repo::tip(r.repo, &repo::remote_tracking(r.repo, r.cfg, &w.branch));
    let tip = format!("refs/heads/{}", w.branch);
    let mut range = vec![
        "log".to_string(),
        "--format=".into(),
        "--name-only".into(),
        "--diff-filter=A".into(),
        "-z".into(),
        tip,
    ];
    let excludes: Vec<ObjectId> = match remote_tip {
        Some(t) => vec![t],
        None => repo::base_tips(r.repo, r.cfg, &w.base),
    };
    range.extend(excludes.iter().map(|t| format!("^{t}")));
    let args: Vec<&str> = range.iter().map(String::as_str).collect();
    let added = gitbin::read(dir, &args)?;
    let secrets: BTreeSet<String> = added
        .split(|b| *b == 0 || *b == b'\n')
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).to_string())
        .filter(|p| config::matches_secret(&r.cfg.secrets, p))
        .collect();
    Ok((!secrets.is_empty()).then(|| {
        format!(
            "the push would carry files matching recode.secrets: {}",
            secrets.into_iter().collect::<Vec<_>>().join(", ")
        )
    }))
}

fn push(r: &Run, dir: &Path, branch: &str) -> Result<(), Error> {
    let spec = format!("refs/heads/{branch}:refs/heads/{branch}");
    gitbin::run(
        dir,
        &["push", "--porcelain", "--quiet", &r.cfg.remote, &spec],
    )?;
    Ok(())
}

fn publish(r: &Run, w: &Worker) -> Result<Step, Error> {
    let Some((now_w, snap)) = r.recheck(&w.branch)? else {
        return Ok(failed(w, "the worker vanished", false));
    };
    if now_w.action != Action::Publish {
        return Ok(step(
            w,
            Outcome::Skipped,
            format!(
                "re-checked: now {} / {}: {}",
                now_w.state, now_w.action, now_w.reason
            ),
        ));
    }
    classified(r, &now_w)?;
    let dir = snap
        .worktree
        .as_ref()
        .map(|f| std::path::PathBuf::from(&f.path));
    if let (Some(gate), Some(dir)) = (&r.cfg.gate, &dir) {
        let head = now_w.head.clone().unwrap_or_default();
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg(gate)
            .current_dir(dir)
            .env("RECODE_TASK", &w.task)
            .env("RECODE_BRANCH", &w.branch)
            .env("RECODE_HEAD", &head)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .map_err(|e| Error::Other(format!("cannot run recode.gate: {e}")))?;
        let passed = status.success();
        r.append(
            w,
            Some(head),
            Body::Gate {
                passed,
                command: Some(gate.clone()),
                by: GateBy::Recover,
            },
        )?;
        if !passed {
            return Ok(failed(
                w,
                format!("recode.gate failed ({status}): the worker is half-done (resume)"),
                false,
            ));
        }
    }
    if forge::remote_url(r.repo, &r.cfg.remote).is_none() {
        return Ok(step(
            w,
            Outcome::Held,
            format!("no remote '{}' to push to", r.cfg.remote),
        ));
    }
    let cwd = dir
        .clone()
        .unwrap_or_else(|| r.repo.common_dir().to_path_buf());
    if snap.branch_local {
        if let Some(why) = secrets_in_push(r, w, &cwd)? {
            return Ok(step(w, Outcome::Held, format!("push held: {why}")));
        }
        failpoint("publish-push");
        if let Err(e) = push(r, &cwd, &w.branch) {
            return Ok(failed(w, format!("push rejected: {e}"), true));
        }
    }
    let Some(gh) = &r.github else {
        return Ok(step(
            w,
            Outcome::Held,
            format!(
                "pushed {}; {}: open the pull request by hand",
                w.branch,
                if forge::token().is_none() {
                    "no GH_TOKEN/GITHUB_TOKEN".to_string()
                } else {
                    format!("the remote '{}' is not on GitHub", r.cfg.remote)
                }
            ),
        ));
    };
    failpoint("publish-pr");
    let title = format!("Task {}: {}", w.task, w.branch);
    let body = match w.task.parse::<u64>() {
        Ok(n) => format!("Closes #{n}\n\nPublished by git-recode after its gate passed."),
        Err(_) => "Published by git-recode after its gate passed.".to_string(),
    };
    match gh.create_pull(&w.branch, &w.base, &title, &body) {
        Ok(pr) => {
            r.append(
                w,
                now_w.head.clone(),
                Body::Published {
                    pr: pr.number,
                    url: pr.html_url.clone(),
                },
            )?;
            Ok(step(
                w,
                Outcome::Done,
                format!(
                    "pushed and opened pull request #{} {}",
                    pr.number, pr.html_url
                ),
            ))
        }
        Err(e) => Ok(failed(
            w,
            format!("pushed {}; the forge failed: {e}", w.branch),
            true,
        )),
    }
}
