//! `sync`: the ledger travels through the remote. Fetch the remote's notes and anchors
//! into remote-tracking refs (never straight over the local ones), merge them with the
//! local ledger by sorted union of lines per note (what `git notes merge -s
//! cat_sort_uniq` gives), then push with compare-and-swap (`--force-with-lease` on the
//! value merged), retrying on a lost race.

use std::collections::{BTreeMap, BTreeSet};

use gix::ObjectId;
use gix::refs::transaction::PreviousValue;

use crate::config::{ANCHORS_REF, Config};

use crate::git;

/// Lost races retried before giving up.
const TRIES: u32 = 20;

/// The pause before a retry: 20 ms more each time, at most 200 ms, plus up to 49 ms of
/// jitter so that racing syncs fall out of step.
const PAUSE: crate::retry::Pause = crate::retry::Pause {
    first: std::time::Duration::from_millis(20),
    growth: crate::retry::Growth::Linear,
    cap: std::time::Duration::from_millis(200),
    jitter: std::time::Duration::from_millis(50),
};

/// Where a remote's notes are fetched to: `refs/recode/remotes/<remote>/notes`.
pub fn tracking_notes(remote: &str) -> String {
    format!("refs/recode/remotes/{remote}/notes")
}

/// Where a remote's anchors are fetched to: `refs/recode/remotes/<remote>/anchors`.
pub fn tracking_anchors(remote: &str) -> String {
    format!("refs/recode/remotes/{remote}/anchors")
}

/// What a sync did, per ref.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Report {
    /// Lines like `refs/notes/recode: merged 3 notes, pushed` for the user.
    pub lines: Vec<String>,
    /// Refs on the remote that are not what git-recode writes, each named once and
    /// ignored (SPEC 1.3: refs on the remote are untrusted), with how to remove them.
    pub warnings: Vec<String>,
}

fn tip(repo: &gix::Repository, name: &str) -> Option<ObjectId> {
    crate::repo::tip(repo, name)
}

fn other(e: impl std::fmt::Display) -> SyncError {
    SyncError::Objects(e.to_string())
}

/// Errors of `sync`.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// fetch, push or ls-remote failed for another reason than a lost race.
    #[error(transparent)]
    Git(#[from] git::GitError),
    /// Reading or writing the notes objects failed.
    #[error("cannot merge the ledgers: {0}")]
    Objects(String),
    /// Reading the repository failed.
    #[error(transparent)]
    Repo(#[from] crate::repo::RepoError),
    /// Reading the ledger failed.
    #[error(transparent)]
    Ledger(#[from] crate::ledger::LedgerError),
    /// Every try lost a race against other pushers.
    #[error("gave up after {tries} lost races pushing the ledger to {remote}")]
    LostRaces {
        /// Tries made.
        tries: u32,
        /// The remote.
        remote: String,
    },
}

/// The remote's value of each of `refs` (`git ls-remote`).
fn ls_remote(
    dir: &std::path::Path,
    remote: &str,
    refs: &[&str],
    cfg: &Config,
) -> Result<BTreeMap<String, ObjectId>, SyncError> {
    let out = git::Git::new(dir)
        .args(["ls-remote", remote])
        .args(refs)
        .network(cfg.network_timeout_secs, &cfg.ssh)
        .output()?;
    Ok(String::from_utf8_lossy(&out)
        .lines()
        .filter_map(|l| {
            let (id, name) = l.split_once('\t')?;
            Some((name.to_string(), ObjectId::from_hex(id.as_bytes()).ok()?))
        })
        .collect())
}

fn is_ancestor(
    repo: &gix::Repository,
    ancestor: ObjectId,
    of: ObjectId,
) -> Result<bool, SyncError> {
    if ancestor == of {
        return Ok(true);
    }
    Ok(crate::repo::count_between(repo, ancestor, &[of])? == 0)
}

/// `(annotated object, blob)` of every entry of a notes tree (any fanout), or of a flat anchors tree.
fn notes_of(
    repo: &gix::Repository,
    commit: ObjectId,
) -> Result<BTreeMap<ObjectId, ObjectId>, SyncError> {
    let tree = repo
        .find_commit(commit)
        .map_err(other)?
        .tree_id()
        .map_err(other)?
        .detach();
    Ok(crate::ledger::notes_in_tree(repo, tree, "sync")?
        .into_iter()
        .collect())
}

/// Sorted union of the lines of two notes (`cat_sort_uniq`).
fn union_lines(repo: &gix::Repository, a: ObjectId, b: ObjectId) -> Result<Vec<u8>, SyncError> {
    let mut lines = BTreeSet::new();
    for id in [a, b] {
        let blob = repo.find_blob(id).map_err(other)?;
        for l in blob.data.split(|c| *c == b'\n') {
            if !l.is_empty() {
                lines.insert(l.to_vec());
            }
        }
    }
    let mut out = Vec::new();
    for l in lines {
        out.extend_from_slice(&l);
        out.push(b'\n');
    }
    Ok(out)
}

/// Merge `theirs` into `ours` for one ref: fast-forward when one contains the other,
/// else a merge commit whose tree unions both (`notes`: per-note line union; anchors:
/// entry union). Returns the new tip and how many entries were merged.
fn merge(
    repo: &gix::Repository,
    ours: Option<ObjectId>,
    theirs: Option<ObjectId>,
    notes: bool,
    now: jiff::Timestamp,
) -> Result<(Option<ObjectId>, usize), SyncError> {
    let (ours, theirs) = match (ours, theirs) {
        (o, None) => return Ok((o, 0)),
        (None, t) => return Ok((t, 0)),
        (Some(o), Some(t)) => (o, t),
    };
    if is_ancestor(repo, theirs, ours)? {
        return Ok((Some(ours), 0));
    }
    if is_ancestor(repo, ours, theirs)? {
        return Ok((Some(theirs), 0));
    }
    let mine = notes_of(repo, ours)?;
    let other_side = notes_of(repo, theirs)?;
    let root = repo
        .find_commit(ours)
        .map_err(other)?
        .tree_id()
        .map_err(other)?
        .detach();
    let mut changed = 0;
    let tree = if notes {
        let mut state = gix::note::plumbing::State::new(root, &repo.objects).map_err(other)?;
        for (anchor, blob) in &other_side {
            let merged = match mine.get(anchor) {
                Some(m) if m == blob => continue,
                Some(m) => repo
                    .write_blob(union_lines(repo, *m, *blob)?)
                    .map_err(other)?
                    .detach(),
                None => *blob,
            };
            state
                .edit(*anchor, Some(merged), &repo.objects)
                .map_err(other)?;
            changed += 1;
        }
        state.write(&repo.objects).map_err(other)?
    } else {
        let mut all = mine.clone();
        for (k, v) in &other_side {
            if all.insert(*k, *v).is_none() {
                changed += 1;
            }
        }
        let mut entries: Vec<gix::objs::tree::Entry> = all
            .iter()
            .map(|(k, v)| gix::objs::tree::Entry {
                mode: gix::objs::tree::EntryKind::Blob.into(),
                filename: k.to_hex().to_string().into(),
                oid: *v,
            })
            .collect();
        entries.sort();
        repo.write_object(&gix::objs::Tree { entries })
            .map_err(other)?
            .detach()
    };
    let sig = crate::ledger::signature(now);
    let commit = gix::objs::Commit {
        tree,
        parents: [ours, theirs].into_iter().collect(),
        author: sig.clone(),
        committer: sig,
        encoding: None,
        message: "Notes merged by 'git recode sync' (cat_sort_uniq)\n".into(),
        extra_headers: Vec::new(),
    };
    Ok((
        Some(repo.write_object(&commit).map_err(other)?.detach()),
        changed,
    ))
}

/// The refs `sync` carries: `(local ref, remote-tracking ref, is a notes ref)`.
type Pair = (String, String, bool);

/// One ref's push: its lease, its refspec, and the tracking ref to move to `merged`
/// once pushed.
struct PushSpec {
    lease: String,
    spec: String,
    /// The tracking ref to move once pushed (none for this host's heartbeat, which has no
    /// tracking copy).
    tracking: Option<String>,
    merged: ObjectId,
}

/// Point a remote-tracking ref at `id`, best effort (the next sync fetches it again).
fn set_tracking(repo: &gix::Repository, tracking: &str, id: ObjectId) {
    let _ = repo.reference(tracking, id, PreviousValue::Any, "recode: sync");
}

/// Fetch what the remote has of `pairs` into their tracking refs (never over the local
/// ones). `Ok(false)` when another sync in this clone held a tracking ref locked: a lost
/// race worth retrying.
fn fetch_tracking(
    dir: &std::path::Path,
    cfg: &Config,
    remote: &str,
    pairs: &[Pair],
    remote_values: &BTreeMap<String, ObjectId>,
    extra: &[String],
    attempt: u32,
) -> Result<bool, SyncError> {
    let specs: Vec<String> = pairs
        .iter()
        .filter(|(l, _, _)| remote_values.contains_key(l))
        .map(|(l, t, _)| format!("+{l}:{t}"))
        .chain(extra.iter().cloned())
        .collect();
    if specs.is_empty() {
        return Ok(true);
    }
    let mut args = vec!["fetch", "--quiet", "--no-write-fetch-head", remote];
    args.extend(specs.iter().map(String::as_str));
    let git::Captured { ok, stdout, stderr } = git::Git::new(dir)
        .args(&args)
        .network(cfg.network_timeout_secs, &cfg.ssh)
        .capture()?;
    if ok {
        return Ok(true);
    }
    // Another sync in this clone updating the same tracking ref: a lost race.
    if attempt < TRIES && stderr.contains("cannot lock ref") {
        return Ok(false);
    }
    Err(SyncError::Git(git::GitError::Failed {
        args: args.join(" "),
        stderr: format!("{stdout}{stderr}").trim().to_string(),
    }))
}

/// Words of a ref's merge for the user: how `merged` came from `ours` and `theirs`.
fn describe(
    ours: Option<ObjectId>,
    theirs: Option<ObjectId>,
    changed: usize,
    merged: ObjectId,
) -> String {
    match (ours, theirs) {
        (_, None) => "the remote had none".to_string(),
        (None, Some(_)) => "taken from the remote".to_string(),
        _ if changed == 1 => "merged 1 entry".to_string(),
        _ if changed > 0 => format!("merged {changed} entries"),
        _ if Some(merged) != ours => "fast-forwarded to the remote".to_string(),
        _ => "up to date".to_string(),
    }
}

/// Merge one ref with the remote's value `theirs` and move the local ref (compare-and-swap
/// on `ours`). Returns the user's line and the push it needs, or `None` when a local
/// writer moved the ref meanwhile (start over).
fn merge_ref(
    repo: &gix::Repository,
    (local, tracking, notes): &Pair,
    theirs: Option<ObjectId>,
    now: jiff::Timestamp,
) -> Result<Option<(String, Option<PushSpec>)>, SyncError> {
    let ours = tip(repo, local);
    let (merged, changed) = merge(repo, ours, theirs, *notes, now)?;
    let Some(merged) = merged else {
        return Ok(Some((format!("{local}: nothing on either side"), None)));
    };
    if Some(merged) != ours {
        let expected = match ours {
            Some(o) => PreviousValue::MustExistAndMatch(gix::refs::Target::Object(o)),
            None => PreviousValue::MustNotExist,
        };
        if repo
            .reference(local.as_str(), merged, expected, "recode: sync merge")
            .is_err()
        {
            return Ok(None);
        }
    }
    let what = describe(ours, theirs, changed, merged);
    if Some(merged) == theirs {
        set_tracking(repo, tracking, merged);
        return Ok(Some((format!("{local}: {what}"), None)));
    }
    let lease = format!(
        "--force-with-lease={local}:{}",
        theirs.map(|t| t.to_hex().to_string()).unwrap_or_default()
    );
    let push = PushSpec {
        lease,
        spec: format!("{merged}:{local}"),
        tracking: Some(tracking.clone()),
        merged,
    };
    Ok(Some((format!("{local}: {what}, pushed"), Some(push))))
}

/// What merging every ref decided.
struct Merged {
    /// The user's line per ref.
    lines: Vec<String>,
    /// The pushes needed.
    pushes: Vec<PushSpec>,
}

/// Merge every ref of `pairs` in turn, or `None` when a local writer won a race (start
/// over).
fn merge_all(
    repo: &gix::Repository,
    pairs: &[Pair],
    remote_values: &BTreeMap<String, ObjectId>,
    now: jiff::Timestamp,
) -> Result<Option<Merged>, SyncError> {
    let mut lines = Vec::new();
    let mut pushes = Vec::new();
    for pair in pairs {
        let theirs = remote_values.get(&pair.0).copied();
        let Some((line, push)) = merge_ref(repo, pair, theirs, now)? else {
            return Ok(None);
        };
        lines.push(line);
        pushes.extend(push);
    }
    Ok(Some(Merged { lines, pushes }))
}

/// Push `pushes` in one `git push` with their leases; on success move their tracking refs.
/// `Ok(false)` on a lost race worth retrying (a lease that no longer holds, a ref locked).
fn push(
    repo: &gix::Repository,
    dir: &std::path::Path,
    cfg: &Config,
    remote: &str,
    pushes: &[PushSpec],
    attempt: u32,
) -> Result<bool, SyncError> {
    let mut args: Vec<&str> = vec!["push", "--quiet", "--porcelain"];
    args.extend(pushes.iter().map(|p| p.lease.as_str()));
    args.push(remote);
    args.extend(pushes.iter().map(|p| p.spec.as_str()));
    let git::Captured { ok, stdout, stderr } = git::Git::new(dir)
        .args(&args)
        .network(cfg.network_timeout_secs, &cfg.ssh)
        .capture()?;
    if ok {
        for p in pushes {
            if let Some(t) = &p.tracking {
                set_tracking(repo, t, p.merged);
            }
        }
        return Ok(true);
    }
    // `--porcelain` reports each ref's verdict on stdout: a lease that no longer holds
    // or a ref another pusher holds locked is a lost race; anything else is an error.
    let verdict = format!("{stdout}\n{stderr}");
    let lost_race = [
        "stale info",
        "fetch first",
        "non-fast-forward",
        "cannot lock ref",
        "failed to update ref",
    ]
    .iter()
    .any(|k| verdict.contains(k));
    if !lost_race || attempt == TRIES {
        return Err(SyncError::Git(git::GitError::Failed {
            args: args.join(" "),
            stderr: verdict.trim().to_string(),
        }));
    }
    Ok(false)
}

/// Fetch, merge and push the ledger (`recode.notesRef`) and anchors with `remote`.
///
/// Errors: [`SyncError::Git`] when fetch or push fail for another reason than a lost race;
/// [`SyncError::LostRaces`] after `TRIES` lost races.
pub fn sync(
    repo: &gix::Repository,
    cfg: &Config,
    remote: &str,
    now: jiff::Timestamp,
) -> Result<Report, SyncError> {
    // Run git where the user is, as plain git would (relative remote URLs resolve from there).
    let dir = std::path::PathBuf::from(".");
    let pairs: [Pair; 2] = [
        (cfg.notes_ref.clone(), tracking_notes(remote), true),
        (ANCHORS_REF.to_string(), tracking_anchors(remote), false),
    ];
    let own_beat = crate::hosts::heartbeat_ref(&crate::hosts::me(repo).id);
    let beats_glob = format!("{}*", crate::hosts::HOSTS_PREFIX);
    let claims_glob = format!("{}*", crate::hosts::claim::CLAIMS_PREFIX);
    use crate::retry::{Limit, Policy, Try};
    let lost = || SyncError::LostRaces {
        tries: TRIES,
        remote: remote.to_string(),
    };
    let policy = Policy {
        pause: PAUSE,
        limit: Limit::Tries(TRIES),
    };
    crate::retry::retry(policy, |attempt| {
        let mut names: Vec<&str> = pairs.iter().map(|(l, _, _)| l.as_str()).collect();
        names.push(&beats_glob);
        names.push(&claims_glob);
        let remote_values = match ls_remote(&dir, remote, &names, cfg) {
            Ok(v) => v,
            Err(e) => return Try::Fail(e),
        };
        let beats = host_refs(repo, &remote_values, &own_beat);
        let mut fetch_extra = beats.fetch.clone();
        fetch_extra.extend(claims_to_fetch(repo, &remote_values));
        match fetch_tracking(
            &dir,
            cfg,
            remote,
            &pairs,
            &remote_values,
            &fetch_extra,
            attempt,
        ) {
            Ok(true) => {}
            Ok(false) => return Try::Lost(lost()),
            Err(e) => return Try::Fail(e),
        }
        if !beats.fetch.is_empty() {
            // SPEC 1.3: a heartbeat's silence starts when this host first sees its value.
            let mut seen = crate::hosts::Seen::load(repo);
            let _ = crate::hosts::read_heartbeats(repo, &mut seen, now);
            seen.save();
        }
        let Merged {
            mut lines,
            mut pushes,
        } = match merge_all(repo, &pairs, &remote_values, now) {
            Ok(Some(m)) => m,
            // A local writer won: start over at once.
            Ok(None) => return Try::LostWait(std::time::Duration::ZERO, lost()),
            Err(e) => return Try::Fail(e),
        };
        lines.extend(beats.lines.iter().cloned());
        pushes.extend(beats.push);
        let done = |mut lines: Vec<String>| {
            let mut warnings = beats.warnings.clone();
            lines.extend(crate::hosts::prune::prune_claims(
                repo,
                cfg,
                remote,
                &remote_values,
                &mut warnings,
            ));
            Try::Done(Report { lines, warnings })
        };
        if pushes.is_empty() {
            return done(lines);
        }
        match push(repo, &dir, cfg, remote, &pushes, attempt) {
            Ok(true) => done(lines),
            Ok(false) => {
                tracing::debug!(attempt, "sync push lost a race; retrying");
                Try::Lost(lost())
            }
            Err(e) => Try::Fail(e),
        }
    })
}

/// What `sync` does with the heartbeat refs (SPEC 1.2 "Several machines").
struct HostRefs {
    /// Refspecs fetching the other hosts' heartbeats that differ from the local copies.
    fetch: Vec<String>,
    /// The push of this host's own heartbeat, when the remote's differs.
    push: Option<PushSpec>,
    /// The user's lines.
    lines: Vec<String>,
    /// Heartbeat refs ignored (not a host's heartbeat, or in the way of this host's).
    warnings: Vec<String>,
}

/// Refspecs fetching the remote's claims (one hex component under the prefix) that differ
/// from the local copies, so `sync` can judge them ([`crate::hosts::prune`]).
fn claims_to_fetch(
    repo: &gix::Repository,
    remote_values: &BTreeMap<String, ObjectId>,
) -> Vec<String> {
    remote_values
        .iter()
        .filter(|(n, id)| crate::hosts::claim::is_claim_name(n) && tip(repo, n) != Some(**id))
        .map(|(n, _)| format!("+{n}:{n}"))
        .collect()
}

/// The heartbeat refs (`refs/recode/hosts/*`, listed in `remote_values`): every other
/// host's is fetched straight into the same name when it differs (each host writes only
/// its own, so nothing merges); this host's own (`own`) is never taken from the remote,
/// and is pushed, with a lease on the remote's value, when it differs.
fn host_refs(
    repo: &gix::Repository,
    remote_values: &BTreeMap<String, ObjectId>,
    own: &str,
) -> HostRefs {
    let mut fetch = Vec::new();
    let mut warnings = Vec::new();
    let prefix = crate::hosts::HOSTS_PREFIX;
    // SPEC 1.3: refs on the remote are untrusted. A tag (listed peeled, `^{}`), a nested
    // name, or a name that is no valid ref is named once and never fetched.
    let tags: BTreeSet<&str> = remote_values
        .keys()
        .filter_map(|n| n.strip_suffix("^{}"))
        .collect();
    let mut blocks_own = false;
    for (name, id) in remote_values
        .iter()
        .filter(|(n, _)| n.starts_with(prefix) && n.as_str() != own && !n.ends_with("^{}"))
    {
        let component = &name[prefix.len()..];
        let why = if tags.contains(name.as_str()) {
            Some("an annotated tag, not a heartbeat commit")
        } else if name.starts_with(&format!("{own}/")) {
            blocks_own = true;
            Some("a ref in the way of this host's heartbeat")
        } else if component.contains('/') {
            Some("a nested name, not a host's heartbeat")
        } else if gix::refs::FullName::try_from(name.as_str()).is_err() {
            Some("not a valid ref name")
        } else {
            None
        };
        match why {
            Some(why) => warnings.push(crate::hosts::untrusted_warning(name, why)),
            None if tip(repo, name) != Some(*id) => fetch.push(format!("+{name}:{name}")),
            None => {}
        }
    }
    let mut lines = Vec::new();
    if !fetch.is_empty() {
        lines.push(format!(
            "{}*: fetched {} heartbeat{}",
            crate::hosts::HOSTS_PREFIX,
            fetch.len(),
            if fetch.len() == 1 { "" } else { "s" }
        ));
    }
    let theirs = remote_values.get(own).copied();
    let push = tip(repo, own)
        .filter(|mine| Some(*mine) != theirs && !blocks_own)
        .map(|mine| {
            lines.push(format!("{own}: pushed"));
            PushSpec {
                lease: format!(
                    "--force-with-lease={own}:{}",
                    theirs.map(|t| t.to_hex().to_string()).unwrap_or_default()
                ),
                spec: format!("{mine}:{own}"),
                tracking: None,
                merged: mine,
            }
        });
    HostRefs {
        fetch,
        push,
        lines,
        warnings,
    }
}

/// `sync --setup`: make plain `git fetch` bring the remote's ledger into its tracking
/// refs (never over the local ones) and plain `git push` carry the local ledger.
///
/// Errors: [`SyncError::Git`] when `git config` fails.
pub fn setup(cfg: &Config, remote: &str) -> Result<Vec<String>, SyncError> {
    let dir = std::path::PathBuf::from(".");
    let existing = |key: &str| -> Vec<String> {
        git::read(&dir, &["config", "--get-all", key])
            .map(|o| {
                String::from_utf8_lossy(&o)
                    .lines()
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let fetch_key = format!("remote.{remote}.fetch");
    let push_key = format!("remote.{remote}.push");
    let mut added = Vec::new();
    let fetches = existing(&fetch_key);
    // Glob refspecs (a `*` that may match nothing) so that plain fetch and push do not
    // fail while a side has no ledger yet.
    for spec in [
        format!("+{}*:{}*", cfg.notes_ref, tracking_notes(remote)),
        format!("+{ANCHORS_REF}*:{}*", tracking_anchors(remote)),
    ] {
        if !fetches.contains(&spec) {
            git::run(&dir, &["config", "--add", &fetch_key, &spec])?;
            added.push(format!("{fetch_key} {spec}"));
        }
    }
    let pushes = existing(&push_key);
    let mut wanted = Vec::new();
    if pushes.is_empty() {
        // A push refspec replaces git's default of pushing the current branch: keep it.
        wanted.push("HEAD".to_string());
    }
    wanted.push(format!("{0}*:{0}*", cfg.notes_ref));
    wanted.push(format!("{ANCHORS_REF}*:{ANCHORS_REF}*"));
    for spec in wanted {
        if !pushes.contains(&spec) {
            git::run(&dir, &["config", "--add", &push_key, &spec])?;
            added.push(format!("{push_key} {spec}"));
        }
    }
    Ok(added)
}
