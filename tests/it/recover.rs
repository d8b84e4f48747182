//! `recover`: the never-lose suite, kill tests, and the cases from the field.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::{LATER, LATER_EPOCH, TestEnv};
use crate::contract::RecoverDoc;

fn recover(env: &TestEnv, dir: &Path, args: &[&str]) -> (i32, RecoverDoc, String) {
    let out = env
        .cmd(dir)
        .env("RECODE_NOW", LATER)
        .arg("recover")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    let doc: RecoverDoc = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(doc.schema, 1);
    (
        out.status.code().unwrap_or(-1),
        doc,
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

fn results(doc: &RecoverDoc) -> Vec<(&str, &str, &str)> {
    doc.results
        .iter()
        .map(|r| (r.branch.as_str(), r.action.as_str(), r.result.as_str()))
        .collect()
}

fn status_at(env: &TestEnv, dir: &Path) -> serde_json::Value {
    let out = env
        .cmd(dir)
        .env("RECODE_NOW", LATER)
        .args(["status", "--json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

pub(crate) fn worker<'a>(st: &'a serde_json::Value, branch: &str) -> &'a serde_json::Value {
    st["workers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["branch"] == branch)
        .unwrap_or_else(|| panic!("no {branch} in {st:#}"))
}

fn log_kinds(env: &TestEnv, dir: &Path, branch: &str) -> Vec<String> {
    env.ok(dir, &["log", branch, "--json"])
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["kind"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

/// Every file under `dir` (no symlink following): path -> (content or link target, mode, mtime).
fn tree_state(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, u32, std::time::SystemTime)> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                stack.push(p);
            } else {
                let content = if m.file_type().is_symlink() {
                    std::fs::read_link(&p)
                        .unwrap()
                        .into_os_string()
                        .into_encoded_bytes()
                } else {
                    std::fs::read(&p).unwrap()
                };
                out.insert(p, (content, m.permissions().mode(), m.modified().unwrap()));
            }
        }
    }
    out
}

fn refs(env: &TestEnv, dir: &Path) -> String {
    env.git(dir, &["for-each-ref", "--format=%(refname) %(objectname)"])
}

#[test]
fn recover_all_on_the_demo_does_every_action_and_loses_nothing() {
    let env = TestEnv::new();
    let repo = env.demo_at(LATER_EPOCH);
    let demo = env.root().join("demo");
    let before = env.work(&repo);
    let (code, doc, stderr) = recover(&env, &repo, &["--all"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        results(&doc),
        vec![
            ("issue-1-empty", "delete", "done"),
            ("issue-2-dirty", "wip-commit", "done"),
            ("issue-3-committed", "resume", "skipped"),
            ("issue-4-ready", "publish", "held"),
            ("issue-5-rebase", "escalate", "done"),
            ("issue-6-stalled", "wip-commit", "done"),
            ("issue-7-running", "wait", "skipped"),
            ("issue-8-orphan", "resume", "skipped"),
            ("issue-9-capped", "escalate", "done"),
        ]
    );
    assert_eq!(doc.results[0].task, "1");
    env.assert_nothing_lost(&repo, &before);

    // delete: the worktree and the branch are gone, and the ledger says how to undo.
    assert!(!demo.join("wt/1").exists());
    assert!(
        env.git(&repo, &["branch", "--list", "issue-1-empty"])
            .is_empty()
    );
    assert!(
        doc.results[0]
            .reason
            .contains("undo: git branch issue-1-empty "),
        "{}",
        doc.results[0].reason
    );
    assert_eq!(
        log_kinds(&env, &repo, "issue-1-empty"),
        ["spawn", "exit", "classified", "deleted"]
    );

    // wip-commit: one commit of exactly what was there, pushed, worktree clean, index = HEAD.
    let wt2 = demo.join("wt/2");
    assert_eq!(env.git(&wt2, &["status", "--porcelain"]), "");
    assert_eq!(
        env.git(&wt2, &["log", "-1", "--format=%B"]),
        "wip: recode snapshot (2 files)\n\nRecode-Wip: true"
    );
    assert_eq!(env.git(&wt2, &["show", "HEAD:scratch.txt"]), "notes");
    assert!(
        env.git(&wt2, &["show", "HEAD:src/lib.rs"])
            .ends_with("half a parser")
    );
    let tip = env.git(&repo, &["rev-parse", "issue-2-dirty"]);
    assert_eq!(
        env.git(&demo.join("origin.git"), &["rev-parse", "issue-2-dirty"]),
        tip,
        "pushed"
    );
    let st = status_at(&env, &repo);
    assert_eq!(worker(&st, "issue-2-dirty")["action"], "resume");
    assert_eq!(worker(&st, "issue-2-dirty")["liveness"], "exited");
    assert_eq!(
        worker(&st, "issue-6-stalled")["liveness"],
        "stalled",
        "a WIP commit is not activity"
    );
    assert!(
        doc.results[3].reason.contains("no GH_TOKEN/GITHUB_TOKEN"),
        "{}",
        doc.results[3].reason
    );

    // A second run: nothing new to do, escalations are not ledgered twice.
    let (code, doc2, _) = recover(&env, &repo, &["--all"]);
    assert_eq!(code, 0);
    let r5 = doc2
        .results
        .iter()
        .find(|r| r.branch == "issue-5-rebase")
        .unwrap();
    assert!(r5.reason.starts_with("escalated earlier:"), "{}", r5.reason);
    assert_eq!(
        log_kinds(&env, &repo, "issue-5-rebase")
            .iter()
            .filter(|k| *k == "escalated")
            .count(),
        1
    );
    assert_eq!(
        log_kinds(&env, &repo, "issue-9-capped")
            .iter()
            .filter(|k| *k == "escalated")
            .count(),
        1
    );
    env.assert_nothing_lost(&repo, &before);
}

#[test]
fn dry_run_changes_nothing() {
    let env = TestEnv::new();
    let repo = env.demo_at(LATER_EPOCH);
    let demo = env.root().join("demo");
    let refs_before = refs(&env, &repo);
    let files_before = tree_state(&demo);
    let (code, doc, _) = recover(&env, &repo, &["--all", "--dry-run"]);
    assert_eq!(code, 0);
    assert!(
        doc.results
            .iter()
            .all(|r| r.result == "skipped" && r.reason.starts_with("dry run: would "))
    );
    assert_eq!(
        doc.results[0].reason,
        format!(
            "dry run: would remove the clean worktree {}/wt/1 (without force) and delete issue-1-empty with its tip checked first",
            demo.display()
        )
    );
    assert_eq!(refs(&env, &repo), refs_before);
    assert_eq!(
        tree_state(&demo),
        files_before,
        "no file, worktree or lock touched"
    );
}

#[test]
fn operations_in_progress_and_running_workers_are_byte_identical_after_recover() {
    let env = TestEnv::new();
    let repo = env.demo_at(LATER_EPOCH);
    let demo = env.root().join("demo");
    // A merge in progress too.
    let wt = demo.join("wt/10");
    env.git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "issue-10-merge",
            wt.to_str().unwrap(),
            "main~1",
        ],
    );
    std::fs::write(
        wt.join("src/lib.rs"),
        "pub fn answer() -> u32 {\n    44\n}\n",
    )
    .unwrap();
    env.git(&wt, &["commit", "-q", "-am", "44"]);
    let _ = env
        .cmd(&wt)
        .env("RECODE_NOW", LATER)
        .args(["record", "spawn", "issue-10-merge"])
        .status();
    let merge = std::process::Command::new("git")
        .args(["merge", "main"])
        .current_dir(&wt)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(!merge.status.success(), "the merge stops on a conflict");
    let watched = [
        demo.join("wt/5"),
        demo.join("wt/7"),
        wt.clone(),
        repo.join(".git/worktrees/5"),
        repo.join(".git/worktrees/7"),
        repo.join(".git/worktrees/10"),
    ];
    let before: Vec<_> = watched.iter().map(|d| tree_state(d)).collect();
    let (code, doc, _) = recover(&env, &repo, &["--all"]);
    assert_eq!(code, 0);
    let r10 = doc
        .results
        .iter()
        .find(|r| r.branch == "issue-10-merge")
        .unwrap();
    assert_eq!(
        (r10.action.as_str(), r10.result.as_str()),
        ("wait", "skipped"),
        "spawned just now: running"
    );
    let after: Vec<_> = watched.iter().map(|d| tree_state(d)).collect();
    assert_eq!(after, before);
}

/// A failpoint named without its arming variable (one left in a user's environment) does
/// nothing: `recover` runs to its end (exit 0), and the worker it would have killed at is
/// deleted.
#[test]
fn an_unarmed_failpoint_kills_nothing() {
    let env = TestEnv::new();
    let repo = env.demo_at(LATER_EPOCH);
    let out = env
        .cmd(&repo)
        .env("RECODE_NOW", LATER)
        .env("RECODE_FAILPOINT", "delete-worktree")
        .env(crate::common::ARM.0, "1")
        .args(["recover", "--all"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(!env.root().join("demo/wt/1").exists());
}

/// Kill `recover` with SIGKILL at each step, then run it again: nothing lost, the ledger
/// readable, and the second run finishes the job.
#[test]
fn killed_at_every_step_then_rerun() {
    for step in [
        "delete-worktree",
        "delete-branch",
        "wip-add",
        "wip-commit",
        "wip-push",
        "publish-push",
    ] {
        let env = TestEnv::new();
        let repo = env.demo_at(LATER_EPOCH);
        let demo = env.root().join("demo");
        let before = env.work(&repo);
        let out = env
            .cmd(&repo)
            .env("RECODE_NOW", LATER)
            .env("RECODE_FAILPOINT", step)
            .env(crate::common::ARM.0, crate::common::ARM.1)
            .args(["recover", "--all"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), None, "{step}: killed by a signal");
        env.assert_nothing_lost(&repo, &before);
        let log = env.output(&repo, &["log", "--json"]);
        assert_eq!(
            String::from_utf8_lossy(&log.stderr),
            "",
            "{step}: ledger readable"
        );
        // The second run takes over the dead holder's lock and finishes.
        let (code, doc, stderr) = recover(&env, &repo, &["--all"]);
        assert_eq!(code, 0, "{step}: {stderr}");
        env.assert_nothing_lost(&repo, &before);
        let (code, _, _) = recover(&env, &repo, &["--all"]);
        assert_eq!(code, 0);
        assert!(!demo.join("wt/1").exists(), "{step}: {doc:#?}");
        assert!(
            env.git(&repo, &["branch", "--list", "issue-1-empty"])
                .is_empty(),
            "{step}"
        );
        for n in [2, 6] {
            assert_eq!(
                env.git(&demo.join(format!("wt/{n}")), &["status", "--porcelain"]),
                "",
                "{step}: wt/{n} committed"
            );
        }
        let lock = std::fs::File::open(repo.join(".git/recode-recover.lock")).unwrap();
        assert!(lock.try_lock().is_ok(), "{step}: lock released");
    }
}

/// A linked worktree `<root>/wt<n>` on a new `branch`, with a `spawn` recorded.
fn add_worker(env: &TestEnv, repo: &Path, n: u32, branch: &str) -> PathBuf {
    let wt = env.add_worktree(repo, branch, &format!("wt{n}"));
    env.record(&wt, &["spawn", branch]);
    wt
}

#[test]
fn remote_ahead_with_local_reset_to_base_is_never_deleted() {
    let env = TestEnv::new();
    let (repo, origin) = env.repo_with_origin();
    let wt = add_worker(&env, &repo, 11, "issue-11-pushed");
    for i in 0..8 {
        std::fs::write(wt.join(format!("f{i}.txt")), format!("{i}\n")).unwrap();
        env.git(&wt, &["add", "."]);
        env.git(&wt, &["commit", "-q", "-m", &format!("step {i}")]);
    }
    env.git(&wt, &["push", "-q", "-u", "origin", "issue-11-pushed"]);
    let pushed = env.git(&wt, &["rev-parse", "HEAD"]);
    env.git(&wt, &["reset", "-q", "--hard", "main"]);
    let st = status_at(&env, &repo);
    let w = worker(&st, "issue-11-pushed");
    assert_eq!(
        (w["ahead"].as_u64(), w["remote_ahead"].as_u64()),
        (Some(0), Some(8))
    );
    assert_eq!(
        (w["state"].as_str(), w["action"].as_str()),
        (Some("half-done"), Some("resume"))
    );
    let before = env.work(&repo);
    let (code, doc, _) = recover(&env, &repo, &["--all"]);
    assert_eq!(code, 0);
    assert_eq!(
        results(&doc),
        vec![("issue-11-pushed", "resume", "skipped")]
    );
    assert_eq!(env.git(&origin, &["rev-parse", "issue-11-pushed"]), pushed);
    assert!(wt.is_dir());
    env.assert_nothing_lost(&repo, &before);
}

#[test]
fn staged_never_committed_exit_zero_is_wip_committed_exactly() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let wt = add_worker(&env, &repo, 12, "issue-12");
    std::fs::write(wt.join("README.md"), "staged change\n").unwrap();
    std::fs::write(wt.join("new.rs"), "fn staged() {}\n").unwrap();
    env.git(&wt, &["add", "README.md", "new.rs"]);
    let out = env
        .cmd(&wt)
        .env("RECODE_NOW", "2029-12-31T01:00:00Z")
        .args(["record", "exit", "issue-12", "--rc", "0"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "success\n");
    let st = status_at(&env, &repo);
    let w = worker(&st, "issue-12");
    assert_eq!(
        (w["state"].as_str(), w["action"].as_str()),
        (Some("half-done"), Some("wip-commit"))
    );
    assert_eq!(w["dirty"]["staged"], 2);
    let before = env.work(&repo);
    let (code, doc, _) = recover(&env, &repo, &["issue-12"]);
    assert_eq!(code, 0);
    assert_eq!(results(&doc), vec![("issue-12", "wip-commit", "held")]);
    assert_eq!(
        doc.results[0].reason.split("; ").nth(1),
        Some("push held: no remote 'origin'")
    );
    assert_eq!(env.git(&wt, &["show", "HEAD:README.md"]), "staged change");
    assert_eq!(env.git(&wt, &["show", "HEAD:new.rs"]), "fn staged() {}");
    assert_eq!(
        env.git(&wt, &["status", "--porcelain"]),
        "",
        "index and worktree match the commit"
    );
    env.assert_nothing_lost(&repo, &before);
}

#[test]
fn wip_snapshot_keeps_odd_names_modes_symlinks_deletions_and_filters() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    let repo = env.repo("r");
    std::fs::write(repo.join("gone.txt"), "bye\n").unwrap();
    std::fs::write(repo.join(".gitattributes"), "*.up filter=upper\n").unwrap();
    env.git(&repo, &["add", "."]);
    env.git(&repo, &["commit", "-q", "-m", "more"]);
    env.git(&repo, &["config", "filter.upper.clean", "tr a-z A-Z"]);
    env.git(&repo, &["config", "filter.upper.smudge", "cat"]);
    let wt = add_worker(&env, &repo, 13, "issue-13");
    std::fs::write(wt.join("with space.txt"), "s\n").unwrap();
    std::fs::write(wt.join("ünïcödé.txt"), "u\n").unwrap();
    std::fs::write(wt.join("-dash.txt"), "d\n").unwrap();
    std::fs::write(wt.join("run.sh"), "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(wt.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink("README.md", wt.join("link")).unwrap();
    std::fs::remove_file(wt.join("gone.txt")).unwrap();
    std::fs::write(wt.join("shout.up"), "quiet\n").unwrap();
    let before = env.work(&repo);
    let (code, doc, _) = recover(&env, &repo, &["issue-13"]);
    assert_eq!(code, 0, "{doc:#?}");
    assert_eq!(
        doc.results[0].reason.split(';').next(),
        Some(
            format!(
                "WIP commit {} (7 files)",
                &env.git(&wt, &["rev-parse", "HEAD"])[..12]
            )
            .as_str()
        )
    );
    let tree = env.git(&wt, &["-c", "core.quotePath=false", "ls-tree", "HEAD"]);
    let entries: Vec<(String, String)> = tree
        .lines()
        .map(|l| {
            let (meta, name) = l.split_once('\t').unwrap();
            (
                name.to_string(),
                meta.split(' ').next().unwrap().to_string(),
            )
        })
        .collect();
    let names: Vec<&str> = entries.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "-dash.txt",
            ".gitattributes",
            "README.md",
            "link",
            "run.sh",
            "shout.up",
            "with space.txt",
            "ünïcödé.txt"
        ]
    );
    let mode = |n: &str| entries.iter().find(|(x, _)| x == n).unwrap().1.clone();
    assert_eq!(mode("run.sh"), "100755");
    assert_eq!(mode("link"), "120000");
    assert_eq!(
        env.git(&wt, &["show", "HEAD:shout.up"]),
        "QUIET",
        "the clean filter ran, as git add runs it"
    );
    assert_eq!(env.git(&wt, &["status", "--porcelain"]), "");
    env.assert_nothing_lost(&repo, &before);
}

#[test]
fn excluded_tool_droppings_are_ignored_everywhere_and_named_when_deleted() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let wt = add_worker(&env, &repo, 14, "issue-14");
    std::fs::write(repo.join(".git/info/exclude"), ".aider.chat.history.md\n").unwrap();
    std::fs::write(wt.join(".aider.chat.history.md"), "chat\n").unwrap();
    let st = status_at(&env, &repo);
    let w = worker(&st, "issue-14");
    assert_eq!(w["dirty"]["untracked"], 0);
    assert_eq!(
        (w["state"].as_str(), w["action"].as_str()),
        (Some("empty"), Some("delete"))
    );
    assert_eq!(
        w["reason"],
        "no commits ahead of main; worktree clean (its ignored files go with it: .aider.chat.history.md)"
    );
    let out = env
        .cmd(&repo)
        .env("RECODE_NOW", LATER)
        .args(["classify", "issue-14", "--json"])
        .output()
        .unwrap();
    let c: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(c["reason"], w["reason"]);
    let (code, doc, _) = recover(&env, &repo, &["--all"]);
    assert_eq!(code, 0);
    assert_eq!(results(&doc), vec![("issue-14", "delete", "done")]);
    assert!(
        doc.results[0]
            .reason
            .contains("with its ignored files .aider.chat.history.md"),
        "{}",
        doc.results[0].reason
    );
    let last = env
        .ok(&repo, &["log", "issue-14", "--json"])
        .lines()
        .last()
        .unwrap()
        .to_string();
    let e: serde_json::Value = serde_json::from_str(&last).unwrap();
    assert_eq!(e["kind"], "deleted");
    assert_eq!(e["ignored"], serde_json::json!([".aider.chat.history.md"]));
    assert_eq!(e["worktree"], wt.display().to_string());
}

#[test]
fn detached_head_with_unreachable_commits_is_never_removed() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let wt = env.root().join("det");
    env.git(
        &repo,
        &["worktree", "add", "-q", "--detach", wt.to_str().unwrap()],
    );
    for i in 0..2 {
        std::fs::write(wt.join(format!("d{i}")), "x").unwrap();
        env.git(&wt, &["add", "."]);
        env.git(&wt, &["commit", "-q", "-m", "detached work"]);
    }
    env.cmd(&repo)
        .env("RECODE_NOW", "2029-12-31T00:00:00Z")
        .args(["record", "spawn", "issue-15", "--cwd", wt.to_str().unwrap()])
        .status()
        .unwrap();
    let head = env.git(&wt, &["rev-parse", "HEAD"]);
    let (code, doc, _) = recover(&env, &repo, &["--all"]);
    assert_eq!(code, 0);
    assert_eq!(results(&doc), vec![("issue-15", "escalate", "done")]);
    assert!(doc.results[0].reason.contains(&format!(
        "keep them with `git -C {} branch recode-keep-15 HEAD`",
        wt.display()
    )));
    assert_eq!(env.git(&wt, &["rev-parse", "HEAD"]), head);
    assert!(wt.join("d1").exists());
}

#[test]
fn ignored_secrets_keep_an_empty_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    std::fs::write(repo.join(".gitignore"), ".env\n").unwrap();
    env.git(&repo, &["add", ".gitignore"]);
    env.git(&repo, &["commit", "-q", "-m", "ignore"]);
    let wt = add_worker(&env, &repo, 16, "issue-16");
    std::fs::write(wt.join(".env"), "TOKEN=secret\n").unwrap();
    let st = status_at(&env, &repo);
    let w = worker(&st, "issue-16");
    assert_eq!(
        (w["state"].as_str(), w["action"].as_str()),
        (Some("empty"), Some("none"))
    );
    assert_eq!(
        w["reason"],
        "worktree holds ignored secret files (.env): never removed"
    );
    let (code, doc, _) = recover(&env, &repo, &["--all"]);
    assert_eq!(code, 0);
    assert_eq!(results(&doc), vec![("issue-16", "none", "skipped")]);
    assert_eq!(
        std::fs::read_to_string(wt.join(".env")).unwrap(),
        "TOKEN=secret\n"
    );
}

/// Secrets are found wherever git's own `ls-files --others --ignored` finds them, though
/// status lists ignored files only when its walk met an ignored entry: one inside an
/// untracked directory that holds nothing else, one ignored by `info/exclude`, one inside
/// an ignored directory, and a worktree with no ignored file at all (deleted).
#[test]
fn secrets_are_found_in_every_place_the_walk_can_meet_them() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    std::fs::write(repo.join(".gitignore"), ".env\nbuild/\n").unwrap();
    env.git(&repo, &["add", ".gitignore"]);
    env.git(&repo, &["commit", "-q", "-m", "ignore"]);
    let common = PathBuf::from(env.git(&repo, &["rev-parse", "--git-common-dir"]));
    let common = if common.is_absolute() {
        common
    } else {
        repo.join(common)
    };
    std::fs::create_dir_all(common.join("info")).unwrap();
    std::fs::write(common.join("info/exclude"), "*.key\n").unwrap();
    let untracked_dir = add_worker(&env, &repo, 21, "issue-21");
    std::fs::create_dir_all(untracked_dir.join("sub/deeper")).unwrap();
    std::fs::write(untracked_dir.join("sub/deeper/.env"), "A=1\n").unwrap();
    let excluded = add_worker(&env, &repo, 22, "issue-22");
    std::fs::write(excluded.join("deploy.key"), "k\n").unwrap();
    let ignored_dir = add_worker(&env, &repo, 23, "issue-23");
    std::fs::create_dir_all(ignored_dir.join("build/certs")).unwrap();
    std::fs::write(ignored_dir.join("build/certs/site.pem"), "p\n").unwrap();
    let nothing = add_worker(&env, &repo, 24, "issue-24");
    let st = status_at(&env, &repo);
    let seen: Vec<(String, String)> = ["issue-21", "issue-22", "issue-23", "issue-24"]
        .iter()
        .map(|b| {
            let w = worker(&st, b);
            (
                w["action"].as_str().unwrap().to_string(),
                w["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let kept = |files: &str| {
        (
            "none".to_string(),
            format!("worktree holds ignored secret files ({files}): never removed"),
        )
    };
    assert_eq!(
        seen[..3],
        [
            kept("sub/deeper/.env"),
            kept("deploy.key"),
            kept("build/certs/site.pem")
        ]
    );
    assert_eq!(seen[3].0, "delete");
    let (code, _, _) = recover(&env, &repo, &["--all"]);
    assert_eq!(code, 0);
    for (wt, file, text) in [
        (&untracked_dir, "sub/deeper/.env", "A=1\n"),
        (&excluded, "deploy.key", "k\n"),
        (&ignored_dir, "build/certs/site.pem", "p\n"),
    ] {
        assert_eq!(std::fs::read_to_string(wt.join(file)).unwrap(), text);
    }
    assert!(
        !nothing.exists(),
        "the worktree with no ignored file is deleted"
    );
}

#[test]
fn bad_input_main_worktree_locked_worktree_missing_remote() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    // A branch checked out in the main worktree.
    env.git(&repo, &["checkout", "-q", "-b", "issue-17"]);
    env.cmd(&repo)
        .env("RECODE_NOW", "2029-12-31T00:00:00Z")
        .args(["record", "spawn", "issue-17"])
        .status()
        .unwrap();
    // A locked worktree.
    let locked = add_worker(&env, &repo, 18, "issue-18");
    env.git(
        &repo,
        &[
            "worktree",
            "lock",
            "--reason",
            "on a USB disk",
            locked.to_str().unwrap(),
        ],
    );
    // A remote whose URL leads nowhere.
    let dirty = add_worker(&env, &repo, 19, "issue-19");
    std::fs::write(dirty.join("work.txt"), "w\n").unwrap();
    env.git(
        &repo,
        &[
            "remote",
            "add",
            "origin",
            env.root().join("no-such-remote.git").to_str().unwrap(),
        ],
    );
    let refs_before = refs(&env, &repo);
    let (code, doc, _) = recover(&env, &repo, &["--all"]);
    assert_eq!(code, 1, "a rejected push is an error");
    assert_eq!(
        results(&doc),
        vec![
            ("issue-17", "none", "skipped"),
            ("issue-18", "none", "skipped"),
            ("issue-19", "wip-commit", "failed")
        ]
    );
    assert_eq!(
        doc.results[0].reason,
        "no commits ahead of main; worktree clean; it is the main worktree: git-recode never removes it"
    );
    assert_eq!(
        doc.results[1].reason,
        "no commits ahead of main; worktree clean; the worktree is locked (on a USB disk): never removed"
    );
    assert!(
        doc.results[2].reason.contains("push rejected"),
        "{}",
        doc.results[2].reason
    );
    assert!(locked.is_dir());
    let after = refs(&env, &repo);
    // Only the WIP commit moved a ref (issue-19) and the ledger grew (besides this host's
    // heartbeat, which every recover run writes: SPEC 1.2 "Several machines").
    let changed: Vec<&str> = after
        .lines()
        .filter(|l| !refs_before.lines().any(|b| b == *l))
        .filter(|l| !l.starts_with("refs/recode/hosts/"))
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    assert_eq!(changed, vec!["refs/heads/issue-19", "refs/notes/recode"]);
    assert_eq!(env.git(&dirty, &["show", "HEAD:work.txt"]), "w");
}

#[test]
fn a_second_recover_is_refused_while_the_first_holds_the_lock() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let path = repo.join(".git/recode-recover.lock");
    // Another recover, alive: it holds the lock (an flock) and says who it is.
    let held = std::fs::File::create(&path).unwrap();
    held.lock().unwrap();
    std::fs::write(
        &path,
        r#"{"pid":4242,"host":"box","since":"2029-12-31T23:59:00.000Z"}"#,
    )
    .unwrap();
    let out = env
        .cmd(&repo)
        .env("RECODE_NOW", LATER)
        .args(["recover", "--all"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "error: another `git recode recover` (pid 4242 on box, since 2029-12-31T23:59:00.000Z) holds {}\nhint: another git recode recover is running; wait for it, or run again\n",
            path.display()
        )
    );
    // It exits (or is killed): the kernel releases the lock, and the next recover runs.
    // (A child another test thread forked in this instant shares the open file until its
    // exec closes it: wait until the lock is free, as the next tick would.)
    drop(held);
    let free = std::time::Instant::now();
    while std::fs::File::open(&path).unwrap().try_lock().is_err() {
        assert!(free.elapsed().as_secs() < 10, "the lock stayed held");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(
        env.cmd(&repo)
            .env("RECODE_NOW", LATER)
            .args(["recover", "--all"])
            .status()
            .unwrap()
            .code(),
        Some(0)
    );
}

#[test]
fn two_recovers_at_once_never_both_act() {
    let env = TestEnv::new();
    let repo = env.demo_at(LATER_EPOCH);
    let before = env.work(&repo);
    let children: Vec<_> = (0..2)
        .map(|_| {
            env.cmd(&repo)
                .env("RECODE_NOW", LATER)
                .args(["recover", "--all", "--json"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outs: Vec<_> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    let refused = outs
        .iter()
        .filter(|o| String::from_utf8_lossy(&o.stderr).contains("holds"))
        .count();
    let ran = outs.iter().filter(|o| o.status.code() == Some(0)).count();
    assert_eq!((ran + refused, ran >= 1), (2, true), "{outs:?}");
    env.assert_nothing_lost(&repo, &before);
    let log = env.ok(&repo, &["log", "issue-1-empty", "--json"]);
    assert_eq!(
        log.matches("\"kind\":\"deleted\"").count(),
        1,
        "acted on once"
    );
}

/// SPEC 1.2 "The loop settles": an `index.lock` younger than `recode.staleLockAfter`
/// makes the WIP step wait (skipped, nothing changed, no failure counted); once older, it
/// is moved aside (never deleted), ledgered `unlocked`, and the step goes on.
#[test]
fn a_stale_index_lock_waits_then_is_moved_aside() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let wt = add_worker(&env, &repo, 20, "issue-20");
    std::fs::write(wt.join("work.txt"), "w\n").unwrap();
    let lock = std::path::PathBuf::from(env.git(
        &wt,
        &[
            "rev-parse",
            "--path-format=absolute",
            "--git-path",
            "index.lock",
        ],
    ));
    std::fs::write(&lock, "").unwrap();
    let age = |secs: u64| {
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(secs);
        std::fs::File::options()
            .write(true)
            .open(&lock)
            .unwrap()
            .set_modified(old)
            .unwrap();
    };
    age(60);
    let before = env.work(&repo);
    let (code, doc, _) = recover(&env, &repo, &["issue-20"]);
    assert_eq!(code, 0);
    assert_eq!(results(&doc), vec![("issue-20", "wip-commit", "skipped")]);
    assert_eq!(
        doc.results[0].reason,
        format!(
            "waiting: {} is held (60 s old; taken as left by a killed process once it is 300 s old)",
            lock.display()
        )
    );
    env.assert_nothing_lost(&repo, &before);
    age(600);
    let (_, doc, _) = recover(&env, &repo, &["issue-20"]);
    assert_eq!(results(&doc), vec![("issue-20", "wip-commit", "held")]);
    assert_eq!(env.git(&wt, &["show", "HEAD:work.txt"]), "w");
    assert!(!lock.exists());
    let aside: Vec<_> = std::fs::read_dir(lock.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("index.lock.stale-"))
        .collect();
    assert_eq!(aside.len(), 1, "moved aside, not deleted");
    let kinds = log_kinds(&env, &repo, "issue-20");
    assert_eq!(kinds.iter().filter(|k| *k == "unlocked").count(), 1);
}

fn index_bytes(env: &TestEnv, wt: &Path) -> Vec<u8> {
    let p = env.git(
        wt,
        &["rev-parse", "--path-format=absolute", "--git-path", "index"],
    );
    std::fs::read(p).unwrap()
}

/// Safety rule 0: a failed WIP commit (here: signing with a key that does not exist)
/// leaves the index byte-identical; the third failure on the same head escalates once.
#[test]
fn a_failed_wip_commit_restores_the_index_and_the_third_escalates() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let wt = add_worker(&env, &repo, 23, "issue-23");
    env.git(&repo, &["config", "commit.gpgsign", "true"]);
    env.git(&repo, &["config", "gpg.format", "ssh"]);
    let key = env.root().join("missing-key.pub");
    env.git(&repo, &["config", "user.signingkey", key.to_str().unwrap()]);
    std::fs::write(wt.join("a.txt"), "a\n").unwrap();
    std::fs::write(wt.join("b.txt"), "b\n").unwrap();
    env.git(&wt, &["add", "a.txt"]);
    let index = index_bytes(&env, &wt);
    let head = env.git(&wt, &["rev-parse", "HEAD"]);
    for run in 1..=3 {
        let (code, doc, _) = recover(&env, &repo, &["issue-23"]);
        assert_eq!(code, 0, "run {run}");
        assert_eq!(results(&doc), vec![("issue-23", "wip-commit", "failed")]);
        assert_eq!(index_bytes(&env, &wt), index, "run {run}: index restored");
        assert_eq!(env.git(&wt, &["rev-parse", "HEAD"]), head);
        assert_eq!(
            env.git(&wt, &["status", "--porcelain"]),
            "A  a.txt\n?? b.txt"
        );
        assert_eq!(
            doc.results[0]
                .reason
                .ends_with("failed 3 times in a row on this head: escalated"),
            run == 3,
            "run {run}: {}",
            doc.results[0].reason
        );
    }
    let kinds = log_kinds(&env, &repo, "issue-23");
    assert_eq!(kinds.iter().filter(|k| *k == "escalated").count(), 1);
    let w = worker(&status_at(&env, &repo), "issue-23").clone();
    assert_eq!(
        (w["state"].as_str(), w["action"].as_str()),
        (Some("needs-human"), Some("escalate"))
    );
}

/// SPEC special cases: an untracked nested repository is never committed as a gitlink; it
/// is named in `left_out`, the step is held, and the worker stays dirty.
#[test]
fn a_nested_repository_is_left_out_of_the_wip_commit_and_keeps_the_worker_dirty() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let wt = add_worker(&env, &repo, 12, "issue-12");
    std::fs::write(wt.join("feature.txt"), "real change\n").unwrap();
    let dep = wt.join("vendor/dep");
    std::fs::create_dir_all(&dep).unwrap();
    env.git(&dep, &["init", "-q", "-b", "main"]);
    std::fs::write(dep.join("lib.c"), "v1\n").unwrap();
    env.git(&dep, &["add", "lib.c"]);
    env.git(&dep, &["commit", "-q", "-m", "local patch"]);
    let before = env.work(&repo);
    let (code, doc, _) = recover(&env, &repo, &["issue-12"]);
    assert_eq!(code, 0);
    assert_eq!(results(&doc), vec![("issue-12", "wip-commit", "held")]);
    assert!(
        doc.results[0].reason.contains("vendor/dep"),
        "{}",
        doc.results[0].reason
    );
    assert_eq!(env.git(&repo, &["ls-tree", "issue-12", "vendor/dep"]), "");
    assert_eq!(env.git(&wt, &["show", "HEAD:feature.txt"]), "real change");
    assert_eq!(env.git(&dep, &["log", "--format=%s"]), "local patch");
    let w = worker(&status_at(&env, &repo), "issue-12").clone();
    assert_eq!(w["dirty"]["untracked"], 1);
    // SPEC 1.2 "The loop settles": never `wip-commit` again for the same content.
    assert_eq!(w["action"].as_str(), Some("resume"));
    env.assert_nothing_lost(&repo, &before);
}

/// Safety rule 0: the caller's GIT_DIR/GIT_INDEX_FILE never redirect the WIP commit onto
/// the main worktree's branch and index.
#[test]
fn the_callers_git_dir_never_redirects_the_wip_commit() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let wt = add_worker(&env, &repo, 10, "issue-10");
    std::fs::write(wt.join("w.txt"), "worker change\n").unwrap();
    std::fs::write(repo.join("notes.txt"), "user v1\n").unwrap();
    env.git(&repo, &["add", "notes.txt"]);
    let main_index = index_bytes(&env, &repo);
    let main_head = env.git(&repo, &["rev-parse", "main"]);
    let out = env
        .cmd(&env.root())
        .env("RECODE_NOW", LATER)
        .env("GIT_DIR", repo.join(".git"))
        .env("GIT_INDEX_FILE", repo.join(".git/index"))
        .args(["recover", "--all", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(env.git(&repo, &["rev-parse", "main"]), main_head);
    assert_eq!(index_bytes(&env, &repo), main_index);
    assert_eq!(env.git(&repo, &["show", "issue-10:w.txt"]), "worker change");
}

/// Found by the never-lose harness (seed 2): `add -A` replaced a staged version that the
/// worktree had changed again (`MM`, `AM`, `MD`), and that version became unreachable.
/// The index is committed first, so both versions are on the branch.
#[test]
fn a_staged_version_changed_again_is_committed_before_the_worktree_version() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let wt = add_worker(&env, &repo, 14, "issue-14");
    std::fs::write(wt.join("README.md"), "staged version\n").unwrap();
    std::fs::write(wt.join("new.txt"), "added, staged\n").unwrap();
    env.git(&wt, &["add", "README.md", "new.txt"]);
    std::fs::write(wt.join("README.md"), "worktree version\n").unwrap();
    std::fs::write(wt.join("new.txt"), "added, then changed\n").unwrap();
    let before = env.work(&repo);
    let (code, doc, _) = recover(&env, &repo, &["issue-14"]);
    assert_eq!(code, 0);
    assert_eq!(results(&doc), vec![("issue-14", "wip-commit", "held")]);
    assert_eq!(
        env.git(&wt, &["show", "HEAD~1:README.md"]),
        "staged version"
    );
    assert_eq!(env.git(&wt, &["show", "HEAD~1:new.txt"]), "added, staged");
    assert_eq!(
        env.git(&wt, &["show", "HEAD:README.md"]),
        "worktree version"
    );
    assert_eq!(
        env.git(&wt, &["show", "HEAD:new.txt"]),
        "added, then changed"
    );
    assert_eq!(
        env.git(&wt, &["log", "--format=%s", "main..HEAD"]),
        "wip: recode snapshot (2 files)\n\
         wip: recode snapshot of the index (2 files changed again after staging)"
    );
    assert_eq!(env.git(&wt, &["status", "--porcelain"]), "");
    env.assert_nothing_lost(&repo, &before);
}

/// Found by trying it: with `status.showUntrackedFiles=no`, an untracked file was not
/// counted, the worktree looked clean and `empty`, and recover deleted it with the file.
/// Untracked files are counted whatever that setting says (SPEC `empty`, safety rule 1).
#[test]
fn show_untracked_files_no_never_hides_an_untracked_file_from_recover() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let wt = add_worker(&env, &repo, 2, "issue-2-u");
    std::fs::write(wt.join("notes.txt"), "precious\n").unwrap();
    for dir in [&repo, &wt] {
        env.git(dir, &["config", "status.showUntrackedFiles", "no"]);
    }
    let st = status_at(&env, &repo);
    let w = worker(&st, "issue-2-u");
    assert_eq!(
        (w["state"].as_str(), w["dirty"]["untracked"].as_u64()),
        (Some("half-done"), Some(1))
    );
    let before = env.work(&repo);
    let (code, doc, stderr) = recover(&env, &repo, &["--all"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(results(&doc), vec![("issue-2-u", "wip-commit", "held")]);
    env.assert_nothing_lost(&repo, &before);
    assert_eq!(
        std::fs::read_to_string(wt.join("notes.txt")).unwrap(),
        "precious\n"
    );
    assert_eq!(
        env.git(&wt, &["show", "HEAD:notes.txt"]),
        "precious",
        "the WIP commit holds it"
    );
}
