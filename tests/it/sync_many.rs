//! The ledger through a shared remote: three clones writing concurrently, plain fetch after
//! `--setup`, and remotes that fail.

use std::path::{Path, PathBuf};

use crate::common::TestEnv;

fn clones(env: &TestEnv, n: usize) -> (PathBuf, Vec<PathBuf>) {
    let origin = env.root().join("origin.git");
    env.git(
        &env.root(),
        &["init", "-q", "--bare", origin.to_str().unwrap()],
    );
    let seed = env.repo("seed");
    env.git(
        &seed,
        &["remote", "add", "origin", origin.to_str().unwrap()],
    );
    env.git(&seed, &["push", "-q", "origin", "main"]);
    let out = (0..n)
        .map(|i| {
            let c = env.root().join(format!("clone{i}"));
            env.git(
                &env.root(),
                &["clone", "-q", origin.to_str().unwrap(), c.to_str().unwrap()],
            );
            c
        })
        .collect();
    (origin, out)
}

fn log_lines(env: &TestEnv, dir: &Path) -> Vec<String> {
    let mut l: Vec<String> = env
        .ok(dir, &["log", "--json"])
        .lines()
        .map(str::to_string)
        .collect();
    l.sort();
    l
}

#[test]
fn three_clones_writing_concurrently_converge_on_all_48_events() {
    let env = TestEnv::new();
    let (_origin, cl) = clones(&env, 3);
    // Each clone: 16 events on 4 tasks (some shared between clones), written by parallel
    // processes, with syncs interleaved.
    let mut children = Vec::new();
    for (ci, dir) in cl.iter().enumerate() {
        for j in 0..16 {
            let mut cmd = env.cmd(dir);
            let branch = format!("issue-{}", 100 + (j % 4) + ci * 2);
            cmd.args([
                "record",
                "spawn",
                &branch,
                "--session-id",
                &format!("c{ci}-e{j}"),
                "--cwd",
                ".",
            ]);
            cmd.stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped());
            children.push(cmd.spawn().unwrap());
            if j % 5 == 4 {
                let mut s = env.cmd(dir);
                s.args(["sync"])
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped());
                children.push(s.spawn().unwrap());
            }
        }
    }
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for _ in 0..2 {
        for dir in &cl {
            env.ok(dir, &["sync"]);
        }
    }
    let first = log_lines(&env, &cl[0]);
    assert_eq!(first.len(), 48, "all 48 events");
    for dir in &cl[1..] {
        assert_eq!(log_lines(&env, dir), first, "identical ledgers");
    }
    let sessions: std::collections::BTreeSet<String> = first
        .iter()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["session_id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(sessions.len(), 48);
}

#[test]
fn plain_fetch_after_setup_never_loses_an_unpushed_local_event() {
    let env = TestEnv::new();
    let (_origin, cl) = clones(&env, 2);
    env.ok(
        &cl[0],
        &[
            "record",
            "spawn",
            "issue-1",
            "--cwd",
            ".",
            "--session-id",
            "pushed",
        ],
    );
    env.ok(&cl[0], &["sync"]);
    env.ok(&cl[1], &["sync", "--setup"]);
    env.ok(
        &cl[1],
        &[
            "record",
            "spawn",
            "issue-1",
            "--cwd",
            ".",
            "--session-id",
            "local-only",
        ],
    );
    let local_tip = env.git(&cl[1], &["rev-parse", "refs/notes/recode"]);
    env.ok(
        &cl[0],
        &[
            "record",
            "spawn",
            "issue-2",
            "--cwd",
            ".",
            "--session-id",
            "later",
        ],
    );
    env.ok(&cl[0], &["sync"]);
    env.git(&cl[1], &["fetch", "-q"]);
    assert_eq!(
        env.git(&cl[1], &["rev-parse", "refs/notes/recode"]),
        local_tip,
        "fetch never moves the local ledger"
    );
    let log = env.ok(&cl[1], &["log", "--json"]);
    for s in ["pushed", "local-only", "later"] {
        assert!(
            log.contains(&format!("\"session_id\":\"{s}\"")),
            "{s} in {log}"
        );
    }
    env.ok(&cl[1], &["sync"]);
    assert!(env.ok(&cl[0], &["sync"]).contains("refs/notes/recode"));
    assert!(
        env.ok(&cl[0], &["log", "--json"])
            .contains("\"session_id\":\"local-only\"")
    );
}

#[test]
fn failing_remotes_leave_the_local_ledger_unchanged() {
    let env = TestEnv::new();
    let (origin, cl) = clones(&env, 1);
    let dir = &cl[0];
    env.ok(dir, &["record", "spawn", "issue-7", "--cwd", "."]);
    let tip = env.git(dir, &["rev-parse", "refs/notes/recode"]);
    // A remote that rejects the push (a hook says no).
    let hook = origin.join("hooks/pre-receive");
    std::fs::write(&hook, "#!/bin/sh\necho 'no notes here' >&2\nexit 1\n").unwrap();
    std::os::unix::fs::PermissionsExt::set_mode(
        &mut std::fs::metadata(&hook).unwrap().permissions(),
        0o755,
    );
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = env.output(dir, &["sync"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: git push") && err.contains("no notes here"),
        "{err}"
    );
    assert_eq!(env.git(dir, &["rev-parse", "refs/notes/recode"]), tip);
    std::fs::remove_file(&hook).unwrap();
    // An unreachable remote.
    env.git(
        dir,
        &[
            "remote",
            "set-url",
            "origin",
            env.root().join("gone.git").to_str().unwrap(),
        ],
    );
    let out = env.output(dir, &["sync"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).starts_with("error: git ls-remote origin"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(env.git(dir, &["rev-parse", "refs/notes/recode"]), tip);
    // A remote without notes takes ours.
    env.git(
        dir,
        &["remote", "set-url", "origin", origin.to_str().unwrap()],
    );
    assert_eq!(
        env.ok(dir, &["sync"]),
        "refs/notes/recode: the remote had none, pushed\nrefs/recode/anchors: the remote had none, pushed\n"
    );
    assert_eq!(env.git(&origin, &["rev-parse", "refs/notes/recode"]), tip);
}
