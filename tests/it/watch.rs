//! The file watcher (issue 38): a worktree read through Watchman (the last tick's answer
//! and the names changed since) equals the whole reading at every tick, whatever changed
//! between ticks (files changed, created, deleted, renamed, staged, committed, ignored) and
//! whatever happened to the server (shut down and restarted, killed, the watch deleted).
//!
//! Each test runs its own Watchman server (its own socket, state and log files under the
//! test's temp dir), never the machine's. Skipped, saying so, where `watchman` is not
//! installed (`.ci/run` installs it). `RECODE_WATCH_SEEDS` (default 2), `RECODE_WATCH_SEED`
//! (first seed, default 1) and `RECODE_WATCH_TICKS` (default 30) make a longer run.

use std::path::{Path, PathBuf};
use std::process::Command;

use git_recode::app::parts::watch::reading;

use crate::common::{TestEnv, each_seed, env_u64};

/// One Watchman server of a test's own.
struct Server {
    dir: PathBuf,
    sock: PathBuf,
}

impl Server {
    /// Start a server whose files are all under `dir`.
    fn start(dir: &Path) -> Server {
        std::fs::create_dir_all(dir).unwrap();
        let s = Server {
            dir: dir.to_path_buf(),
            sock: dir.join("sock"),
        };
        s.restart();
        s
    }

    /// Start the server again (it daemonizes; `get-sockname` waits until it listens).
    fn restart(&self) {
        let out = Command::new("watchman")
            .arg(format!("--sockname={}", self.sock.display()))
            .arg(format!("--statefile={}", self.dir.join("state").display()))
            .arg(format!("--logfile={}", self.dir.join("log").display()))
            .arg(format!("--pidfile={}", self.dir.join("pid").display()))
            .arg("get-sockname")
            .output()
            .unwrap();
        let log = std::fs::read_to_string(self.dir.join("log")).unwrap_or_default();
        assert!(
            out.status.success(),
            "watchman did not start: {out:?}\nits log:\n{log}"
        );
    }

    /// One command to the running server (never starting one).
    fn call(&self, args: &[&str]) -> std::process::Output {
        Command::new("watchman")
            .arg(format!("--sockname={}", self.sock.display()))
            .args(["--no-spawn", "--no-local"])
            .args(args)
            .output()
            .unwrap()
    }

    /// Its pid, from its pid file.
    fn pid(&self) -> Option<i32> {
        std::fs::read_to_string(self.dir.join("pid"))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    /// SIGKILL the server this test started (by its own pid file), and wait for it to go.
    fn kill(&self) {
        let Some(pid) = self.pid() else { return };
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        self.wait_gone(pid);
    }

    /// Ask the server to shut down, and wait for it to go.
    fn shutdown(&self) {
        let pid = self.pid();
        let _ = self.call(&["shutdown-server"]);
        if let Some(pid) = pid {
            self.wait_gone(pid);
        }
    }

    /// Wait (up to 10 s) until the process `pid` has ended: gone, or a zombie with no
    /// thread left (its leader turns zombie while its other threads still hold its pid
    /// file), then remove its socket.
    fn wait_gone(&self, pid: i32) {
        for _ in 0..500 {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
            let field = |name: &str| {
                status
                    .lines()
                    .find_map(|l| l.strip_prefix(name))
                    .map(|v| v.trim().to_string())
            };
            let zombie = field("State:").is_some_and(|s| s.starts_with('Z'));
            let threads = field("Threads:").and_then(|t| t.parse::<u32>().ok());
            if status.is_empty() || (zombie && threads.is_none_or(|t| t <= 1)) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = std::fs::remove_file(&self.sock);
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn has_watchman() -> bool {
    Command::new("watchman")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Every file under `dir` (not `.git`), relative, sorted.
fn files(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if e.file_name() == ".git" {
                continue;
            }
            let rel = p.strip_prefix(base).unwrap().to_str().unwrap().to_string();
            if e.file_type().unwrap().is_dir() {
                walk(base, &p, out);
            } else {
                out.push(rel);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// A worktree of `repo` with files in nested directories, ignored files and an ignored
/// directory; returns it and its admin directory.
fn worktree(env: &TestEnv, repo: &Path) -> (PathBuf, PathBuf) {
    for d in ["a/b", "c", "d/e/f"] {
        std::fs::create_dir_all(repo.join(d)).unwrap();
    }
    for (i, f) in ["a/1.txt", "a/b/2.txt", "c/3.txt", "d/e/f/4.txt", "top.txt"]
        .iter()
        .enumerate()
    {
        std::fs::write(repo.join(f), format!("file {i}\n")).unwrap();
    }
    std::fs::write(repo.join(".gitignore"), "*.log\ntarget/\n").unwrap();
    env.git(repo, &["add", "-A"]);
    env.git(repo, &["commit", "-q", "-m", "files"]);
    let wt = env.add_worktree(repo, "feat/issue-1-watch", "wt");
    let admin = PathBuf::from(env.git(&wt, &["rev-parse", "--absolute-git-dir"]).trim());
    (wt, admin)
}

/// One random change to the worktree `wt`.
fn change(env: &TestEnv, wt: &Path, rng: &mut fastrand::Rng, n: &mut u32) {
    *n += 1;
    let all = files(wt);
    let pick = |rng: &mut fastrand::Rng| match all.len() {
        0 => "top.txt".to_string(),
        len => all[rng.usize(..len)].clone(),
    };
    // Written with its directories (a change may have removed them).
    let put = |f: &str, bytes: &[u8]| {
        let p = wt.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    };
    let dirs = ["", "a/", "a/b/", "c/", "d/e/", "d/e/f/"];
    let dir = dirs[rng.usize(..dirs.len())];
    match rng.u8(..14) {
        0 | 1 => {
            let f = pick(rng);
            let mut text = std::fs::read(wt.join(&f)).unwrap_or_default();
            text.extend_from_slice(format!("more {n}\n").as_bytes());
            put(&f, &text);
        }
        2 => put(&format!("{dir}new{n}.txt"), b"new\n"),
        3 => put(&format!("target/debug/out{n}"), b"bin"),
        4 => put(&format!("{dir}run{n}.log"), b"log\n"),
        5 | 6 => {
            let _ = std::fs::remove_file(wt.join(pick(rng)));
        }
        7 => {
            let to = wt.join(format!("{dir}moved{n}.txt"));
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            let _ = std::fs::rename(wt.join(pick(rng)), to);
        }
        8 => {
            put(&format!("{dir}fresh{n}/inner.txt"), b"x\n");
        }
        9 => {
            let _ = env.git_cmd(wt).args(["add", "--", &pick(rng)]).output();
        }
        10 => {
            let _ = env.git_cmd(wt).args(["commit", "-qam", "tick"]).output();
        }
        11 => {
            use std::os::unix::fs::PermissionsExt;
            let f = wt.join(pick(rng));
            let _ = std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755));
        }
        12 => {
            // Same size, new bytes, within the index's second: only content tells.
            let f = pick(rng);
            if let Ok(text) = std::fs::read(wt.join(&f)) {
                let flipped: Vec<u8> = text.iter().map(|b| b ^ 1).collect();
                put(&f, &flipped);
            }
        }
        _ => {
            let gone = ["target", "a/b", &format!("{dir}fresh{}", *n - 1)];
            let _ = std::fs::remove_dir_all(wt.join(gone[rng.usize(..gone.len())]));
        }
    }
}

/// What happened to the server before a tick.
fn upset(server: &Server, wt: &Path, rng: &mut fastrand::Rng, dead: &mut bool) -> &'static str {
    if *dead {
        server.restart();
        *dead = false;
        return "restarted after a kill";
    }
    match rng.u8(..20) {
        0 => {
            server.shutdown();
            server.restart();
            "shut down and restarted"
        }
        1 => {
            server.kill();
            *dead = true;
            "killed"
        }
        2 => {
            let _ = server.call(&["watch-del", wt.to_str().unwrap()]);
            "watch deleted"
        }
        _ => "",
    }
}

/// One seed: `ticks` ticks of random changes and server upsets; the watched reading equals
/// the whole one every tick. Returns how many ticks were idle and how many a delta.
fn run_seed(seed: u64, ticks: u64) -> (u32, u32) {
    let env = TestEnv::new();
    let repo = env.repo("repo");
    let (wt, admin) = worktree(&env, &repo);
    let server = Server::start(&env.root().join("wm"));
    let mut rng = fastrand::Rng::with_seed(seed);
    let (mut n, mut dead, mut idle, mut delta) = (0, false, 0, 0);
    let mut story = Vec::new();
    for tick in 0..ticks {
        let what = upset(&server, &wt, &mut rng, &mut dead);
        let changes = [0, 0, 1, 1, 2, 3][rng.usize(..6)];
        for _ in 0..changes {
            change(&env, &wt, &mut rng, &mut n);
        }
        story.push(format!("tick {tick}: {changes} changes {what}"));
        let whole = reading(&wt, &admin, None).unwrap().0;
        let (watched, via) = reading(&wt, &admin, Some(&server.sock)).unwrap();
        assert_eq!(
            watched,
            whole,
            "seed {seed}, read {via}; story:\n{}",
            story.join("\n")
        );
        if dead {
            assert_eq!(
                via, "whole",
                "seed {seed} tick {tick}: no server, a whole reading"
            );
        }
        idle += u32::from(via == "idle");
        delta += u32::from(via == "delta");
    }
    (idle, delta)
}

#[test]
fn watched_reading_equals_the_whole_reading_every_tick() {
    if !has_watchman() {
        eprintln!("skipped: watchman is not installed");
        return;
    }
    let first = env_u64("RECODE_WATCH_SEED", 1);
    let seeds = env_u64("RECODE_WATCH_SEEDS", 2);
    let ticks = env_u64("RECODE_WATCH_TICKS", 30);
    let runs = each_seed(first, seeds, 2, |seed| run_seed(seed, ticks));
    let (idle, delta) = runs
        .iter()
        .fold((0, 0), |(i, d), (i2, d2)| (i + i2, d + d2));
    eprintln!("{seeds} seeds × {ticks} ticks: {idle} idle, {delta} delta readings");
    // The watcher is used, not only survived: some ticks read nothing, some only a delta.
    assert!(idle > 0 && delta > 0, "idle {idle}, delta {delta}");
}

/// `status` asks the watcher and stores its answer beside the worktree's admin
/// directory; `recode.watcher=off` reads whole and stores nothing; both count alike.
#[test]
fn status_uses_the_watcher_unless_it_is_off() {
    if !has_watchman() {
        eprintln!("skipped: watchman is not installed");
        return;
    }
    let env = TestEnv::new();
    let repo = env.repo("repo");
    let (wt, admin) = worktree(&env, &repo);
    let server = Server::start(&env.root().join("wm"));
    std::fs::write(wt.join("a/new.txt"), "x\n").unwrap();
    std::fs::write(wt.join("c/3.txt"), "changed\n").unwrap();
    let stored = admin.join("recode").join("watch.json");
    let dirty = |args: &[&str]| {
        let out = env
            .git_cmd(&repo)
            .env("WATCHMAN_SOCK", &server.sock)
            .args(args)
            .args(["recode", "status", "--offline", "--deep", "--json"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["workers"][0]["dirty"].to_string()
    };
    let off = dirty(&["-c", "recode.watcher=off"]);
    assert!(!stored.exists(), "off stores nothing");
    assert_eq!(
        off,
        r#"{"conflicted":0,"staged":0,"unstaged":1,"untracked":1}"#
    );
    assert_eq!(dirty(&[]), off, "the first watched tick reads whole");
    assert!(stored.exists(), "a watched reading is stored");
    assert_eq!(dirty(&[]), off, "an idle tick");
    std::fs::remove_file(wt.join("a/new.txt")).unwrap();
    assert_eq!(
        dirty(&[]),
        r#"{"conflicted":0,"staged":0,"unstaged":1,"untracked":0}"#,
        "a delta"
    );
}

/// A value of `recode.watcher` that is none of its words is refused, naming them.
#[test]
fn an_unknown_watcher_is_refused() {
    let env = TestEnv::new();
    let repo = env.repo("repo");
    let out = env
        .git_cmd(&repo)
        .args([
            "-c",
            "recode.watcher=inotify",
            "recode",
            "status",
            "--offline",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("recode.watcher") && err.contains("auto, watchman, off"),
        "{err}"
    );
}

/// A submodule's commit moves in its own git dir, where no watch on the worktree sees it:
/// a worktree whose index holds a submodule is read whole every tick, so a commit made in
/// the submodule between two ticks shows.
#[test]
fn a_worktree_with_a_submodule_is_read_whole() {
    if !has_watchman() {
        eprintln!("skipped: watchman is not installed");
        return;
    }
    let env = TestEnv::new();
    let lib = env.repo("lib");
    let repo = env.repo("repo");
    env.git(
        &repo,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            lib.to_str().unwrap(),
            "sub",
        ],
    );
    env.git(&repo, &["commit", "-q", "-m", "sub"]);
    let admin = repo.join(".git");
    let server = Server::start(&env.root().join("wm"));
    let first = reading(&repo, &admin, Some(&server.sock)).unwrap();
    assert_eq!(first, ("any_ignored false\n".to_string(), "whole"));
    assert!(!admin.join("recode/watch.json").exists(), "nothing stored");
    env.git(
        &repo.join("sub"),
        &["commit", "-q", "--allow-empty", "-m", "moved"],
    );
    let (watched, via) = reading(&repo, &admin, Some(&server.sock)).unwrap();
    assert_eq!(via, "whole");
    assert_eq!(watched, "unstaged sub\nany_ignored false\n");
    assert_eq!(watched, reading(&repo, &admin, None).unwrap().0);
}
