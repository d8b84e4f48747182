//! The repository-wide recover lock: `<common git dir>/recode-recover.lock`, holding the
//! pid, host and start time of its holder, so two recovers never act on the same worker
//! at once. A stale lock (its holder is gone from this host, or it is older than
//! [`STALE_AFTER_SECS`]) is taken over.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{clock, process};

/// A lock older than this (seconds) is taken over whoever holds it.
pub const STALE_AFTER_SECS: i64 = 3600;
/// File name in the common git dir.
pub const LOCK_FILE: &str = "recode-recover.lock";

/// What the lock file holds.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct Holder {
    /// Holder's pid.
    pub pid: u32,
    /// Its start token (see [`process::start_token`]).
    pub pid_start: Option<String>,
    /// Its host.
    pub host: String,
    /// When it took the lock (RFC 3339).
    pub since: String,
}

/// Errors taking the lock.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another live recover holds it.
    #[error("another `git recode recover` (pid {pid} on {host}, since {since}) holds {path}")]
    Held {
        /// Holder pid.
        pid: u32,
        /// Holder host.
        host: String,
        /// Since when.
        since: String,
        /// The lock file.
        path: String,
    },
    /// The lock file could not be written.
    #[error("cannot write the lock {path}: {source}")]
    Io {
        /// The lock file.
        path: String,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
}

/// A held lock; released when dropped.
#[derive(Debug)]
pub struct Lock {
    path: PathBuf,
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Take the lock in `common_dir` at `now`.
///
/// Errors: [`LockError::Held`] when a live holder has it, [`LockError::Io`].
pub fn acquire(common_dir: &Path, now: jiff::Timestamp) -> Result<Lock, LockError> {
    let path = common_dir.join(LOCK_FILE);
    let me = Holder {
        pid: std::process::id(),
        pid_start: process::start_token(std::process::id()),
        host: process::hostname(),
        since: clock::format(now),
    };
    let io = |source| LockError::Io {
        path: path.display().to_string(),
        source,
    };
    for _ in 0..3 {
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut f) => {
                f.write_all(serde_json::to_string(&me).unwrap_or_default().as_bytes())
                    .map_err(io)?;
                return Ok(Lock { path });
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                let holder: Option<Holder> = serde_json::from_str(&text).ok();
                let stale = match &holder {
                    None => true, // unreadable: a holder killed while writing it
                    Some(h) => {
                        let gone =
                            process::is_alive(&h.host, h.pid, h.pid_start.as_deref(), &me.host)
                                == Some(false);
                        let old = clock::parse(&h.since)
                            .map(|t| now.as_second() - t.as_second() > STALE_AFTER_SECS)
                            .unwrap_or(true);
                        gone || old
                    }
                };
                if !stale {
                    let h = holder.expect("a readable holder is not stale by default");
                    return Err(LockError::Held {
                        pid: h.pid,
                        host: h.host,
                        since: h.since,
                        path: path.display().to_string(),
                    });
                }
                tracing::warn!(path = %path.display(), "taking over a stale recover lock");
                let _ = std::fs::remove_file(&path);
            }
            Err(e) => return Err(io(e)),
        }
    }
    Err(io(std::io::Error::other("the lock kept reappearing")))
}
