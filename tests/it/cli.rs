//! git-recode as a git subcommand: help (snapshotted), install through git's PATH
//! lookup, man page, completions, colour rules, broken pipes, the JSON contract.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::TestEnv;
use crate::contract::{ClassifyDoc, LogEvent, RecoverDoc, ResumeDoc, StatusDoc};

const SUBCOMMANDS: &[&[&str]] = &[
    &[],
    &["status"],
    &["classify"],
    &["record"],
    &["record", "spawn"],
    &["record", "exit"],
    &["record", "gate"],
    &["record", "unblock"],
    &["record", "clear"],
    &["recover"],
    &["resume"],
    &["verify"],
    &["log"],
    &["sync"],
    &["hook"],
    &["hook", "install"],
    &["hook", "uninstall"],
    &["hook", "status"],
    &["hook", "post-commit"],
    &["demo"],
    &["man"],
    &["completions"],
];

/// Every command's `--help`, snapshotted so that changes are reviewed.
/// `UPDATE_SNAPSHOTS=1 cargo test --test cli` rewrites the snapshot.
#[test]
fn help_snapshot() {
    let env = TestEnv::new();
    let mut all = String::new();
    for sub in SUBCOMMANDS {
        let mut args: Vec<&str> = sub.to_vec();
        args.push("--help");
        let out = env.output(&env.root(), &args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        all.push_str(&format!(
            "$ git recode {}\n{}\n",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout)
        ));
        // -h: a one-line imperative summary, no trailing period.
        args.pop();
        args.push("-h");
        let short = env.output(&env.root(), &args);
        let first = String::from_utf8_lossy(&short.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .to_string();
        assert!(
            !first.ends_with('.') && !first.is_empty(),
            "{args:?}: {first}"
        );
        assert!(
            first.chars().next().unwrap().is_uppercase(),
            "{args:?}: {first}"
        );
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/help.txt");
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, &all).unwrap();
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        expected == all,
        "help changed: review it, then rerun with UPDATE_SNAPSHOTS=1\n{all}"
    );
}

#[test]
fn installed_on_path_git_finds_the_subcommand() {
    let env = TestEnv::new();
    let prefix = env.root().join("prefix");
    std::fs::create_dir_all(prefix.join("bin")).unwrap();
    crate::common::install_binary(&prefix.join("bin/git-recode"));
    let path = format!(
        "{}:{}",
        prefix.join("bin").display(),
        std::env::var("PATH").unwrap()
    );
    let repo = env.repo("r");
    let out = Command::new("git")
        .args(["recode", "-h"])
        .current_dir(&repo)
        .env("PATH", &path)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", &env.home)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .starts_with("Recover the work of coding-agent workers")
    );
    let v = Command::new("git")
        .args(["recode", "--version"])
        .env("PATH", &path)
        .output()
        .unwrap();
    let v = String::from_utf8_lossy(&v.stdout).to_string();
    assert!(
        v.starts_with(&format!("git-recode {} (", env!("CARGO_PKG_VERSION"))),
        "{v}"
    );
    // The documented man step: `git recode man --install` puts the page beside the
    // binary's prefix, where `man` (and so `git help recode`) looks for PATH's bin dirs.
    let out = Command::new("git")
        .args(["recode", "man", "--install"])
        .env("PATH", &path)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "installed {}\n",
            prefix.join("share/man/man1/git-recode.1").display()
        )
    );
    let page = std::fs::read_to_string(prefix.join("share/man/man1/git-recode.1")).unwrap();
    assert!(page.contains(".TH git-recode 1"));
    if Path::new("/usr/bin/man").exists() {
        let out = Command::new("git")
            .args(["help", "recode"])
            .env("PATH", &path)
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "80")
            .env_remove("MANPATH")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("NAME") && text.contains("git-recode") && text.contains("Recover"),
            "{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn man_page_renders_every_command() {
    let env = TestEnv::new();
    let page = env.ok(&env.root(), &["man"]);
    assert!(page.contains(".TH git-recode 1"));
    for name in [
        "STATUS", "CLASSIFY", "RECORD", "RECOVER", "RESUME", "VERIFY", "LOG", "SYNC", "HOOK",
        "DEMO", "DOCTOR",
    ] {
        assert!(
            page.contains(&format!(".SH \"GIT RECODE {name}\"")),
            "{name}"
        );
    }
}

#[test]
fn completions_for_each_shell() {
    let env = TestEnv::new();
    let bash = env.ok(&env.root(), &["completions", "bash"]);
    assert!(bash.contains("_git_recode()"));
    assert!(
        env.ok(&env.root(), &["completions", "zsh"])
            .starts_with("#compdef git-recode")
    );
    assert!(
        env.ok(&env.root(), &["completions", "fish"])
            .contains("--command git-recode")
    );
    assert_eq!(
        env.output(&env.root(), &["completions", "tcsh"])
            .status
            .code(),
        Some(2)
    );
    // bash: git's completion calls _git_recode for `git recode <TAB>`.
    let script = env.root().join("c.bash");
    std::fs::write(&script, &bash).unwrap();
    // The script asks the binary: it must be on PATH.
    let exe = assert_cmd::cargo::cargo_bin("git-recode");
    let path = std::env::join_paths(std::iter::once(exe.parent().unwrap().to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let out = Command::new("bash")
        .env("PATH", path)
        .env_remove("COMPLETE")
        .arg("-c")
        .arg(format!(
            "source {}; COMP_WORDS=(git recode st); COMP_CWORD=2; COMP_LINE='git recode st'; COMP_POINT=${{#COMP_LINE}}; _git_recode; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display()
        ))
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "status \n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn has_escape(b: &[u8]) -> bool {
    b.contains(&0x1b)
}

#[test]
fn colour_only_where_asked_and_never_in_machine_output() {
    let env = TestEnv::new();
    let repo = env.demo();
    // Piped (not a terminal): no colour by default.
    assert!(!has_escape(&env.output(&repo, &["status"]).stdout));
    let always = env.output(&repo, &["status", "--color", "always"]).stdout;
    assert!(has_escape(&always), "--color always colours");
    assert!(!has_escape(
        &env.output(&repo, &["status", "--color", "never"]).stdout
    ));
    for args in [["status", "--json"], ["status", "--porcelain"]] {
        let mut a = args.to_vec();
        a.extend(["--color", "always"]);
        assert!(!has_escape(&env.output(&repo, &a).stdout), "{a:?}");
    }
    assert!(!has_escape(
        &env.output(&repo, &["log", "--json", "--color", "always"])
            .stdout
    ));
    assert!(!has_escape(
        &env.output(
            &repo,
            &["classify", "issue-2-dirty", "--json", "--color", "always"]
        )
        .stdout
    ));
    // NO_COLOR and color.ui=false win over a terminal (auto).
    let no = env
        .cmd(&repo)
        .env("NO_COLOR", "1")
        .args(["status"])
        .output()
        .unwrap();
    assert!(!has_escape(&no.stdout));
    env.git(&repo, &["config", "color.ui", "always"]);
    assert!(
        has_escape(&env.output(&repo, &["status"]).stdout),
        "color.ui=always colours a pipe, as in git"
    );
    let no = env
        .cmd(&repo)
        .env("NO_COLOR", "1")
        .args(["status"])
        .output()
        .unwrap();
    assert!(!has_escape(&no.stdout), "NO_COLOR wins over color.ui");
    assert!(!has_escape(
        &env.output(&repo, &["status", "--porcelain"]).stdout
    ));
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    let env = TestEnv::new();
    let repo = env.demo();
    let mut child = env
        .cmd(&repo)
        .args(["log"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 10];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout); // like `| head -1` exiting
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    // And through a real shell pipeline.
    let bin = assert_cmd::cargo::cargo_bin("git-recode");
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "set -o pipefail; '{}' log | head -1 >/dev/null; echo \"${{PIPESTATUS[0]}}\"",
            bin.display()
        ))
        .current_dir(&repo)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "0\n");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// Fields each event kind may carry besides the common ones (SPEC table of kinds).
fn kind_fields(kind: &str) -> &'static [&'static str] {
    match kind {
        "spawn" => &[
            "attempt",
            "cwd",
            "host",
            "session_id",
            "agent",
            "pid",
            "pid_start",
            // The writer's hostname beside its id (SPEC 1.3; docs/hosts.md "Identity").
            "label",
        ],
        "exit" => &[
            "rc",
            "outcome",
            "message",
            "retry_after",
            "fresh",
            "blocker",
            "session_id",
            // The attempt it ends (SPEC 1.3; docs/hosts.md "Which attempt an exit ends").
            "ends",
        ],
        "milestone" => &["phase", "session_id"],
        "gate" => &["passed", "command", "by"],
        "classified" => &["state", "action", "reason"],
        "wip" => &["files", "pushed", "held"],
        "published" => &["pr", "url"],
        "unblocked" => &[],
        "cleared" => &["reason"],
        "deleted" => &["worktree", "ignored"],
        "phantom" => &["reason"],
        "resume" => &["attempt", "session_id", "prompt_sha", "host", "label"],
        "takeover" => &["from_host", "host"],
        "escalated" => &["reason"],
        other => panic!("unknown kind {other}"),
    }
}

#[test]
fn json_contract() {
    let env = TestEnv::new();
    let repo = env.demo_at(crate::common::LATER_EPOCH);
    let later = |args: &[&str]| {
        let out = env
            .cmd(&repo)
            .env("RECODE_NOW", crate::common::LATER)
            .args(args)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let st: StatusDoc = serde_json::from_str(&later(&["status", "--json"])).unwrap();
    assert_eq!(st.schema, 1);
    assert_eq!(st.workers.len(), 9);
    let c: ClassifyDoc =
        serde_json::from_str(&later(&["classify", "issue-5-rebase", "--json"])).unwrap();
    assert_eq!((c.schema, c.operation.as_deref()), (1, Some("rebase")));
    let r: ResumeDoc = serde_json::from_str(&later(&[
        "resume",
        "issue-3-committed",
        "--json",
        "--dry-run",
    ]))
    .unwrap();
    assert_eq!((r.schema, r.mode.as_str(), r.attempt), (1, "session", 2));
    let rec: RecoverDoc = serde_json::from_str(&later(&["recover", "--all", "--json"])).unwrap();
    assert_eq!((rec.schema, rec.results.len()), (1, 9));
    let log = later(&["log", "--json"]);
    let mut kinds = std::collections::BTreeSet::new();
    let mut last = (String::new(), String::new(), 0u64);
    for line in log.lines() {
        let e: LogEvent = serde_json::from_str(line).unwrap();
        assert_eq!(e.v, 1);
        for k in e.rest.keys() {
            assert!(
                kind_fields(&e.kind).contains(&k.as_str()),
                "{} carries {k}",
                e.kind
            );
        }
        let key = (e.ts.clone(), e.task.clone(), e.seq);
        assert!(key.0 >= last.0, "ordered by ts");
        last = key;
        kinds.insert(e.kind);
    }
    assert!(kinds.len() >= 8, "{kinds:?}");
}

#[test]
fn git_dash_c_reaches_the_subcommand() {
    let env = TestEnv::new();
    let repo = env.demo();
    let prefix = env.root().join("bin");
    std::fs::create_dir_all(&prefix).unwrap();
    crate::common::install_binary(&prefix.join("git-recode"));
    let path = format!("{}:{}", prefix.display(), std::env::var("PATH").unwrap());
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(&repo)
            .env("PATH", &path)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("RECODE_NOW", crate::common::NOW)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    assert!(has_escape(
        git(&["-c", "color.ui=always", "recode", "status"]).as_bytes()
    ));
    let json = git(&["-c", "recode.maxAttempts=9", "recode", "status", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["workers"][0]["max_attempts"], 9);
}
