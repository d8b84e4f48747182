//! The repository-wide recover lock: `<common git dir>/recode-recover.lock`, an advisory
//! `flock` held for the whole run, so two recovers never act on the same worker at once.
//! The file also names its holder (pid, host, start time) for the message a second
//! recover prints. The kernel releases the lock when its holder exits or is killed, so a
//! lock is never stale: no takeover is needed, and nothing is removed.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::{clock, process};

/// File name in the common git dir.
pub const LOCK_FILE: &str = "recode-recover.lock";

/// What the lock file says about its holder.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct Holder {
    /// Holder's pid.
    pub pid: u32,
    /// Its host.
    pub host: String,
    /// When it took the lock (RFC 3339).
    pub since: String,
}

/// Errors taking the lock.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another live recover holds it.
    #[error("another `git recode recover` ({holder}) holds {path}")]
    Held {
        /// Who, as far as the file says.
        holder: String,
        /// The lock file.
        path: String,
    },
    /// The lock file could not be opened or written.
    #[error("cannot use the lock {path}: {source}")]
    Io {
        /// The lock file.
        path: String,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
}

/// A held lock; released when dropped (or when the process dies).
#[derive(Debug)]
pub struct Lock {
    _file: File,
}

/// Take the lock in `common_dir`, without waiting.
///
/// Errors: [`LockError::Held`] when another process holds it, [`LockError::Io`].
pub fn acquire(common_dir: &Path, now: jiff::Timestamp) -> Result<Lock, LockError> {
    let path = common_dir.join(LOCK_FILE);
    let io = |source| LockError::Io {
        path: path.display().to_string(),
        source,
    };
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(io)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            let mut text = String::new();
            let _ = file.read_to_string(&mut text);
            let holder = serde_json::from_str::<Holder>(&text)
                .map(|h| format!("pid {} on {}, since {}", h.pid, h.host, h.since))
                .unwrap_or_else(|_| "a process that is starting".into());
            return Err(LockError::Held {
                holder,
                path: path.display().to_string(),
            });
        }
        Err(TryLockError::Error(e)) => return Err(io(e)),
    }
    let me = Holder {
        pid: std::process::id(),
        host: process::hostname(),
        since: clock::format(now),
    };
    file.set_len(0).map_err(io)?;
    file.rewind().map_err(io)?;
    file.write_all(serde_json::to_string(&me).unwrap_or_default().as_bytes())
        .map_err(io)?;
    Ok(Lock { _file: file })
}
