//! The never-lose invariants: what a repository holds before `recover` (commits, every
//! worktree's staged, unstaged, untracked and ignored-secret content, locked bystander
//! worktrees, ledger lines) and the check that none of it was lost after.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use crate::common::TestEnv;

/// What must survive, taken before a run.
pub(crate) struct Before {
    commits: BTreeSet<String>,
    /// (worktree, path, blob, must stay on disk)
    files: Vec<(PathBuf, String, String, bool)>,
    bystanders: BTreeSet<String>,
    ledger: BTreeSet<String>,
    /// Checked-out submodules: (directory, its HEAD commit): the directory stays and the
    /// commit stays in it (no WIP commit captures a submodule's work).
    subs: Vec<(PathBuf, String)>,
}

/// The checked-out submodules of the worktree at `wt` (gitlinks in its index whose
/// directory holds a `.git`).
fn submodules(env: &TestEnv, wt: &Path) -> Vec<PathBuf> {
    env.git(wt, &["ls-files", "-s", "-z"])
        .split('\0')
        .filter(|e| e.starts_with("160000 "))
        .filter_map(|e| e.split_once('\t').map(|(_, p)| wt.join(p)))
        .filter(|d| d.join(".git").exists())
        .collect()
}

fn run_git(env: &TestEnv, dir: &Path, args: &[&str], stdin: &[u8]) -> Output {
    let mut c = env.git_cmd(dir);
    c.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

fn lines(out: &Output) -> BTreeSet<String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// Blob ids of files (paths relative to `wt`), as git would store them unfiltered.
fn hash_files(env: &TestEnv, wt: &Path, paths: &[String]) -> Vec<String> {
    if paths.is_empty() {
        return Vec::new();
    }
    let stdin: String = paths.iter().map(|p| format!("{p}\n")).collect();
    let out = run_git(
        env,
        wt,
        &["hash-object", "--no-filters", "--stdin-paths"],
        stdin.as_bytes(),
    );
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// Registered worktrees: (path, locked, directory exists).
fn worktree_list(env: &TestEnv, repo: &Path) -> Vec<(PathBuf, bool)> {
    let mut out = Vec::new();
    for block in env
        .git(repo, &["worktree", "list", "--porcelain"])
        .split("\n\n")
    {
        let Some(path) = block
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("worktree "))
        else {
            continue;
        };
        let locked = block.lines().any(|l| l.starts_with("locked"));
        out.push((PathBuf::from(path), locked));
    }
    out
}

fn files_under(dir: &Path, rel: &str, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir.join(rel)).unwrap() {
        let e = e.unwrap();
        let p = format!("{rel}{}", e.file_name().to_string_lossy());
        let ft = e.file_type().unwrap();
        if ft.is_dir() {
            files_under(dir, &format!("{p}/"), out);
        } else if ft.is_file() {
            out.push(p);
        }
    }
}

fn is_secret(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name == ".env" || name.starts_with(".env.") || name.starts_with("id_rsa")
}

/// Every content a worktree holds beyond its HEAD: (path, blob, must stay on disk).
fn worktree_files(env: &TestEnv, wt: &Path) -> Vec<(String, String, bool)> {
    let status = env.git(
        wt,
        &[
            "--no-optional-locks",
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--ignored=traditional",
            "--no-renames",
        ],
    );
    let index = index_blobs(env, wt);
    let mut disk: Vec<(String, bool)> = Vec::new();
    let mut out = Vec::new();
    for entry in status.split('\0').filter(|e| e.len() > 3) {
        let (x, y, path) = (&entry[0..1], &entry[1..2], &entry[3..]);
        if "MAT".contains(x)
            && let Some(blob) = index.get(path)
        {
            out.push((format!("{path} (staged)"), blob.clone(), false));
        }
        let ignored = x == "!";
        if path.ends_with('/') {
            let mut under = Vec::new();
            files_under(wt, path, &mut under);
            disk.extend(under.into_iter().map(|p| (p, ignored)));
        } else if y != " " && y != "D" && wt.join(path).is_file() {
            disk.push((path.to_string(), ignored));
        }
    }
    let paths: Vec<String> = disk.iter().map(|(p, _)| p.clone()).collect();
    for ((path, ignored), blob) in disk.into_iter().zip(hash_files(env, wt, &paths)) {
        // Ignored files that are not secrets may go with a removed worktree (SPEC).
        if ignored && !is_secret(&path) {
            continue;
        }
        out.push((path.clone(), blob, ignored));
    }
    out
}

/// The index of a worktree: path -> blob.
fn index_blobs(env: &TestEnv, wt: &Path) -> BTreeMap<String, String> {
    env.git(wt, &["ls-files", "-s", "-z"])
        .split('\0')
        .filter_map(|e| {
            let (meta, path) = e.split_once('\t')?;
            Some((path.to_string(), meta.split(' ').nth(1)?.to_string()))
        })
        .collect()
}

fn ledger_lines(env: &TestEnv, repo: &Path) -> BTreeSet<String> {
    let tree = run_git(env, repo, &["ls-tree", "-r", "refs/notes/recode"], b"");
    if !tree.status.success() {
        return BTreeSet::new();
    }
    let ids: String = String::from_utf8_lossy(&tree.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2).map(|id| format!("{id}\n")))
        .collect();
    let out = run_git(
        env,
        repo,
        &["cat-file", "--batch=%(objectname)"],
        ids.as_bytes(),
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(str::to_string)
        .collect()
}

fn reachable(env: &TestEnv, repo: &Path, origin: &Path, objects: bool) -> BTreeSet<String> {
    let args: &[&str] = if objects {
        &["rev-list", "--all", "--objects"]
    } else {
        &["rev-list", "--all"]
    };
    let mut all = BTreeSet::new();
    for dir in [repo, origin] {
        let out = run_git(env, dir, args, b"");
        assert!(out.status.success(), "{out:?}");
        all.extend(
            lines(&out)
                .into_iter()
                .map(|l| l.split(' ').next().unwrap_or("").to_string()),
        );
    }
    all
}

/// Take what must survive in `repo` (every worktree's content, commits, bystanders, ledger).
pub(crate) fn before(env: &TestEnv, repo: &Path) -> Before {
    let mut files = Vec::new();
    let mut bystanders = BTreeSet::new();
    let mut subs = Vec::new();
    for (wt, locked) in worktree_list(env, repo) {
        if !wt.is_dir() {
            if locked {
                bystanders.insert(wt.display().to_string());
            }
            continue;
        }
        for (p, blob, keep) in worktree_files(env, &wt) {
            files.push((wt.clone(), p, blob, keep));
        }
        for sub in submodules(env, &wt) {
            // Its own dirt must stay on disk: nothing of git-recode's commits it.
            for (p, blob, _) in worktree_files(env, &sub) {
                files.push((sub.clone(), p, blob, true));
            }
            let head = env.git(&sub, &["rev-parse", "HEAD"]);
            subs.push((sub, head));
        }
    }
    Before {
        // A heartbeat commit is not work (each rewrite replaces the last).
        commits: lines(&run_git(
            env,
            repo,
            &["rev-list", crate::common::HEARTBEATS_EXCLUDED, "--all"],
            b"",
        )),
        files,
        bystanders,
        ledger: ledger_lines(env, repo),
        subs,
    }
}

/// The invariants after a run of `recover` in `repo` (whose remote is `origin`); one
/// line per violation, each starting with `when`.
pub(crate) fn check(
    env: &TestEnv,
    repo: &Path,
    origin: &Path,
    b: &Before,
    when: &str,
) -> Vec<String> {
    let mut v = Vec::new();
    let commits = reachable(env, repo, origin, false);
    for c in b.commits.difference(&commits) {
        v.push(format!("{when}: commit {c} no longer reachable"));
    }
    let objects = reachable(env, repo, origin, true);
    let mut by_wt: BTreeMap<&Path, Vec<&(PathBuf, String, String, bool)>> = BTreeMap::new();
    for f in &b.files {
        by_wt.entry(f.0.as_path()).or_default().push(f);
    }
    for (wt, fs) in by_wt {
        let on_disk: Vec<String> = fs
            .iter()
            .map(|f| f.1.trim_end_matches(" (staged)").to_string())
            .filter(|p| wt.join(p).is_file())
            .collect();
        let now: BTreeMap<String, String> = on_disk
            .iter()
            .cloned()
            .zip(hash_files(env, wt, &on_disk))
            .collect();
        // Still staged is still there (a kill before the WIP step touched the index).
        let index = if wt.is_dir() {
            index_blobs(env, wt)
        } else {
            BTreeMap::new()
        };
        for (_, path, blob, keep) in fs {
            let p = path.trim_end_matches(" (staged)");
            let there = now.get(p) == Some(blob) || (!keep && index.get(p) == Some(blob));
            if !there && (*keep || !objects.contains(blob)) {
                v.push(format!(
                    "{when}: content {blob} of {path} in {} lost{}",
                    wt.display(),
                    if *keep {
                        " (an ignored secret, must stay on disk)"
                    } else {
                        ""
                    }
                ));
            }
        }
    }
    let registered: BTreeSet<String> = worktree_list(env, repo)
        .into_iter()
        .map(|(p, _)| p.display().to_string())
        .collect();
    for w in b.bystanders.difference(&registered) {
        v.push(format!("{when}: bystander worktree {w} unregistered"));
    }
    for (sub, head) in &b.subs {
        let kept = sub.join(".git").exists()
            && env
                .git_cmd(sub)
                .args(["cat-file", "-e", &format!("{head}^{{commit}}")])
                .output()
                .unwrap()
                .status
                .success();
        if !kept {
            v.push(format!(
                "{when}: submodule {} or its commit {head} lost",
                sub.display()
            ));
        }
    }
    let ledger = ledger_lines(env, repo);
    for l in b.ledger.difference(&ledger) {
        v.push(format!("{when}: ledger line lost: {l}"));
    }
    v
}
