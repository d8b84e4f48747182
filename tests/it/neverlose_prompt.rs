//! The resume prompt names every path a WIP commit left out (SPEC 1.2 "Never lose
//! work: more states": "The resume prompt names it"): a submodule holding work, an
//! untracked nested repository, an oversize untracked file, each with what it is.

use crate::common::{LATER, TestEnv};
use crate::neverlose_states::{json, with_submodules};

#[test]
fn the_resume_prompt_names_every_left_out_path() {
    let env = TestEnv::new();
    let repo = env.repo_with_origin().0;
    env.git(&repo, &["config", "recode.wipMaxFileSize", "10k"]);
    let wt = with_submodules(&env, &repo, &["deps/lib"]);
    env.record(&wt, &["spawn", "issue-42"]);
    std::fs::write(wt.join("fix.go"), "fix\n").unwrap();
    std::fs::write(wt.join("deps/lib/lib.c"), "v2, uncommitted\n").unwrap();
    std::fs::create_dir_all(wt.join("bin")).unwrap();
    std::fs::write(wt.join("bin/manager"), vec![7u8; 20_000]).unwrap();
    let nested = wt.join("vendor/x");
    std::fs::create_dir_all(&nested).unwrap();
    env.git(&nested, &["init", "-q"]);
    std::fs::write(nested.join("a.txt"), "a\n").unwrap();
    env.git(&nested, &["add", "."]);
    env.git(&nested, &["commit", "-q", "-m", "nested"]);
    env.record(&repo, &["exit", "issue-42", "--rc", "143"]);
    let (code, doc) = json(&env, &repo, &["recover", "issue-42"]);
    assert_eq!(code, 0, "{doc:#}");
    let out = env
        .cmd(&repo)
        .env("RECODE_NOW", LATER)
        .args(["resume", "issue-42", "--dry-run"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let prompt = String::from_utf8_lossy(&out.stdout);
    let start = prompt
        .find("## Left out of the WIP commits")
        .unwrap_or_else(|| panic!("{prompt}"));
    let section: Vec<&str> = prompt[start..]
        .lines()
        .take_while(|l| !l.starts_with("## Tests"))
        .collect();
    assert_eq!(
        section,
        vec![
            "## Left out of the WIP commits",
            "",
            "These paths are still in the worktree and in no commit: git-recode's WIP commits left them out. Decide for each; do not delete work you need.",
            "",
            "- `vendor/x`: an untracked nested repository, its commits on no remote: push it somewhere, or add it to `.gitignore`.",
            "- `bin/manager`: an untracked file of 20000 bytes, too large for a commit: add it to `.gitignore` or remove it.",
            "- `deps/lib`: a submodule holding work its remote lacks: commit and push inside it, then commit the new gitlink.",
            "",
        ],
        "{prompt}"
    );
    // `resume --json` carries the same facts.
    let (_, doc) = json(&env, &repo, &["resume", "issue-42", "--dry-run"]);
    assert_eq!(
        doc["facts"]["left_out"],
        serde_json::json!([
            {"path": "vendor/x", "kind": "repository", "bytes": null},
            {"path": "bin/manager", "kind": "file", "bytes": 20000},
            {"path": "deps/lib", "kind": "submodule", "bytes": null},
        ]),
        "{doc:#}"
    );
}

/// Nothing left out: no such section.
#[test]
fn a_prompt_without_left_out_paths_has_no_such_section() {
    let env = TestEnv::new();
    let repo = env.repo_with_origin().0;
    let wt = env.add_worktree(&repo, "issue-43", "wt43");
    env.record(&wt, &["spawn", "issue-43"]);
    std::fs::write(wt.join("fix.go"), "fix\n").unwrap();
    env.record(&repo, &["exit", "issue-43", "--rc", "143"]);
    json(&env, &repo, &["recover", "issue-43"]);
    let out = env
        .cmd(&repo)
        .env("RECODE_NOW", LATER)
        .args(["resume", "issue-43", "--dry-run"])
        .output()
        .unwrap();
    let prompt = String::from_utf8_lossy(&out.stdout);
    assert!(prompt.contains("## Uncommitted changes"), "{prompt}");
    assert!(!prompt.contains("Left out"), "{prompt}");
}
