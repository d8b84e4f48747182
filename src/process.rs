//! This machine's processes: host name and pid start tokens (SPEC `spawn.pid_start`).
//!
//! A pid counts as the worker only while its current start token equals the recorded
//! one, so a recycled pid is never taken for a live worker.

/// This machine's host name (`/proc/sys/kernel/hostname`, else `$HOSTNAME`, else `localhost`).
pub fn hostname() -> String {
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
pub fn start_token(pid: u32) -> Option<String> {
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
pub fn is_alive(host: &str, pid: u32, token: Option<&str>, this_host: &str) -> Option<bool> {
    if host != this_host {
        return None;
    }
    let token = token?;
    Some(start_token(pid).as_deref() == Some(token))
}

#[cfg(test)]
mod tests {
    use super::*;

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
