//! The `ssh` check: which ssh command pushes and fetches use (the user's
//! `GIT_SSH_COMMAND` or `core.sshCommand` with batch mode added, [`crate::ssh`]), and
//! what would keep it from working unattended.

use super::{Check, Level, check, ok};
use crate::config::{self, Config};
use crate::ssh::{SshCommand, SshSource};

/// Whether git reaches `url` over ssh: `ssh://`, `git+ssh://`, `ssh+git://`, or the
/// scp-like `[user@]host:path` (a `:` before any `/`, no `://`).
pub(super) fn is_ssh_url(url: &str) -> bool {
    if let Some((scheme, _)) = url.split_once("://") {
        return matches!(scheme, "ssh" | "git+ssh" | "ssh+git");
    }
    match (url.find(':'), url.find('/')) {
        (Some(c), Some(s)) => c < s && c > 1,
        (Some(c), None) => c > 1,
        _ => false,
    }
}

/// The ssh command of network steps, said in full, and warnings where it cannot run
/// unattended: a program not found, an identity file that is not there, a program that is
/// not OpenSSH (no batch mode), or `GIT_SSH_COMMAND` in the environment hiding the
/// repository's `core.sshCommand`.
pub(super) fn ssh(repo: &gix::Repository, cfg: &Config) -> Check {
    let s = &cfg.ssh;
    let url = crate::forge::remote_url(repo, &cfg.remote);
    let over_ssh = url.as_deref().is_some_and(is_ssh_url);
    let said = match s.source {
        SshSource::Default => format!("`{}` (git's default, batch mode added)", s.command),
        SshSource::EnvProgram => format!("the program `{}` (GIT_SSH)", s.command),
        src if s.batch => format!("`{}` ({}, batch mode on)", s.command, src.name()),
        src => format!("`{}` ({})", s.command, src.name()),
    };
    let what = if over_ssh {
        format!("pushes and fetches of '{}' use {said}", cfg.remote)
    } else {
        format!(
            "remote '{}' is not reached over ssh; ssh would be {said}",
            cfg.remote
        )
    };
    match problem(repo, s) {
        Some((why, fix)) if over_ssh || s.source != SshSource::Default => {
            check("ssh", Level::Warn, format!("{what}: {why}"), Some(fix))
        }
        _ => ok("ssh", what),
    }
}

/// What keeps `s` from working unattended, with the fix.
fn problem(repo: &gix::Repository, s: &SshCommand) -> Option<(String, String)> {
    let configured = config::string(repo, config::SSH_COMMAND).filter(|v| !v.trim().is_empty());
    if s.source == SshSource::EnvCommand
        && let Some(c) = configured
    {
        return Some((
            format!("GIT_SSH_COMMAND in the environment hides core.sshCommand `{c}`"),
            "unset GIT_SSH_COMMAND in the loop's environment".into(),
        ));
    }
    let program = s.program();
    if super::agent::on_path(&program).is_none() {
        return Some((
            format!("'{program}' is not on PATH"),
            format!(
                "install {program}, or git config {} '<ssh command>'",
                config::SSH_COMMAND
            ),
        ));
    }
    if let Some(missing) = s
        .identity_files()
        .into_iter()
        .find(|f| !config::interpolate_path(f).is_file())
    {
        return Some((
            format!("its identity file {missing} does not exist"),
            format!(
                "git config {} 'ssh -i <the deploy key>'",
                config::SSH_COMMAND
            ),
        ));
    }
    (!s.batch && s.source != SshSource::Default).then(|| {
        (
            format!("'{program}' is not OpenSSH's ssh, so batch mode was not added: a prompt would wait until recode.networkTimeout"),
            "make it never prompt (for OpenSSH: -o BatchMode=yes)".into(),
        )
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn ssh_urls() {
        for u in [
            "git@github.com:o/r.git",
            "ssh://git@host:22/o/r",
            "git+ssh://h/r",
            "host:r.git",
        ] {
            assert!(super::is_ssh_url(u), "{u}");
        }
        for u in [
            "https://github.com/o/r",
            "/srv/r.git",
            "file:///srv/r.git",
            "./r:x",
            "C:/r",
        ] {
            assert!(!super::is_ssh_url(u), "{u}");
        }
    }
}
