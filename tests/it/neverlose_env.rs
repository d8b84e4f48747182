//! The caller's `GIT_*` variables never change what another worktree holds (SPEC safety
//! rule 0; found by the never-lose harness's `caller_env` fault): run from the main
//! worktree's hook or a script with `GIT_DIR`, `GIT_WORK_TREE` and `GIT_INDEX_FILE`
//! exported, each worker's worktree is still read as itself.

use crate::common::{LATER, TestEnv};

#[test]
fn the_callers_git_variables_never_change_a_workers_dirty_counts() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let clean = env.add_worktree(&repo, "issue-4", "wt4");
    std::fs::write(clean.join("b.txt"), "b\n").unwrap();
    env.git(&clean, &["add", "b.txt"]);
    env.git(&clean, &["commit", "-q", "-m", "b"]);
    let dirty = env.add_worktree(&repo, "issue-5", "wt5");
    std::fs::write(dirty.join("untracked.txt"), "work\n").unwrap();
    for b in ["issue-4", "issue-5"] {
        env.record(&repo, &["spawn", b]);
        env.record(&repo, &["exit", b, "--rc", "0"]);
    }
    // The main worktree has its own staged and unstaged changes.
    std::fs::write(repo.join("staged.txt"), "staged\n").unwrap();
    env.git(&repo, &["add", "staged.txt"]);
    std::fs::write(repo.join("README.md"), "changed\n").unwrap();
    let gd = repo.join(".git");
    for vars in [
        vec![("GIT_DIR", gd.clone()), ("GIT_WORK_TREE", repo.clone())],
        vec![
            ("GIT_DIR", gd.clone()),
            ("GIT_WORK_TREE", repo.clone()),
            ("GIT_INDEX_FILE", gd.join("index")),
        ],
    ] {
        let mut c = env.cmd(&repo);
        for (k, v) in &vars {
            c.env(k, v);
        }
        let out = c
            .env("RECODE_NOW", LATER)
            .args(["status", "--offline", "--json"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let dirt = |b: &str| {
            let w = doc["workers"]
                .as_array()
                .unwrap()
                .iter()
                .find(|w| w["branch"] == b)
                .unwrap()
                .clone();
            (w["dirty"].clone(), w["state"].clone())
        };
        assert_eq!(
            dirt("issue-4"),
            (
                serde_json::json!({"staged": 0, "unstaged": 0, "untracked": 0, "conflicted": 0}),
                serde_json::json!("half-done")
            ),
            "{vars:?}"
        );
        assert_eq!(
            dirt("issue-5"),
            (
                serde_json::json!({"staged": 0, "unstaged": 0, "untracked": 1, "conflicted": 0}),
                serde_json::json!("half-done")
            ),
            "{vars:?}"
        );
    }
}
