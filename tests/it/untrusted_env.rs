//! A repository's config cannot borrow the forge token (SPEC 1.2 "Untrusted input stays
//! out"): its config names a clean and smudge filter, `core.fsmonitor`, `core.sshCommand`,
//! a pager and an external diff, each a script that logs its name and every token variable
//! it sees. Per git-recode command: which of them ran, and that none saw a token; `status`
//! and `classify` run no filter and no monitor.

use std::path::{Path, PathBuf};

use crate::common::TestEnv;

/// The token variables set for every command, each with its own value.
const TOKENS: &[(&str, &str)] = &[
    ("GH_TOKEN", "ghp_envtoken0123456789abcdefABCDEF0123"),
    ("GITHUB_TOKEN", "plain-github-token-value-77"),
    ("GITLAB_TOKEN", "glpat-envtoken0123456789ab"),
    ("GITEA_TOKEN", "gitea-token-value-0123456789"),
    ("FORGEJO_TOKEN", "forgejo-token-value-0123456789"),
    ("RECODE_API_TOKEN", "recode-own-token-value-0123"),
];

/// Write the spy script `name` under `bin`: it appends `name` and the token variables it
/// sees to `log`, then acts as `tail` says (a shell snippet).
fn spy(bin: &Path, log: &Path, name: &str, tail: &str) -> PathBuf {
    let path = bin.join(name);
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\nprintf '%s %s\\n' '{name}' \"$(env | grep TOKEN= | tr '\\n' ' ')\" >> '{}'\n{tail}\n",
            log.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// A repository with an origin and worker `issue-7` (a tracked `a.txt` through the filter,
/// one commit ahead), its config naming the spies; the spies' log.
fn spied(env: &TestEnv) -> (PathBuf, PathBuf, PathBuf) {
    let (repo, _) = env.repo_with_origin();
    let bin = env.root().join("spies");
    std::fs::create_dir_all(&bin).unwrap();
    let log = env.root().join("spies.log");
    let s = |name: &str, tail: &str| spy(&bin, &log, name, tail).display().to_string();
    let set = |k: &str, v: &str| env.git(&repo, &["config", k, v]);
    set("filter.spy.clean", &s("clean", "cat"));
    set("filter.spy.smudge", &s("smudge", "cat"));
    set("core.fsmonitor", &s("fsmonitor", "exit 1"));
    set("core.sshCommand", &s("ssh", "exit 1"));
    set("core.pager", &s("pager", "cat"));
    set("pager.status", "true");
    set("diff.external", &s("diff", "exit 0"));
    std::fs::write(repo.join(".gitattributes"), "*.txt filter=spy\n").unwrap();
    env.git(&repo, &["add", ".gitattributes"]);
    env.git(&repo, &["commit", "-q", "-m", "attributes"]);
    env.git(&repo, &["push", "-q", "origin", "main"]);
    let wt = env.add_worktree(&repo, "issue-7", "wt7");
    std::fs::write(wt.join("a.txt"), "a\n").unwrap();
    env.git(&wt, &["add", "a.txt"]);
    env.git(&wt, &["commit", "-q", "-m", "step"]);
    std::fs::write(&log, "").unwrap();
    (repo, wt, log)
}

/// Run git-recode `args` in `dir` with every token set: the spies that ran (in order, once
/// each), after checking that none saw a token.
fn spies_of(env: &TestEnv, dir: &Path, log: &Path, args: &[&str]) -> Vec<String> {
    std::fs::write(log, "").unwrap();
    let mut cmd = env.cmd(dir);
    cmd.env("RECODE_NOW", crate::common::LATER);
    for (k, v) in TOKENS {
        cmd.env(k, v);
    }
    let out = cmd.args(args).output().unwrap();
    assert!(
        matches!(out.status.code(), Some(0..=3)),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = std::fs::read_to_string(log).unwrap();
    for (k, v) in TOKENS {
        assert!(!lines.contains(v), "{args:?}: a spy saw {k}:\n{lines}");
    }
    let mut ran: Vec<String> = Vec::new();
    for l in lines.lines() {
        let name = l.split(' ').next().unwrap_or("").to_string();
        if !ran.contains(&name) {
            ran.push(name);
        }
    }
    ran
}

#[test]
fn no_command_a_repository_names_sees_a_token_and_reads_run_none() {
    let env = TestEnv::new();
    let (repo, wt, log) = spied(&env);
    // The stat of a tracked file changes, its content not: a status must compare content.
    let a = wt.join("a.txt");
    let f = std::fs::File::options().write(true).open(&a).unwrap();
    f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
        .unwrap();
    drop(f);
    let reads: &[&[&str]] = &[
        &["status"],
        &["status", "--json"],
        &["status", "--porcelain"],
        &["classify", "issue-7"],
        &["classify", "issue-7", "--json"],
        &["log"],
        &["report"],
        &["verify", "issue-7"],
        &["doctor"],
    ];
    for args in reads {
        assert_eq!(
            spies_of(&env, &repo, &log, args),
            Vec::<String>::new(),
            "{args:?} ran a command of the repository's config"
        );
    }
    // The worker is clean by content: nothing counted dirty for the touched file.
    let out = env.ok(&repo, &["status", "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["workers"][0]["dirty"]["unstaged"], 0, "{out}");
    // Writing commands: the filter may run (a WIP commit needs git's own `add`), never with
    // a token; no monitor, ssh, pager or external diff ever.
    std::fs::write(&a, "changed\n").unwrap();
    std::fs::write(wt.join("b.txt"), "new\n").unwrap();
    let writes: &[&[&str]] = &[
        &["record", "spawn", "issue-7", "--session-id", "s-7"],
        &["record", "exit", "issue-7", "--rc", "1"],
        &["recover", "--all"],
        &["resume", "issue-7", "--dry-run"],
        &["sync"],
    ];
    for args in writes {
        let ran = spies_of(&env, &wt, &log, args);
        assert!(
            ran.iter().all(|s| s == "clean" || s == "smudge"),
            "{args:?} ran {ran:?}"
        );
        if args[0] == "recover" {
            assert_eq!(ran, ["clean"], "the WIP commit cleans through the filter");
        }
    }
}

#[test]
fn a_hooks_dry_call_and_the_agents_version_probe_see_no_token() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let log = env.root().join("children.log");
    // A user's post-commit hook whose line runs a git-recode (a spy answering as a dry call
    // expects): `hook status` and `doctor` start it.
    let hook_bin = env.root().join("hookbin");
    std::fs::create_dir_all(&hook_bin).unwrap();
    let recode = spy(
        &hook_bin,
        &log,
        "git-recode",
        "echo 'git-recode: the post-commit hook runs (spy)'",
    );
    let hook = repo.join(".git/hooks/post-commit");
    std::fs::write(
        &hook,
        format!("#!/bin/sh\n{} hook post-commit\n", recode.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    // `recode.agent` names a template whose program is a spy on PATH: `doctor` asks it
    // for `--version`.
    let agent_bin = env.root().join("agentbin");
    std::fs::create_dir_all(&agent_bin).unwrap();
    spy(&agent_bin, &log, "spyagent", "echo 'spyagent 1.0'");
    env.git(&repo, &["config", "recode.agent", "spyagent -p {prompt}"]);
    let mut path = vec![agent_bin];
    path.extend(std::env::split_paths(
        &env.cmd(&repo)
            .get_envs()
            .find(|(k, _)| *k == "PATH")
            .unwrap()
            .1
            .unwrap(),
    ));
    let path = std::env::join_paths(path).unwrap();
    for (args, children) in [
        (&["hook", "status"][..], &["git-recode "][..]),
        (&["doctor"][..], &["git-recode ", "spyagent "][..]),
    ] {
        std::fs::write(&log, "").unwrap();
        let mut cmd = env.cmd(&repo);
        cmd.env("PATH", &path);
        for (k, v) in TOKENS {
            cmd.env(k, v);
        }
        let out = cmd.args(args).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{args:?}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = std::fs::read_to_string(&log).unwrap();
        let mut ran: Vec<&str> = text.lines().collect();
        ran.sort_unstable();
        assert_eq!(
            ran, children,
            "{args:?}: the children and the tokens they saw:\n{text}\n{stdout}"
        );
    }
}

/// Over an ssh remote the repository's `core.sshCommand` runs (the push and the fetch go
/// through it, batch mode added), and it never sees a forge token: the push needs none
/// (ssh authenticates it), and git-recode gives no child one.
#[test]
fn the_repositorys_ssh_command_carries_sync_and_the_wip_push_and_sees_no_token() {
    let env = TestEnv::new();
    let (repo, origin) = env.repo_with_origin();
    let bin = env.root().join("spies");
    std::fs::create_dir_all(&bin).unwrap();
    let log = env.root().join("spies.log");
    // An ssh that serves the remote locally: it runs the command git hands it (its last
    // argument), after logging the tokens it sees and its arguments but the last.
    let ssh = spy(
        &bin,
        &log,
        "ssh",
        "for last; do :; done\nexec sh -c \"$last\"",
    );
    env.git(&repo, &["config", "core.sshCommand", ssh.to_str().unwrap()]);
    env.git(
        &repo,
        &[
            "remote",
            "set-url",
            "origin",
            &format!("ssh://git.example.invalid{}", origin.display()),
        ],
    );
    let wt = env.add_worktree(&repo, "issue-7", "wt7");
    std::fs::write(wt.join("a.txt"), "the agent's work\n").unwrap();
    env.record(&wt, &["spawn", "issue-7", "--session-id", "s-7"]);
    env.record(&wt, &["exit", "issue-7", "--rc", "1"]);
    for args in [&["recover", "--all"][..], &["sync"][..]] {
        let ran = spies_of(&env, &repo, &log, args);
        assert_eq!(ran, ["ssh"], "{args:?}: the ssh command carried it");
    }
    // The WIP commit reached the remote through it, and so did the ledger.
    let wip = env.git(&wt, &["rev-parse", "HEAD"]);
    assert_eq!(env.git(&origin, &["rev-parse", "refs/heads/issue-7"]), wip);
    assert_eq!(
        env.git(&origin, &["show", "issue-7:a.txt"]),
        "the agent's work"
    );
    let notes = env.git(
        &origin,
        &["for-each-ref", "--format=%(refname)", "refs/notes/"],
    );
    assert!(!notes.is_empty(), "the ledger was pushed");
}
