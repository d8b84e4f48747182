//! Colour: `--color always|never|auto` is clap's `ColorChoice`; `auto` follows
//! the terminal (a real pseudo-terminal here), `NO_COLOR`, `CLICOLOR`, `CLICOLOR_FORCE`,
//! `TERM=dumb` and git's `color.ui`; the painted bytes are anstyle's, exactly.

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::common::TestEnv;

/// `status` of the one worker below, plain.
const PLAIN: &str = "\
TASK  BRANCH          LIVENESS  STATE     ACTION  TRIES  AHEAD  PR  WORKTREE
7     issue-7-colour  unknown   orphaned  resume  0/3    +1 -0  -   -
    no worktree and no ledger; 1 commit ahead: resume, never delete (idle 2d)
";

/// The same, painted: a bold header, the state magenta, the action bold, the reason dim.
const PAINTED: &str = "\
\x1b[1mTASK  BRANCH          LIVENESS  STATE     ACTION  TRIES  AHEAD  PR  WORKTREE\x1b[0m
7     issue-7-colour  unknown   \x1b[35morphaned\x1b[0m  \x1b[1mresume\x1b[0m  0/3    +1 -0  -   -
    \x1b[2mno worktree and no ledger; 1 commit ahead: resume, never delete (idle 2d)\x1b[0m
";

/// A repository with one worker branch, one commit ahead, no worktree and no ledger.
fn one_worker(env: &TestEnv) -> PathBuf {
    let repo = env.repo("r");
    env.git(&repo, &["checkout", "-q", "-b", "issue-7-colour"]);
    std::fs::write(repo.join("f"), "x\n").unwrap();
    env.git(&repo, &["add", "f"]);
    env.git(&repo, &["commit", "-q", "-m", "work"]);
    env.git(&repo, &["checkout", "-q", "main"]);
    repo
}

/// `status` with `args` and `envs`, stdout a pipe.
fn piped(env: &TestEnv, repo: &Path, args: &[&str], envs: &[(&str, &str)]) -> String {
    let out = env
        .cmd(repo)
        .arg("status")
        .args(args)
        .envs(envs.iter().copied())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Written to the terminal by the test once `status` has exited: the master has read
/// everything `status` wrote once it reads this (a terminal keeps its writers' order).
const END: &str = "@@recode-test-end@@";

/// `status` with `args` and `envs`, stdout a pseudo-terminal (`\r\n` read back as `\n`).
///
/// The test keeps its own end of the terminal open and writes [`END`] after `status` has
/// exited, then reads up to it: reading to EIO once the last writer closes can lose what
/// the kernel had not yet moved to the master (seen once in CI: the header alone).
fn on_terminal(env: &TestEnv, repo: &Path, args: &[&str], envs: &[(&str, &str)]) -> String {
    let (mut master, slave) = {
        let (mut m, mut s) = (0, 0);
        // SAFETY: openpty writes two new descriptors into m and s; we own both after.
        let rc = unsafe {
            libc::openpty(
                &mut m,
                &mut s,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: both descriptors are fresh and owned by nothing else.
        unsafe {
            (
                std::fs::File::from_raw_fd(m),
                std::fs::File::from(OwnedFd::from_raw_fd(s)),
            )
        }
    };
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        while !out.windows(END.len()).any(|w| w == END.as_bytes()) {
            match master.read(&mut buf) {
                Ok(0) => panic!("the terminal closed before the end mark"),
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) => panic!("reading the terminal: {e}"),
            }
        }
        out
    });
    let mut cmd = env.cmd(repo);
    cmd.arg("status")
        .args(args)
        .envs(envs.iter().copied())
        .stdout(Stdio::from(slave.try_clone().unwrap()))
        .stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    drop(cmd);
    let done = child.wait_with_output().unwrap();
    assert!(
        done.status.success(),
        "status on a terminal: {}: {}",
        done.status,
        String::from_utf8_lossy(&done.stderr)
    );
    (&slave).write_all(END.as_bytes()).unwrap();
    let out = String::from_utf8(reader.join().unwrap()).unwrap();
    out.split_once(END)
        .expect("the end mark")
        .0
        .replace("\r\n", "\n")
}

#[test]
fn color_always_never_and_auto_on_a_pipe_give_exact_bytes() {
    let env = TestEnv::new();
    let repo = one_worker(&env);
    assert_eq!(piped(&env, &repo, &[], &[]), PLAIN, "auto on a pipe");
    assert_eq!(piped(&env, &repo, &["--color", "auto"], &[]), PLAIN);
    assert_eq!(piped(&env, &repo, &["--color", "always"], &[]), PAINTED);
    assert_eq!(piped(&env, &repo, &["--color", "never"], &[]), PLAIN);
    // The flag wins over the environment, both ways.
    assert_eq!(
        piped(&env, &repo, &["--color", "always"], &[("NO_COLOR", "1")]),
        PAINTED
    );
    assert_eq!(
        piped(
            &env,
            &repo,
            &["--color", "never"],
            &[("CLICOLOR_FORCE", "1")]
        ),
        PLAIN
    );
    // CLICOLOR_FORCE colours a pipe; NO_COLOR wins over it; an empty NO_COLOR is unset.
    assert_eq!(piped(&env, &repo, &[], &[("CLICOLOR_FORCE", "1")]), PAINTED);
    assert_eq!(
        piped(
            &env,
            &repo,
            &[],
            &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]
        ),
        PLAIN
    );
    assert_eq!(
        piped(
            &env,
            &repo,
            &[],
            &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "")]
        ),
        PAINTED
    );
    // Machine output never has colour.
    assert_eq!(
        piped(&env, &repo, &["--porcelain", "--color", "always"], &[]),
        "7\tissue-7-colour\tunknown\torphaned\tresume\t0\n"
    );
}

#[test]
fn color_auto_on_a_terminal_follows_term_no_color_clicolor_and_color_ui() {
    let env = TestEnv::new();
    let repo = one_worker(&env);
    let xterm = ("TERM", "xterm-256color");
    assert_eq!(on_terminal(&env, &repo, &[], &[xterm]), PAINTED);
    assert_eq!(
        on_terminal(&env, &repo, &[], &[xterm, ("NO_COLOR", "1")]),
        PLAIN
    );
    assert_eq!(
        on_terminal(&env, &repo, &[], &[xterm, ("CLICOLOR", "0")]),
        PLAIN
    );
    // As git: a dumb or unset TERM is no colour terminal.
    assert_eq!(on_terminal(&env, &repo, &[], &[("TERM", "dumb")]), PLAIN);
    assert_eq!(on_terminal(&env, &repo, &[], &[]), PLAIN);
    assert_eq!(
        on_terminal(&env, &repo, &["--color", "never"], &[xterm]),
        PLAIN
    );
    // git's color.ui=false turns a terminal's colour off; NO_COLOR wins over color.ui=always.
    env.git(&repo, &["config", "color.ui", "false"]);
    assert_eq!(on_terminal(&env, &repo, &[], &[xterm]), PLAIN);
    env.git(&repo, &["config", "color.ui", "always"]);
    assert_eq!(piped(&env, &repo, &[], &[]), PAINTED, "color.ui=always");
    assert_eq!(
        on_terminal(&env, &repo, &[], &[xterm, ("NO_COLOR", "1")]),
        PLAIN
    );
}

#[test]
fn a_bad_color_value_is_a_usage_error() {
    let env = TestEnv::new();
    let repo = one_worker(&env);
    let out = env.output(&repo, &["status", "--color", "sometimes"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: invalid value 'sometimes' for '--color <when>'\n  [possible values: auto, always, never]\n\nFor more information, try '--help'.\n"
    );
}
