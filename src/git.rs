//! The git layer: every run of the `git` binary goes through [`Git`], which applies
//! SPEC safety rule 0 in one place, so no call site can forget it:
//! - the caller's repository-locating environment (`GIT_DIR`, `GIT_WORK_TREE`,
//!   `GIT_INDEX_FILE`, `GIT_OBJECT_DIRECTORY`, `GIT_COMMON_DIR` and the rest of
//!   `git rev-parse --local-env-vars`) is removed: a run acts on the directory it names;
//! - no automatic maintenance (`-c gc.auto=0 -c maintenance.auto=false`): `gc --auto`
//!   would prune worktrees whose directory is only temporarily missing;
//! - no prompts (`GIT_TERMINAL_PROMPT=0`, ssh in batch mode, `GCM_INTERACTIVE=never`,
//!   stdin is null) and a deadline: network steps `recode.networkTimeout` ([`Git::network`]),
//!   every other run `recode.commandTimeout`, which each caller passes in ([`Git::new`]:
//!   no run is without one); each run leads its own process
//!   group, killed whole past the deadline (SPEC "The loop settles");
//! - arguments are a list, never a shell; `LC_ALL=C` so messages can be read;
//! - no forge token in the environment (SPEC 1.2 "Untrusted input stays out": the
//!   repository's config names commands git runs — filters, `core.fsmonitor`,
//!   `core.sshCommand`, a pager, hooks, a `credential.helper` — and none of them may read
//!   the token; a push that needs a credential gets it from the user's credential helper's
//!   own store, never from our environment); no `core.fsmonitor` (a command of the
//!   repository's config, and a cache that may hide changes), no pager.
//!
//! git is used only for what gix cannot do (push, fetch, ls-remote, `worktree
//! remove`/`add`, the WIP `add`+`commit` so filters and modes are exactly git's) and a few
//! reads. The minimum version is [`MIN_VERSION`], checked once per process.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

/// The oldest git this tool runs: 2.31 added `rev-parse --path-format=absolute`, which
/// locates a linked worktree's own files.
pub(crate) const MIN_VERSION: (u32, u32) = (2, 31);

/// Variables that point git at a repository, index or object store other than the one a
/// run names (git's own `rev-parse --local-env-vars`, plus the kin that matter here). The
/// `-c` settings of a calling `git -c k=v recode` (`GIT_CONFIG_PARAMETERS`, `GIT_CONFIG_COUNT`)
/// are configuration, not location, and are kept.
pub(crate) const LOCATION_ENV: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_GRAFT_FILE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE",
    "GIT_PREFIX",
    "GIT_INTERNAL_SUPER_PREFIX",
    "GIT_SHALLOW_FILE",
    "GIT_QUARANTINE_PATH",
    "GIT_NAMESPACE",
    "GIT_CONFIG",
];

/// The settings every run for a worktree gets ([`Git::bound`]): no file-system monitor,
/// no untracked cache, so a stale one hides nothing from `status` or `add` (SPEC 1.3).
pub(crate) const UNCACHED: [&str; 4] = [
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.untrackedCache=false",
];

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
    /// A network step ran past `recode.networkTimeout` and was killed.
    #[error("git {args} did not finish within {secs} s ({key}): stopped{last_line}")]
    Timeout {
        /// The arguments, joined for display.
        args: String,
        /// The limit, in seconds.
        secs: u64,
        /// The config key that set it (`recode.networkTimeout`, `recode.commandTimeout`).
        key: &'static str,
        /// `": "` and the last line git (or a program it ran) wrote on stderr, or empty.
        last_line: String,
    },
    /// The installed git is older than [`MIN_VERSION`].
    #[error("git {found} is too old: git-recode needs git {}.{} or newer (for `rev-parse --path-format=absolute`)", MIN_VERSION.0, MIN_VERSION.1)]
    TooOld {
        /// What `git version` printed.
        found: String,
    },
}

impl GitError {
    /// What the user can do about it (shown under the error), when there is something.
    pub fn hint(&self) -> Option<String> {
        match self {
            GitError::TooOld { .. } => Some(
                "install a newer git (https://git-scm.com/downloads) and put it first on PATH"
                    .into(),
            ),
            _ => None,
        }
    }
}

/// What a run printed, for callers that read git's verdict even on failure
/// (`push --porcelain`).
#[derive(Debug, Clone)]
pub(crate) struct Captured {
    /// git exited 0.
    pub ok: bool,
    /// stdout, lossily decoded.
    pub stdout: String,
    /// stderr, lossily decoded.
    pub stderr: String,
}

/// One run of git, built up and then carried out with [`Git::output`] or
/// [`Git::capture`].
#[derive(Debug, Clone)]
pub(crate) struct Git {
    dir: PathBuf,
    args: Vec<OsString>,
    envs: Vec<(OsString, OsString)>,
    /// The run is killed past it.
    timeout: Duration,
    /// The config key a timeout is named by in the error.
    timeout_key: &'static str,
    /// The ssh command of a network step ([`Git::network`]); other runs get [`scrub`]'s.
    ssh: Option<crate::ssh::SshCommand>,
}

/// The longest a commit of an index already built may take, in seconds: writing the
/// tree and the commit takes milliseconds, so past this it is waiting on its signer
/// (`commit.gpgSign` with a key that wants a touch, a pinentry nobody sees). The WIP
/// commit's deadline is the smaller of this and `recode.commandTimeout` (SPEC 1.2 "The
/// loop settles": nothing hangs; the index is restored when it is killed).
pub(crate) const COMMIT_DEADLINE_SECS: u64 = 20;

impl Git {
    /// A run in `dir` (the worktree or git dir it acts on), killed with its process group
    /// past `timeout` (at least 1 s): `recode.commandTimeout`, the configuration's
    /// `command_timeout` (a network step sets its own, [`Git::network`]).
    pub(crate) fn new(dir: impl AsRef<Path>, timeout: Duration) -> Git {
        Git {
            dir: dir.as_ref().to_path_buf(),
            args: Vec::new(),
            envs: Vec::new(),
            timeout: timeout.max(Duration::from_secs(1)),
            timeout_key: "recode.commandTimeout",
            ssh: None,
        }
    }

    /// Mark this run as a commit of an index already built: killed after
    /// [`COMMIT_DEADLINE_SECS`] or its timeout (`recode.commandTimeout`), whichever is
    /// shorter.
    pub(crate) fn commit_step(mut self) -> Git {
        self.timeout = self.timeout.min(Duration::from_secs(COMMIT_DEADLINE_SECS));
        self.timeout_key = "recode.commandTimeout; a commit waiting on its signer";
        self
    }

    /// A run for the worktree at `work_tree`, bound to `git_dir`, the admin directory this
    /// repository lists for it (SPEC 1.3 "Committing"): `GIT_DIR` and `GIT_WORK_TREE` are
    /// set explicitly, so a `.git` that now leads elsewhere (a fresh `git init`, another
    /// repository) is never followed; and what it sees does not depend on a monitor or a
    /// cache (`core.fsmonitor=false`, `core.untrackedCache=false`). `timeout`: as
    /// [`Git::new`].
    pub(crate) fn bound(
        work_tree: impl AsRef<Path>,
        git_dir: impl AsRef<Path>,
        timeout: Duration,
    ) -> Git {
        // Absolute (against this process's directory, where the paths were read), as the
        // run's own directory is the worktree.
        let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        let work_tree = abs(work_tree.as_ref());
        Git::new(&work_tree, timeout)
            .args(UNCACHED)
            .env("GIT_DIR", abs(git_dir.as_ref()))
            .env("GIT_WORK_TREE", &work_tree)
    }

    /// [`Git::bound`], read-only (`--no-optional-locks`: SPEC safety rule 2).
    pub(crate) fn bound_read(
        work_tree: impl AsRef<Path>,
        git_dir: impl AsRef<Path>,
        timeout: Duration,
    ) -> Git {
        Git::bound(work_tree, git_dir, timeout).arg("--no-optional-locks")
    }

    /// A read-only run in `dir`: `--no-optional-locks`, so it never takes `index.lock`
    /// (SPEC safety rule 2). `timeout`: as [`Git::new`].
    pub(crate) fn read(dir: impl AsRef<Path>, timeout: Duration) -> Git {
        Git::new(dir, timeout).arg("--no-optional-locks")
    }

    /// Add one argument.
    pub(crate) fn arg(mut self, a: impl AsRef<OsStr>) -> Git {
        self.args.push(a.as_ref().to_os_string());
        self
    }

    /// Add arguments.
    pub(crate) fn args<I, S>(mut self, args: I) -> Git
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_os_string()));
        self
    }

    /// Set an environment variable for this run (after the scrub).
    pub(crate) fn env(mut self, k: impl AsRef<OsStr>, v: impl AsRef<OsStr>) -> Git {
        self.envs
            .push((k.as_ref().to_os_string(), v.as_ref().to_os_string()));
        self
    }

    /// Mark this run as a network step: it is killed after `timeout` (at least 1 s;
    /// `recode.networkTimeout`), and ssh runs as `ssh` says (the user's
    /// `core.sshCommand` or `GIT_SSH_COMMAND` with batch mode added,
    /// [`crate::ssh::SshCommand`]).
    pub(crate) fn network(mut self, timeout: Duration, ssh: &crate::ssh::SshCommand) -> Git {
        self.timeout = timeout.max(Duration::from_secs(1));
        self.timeout_key = "recode.networkTimeout";
        self.ssh = Some(ssh.clone());
        self
    }

    fn display_args(&self) -> String {
        self.args
            .iter()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Run it; stdout when git exits 0.
    ///
    /// Errors: [`GitError::Failed`] (non-zero exit, with stderr), [`GitError::Timeout`],
    /// [`GitError::Spawn`], [`GitError::TooOld`].
    pub(crate) fn output(self) -> Result<Vec<u8>, GitError> {
        let args = self.display_args();
        let (ok, stdout, stderr) = self.run_raw()?;
        if ok {
            Ok(stdout)
        } else {
            Err(GitError::Failed {
                args,
                stderr: String::from_utf8_lossy(&stderr).trim().to_string(),
            })
        }
    }

    /// Run it; its stdout read as one object id (`rev-parse HEAD`, `commit-tree`): the
    /// edge where a commit id from git's output becomes a [`gix::ObjectId`].
    ///
    /// Errors: as [`Git::output`]; [`GitError::Failed`] when stdout is not a full hex id.
    pub(crate) fn output_id(self) -> Result<gix::ObjectId, GitError> {
        let args = self.display_args();
        let out = self.output()?;
        let text = String::from_utf8_lossy(&out);
        gix::ObjectId::from_hex(text.trim().as_bytes()).map_err(|_| GitError::Failed {
            args,
            stderr: format!("printed no object id: {:?}", text.trim()),
        })
    }

    /// Run it; whatever git printed, whether or not it succeeded.
    ///
    /// Errors: [`GitError::Spawn`], [`GitError::Timeout`], [`GitError::TooOld`].
    pub(crate) fn capture(self) -> Result<Captured, GitError> {
        let (ok, stdout, stderr) = self.run_raw()?;
        Ok(Captured {
            ok,
            stdout: String::from_utf8_lossy(&stdout).into_owned(),
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
        })
    }

    fn run_raw(self) -> Result<(bool, Vec<u8>, Vec<u8>), GitError> {
        check_version()?;
        let args = self.display_args();
        let mut cmd = Command::new("git");
        scrub(&mut cmd);
        if let Some(v) = self.ssh.as_ref().and_then(|s| s.env_value()) {
            cmd.env("GIT_SSH_COMMAND", v);
        }
        cmd.args(["-c", "gc.auto=0", "-c", "maintenance.auto=false"])
            .args(["-c", "core.fsmonitor=false"])
            .args(&self.args)
            .current_dir(&self.dir)
            .envs(self.envs.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null());
        let (limit, key) = (self.timeout, self.timeout_key);
        tracing::debug!(dir = %self.dir.display(), %args, "git");
        let done = crate::process::run_bounded(&mut cmd, limit).map_err(GitError::Spawn)?;
        match done.status {
            Some(status) => Ok((status.success(), done.stdout, done.stderr)),
            None => Err(GitError::Timeout {
                args,
                secs: limit.as_secs(),
                key,
                last_line: done
                    .last_stderr_line()
                    .map(|l| format!(": {l}"))
                    .unwrap_or_default(),
            }),
        }
    }
}

/// `git --no-optional-locks <args>` in `dir`, killed past `timeout`: stdout (a read; see
/// [`Git::read`]).
///
/// Errors: as [`Git::output`].
pub(crate) fn read(dir: &Path, timeout: Duration, args: &[&str]) -> Result<Vec<u8>, GitError> {
    Git::read(dir, timeout).args(args).output()
}

/// `git <args>` in `dir`, killed past `timeout`: stdout.
///
/// Errors: as [`Git::output`].
pub(crate) fn run(dir: &Path, timeout: Duration, args: &[&str]) -> Result<Vec<u8>, GitError> {
    Git::new(dir, timeout).args(args).output()
}

/// Whether `dir` is a worktree with `branch` checked out (`HEAD` is `refs/heads/<branch>`
/// there): how a `worktree add` is judged when git exits non-zero because a hook of the
/// user's failed after the work was done (SPEC 1.2 "The loop settles"). `timeout`: as
/// [`Git::new`].
pub(crate) fn branch_checked_out(dir: &Path, branch: &str, timeout: Duration) -> bool {
    dir.is_dir()
        && read(dir, timeout, &["symbolic-ref", "-q", "HEAD"])
            .is_ok_and(|o| String::from_utf8_lossy(&o).trim() == format!("refs/heads/{branch}"))
}

/// The forge token variables set in this process's environment ([`is_token_var`]).
fn token_values() -> Vec<(OsString, OsString)> {
    std::env::vars_os()
        .filter(|(k, _)| is_token_var(k))
        .collect()
}

/// Whether the variable `k` holds a forge token: one of [`crate::redact::TOKEN_ENV`], or a
/// `RECODE_` variable whose name holds `TOKEN`.
fn is_token_var(k: &OsStr) -> bool {
    let k = k.to_string_lossy();
    crate::redact::TOKEN_ENV.contains(&&*k) || (k.starts_with("RECODE_") && k.contains("TOKEN"))
}

/// Remove every forge token variable (one of [`crate::redact::TOKEN_ENV`], or a `RECODE_`
/// variable whose name holds `TOKEN`) of this process's environment from `cmd`'s (SPEC
/// 1.2 "Untrusted input stays out": no child git-recode starts sees one). Part of
/// [`scrub`]; every caller of [`crate::process::run_bounded`] that does not scrub applies
/// it (a hook's dry call, an agent's `--version`).
pub(crate) fn unset_tokens(cmd: &mut Command) {
    for (k, _) in token_values() {
        cmd.env_remove(k);
    }
}

/// Apply safety rule 0's environment to a command git-recode starts (git, the gate, any
/// other child): remove [`LOCATION_ENV`] and every forge token (`is_token_var`), forbid
/// prompts and pagers, `LC_ALL=C`.
pub(crate) fn scrub(cmd: &mut Command) {
    for k in LOCATION_ENV {
        cmd.env_remove(k);
    }
    unset_tokens(cmd);
    cmd.env("GIT_PAGER", "cat").env("PAGER", "cat");
    cmd.env("LC_ALL", "C")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GCM_INTERACTIVE", "never")
        .env("SSH_ASKPASS_REQUIRE", "never");
    if std::env::var_os("GIT_SSH_COMMAND").is_none() && std::env::var_os("GIT_SSH").is_none() {
        // Batch mode: ssh fails instead of asking for a passphrase or a host key. (A
        // network step and the gate get the repository's own command instead: `Git::network`,
        // `scrub_gate`.)
        cmd.env("GIT_SSH_COMMAND", "ssh -o BatchMode=yes");
    }
}

/// git-recode's own identity: the author and committer of its ledger and heartbeat
/// commits, and of a commit of its own in a worker (WIP, takeover snapshot) when the user
/// has none (SPEC 1.3 "Errors a newcomer meets (more)").
pub(crate) const OWN_NAME: &str = "git-recode";
/// The e-mail of [`OWN_NAME`].
pub(crate) const OWN_EMAIL: &str = "git-recode@localhost";

/// [`OWN_NAME`] as a signature at `seconds` since the epoch (UTC).
pub(crate) fn own_signature(seconds: i64) -> gix::actor::Signature {
    gix::actor::Signature {
        name: OWN_NAME.into(),
        email: OWN_EMAIL.into(),
        time: gix::date::Time::new(seconds, 0),
    }
}

/// git's two identities, as `git var` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Identity {
    /// `GIT_AUTHOR_IDENT`.
    Author,
    /// `GIT_COMMITTER_IDENT`.
    Committer,
}

impl Identity {
    fn var(self) -> &'static str {
        match self {
            Identity::Author => "GIT_AUTHOR_IDENT",
            Identity::Committer => "GIT_COMMITTER_IDENT",
        }
    }
}

/// The identities git cannot find for a commit in `dir`, as git itself decides
/// (`git var GIT_AUTHOR_IDENT` is as strict as `git commit`: environment, `user.*`,
/// `author.*`/`committer.*`, `EMAIL`, then a host name it can trust), each with git's
/// last line (`unable to auto-detect email address (got 'root@vm.(none)')`). Empty when
/// a commit there works. git that cannot run counts as none missing (the commit's own
/// error will say). `timeout`: as [`Git::new`].
pub(crate) fn missing_identities(dir: &Path, timeout: Duration) -> Vec<(Identity, String)> {
    [Identity::Author, Identity::Committer]
        .into_iter()
        .filter_map(
            |who| match Git::read(dir, timeout).args(["var", who.var()]).output() {
                Err(GitError::Failed { stderr, .. }) => {
                    let last = stderr.lines().last().unwrap_or_default();
                    Some((who, last.trim_start_matches("fatal: ").to_string()))
                }
                _ => None,
            },
        )
        .collect()
}

/// The environment a commit of git-recode's own in `dir` takes ([`OWN_NAME`] for each
/// identity git cannot find there, [`missing_identities`]); empty when the user has one.
/// `timeout`: as [`Git::new`].
pub(crate) fn own_identity_env(dir: &Path, timeout: Duration) -> Vec<(&'static str, &'static str)> {
    let mut out = Vec::new();
    for (who, _) in missing_identities(dir, timeout) {
        match who {
            Identity::Author => out.extend([
                ("GIT_AUTHOR_NAME", OWN_NAME),
                ("GIT_AUTHOR_EMAIL", OWN_EMAIL),
            ]),
            Identity::Committer => out.extend([
                ("GIT_COMMITTER_NAME", OWN_NAME),
                ("GIT_COMMITTER_EMAIL", OWN_EMAIL),
            ]),
        }
    }
    out
}

/// The gate's environment: [`scrub`], so no forge token (its script is the worker branch's
/// own, written by the agent: SPEC 1.2 "Untrusted input stays out"). ssh runs as `ssh` says (the repository's own
/// command, batch mode added), so a gate that fetches uses the user's key.
pub(crate) fn scrub_gate(cmd: &mut Command, ssh: &crate::ssh::SshCommand) {
    scrub(cmd);
    if let Some(v) = ssh.env_value() {
        cmd.env("GIT_SSH_COMMAND", v);
    }
}

/// Check once per process that git is at least [`MIN_VERSION`].
///
/// Errors: [`GitError::TooOld`], [`GitError::Spawn`].
pub(crate) fn check_version() -> Result<(), GitError> {
    static CHECKED: OnceLock<Result<(), String>> = OnceLock::new();
    let r = CHECKED.get_or_init(|| {
        let mut cmd = Command::new("git");
        scrub(&mut cmd);
        let out = cmd
            .arg("version")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("spawn:{e}"))?;
        let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
        match parse_version(&text) {
            Some(v) if v >= MIN_VERSION => Ok(()),
            Some(_) => Err(text),
            // An unreadable version (a wrapper, a vendor build) is given the benefit of the doubt.
            None => Ok(()),
        }
    });
    match r {
        Ok(()) => Ok(()),
        Err(e) if e.starts_with("spawn:") => Err(GitError::Spawn(std::io::Error::other(
            e.trim_start_matches("spawn:").to_string(),
        ))),
        Err(found) => Err(GitError::TooOld {
            found: found.clone(),
        }),
    }
}

/// `git version 2.47.3` (or `2.39.5 (Apple Git-154)`) → `(2, 47)`.
pub(crate) fn parse_version(text: &str) -> Option<(u32, u32)> {
    let v = text.strip_prefix("git version ")?;
    let mut parts = v.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse() {
        assert_eq!(parse_version("git version 2.47.3"), Some((2, 47)));
        assert_eq!(
            parse_version("git version 2.39.5 (Apple Git-154)"),
            Some((2, 39))
        );
        assert_eq!(parse_version("git version 2.30.0.windows.1"), Some((2, 30)));
        assert_eq!(parse_version("hub version 2"), None);
        assert!(parse_version("git version 2.30.0").unwrap() < MIN_VERSION);
    }

    #[test]
    fn output_id_reads_one_id_and_refuses_anything_else() {
        let tmp = tempfile::tempdir().unwrap();
        let empty_tree = Git::new(tmp.path(), Duration::from_secs(60))
            .args(["hash-object", "-t", "tree", "/dev/null"])
            .output_id()
            .unwrap();
        assert_eq!(empty_tree, gix::ObjectId::empty_tree(gix::hash::Kind::Sha1));
        let err = Git::new(tmp.path(), Duration::from_secs(60))
            .args(["config", "--get", "gc.auto"])
            .output_id()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "git config --get gc.auto failed: printed no object id: \"0\""
        );
    }

    #[test]
    fn the_callers_git_dir_never_reaches_a_run() {
        let tmp = tempfile::tempdir().unwrap();
        let out = Git::new(tmp.path(), Duration::from_secs(60))
            .args(["config", "--get", "gc.auto"])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out).trim(), "0");
        let mut cmd = Command::new("env");
        scrub(&mut cmd);
        let envs: Vec<_> = cmd.get_envs().collect();
        for k in LOCATION_ENV {
            assert!(
                envs.iter().any(|(n, v)| n == k && v.is_none()),
                "{k} is removed"
            );
        }
    }
}
