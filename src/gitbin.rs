//! The one wrapper around the `git` binary, for what gix cannot do (push, fetch) and for
//! a few reads. Arguments are passed as a list (never through a shell), stdin is null,
//! `LC_ALL=C`, and reads pass `--no-optional-locks` so they never take `index.lock`.

use std::path::Path;
use std::process::{Command, Stdio};

/// Errors running git.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// git could not be started.
    #[error("cannot run git (is it installed and on PATH?): {0}")]
    Spawn(#[source] std::io::Error),
    /// git exited non-zero.
    #[error("git {args} failed: {stderr}")]
    Failed {
        /// The arguments, joined for display.
        args: String,
        /// git's stderr, trimmed.
        stderr: String,
    },
}

/// Run `git <args>` in `dir` for a read (with `--no-optional-locks`); return stdout.
///
/// Errors: [`GitError`].
pub fn read(dir: &Path, args: &[&str]) -> Result<Vec<u8>, GitError> {
    let mut full = vec!["--no-optional-locks"];
    full.extend_from_slice(args);
    run(dir, &full)
}

/// Run `git <args>` in `dir`; return stdout.
///
/// Errors: [`GitError`].
pub fn run(dir: &Path, args: &[&str]) -> Result<Vec<u8>, GitError> {
    run_env(dir, args, &[])
}

/// Run `git <args>` in `dir` with extra environment; return stdout.
///
/// Errors: [`GitError`].
pub fn run_env(dir: &Path, args: &[&str], envs: &[(&str, &str)]) -> Result<Vec<u8>, GitError> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("LC_ALL", "C")
        .envs(envs.iter().copied())
        .stdin(Stdio::null())
        .output()
        .map_err(GitError::Spawn)?;
    if out.status.success() {
        Ok(out.stdout)
    } else {
        Err(GitError::Failed {
            args: args.join(" "),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        })
    }
}

/// Run `git <args>` in `dir`; return success, stdout and stderr, for callers that read
/// git's verdict from stdout (`push --porcelain`).
///
/// Errors: [`GitError::Spawn`].
pub fn run_capture(dir: &Path, args: &[&str]) -> Result<(bool, String, String), GitError> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .output()
        .map_err(GitError::Spawn)?;
    Ok((
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}
