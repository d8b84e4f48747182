//! Ledger facts are decided inside the compare-and-swap: writers racing on one
//! task's ledger never number two attempts alike nor ledger one milestone twice, because
//! each append re-decides its events from the ledger it is appended to.

use std::path::Path;
use std::sync::{Arc, Barrier};

use crate::common::TestEnv;
use crate::hookenv::ledger;

/// The parsed lines of task `task`'s local ledger.
fn events(env: &TestEnv, dir: &Path, task: &str) -> Vec<serde_json::Value> {
    ledger(env, dir, task)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Run each of `runs` (argument lists of `git-recode` in `dir`) at the same moment, one
/// thread each; returns their exit codes in order.
pub(crate) fn race(env: &TestEnv, dir: &Path, runs: &[&[&str]]) -> Vec<Option<i32>> {
    let barrier = Arc::new(Barrier::new(runs.len()));
    std::thread::scope(|s| {
        let handles: Vec<_> = runs
            .iter()
            .map(|args| {
                let mut cmd = env.cmd(dir);
                cmd.args(*args);
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
fn eight_concurrent_spawns_on_one_branch_get_attempts_one_to_eight() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    env.git(&repo, &["branch", "issue-7"]);
    let spawn: &[&str] = &["record", "spawn", "issue-7", "--agent", "claude"];
    let codes = race(&env, &repo, &[spawn; 8]);
    assert_eq!(codes, vec![Some(0); 8]);
    let mut attempts: Vec<u64> = events(&env, &repo, "7")
        .iter()
        .filter(|e| e["kind"] == "spawn")
        .map(|e| e["attempt"].as_u64().unwrap())
        .collect();
    attempts.sort();
    assert_eq!(attempts, (1..=8).collect::<Vec<u64>>());
}

#[test]
fn the_hook_racing_any_writer_never_ledgers_a_milestone_twice() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    env.git(&repo, &["checkout", "-q", "-b", "issue-7"]);
    let rounds = 50;
    for i in 0..rounds {
        std::fs::write(repo.join("f"), format!("{i}\n")).unwrap();
        env.git(&repo, &["add", "f"]);
        // No hook installed: the race below runs it by hand, against a writing command
        // whose pickup ledgers the same milestone from the trailer.
        env.git(
            &repo,
            &[
                "commit",
                "-q",
                "-m",
                &format!("step {i}\n\nRecode-Phase: step{i}"),
            ],
        );
        // Every kind of writer: records that append, and recover (which ledgers what it
        // classified or did, and folds the hook's journal like any writer).
        let writers: [&[&str]; 4] = [
            &["record", "gate", "issue-7", "--passed"],
            &["record", "spawn", "issue-7"],
            &["record", "exit", "issue-7", "--rc", "1"],
            &["recover", "issue-7"],
        ];
        let writer = writers[i % writers.len()];
        let codes = race(&env, &repo, &[&["hook", "post-commit"], writer]);
        assert_eq!(codes, vec![Some(0), Some(0)], "round {i}");
    }
    // A hook line that landed after a fold's last read is folded by the next write:
    // still once.
    env.ok(&repo, &["record", "unblock", "issue-7"]);
    assert!(!repo.join(".git/recode/milestones.journal").exists());
    let all = events(&env, &repo, "7");
    let mut seen = std::collections::BTreeMap::new();
    for e in all.iter().filter(|e| e["kind"] == "milestone") {
        let key = (e["head"].to_string(), e["phase"].to_string());
        *seen.entry(key).or_insert(0u32) += 1;
    }
    let twice: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "milestones ledgered twice: {twice:?}");
    assert_eq!(seen.len(), rounds, "one milestone per commit");
}
