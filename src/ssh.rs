//! The ssh command git-recode's network steps (push, fetch, `ls-remote`) hand to git:
//! the one git itself would use — `GIT_SSH_COMMAND`, else `core.sshCommand`, else
//! `GIT_SSH`, else `ssh` (git's `connect.c` order) — with OpenSSH's batch mode added, so
//! a deploy key set in `core.sshCommand` is used and no passphrase or host-key prompt can
//! wait for a terminal (SPEC safety rule 0: never prompt). A leaf: it reads nothing, the
//! caller passes what the environment and the configuration say.

/// Where the ssh command came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SshSource {
    /// `GIT_SSH_COMMAND` in the environment.
    EnvCommand,
    /// `core.sshCommand` in git's configuration.
    Config,
    /// `GIT_SSH` in the environment: a program git runs without a shell, so nothing can be
    /// added to it.
    EnvProgram,
    /// None of them: plain `ssh`.
    Default,
}

impl SshSource {
    /// Its name, as a user sets it: `GIT_SSH_COMMAND`, `core.sshCommand`, `GIT_SSH`, or
    /// `git's default`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            SshSource::EnvCommand => "GIT_SSH_COMMAND",
            SshSource::Config => "core.sshCommand",
            SshSource::EnvProgram => "GIT_SSH",
            SshSource::Default => "git's default",
        }
    }
}

/// The ssh command of git-recode's network steps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SshCommand {
    /// The command as git will run it (through the shell, the host and the remote command
    /// appended), batch mode included when it could be added; for
    /// [`SshSource::EnvProgram`], the program.
    pub command: String,
    /// Where it came from.
    pub source: SshSource,
    /// Batch mode is on: it was in the command, or added to an `ssh` command. `false` for
    /// a program that is not OpenSSH's `ssh` (`plink`, a wrapper script): it may prompt.
    pub batch: bool,
}

/// The option added to an `ssh` command: fail instead of asking.
pub(crate) const BATCH_MODE: &str = "-o BatchMode=yes";

impl SshCommand {
    /// Resolve as git does: `env_command` (`GIT_SSH_COMMAND`), else `config`
    /// (`core.sshCommand`), else `env_program` (`GIT_SSH`), else `ssh`. Empty values count
    /// as unset.
    pub(crate) fn resolve(
        env_command: Option<&str>,
        config: Option<&str>,
        env_program: Option<&str>,
    ) -> SshCommand {
        let set = |v: Option<&str>| {
            v.map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_string)
        };
        let (base, source) = match (set(env_command), set(config), set(env_program)) {
            (Some(c), _, _) => (c, SshSource::EnvCommand),
            (None, Some(c), _) => (c, SshSource::Config),
            (None, None, Some(p)) => {
                return SshCommand {
                    command: p,
                    source: SshSource::EnvProgram,
                    batch: false,
                };
            }
            (None, None, None) => ("ssh".to_string(), SshSource::Default),
        };
        let (command, batch) = with_batch_mode(&base);
        SshCommand {
            command,
            source,
            batch,
        }
    }

    /// Resolve from this process's environment and `config` (the repository's
    /// `core.sshCommand`).
    pub(crate) fn from_env(config: Option<&str>) -> SshCommand {
        let var = |k: &str| std::env::var(k).ok();
        SshCommand::resolve(
            var("GIT_SSH_COMMAND").as_deref(),
            config,
            var("GIT_SSH").as_deref(),
        )
    }

    /// The `GIT_SSH_COMMAND` value a git run gets (it beats the configuration, so it holds
    /// the configuration's command); `None` for [`SshSource::EnvProgram`], which the run
    /// inherits as it is.
    pub(crate) fn env_value(&self) -> Option<&str> {
        (self.source != SshSource::EnvProgram).then_some(self.command.as_str())
    }

    /// The program the command runs: its first word, unquoted.
    pub(crate) fn program(&self) -> String {
        first_word(&self.command)
    }

    /// The identity files the command names (`-i FILE`, `-iFILE`, `-o IdentityFile=FILE`),
    /// as written (a `~/` is left to the caller).
    pub(crate) fn identity_files(&self) -> Vec<String> {
        let words = words(&self.command);
        let mut out = Vec::new();
        let mut it = words.iter().skip(1);
        while let Some(w) = it.next() {
            if w == "-i" {
                out.extend(it.next().cloned());
            } else if let Some(f) = w.strip_prefix("-i").filter(|f| !f.is_empty()) {
                out.push(f.to_string());
            } else if w == "-o" {
                if let Some(f) = it.next().and_then(|o| identity_option(o)) {
                    out.push(f);
                }
            } else if let Some(f) = w.strip_prefix("-o").and_then(identity_option) {
                out.push(f);
            }
        }
        out
    }
}

/// `IdentityFile=FILE` (or `IdentityFile FILE`): the file.
fn identity_option(o: &str) -> Option<String> {
    let (k, v) = o.split_once(['=', ' '])?;
    k.eq_ignore_ascii_case("IdentityFile")
        .then(|| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// `cmd` with [`BATCH_MODE`] added when its program is OpenSSH's `ssh` (by file name) and
/// it sets no `BatchMode` of its own; and whether batch mode is then on. Another program
/// (`plink`, `sshpass`, a wrapper) is left as it is: an option it does not know would
/// break it.
pub(crate) fn with_batch_mode(cmd: &str) -> (String, bool) {
    let lower = cmd.to_ascii_lowercase();
    if lower.contains("batchmode=yes") || lower.contains("batchmode yes") {
        return (cmd.to_string(), true);
    }
    if lower.contains("batchmode") {
        // BatchMode=no on purpose: the user's choice.
        return (cmd.to_string(), false);
    }
    let program = first_word(cmd);
    let name = std::path::Path::new(&program)
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    if name == "ssh" || name == "ssh.exe" {
        (format!("{} {BATCH_MODE}", cmd.trim_end()), true)
    } else {
        (cmd.to_string(), false)
    }
}

/// The first word of a shell command, quotes removed.
fn first_word(cmd: &str) -> String {
    words(cmd).into_iter().next().unwrap_or_default()
}

/// A shell command's words, split as `sh` would for plain words, quotes and backslashes
/// (no expansion, no operators): enough to find a program and its `-i` files, or the
/// program a hook line runs.
pub(crate) fn words(cmd: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    let mut chars = cmd.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => cur.extend(chars.next()),
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (None, '\\') => {
                cur.extend(chars.next());
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            (None, c) => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_order_and_batch_mode() {
        let r = SshCommand::resolve(None, Some("ssh -i ~/.ssh/deploy"), None);
        assert_eq!(r.command, "ssh -i ~/.ssh/deploy -o BatchMode=yes");
        assert_eq!((r.source, r.batch), (SshSource::Config, true));
        assert_eq!(r.identity_files(), vec!["~/.ssh/deploy"]);
        // The environment's command beats the configuration, as in git.
        let r = SshCommand::resolve(Some("ssh -p 2222"), Some("ssh -i k"), None);
        assert_eq!(r.command, "ssh -p 2222 -o BatchMode=yes");
        assert_eq!(r.source, SshSource::EnvCommand);
        // core.sshCommand beats GIT_SSH (git's connect.c).
        let r = SshCommand::resolve(None, Some("ssh -i k"), Some("/usr/bin/plink"));
        assert_eq!(r.source, SshSource::Config);
        let r = SshCommand::resolve(None, None, Some("/usr/bin/plink"));
        assert_eq!(
            (r.command.as_str(), r.source, r.batch, r.env_value()),
            ("/usr/bin/plink", SshSource::EnvProgram, false, None)
        );
        let r = SshCommand::resolve(Some(" "), Some(""), None);
        assert_eq!(
            (r.command.as_str(), r.source),
            ("ssh -o BatchMode=yes", SshSource::Default)
        );
    }

    #[test]
    fn batch_mode_only_for_ssh_and_never_twice() {
        assert_eq!(
            with_batch_mode("/opt/bin/ssh -F cfg").0,
            "/opt/bin/ssh -F cfg -o BatchMode=yes"
        );
        assert_eq!(
            with_batch_mode("ssh -o BatchMode=yes -i k"),
            ("ssh -o BatchMode=yes -i k".into(), true)
        );
        assert_eq!(
            with_batch_mode("ssh -o BatchMode=no"),
            ("ssh -o BatchMode=no".into(), false)
        );
        assert_eq!(
            with_batch_mode("plink -batch"),
            ("plink -batch".into(), false)
        );
        assert_eq!(
            with_batch_mode("'/my dir/ssh' -i k").0,
            "'/my dir/ssh' -i k -o BatchMode=yes"
        );
    }

    #[test]
    fn identity_files_in_every_spelling() {
        let r = SshCommand::resolve(
            None,
            Some("ssh -i a -ib -o IdentityFile=c -oIdentityFile=d '-i' \"e f\""),
            None,
        );
        assert_eq!(r.identity_files(), vec!["a", "b", "c", "d", "e f"]);
        assert_eq!(r.program(), "ssh");
    }
}
