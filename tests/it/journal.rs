//! The milestone journal: the hook appends to it, readers show it at once, and
//! every writing command folds it into the ledger. A fold killed at any point loses
//! nothing and duplicates nothing; hooks racing a fold never get a milestone ledgered
//! twice or lost.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};

use crate::common::TestEnv;
use crate::hookenv::*;

/// The journal files in `repo`'s `.git/recode` (sorted names).
fn journals(repo: &Path) -> Vec<String> {
    let dir = repo.join(".git/recode");
    if !dir.exists() {
        return Vec::new();
    }
    names(&dir)
}

/// A repository on `issue-7`, and a branch `issue-9`; with the hook installed when `hook`.
fn on_issue_7(env: &TestEnv, hook: bool) -> PathBuf {
    let repo = env.repo("r");
    env.git(&repo, &["branch", "issue-9"]);
    env.git(&repo, &["checkout", "-q", "-b", "issue-7"]);
    if hook {
        env.ok(&repo, &["hook", "install"]);
    }
    repo
}

/// Each milestone `(head, phase)` of task 7's ledger with how many times it is there.
fn ledgered(env: &TestEnv, repo: &Path) -> std::collections::BTreeMap<(String, String), u32> {
    let mut seen = std::collections::BTreeMap::new();
    for l in ledger(env, repo, "7").lines() {
        let e: serde_json::Value = serde_json::from_str(l).unwrap();
        if e["kind"] == "milestone" {
            let key = (
                e["head"].as_str().unwrap().to_string(),
                e["phase"].as_str().unwrap().to_string(),
            );
            *seen.entry(key).or_insert(0) += 1;
        }
    }
    seen
}

#[test]
fn a_fold_killed_between_the_rename_and_the_delete_loses_and_duplicates_nothing() {
    let env = TestEnv::new();
    let repo = on_issue_7(&env, true);
    let s = &[("RECODE_SESSION_ID", "s-1")];
    let a = commit(&env, &repo, "a", "a\n", "a\n\nRecode-Phase: scoped\n", s);
    let b = commit(
        &env,
        &repo,
        "b",
        "b\n",
        "b\n\nRecode-Phase: implemented\n",
        s,
    );
    assert_eq!(journals(&repo), ["milestones.journal"]);
    let line = |seq, head: &str, phase| milestone(seq, "7", "issue-7", head, phase, Some("s-1"));
    let both0 = format!("{}\n{}", line(0, &a, "scoped"), line(0, &b, "implemented"));
    assert_eq!(shown(&env, &repo, "issue-7"), both0);

    // Killed right after the rename: nothing ledgered, the journal renamed aside, and
    // readers still show both from it (exact time, session id: not the trailers').
    let out = env
        .cmd(&repo)
        .args(["record", "unblock", "issue-7"])
        .env("RECODE_FAILPOINT", "journal-renamed")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), None, "killed: {}", stderr(&out));
    let left = journals(&repo);
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(
        left[0].starts_with("milestones.journal.folding-"),
        "{left:?}"
    );
    assert_eq!(ledger(&env, &repo, "7"), "");
    assert_eq!(shown(&env, &repo, "issue-7"), both0);
    let v: serde_json::Value =
        serde_json::from_str(&env.ok(&repo, &["classify", "issue-7", "--json", "--offline"]))
            .unwrap();
    assert_eq!(v["phase"], "implemented");

    // A hook meanwhile starts a new live journal.
    let c = commit(
        &env,
        &repo,
        "c",
        "c\n",
        "c\n\nRecode-Phase: tests-green\n",
        s,
    );
    let three = |s: [u32; 3]| {
        [
            line(s[0], &a, "scoped"),
            line(s[1], &b, "implemented"),
            line(s[2], &c, "tests-green"),
        ]
        .join("\n")
    };
    assert_eq!(shown(&env, &repo, "issue-7"), three([0, 0, 0]));

    // Killed after the appends, before the delete: the ledger holds all three once (the
    // leftover and the new live journal both folded), the files are still there, and
    // readers show each once.
    let out = env
        .cmd(&repo)
        .args(["record", "unblock", "issue-7"])
        .env("RECODE_FAILPOINT", "journal-folded")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), None, "killed: {}", stderr(&out));
    assert_eq!(ledger(&env, &repo, "7"), three([1, 2, 3]));
    assert_eq!(journals(&repo).len(), 2, "{:?}", journals(&repo));
    assert_eq!(shown(&env, &repo, "issue-7"), three([1, 2, 3]));

    // The next fold appends nothing again and deletes the leftovers.
    assert_eq!(folded(&env, &repo, "7", "issue-7"), three([1, 2, 3]));
    assert_eq!(journals(&repo), Vec::<String>::new());
    assert_eq!(shown(&env, &repo, "issue-7").lines().count(), 4);
}

/// Run `cmds` (each a program and its arguments, in `dir`) at the same moment; returns
/// their exit codes.
fn race(dir: &Path, cmds: Vec<std::process::Command>) -> Vec<Option<i32>> {
    let barrier = Arc::new(Barrier::new(cmds.len()));
    std::thread::scope(|s| {
        let handles: Vec<_> = cmds
            .into_iter()
            .map(|mut cmd| {
                cmd.current_dir(dir);
                let barrier = Arc::clone(&barrier);
                s.spawn(move || {
                    barrier.wait();
                    cmd.output().unwrap().status.code()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn fifty_races_of_hooks_against_a_fold_ledger_each_milestone_exactly_once() {
    let env = TestEnv::new();
    let repo = on_issue_7(&env, false);
    let rounds = 50;
    for i in 0..rounds {
        std::fs::write(repo.join("f"), format!("{i}\n")).unwrap();
        env.git(&repo, &["add", "f"]);
        // Committed with no hook installed: the race runs it,
        // twice (a rebase pick or an amend journals one (head, phase) again), against a
        // writing command on another branch, whose pickup folds the journal but never
        // reads issue-7's trailers.
        env.git(
            &repo,
            &[
                "commit",
                "-q",
                "-m",
                &format!("step {i}\n\nRecode-Phase: step{i}"),
            ],
        );
        let hook = || {
            let mut c = env.cmd(&repo);
            c.args(["hook", "post-commit"])
                .env("RECODE_SESSION_ID", "s-race");
            c
        };
        let mut fold = env.cmd(&repo);
        fold.args(["record", "unblock", "issue-9"]);
        let codes = race(&repo, vec![hook(), hook(), fold]);
        assert_eq!(codes, vec![Some(0); 3], "round {i}");
        let seen = ledgered(&env, &repo);
        let twice: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
        assert!(twice.is_empty(), "round {i}: ledgered twice: {twice:?}");
    }
    // The last lines the hooks wrote after the last fold, and any written after a fold's
    // last read (still in their commits' trailers), are ledgered by the next write on
    // issue-7.
    env.ok(&repo, &["record", "unblock", "issue-7"]);
    assert_eq!(journals(&repo), Vec::<String>::new());
    let seen = ledgered(&env, &repo);
    assert_eq!(seen.len(), rounds, "one milestone per commit");
    assert!(seen.values().all(|n| *n == 1), "{seen:?}");
    // The journal's lines, not the trailers', were ledgered (their session id).
    let from_journal = ledger(&env, &repo, "7")
        .lines()
        .filter(|l| l.contains("\"session_id\":\"s-race\""))
        .count();
    assert!(from_journal >= rounds - 2, "{from_journal} of {rounds}");
}
