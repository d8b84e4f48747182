//! This machine's processes: host name and pid start tokens (SPEC `spawn.pid_start`).
//!
//! A pid counts as the worker only while its current start token equals the recorded
//! one, so a recycled pid is never taken for a live worker.

/// This machine's host name (`/proc/sys/kernel/hostname`, else `$HOSTNAME`, else `localhost`).
pub(crate) fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| "localhost".into())
}

/// The opaque start token of `pid`: on Linux field 22 of `/proc/<pid>/stat` (start time
/// in clock ticks since boot). `None` when the process does not exist (or on systems
/// without `/proc`).
pub(crate) fn start_token(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: split after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    // Field 3 is the state: a zombie (`Z`) or dead (`X`) process is no worker.
    if matches!(fields.next(), Some("Z" | "X" | "x")) {
        return None;
    }
    // Field 22 (the 19th after the state) is the start time.
    fields.nth(18).map(str::to_string)
}

/// Whether the process `pid` recorded with `token` on `host` is alive here and now.
///
/// `None` when it cannot be probed from this machine (another host, or no token):
/// one failed probe is not proof of death (SPEC "stalled").
pub(crate) fn is_alive(host: &str, pid: u32, token: Option<&str>, this_host: &str) -> Option<bool> {
    if host != this_host {
        return None;
    }
    let token = token?;
    Some(start_token(pid).as_deref() == Some(token))
}

/// How a bounded child process ended ([`run_bounded`]).
#[derive(Debug, Clone)]
pub(crate) struct Finished {
    /// Its exit status; `None` when it ran past its deadline and its process group was
    /// killed.
    pub status: Option<std::process::ExitStatus>,
    /// What it wrote on stdout (up to the kill, when killed).
    pub stdout: Vec<u8>,
    /// What it wrote on stderr (up to the kill, when killed).
    pub stderr: Vec<u8>,
}

impl Finished {
    /// Whether it exited 0 within its deadline.
    pub(crate) fn success(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }

    /// The last non-blank line of its stderr (SPEC "The loop settles": the reason of a
    /// step whose child was killed includes it), at most 300 bytes.
    pub(crate) fn last_stderr_line(&self) -> Option<String> {
        last_line(&self.stderr)
    }
}

/// The last non-blank line of `bytes`, lossily decoded, trimmed, at most 300 characters.
pub(crate) fn last_line(bytes: &[u8]) -> Option<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .map(|l| l.chars().take(300).collect())
}

/// Run `cmd` in a process group of its own, with stdout and stderr captured (stdin is
/// left as the caller set it), for at most `limit`. The caller removes the forge tokens
/// from its environment first (`git::unset_tokens` or `git::scrub`: this leaf imports no
/// git). Past it the whole group is killed
/// (SIGKILL): a signing program git started, a test server the gate started, die with it.
/// Output read up to that point is kept. Whatever the child does, this returns within
/// `limit` plus a fraction of a second: pipes held open by an escaped grandchild are not
/// waited for.
///
/// Errors: the child could not be started (`std::io::Error`).
pub(crate) fn run_bounded(
    cmd: &mut std::process::Command,
    limit: std::time::Duration,
) -> std::io::Result<Finished> {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    use std::sync::{Arc, Mutex};
    use wait_timeout::ChildExt;

    cmd.process_group(0)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn()?;
    let pid = child.id();
    // Drain both pipes on threads into shared buffers, so a chatty child never blocks on
    // a full pipe and a killed one's output so far is still there.
    let drain = |p: Option<Box<dyn Read + Send>>| {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let shared = Arc::clone(&buf);
        std::thread::spawn(move || {
            if let Some(mut p) = p {
                let mut chunk = [0u8; 8192];
                while let Ok(n) = p.read(&mut chunk) {
                    if n == 0 {
                        break;
                    }
                    if let Ok(mut b) = shared.lock() {
                        b.extend_from_slice(&chunk[..n]);
                    }
                }
            }
            let _ = tx.send(());
        });
        (buf, rx)
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let status = match child.wait_timeout(limit)? {
        Some(s) => Some(s),
        None => {
            kill_group(pid);
            let _ = child.kill();
            let _ = child.wait();
            None
        }
    };
    // A normal exit: the pipes close at once (unless a grandchild keeps them: then give
    // it a moment, never forever). A kill: the group is gone, the pipes close.
    let grace = std::time::Duration::from_millis(if status.is_some() { 2_000 } else { 300 });
    let take = |(buf, rx): (Arc<Mutex<Vec<u8>>>, std::sync::mpsc::Receiver<()>)| {
        let _ = rx.recv_timeout(grace);
        buf.lock().map(|b| b.clone()).unwrap_or_default()
    };
    Ok(Finished {
        status,
        stdout: take(out),
        stderr: take(err),
    })
}

/// How [`end_worker`] ended a hung worker's process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    /// Its process group was killed (the pid leads its own group).
    Group,
    /// The pid alone was killed: it shares its group with another process (the loop
    /// that started it, or this one), which must live.
    Pid,
    /// Its start token no longer matched when re-checked: nothing was signalled.
    Gone,
}

/// End the hung worker `pid` recorded with start token `token` (SPEC 1.3 "The loop as
/// people run it"): the token is re-checked first (a recycled pid is never signalled),
/// then SIGKILL goes to its process group when it leads one that is not this process's,
/// else to the pid alone; waits up to 2 s for it to be gone.
pub(crate) fn end_worker(pid: u32, token: &str) -> Ended {
    if start_token(pid).as_deref() != Some(token) {
        return Ended::Gone;
    }
    let Ok(p) = i32::try_from(pid) else {
        return Ended::Gone;
    };
    // SAFETY: getpgid(2)/getpgrp(2) read process attributes; no memory is touched.
    let (group, own) = unsafe { (libc::getpgid(p), libc::getpgrp()) };
    let ended = if group == p && group != own {
        kill_group(pid);
        Ended::Group
    } else {
        // SAFETY: kill(2) on one pid with a constant signal; no memory is touched.
        unsafe {
            libc::kill(p, libc::SIGKILL);
        }
        Ended::Pid
    };
    for _ in 0..200 {
        if start_token(pid).as_deref() != Some(token) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    ended
}

/// SIGKILL every process of the group `pgid` (a child started by [`run_bounded`] leads
/// its own group).
fn kill_group(pgid: u32) {
    if let Ok(pgid) = i32::try_from(pgid)
        && pgid > 0
    {
        // SAFETY: kill(2) with a negative pid signals a process group; no memory is touched.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hung_group_leader_dies_with_its_group_and_a_stale_token_is_never_signalled() {
        use std::os::unix::process::CommandExt;
        let tmp = tempfile::tempdir().unwrap();
        let pidfile = tmp.path().join("grandchild");
        let script = format!("sleep 30 & echo $! > '{}'; wait", pidfile.display());
        let mut child = std::process::Command::new("sh")
            .args(["-c", &script])
            .process_group(0)
            .spawn()
            .unwrap();
        while std::fs::read_to_string(&pidfile).map_or(true, |s| !s.ends_with('\n')) {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let gc: u32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let token = start_token(child.id()).unwrap();
        assert_eq!(end_worker(child.id(), "not-its-token"), Ended::Gone);
        assert!(
            child.try_wait().unwrap().is_none(),
            "a stale token signals nothing"
        );
        assert_eq!(end_worker(child.id(), &token), Ended::Group);
        let status = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGKILL));
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert_eq!(start_token(gc), None, "the grandchild died with the group");
    }

    #[test]
    fn a_child_past_its_deadline_is_killed_with_its_group() {
        let tmp = tempfile::tempdir().unwrap();
        let pidfile = tmp.path().join("grandchild");
        let script = format!(
            "echo starting >&2; sleep 30 & echo $! > '{}'; echo waiting for a touch >&2; wait",
            pidfile.display()
        );
        let start = std::time::Instant::now();
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", &script]);
        let f = run_bounded(&mut cmd, std::time::Duration::from_millis(500)).unwrap();
        assert!(start.elapsed() < std::time::Duration::from_secs(3));
        assert!(f.status.is_none());
        assert_eq!(f.last_stderr_line().as_deref(), Some("waiting for a touch"));
        let gc: u32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert_eq!(start_token(gc), None, "the grandchild died with the group");
    }

    #[test]
    fn a_quick_child_keeps_its_status_and_output() {
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", "echo out; echo err >&2; exit 3"]);
        let f = run_bounded(&mut cmd, std::time::Duration::from_secs(5)).unwrap();
        assert_eq!(f.status.and_then(|s| s.code()), Some(3));
        assert_eq!(f.stdout, b"out\n");
        assert_eq!(f.last_stderr_line().as_deref(), Some("err"));
        assert!(!f.success());
    }

    #[test]
    fn a_zombie_is_not_alive() {
        // A child that exits and is not waited for stays a zombie.
        let child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert_eq!(start_token(pid), None);
        drop(child);
    }

    #[test]
    fn own_process_is_alive_and_recycled_pid_is_not() {
        let me = std::process::id();
        let token = start_token(me).expect("linux /proc");
        let host = hostname();
        assert_eq!(is_alive(&host, me, Some(&token), &host), Some(true));
        assert_eq!(is_alive(&host, me, Some("1"), &host), Some(false));
        assert_eq!(is_alive("elsewhere", me, Some(&token), &host), None);
    }
}
