//! Input files in bounded memory (SPEC 1.2 "Untrusted input stays out": a message's last
//! 4 KiB as stored, read from the file's tail; peak memory under 100 MiB whatever the
//! input size). Peak RSS is measured by GNU time (`/usr/bin/time -f %M`, KiB), never
//! by the clock.

use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::TestEnv;

/// Peak memory allowed, in KiB (100 MiB).
const PEAK_KIB: u64 = 100 * 1024;

/// A repository with a worker branch `issue-3-big` and a recorded spawn.
fn worker(env: &TestEnv) -> PathBuf {
    let repo = env.repo("repo");
    env.git(&repo, &["branch", "issue-3-big"]);
    env.ok(&repo, &["record", "spawn", "issue-3-big"]);
    repo
}

/// A sparse file of `size` bytes ending with `tail` (the rest reads as NUL bytes).
fn sparse(path: &Path, size: u64, tail: &[u8]) {
    let mut f = std::fs::File::create(path).unwrap();
    f.set_len(size).unwrap();
    f.seek(SeekFrom::Start(size - tail.len() as u64)).unwrap();
    f.write_all(tail).unwrap();
}

/// Run `git-recode <args>` under GNU time with `stdin`: (exit code, stderr, peak KiB).
fn measured(env: &TestEnv, dir: &Path, args: &[&str], stdin: Stdio) -> (i32, String, u64) {
    let report = env.root().join("time.txt");
    let mut time = Command::new("/usr/bin/time");
    let inner = env.cmd(dir);
    for (k, v) in inner.get_envs() {
        match v {
            Some(v) => time.env(k, v),
            None => time.env_remove(k),
        };
    }
    let out = time
        .current_dir(dir)
        .args(["-f", "%M", "-o"])
        .arg(&report)
        .arg(inner.get_program())
        .args(args)
        .stdin(stdin)
        .output()
        .unwrap();
    let kib = std::fs::read_to_string(&report)
        .unwrap()
        .lines()
        .last()
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        kib,
    )
}

/// The message of the newest exit of `issue-3-big`.
fn last_message(env: &TestEnv, repo: &Path) -> String {
    let log = env.ok(repo, &["log", "issue-3-big", "--json"]);
    let last: serde_json::Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    assert_eq!(last["kind"], "exit");
    last["message"].as_str().unwrap().to_string()
}

#[test]
fn a_300_mb_message_file_is_read_from_its_tail() {
    let env = TestEnv::new();
    let repo = worker(&env);
    let big = env.root().join("message.txt");
    sparse(
        &big,
        300 << 20,
        "…the end: rate limit, retry later.\n\n".as_bytes(),
    );
    let (code, stderr, kib) = measured(
        &env,
        &repo,
        &[
            "record",
            "exit",
            "issue-3-big",
            "--rc",
            "1",
            "--message-file",
            big.to_str().unwrap(),
        ],
        Stdio::null(),
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(kib < PEAK_KIB, "peak RSS {kib} KiB for a 300 MB message");
    let m = last_message(&env, &repo);
    assert_eq!(m.len(), 4096);
    assert!(m.ends_with("…the end: rate limit, retry later."), "{m:?}");
    assert!(m.starts_with('\0'));
}

#[test]
fn a_300_mb_message_on_stdin_is_kept_in_one_buffer() {
    let env = TestEnv::new();
    let repo = worker(&env);
    let big = env.root().join("message.txt");
    sparse(&big, 300 << 20, b"done\n");
    let (code, stderr, kib) = measured(
        &env,
        &repo,
        &[
            "record",
            "exit",
            "issue-3-big",
            "--rc",
            "0",
            "--message-file",
            "-",
        ],
        Stdio::from(std::fs::File::open(&big).unwrap()),
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        kib < PEAK_KIB,
        "peak RSS {kib} KiB for a 300 MB message on stdin"
    );
    let m = last_message(&env, &repo);
    assert_eq!(m.len(), 4096);
    assert!(m.ends_with("\0done"), "{m:?}");
}

#[test]
fn an_endless_message_stops_with_a_warning_in_bounded_memory() {
    let env = TestEnv::new();
    let repo = worker(&env);
    let (code, stderr, kib) = measured(
        &env,
        &repo,
        &[
            "record",
            "exit",
            "issue-3-big",
            "--rc",
            "1",
            "--message-file",
            "/dev/zero",
        ],
        Stdio::null(),
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stderr,
        "warning: /dev/zero: stopped reading after 1024 MiB; kept the last 4096 bytes read\n"
    );
    assert!(kib < PEAK_KIB, "peak RSS {kib} KiB for /dev/zero");
    assert_eq!(last_message(&env, &repo), "\0".repeat(4096));
}
