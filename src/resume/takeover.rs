//! Taking over a worker of a silent host (SPEC 1.2 "Several machines"): before the
//! takeover, the ledger is synced with the remote (the silent host may have come back,
//! or a third host may have taken it first) and the worker's branch fetched, so the new
//! worktree starts from what was pushed; after it, the ledger is pushed at once so the
//! other hosts see the `takeover` on their next tick. Between the two, the takeover is
//! claimed on the remote ([`claim`]): one ref per attempt taken over, created only where
//! it does not exist (git's push lease with an empty expected value, checked by the
//! remote under its ref lock), so of several hosts that all see the same host silent,
//! exactly one takes its worker over.

use std::path::Path;

use gix::ObjectId;

use crate::config::Config;
use crate::git;

use super::ResumeError;

/// Whether `remote` is configured in this repository.
fn has_remote(cfg: &Config, remote: &str) -> bool {
    git::read(
        Path::new("."),
        cfg.command_timeout,
        &["config", "--get", &format!("remote.{remote}.url")],
    )
    .is_ok_and(|o| !o.is_empty())
        && !cfg.remote.is_empty()
}

/// Whether other hosts share this repository's remote: a heartbeat of another host is
/// known here (SPEC 1.3: then a resume syncs first, even of this host's own worker).
pub(crate) fn shared(repo: &gix::Repository, cfg: &Config) -> bool {
    crate::hosts::other_hosts_known(repo, &crate::hosts::me(repo, cfg.command_timeout).id)
}

/// Before a takeover of `branch`: sync the ledger with `recode.remote` and fetch the
/// branch into its remote-tracking ref (a branch the remote lacks is no error: there is
/// nothing pushed to start from). Nothing to do without a remote.
///
/// Errors: [`ResumeError::TakeoverSync`] when the sync fails (the takeover is then
/// refused: this host cannot know whether the old host came back).
pub(crate) fn before(
    repo: &gix::Repository,
    cfg: &Config,
    now: jiff::Timestamp,
    branch: &str,
) -> Result<(), ResumeError> {
    let remote = cfg.remote.as_str();
    if !has_remote(cfg, remote) {
        return Ok(());
    }
    crate::sync::sync(repo, cfg, remote, now).map_err(|e| ResumeError::TakeoverSync {
        branch: branch.to_string(),
        remote: remote.to_string(),
        why: e.to_string(),
    })?;
    let spec = format!("+refs/heads/{branch}:refs/remotes/{remote}/{branch}");
    let fetched = git::Git::new(".", cfg.command_timeout)
        .args(["fetch", "--quiet", "--no-write-fetch-head", remote, &spec])
        .network(cfg.network_timeout, &cfg.ssh)
        .capture()?;
    if !fetched.ok {
        tracing::debug!(stderr = %fetched.stderr, "takeover: the remote has no {branch}");
    }
    Ok(())
}

/// After the takeover was ledgered: push the ledger (best effort: a warning when it
/// fails; the next `sync` carries it).
pub(crate) fn after(repo: &gix::Repository, cfg: &Config, now: jiff::Timestamp) -> Option<String> {
    let remote = cfg.remote.as_str();
    if !has_remote(cfg, remote) {
        return None;
    }
    crate::sync::sync(repo, cfg, remote, now).err().map(|e| {
        format!("the takeover is ledgered here but not pushed yet ({e}): run `git recode sync`")
    })
}

/// Whether this host won the claim on the attempt it resumes.
#[derive(Debug, PartialEq)]
pub(crate) enum Claim {
    /// No remote: the local ledger's compare-and-swap decides alone.
    NoRemote,
    /// The claim ref is this host's (created or replaced now, or by an earlier try).
    Won,
    /// Another host's claim holds the ref: the attempt is not ours.
    Lost,
    /// No claim can be made on the remote (a ref in the way, named in the warning): the
    /// ledger's compare-and-swap decides alone.
    Blocked(String),
}

/// What is resumed: the branch, the attempt's host and `ts` (as ledgered), and the ledger.
pub(crate) struct Resumed<'a> {
    /// The worker's branch.
    pub branch: &'a str,
    /// The host of the attempt resumed.
    pub from_host: &'a str,
    /// Its `ts`, as ledgered.
    pub attempt_ts: &'a str,
    /// The task's ledger as this host has it.
    pub events: &'a [crate::model::Event],
}

/// Claim the attempt `r` resumes on `recode.remote` (SPEC 1.3 claims, see
/// [`crate::hosts::claim`]): create the branch's claim ref where none exists; else read the
/// remote's claim and replace it by compare-and-swap when it is stale, garbage, or its
/// claimer's lease ran out.
///
/// Errors: [`ResumeError::TakeoverSync`] when the push fails for another reason than a
/// claim already there (the resume is then refused: this host cannot know).
pub(crate) fn claim(
    repo: &gix::Repository,
    cfg: &Config,
    r: &Resumed<'_>,
    here: &str,
    now: jiff::Timestamp,
    warnings: &mut Vec<String>,
) -> Result<Claim, ResumeError> {
    use crate::hosts::claim as c;
    let remote = cfg.remote.as_str();
    if !has_remote(cfg, remote) {
        return Ok(Claim::NoRemote);
    }
    let refused = |why: String| ResumeError::TakeoverSync {
        branch: r.branch.to_string(),
        remote: remote.to_string(),
        why,
    };
    let name = c::claim_ref(r.branch);
    let doc = c::ClaimDoc {
        branch: r.branch.to_string(),
        from_host: r.from_host.to_string(),
        attempt_ts: r.attempt_ts.to_string(),
        host: here.to_string(),
        pid: Some(std::process::id()),
        pid_start: crate::process::start_token(std::process::id()),
    };
    let blob = repo
        .write_blob(doc.text().as_bytes())
        .map_err(|e| refused(e.to_string()))?
        .detach();
    let mut expected: Option<ObjectId> = None;
    for _round in 0..3 {
        match push_claim(cfg, &name, blob, expected)? {
            Pushed::Done => return Ok(Claim::Won),
            Pushed::Failed(why) => {
                return match blocking_ref(cfg, &name) {
                    Some(b) => Ok(Claim::Blocked(crate::hosts::untrusted_warning(
                        &b,
                        "a ref in the way of every claim",
                    ))),
                    None => Err(refused(why)),
                };
            }
            Pushed::Rejected => {}
        }
        let Some(theirs) = fetch_claim(cfg, &name)? else {
            expected = None; // removed meanwhile: create it
            continue;
        };
        if theirs == blob {
            return Ok(Claim::Won);
        }
        if !replaceable(repo, cfg, (r, here, now), &name, theirs, warnings) {
            return Ok(Claim::Lost);
        }
        expected = Some(theirs);
    }
    Ok(Claim::Lost)
}

/// Whether the remote's claim `theirs` on `name` may be replaced: garbage (named and
/// ignored), naming an older attempt, or its claimer's lease ran out on this host's clock.
fn replaceable(
    repo: &gix::Repository,
    cfg: &Config,
    (r, here, now): (&Resumed<'_>, &str, jiff::Timestamp),
    name: &str,
    theirs: ObjectId,
    warnings: &mut Vec<String>,
) -> bool {
    use crate::hosts::claim as c;
    let doc = match c::read(repo, theirs) {
        Ok(d) => d,
        Err(e) => {
            warnings.push(crate::hosts::untrusted_warning(name, &e));
            return true;
        }
    };
    let verdict = c::judge(&doc, r.events, r.branch, (r.from_host, r.attempt_ts), here);
    match verdict {
        c::Verdict::Ours | c::Verdict::Stale => true,
        c::Verdict::Running | c::Verdict::Held => {
            // The claimer's heartbeat as the remote has it now: a lease is judged on what
            // is there, not on what this host last synced.
            let _ = fetch_same(cfg, &crate::hosts::heartbeat_ref(&doc.host));
            let mut seen = crate::hosts::Seen::load(repo);
            let (beats, _) = crate::hosts::read_heartbeats(repo, &mut seen, now);
            let beat = beats
                .get(&crate::hosts::ref_component(&doc.host))
                .and_then(|b| b.seen.map(|s| s.first));
            let claim_seen = seen
                .sight(&format!("claim {name}"), &theirs.to_string(), now, 0)
                .first;
            seen.save();
            // A claim whose attempt is ledgered is the claimer's worker: its heartbeat
            // alone is its lease, as for any takeover.
            let since = match (verdict, beat) {
                (c::Verdict::Running, Some(b)) => b,
                _ => claim_seen,
            };
            c::lease_ran_out(beat, since, now, cfg.host_timeout)
        }
    }
}

/// How a claim push ended.
enum Pushed {
    Done,
    /// The lease did not hold (a claim is there, or it changed).
    Rejected,
    /// Any other failure, with git's last line.
    Failed(String),
}

/// Push `blob` to `name` with a lease on `expected` (`None`: it must not exist).
fn push_claim(
    cfg: &Config,
    name: &str,
    blob: ObjectId,
    expected: Option<ObjectId>,
) -> Result<Pushed, ResumeError> {
    let lease = expected.map(|e| e.to_string()).unwrap_or_default();
    let out = git::Git::new(".", cfg.command_timeout)
        .args([
            "push".to_string(),
            "--quiet".to_string(),
            "--porcelain".to_string(),
            format!("--force-with-lease={name}:{lease}"),
            cfg.remote.clone(),
            format!("{blob}:{name}"),
        ])
        .network(cfg.network_timeout, &cfg.ssh)
        .capture()?;
    if out.ok {
        return Ok(Pushed::Done);
    }
    let verdict = format!("{}\n{}", out.stdout, out.stderr);
    if verdict.contains("[rejected]") || verdict.contains("stale info") {
        return Ok(Pushed::Rejected);
    }
    // Two claimers at once: the remote's ref lock is held by the other push.
    if verdict.contains("cannot lock ref") && !verdict.contains("exists; cannot create") {
        return Ok(Pushed::Rejected);
    }
    Ok(Pushed::Failed(
        crate::process::last_line(out.stderr.as_bytes())
            .unwrap_or_else(|| "git push failed".into()),
    ))
}

/// The remote's claim on `name`, fetched into the same local ref (`None`: there is none).
fn fetch_claim(cfg: &Config, name: &str) -> Result<Option<ObjectId>, ResumeError> {
    let listed = git::Git::new(".", cfg.command_timeout)
        .args(["ls-remote", cfg.remote.as_str(), name])
        .network(cfg.network_timeout, &cfg.ssh)
        .output()?;
    let Some(id) = String::from_utf8_lossy(&listed)
        .lines()
        .find_map(|l| {
            l.split_once('\t')
                .filter(|(_, n)| *n == name)
                .map(|(i, _)| i.to_string())
        })
        .and_then(|i| ObjectId::from_hex(i.as_bytes()).ok())
    else {
        return Ok(None);
    };
    fetch_same(cfg, name)?;
    Ok(Some(id))
}

/// Fetch the remote's `name` into the same local ref.
///
/// Errors: [`ResumeError::Git`] when git cannot be run; a failed fetch is `Ok(false)`.
fn fetch_same(cfg: &Config, name: &str) -> Result<bool, ResumeError> {
    let spec = format!("+{name}:{name}");
    let out = git::Git::new(".", cfg.command_timeout)
        .args(["fetch", "--quiet", "--no-write-fetch-head"])
        .args([cfg.remote.as_str(), &spec])
        .network(cfg.network_timeout, &cfg.ssh)
        .capture()?;
    Ok(out.ok)
}

/// A ref on the remote that makes `name` impossible to create (a directory/file
/// conflict): `refs/recode/claims` itself, or a ref below `name`.
fn blocking_ref(cfg: &Config, name: &str) -> Option<String> {
    let parent = name.trim_end_matches('/').rsplit_once('/')?.0.to_string();
    let below = format!("{name}/*");
    let listed = git::Git::new(".", cfg.command_timeout)
        .args(["ls-remote", cfg.remote.as_str(), &parent, &below])
        .network(cfg.network_timeout, &cfg.ssh)
        .output()
        .ok()?;
    String::from_utf8_lossy(&listed)
        .lines()
        .filter_map(|l| l.split_once('\t').map(|(_, n)| n.to_string()))
        .find(|n| *n == parent || n.starts_with(&format!("{name}/")))
}
