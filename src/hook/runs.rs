//! Whether a hook that reaches git-recode actually runs (SPEC 1.3 "Errors a newcomer
//! meets (more)"): an upgrade moves paths — the `#!/opt/…/git-recode` of a direct hook,
//! the `#!/usr/local/bin/python3.11` of a manager's hook, the binary a hook line names —
//! and then every commit prints "cannot exec" while the hook looks installed.
//!
//! Two checks: [`interpreter_problem`] (cheap, on every reach walk: the `#!` line's
//! interpreter exists), and [`dry_call`] (for `hook status` and `doctor`): the hook, or
//! the git-recode command its line runs, started as git starts it — in the worktree, with
//! git's exec path first on `PATH` — with [`DRY_RUN_ENV`] set, so git-recode only answers
//! [`DRY_RUN_ANSWER`] and does nothing else.

use std::path::{Path, PathBuf};

/// Set for a dry call: `hook post-commit` prints [`DRY_RUN_ANSWER`] and does nothing.
pub(crate) const DRY_RUN_ENV: &str = "RECODE_HOOK_DRY_RUN";
/// What `hook post-commit` prints on a dry call (then its version and path).
pub(crate) const DRY_RUN_ANSWER: &str = "git-recode: the post-commit hook runs";
/// How long a dry call may take.
pub(crate) const DRY_CALL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The interpreter a script's `#!` line names and its argument, if it has such a line.
fn shebang(text: &str) -> Option<(String, Option<String>)> {
    let line = text.lines().next()?.strip_prefix("#!")?.trim();
    let mut parts = line.splitn(2, char::is_whitespace);
    let interp = parts.next().filter(|p| !p.is_empty())?.to_string();
    let arg = parts.next().map(str::trim).filter(|a| !a.is_empty());
    Some((interp, arg.map(str::to_string)))
}

fn executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Where `name` is on `path` (a `PATH` value).
fn find_on(path: &std::ffi::OsStr, name: &str) -> Option<PathBuf> {
    std::env::split_paths(path)
        .map(|d| d.join(name))
        .find(|p| executable(p))
}

/// Why the script at `path` (text `text`) cannot start: the interpreter its `#!` line
/// names is missing or not executable, or `#!/usr/bin/env X` finds no `X` on `PATH`.
/// `None` when it can (or has no `#!` line: git then runs it with `sh`).
pub(crate) fn interpreter_problem(path: &Path, text: &str) -> Option<String> {
    let (interp, arg) = shebang(text)?;
    let gone = |what: &str| {
        format!(
            "{} starts {what}, which does not exist (moved by an upgrade?): every commit prints \"cannot exec\" and no milestone is ledgered",
            path.display()
        )
    };
    if !executable(Path::new(&interp)) {
        return Some(gone(&interp));
    }
    let env = Path::new(&interp).file_name() == Some(std::ffi::OsStr::new("env"));
    match arg {
        Some(prog) if env && !prog.starts_with('-') && !prog.contains('/') => {
            let path_var = std::env::var_os("PATH").unwrap_or_default();
            find_on(&path_var, &prog)
                .is_none()
                .then(|| gone(&format!("{prog} (through {interp}; not on PATH)")))
        }
        _ => None,
    }
}

/// The program words of a line that runs `git-recode hook post-commit`: `[P]` for a word
/// `P` whose file name is `git-recode` (bare, a path, quoted), `[G, "recode"]` for `git
/// recode` (`G` a word whose file name is `git`). `None` when the line does not run it.
pub(crate) fn invocation_in_line(line: &str) -> Option<Vec<String>> {
    let line = line.trim_start();
    if line.starts_with('#') {
        return None;
    }
    let words = crate::ssh::words(line);
    let name = |w: &str| {
        Path::new(w)
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
    };
    (1..words.len().saturating_sub(1)).find_map(|i| {
        if words[i] != "hook" || words[i + 1] != "post-commit" {
            return None;
        }
        let before = &words[i - 1];
        if name(before).as_deref() == Some("git-recode") {
            return Some(vec![before.clone()]);
        }
        (before == "recode" && i >= 2 && name(&words[i - 2]).as_deref() == Some("git"))
            .then(|| vec![words[i - 2].clone(), "recode".to_string()])
    })
}

/// The first line of `text` that runs `git-recode hook post-commit` ([`invocation_in_line`]).
pub(crate) fn invocation(text: &str) -> Option<Vec<String>> {
    text.lines().find_map(invocation_in_line)
}

/// `PATH` as git gives it to hooks: git's exec path first (asked within the dry call's own
/// bound, [`DRY_CALL_TIMEOUT`]).
fn hook_path_var(wt: &Path) -> std::ffi::OsString {
    let mut dirs: Vec<PathBuf> = crate::git::read(wt, DRY_CALL_TIMEOUT, &["--exec-path"])
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o).trim()))
        .into_iter()
        .collect();
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).unwrap_or_default()
}

/// Start the hook at `hook` (text `text`) in the worktree `wt` as git would, dry: the
/// whole hook when it is git-recode's own (`whole`: nothing else runs in it), else only
/// the git-recode command its line runs (the user's lines are never run), or
/// `git-recode` on git's `PATH` when the line is in a manager's configuration. Bounded by
/// [`DRY_CALL_TIMEOUT`].
///
/// Errors: why it did not answer: the command git would start is not there, exited
/// non-zero, or is not git-recode.
pub(crate) fn dry_call(wt: &Path, hook: &Path, whole: bool, text: &str) -> Result<String, String> {
    let path_var = hook_path_var(wt);
    let (mut cmd, shown) = if whole {
        (std::process::Command::new(hook), hook.display().to_string())
    } else {
        let words = invocation(text).unwrap_or_else(|| vec!["git-recode".to_string()]);
        let program = if words[0].contains('/') {
            wt.join(&words[0])
        } else {
            find_on(&path_var, &words[0]).ok_or_else(|| {
                format!(
                    "{} runs `{} hook post-commit`, and `{}` is not on PATH: every commit prints \"not found\" and no milestone is ledgered",
                    hook.display(),
                    words.join(" "),
                    words[0]
                )
            })?
        };
        let mut c = std::process::Command::new(&program);
        c.args(&words[1..]).args(["hook", "post-commit"]);
        (c, words.join(" "))
    };
    cmd.current_dir(wt)
        .env("PATH", &path_var)
        .env(DRY_RUN_ENV, "1")
        .stdin(std::process::Stdio::null());
    crate::git::unset_tokens(&mut cmd);
    let done = crate::process::run_bounded(&mut cmd, DRY_CALL_TIMEOUT).map_err(|e| {
        format!(
            "{} cannot start: {e} (its interpreter or program moved by an upgrade?): every commit prints \"cannot exec\"",
            hook.display()
        )
    })?;
    let out = String::from_utf8_lossy(&done.stdout);
    if let Some(line) = out.lines().find(|l| l.starts_with(DRY_RUN_ANSWER)) {
        return Ok(line.to_string());
    }
    let err = String::from_utf8_lossy(&done.stderr);
    let last = err
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    Err(match done.status {
        None => format!(
            "{shown} did not answer within {} s",
            DRY_CALL_TIMEOUT.as_secs()
        ),
        Some(s) if !s.success() => format!(
            "a dry call of {shown} failed ({}): {last}: commits there do not reach git-recode",
            s.code()
                .map_or("killed".to_string(), |c| format!("exit {c}"))
        ),
        Some(_) => format!(
            "a dry call of {shown} did not reach git-recode (an older git-recode, or another program?)"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_that_run_us() {
        let inv = |l: &str| invocation_in_line(l);
        assert_eq!(
            inv("exec git-recode hook post-commit"),
            Some(vec!["git-recode".into()])
        );
        assert_eq!(
            inv("\"/opt/my dir/git-recode\" hook post-commit || true"),
            Some(vec!["/opt/my dir/git-recode".into()])
        );
        assert_eq!(
            inv("  git recode hook post-commit"),
            Some(vec!["git".into(), "recode".into()])
        );
        assert_eq!(inv("# git-recode hook post-commit"), None);
        assert_eq!(inv("git-recodex hook post-commit"), None);
        assert_eq!(inv("git-recode hook status"), None);
    }

    #[test]
    fn interpreters() {
        let p = Path::new("/r/.git/hooks/post-commit");
        assert_eq!(interpreter_problem(p, "#!/bin/sh\nexit 0\n"), None);
        assert_eq!(interpreter_problem(p, "exit 0\n"), None);
        let gone = interpreter_problem(p, "#!/nonexistent/bin/git-recode\n").unwrap();
        assert_eq!(
            gone,
            "/r/.git/hooks/post-commit starts /nonexistent/bin/git-recode, which does not exist (moved by an upgrade?): every commit prints \"cannot exec\" and no milestone is ledgered"
        );
        assert!(
            interpreter_problem(p, "#!/usr/bin/env no-such-interpreter-xyz\n")
                .unwrap()
                .contains("no-such-interpreter-xyz (through /usr/bin/env; not on PATH)")
        );
        assert_eq!(interpreter_problem(p, "#!/usr/bin/env sh\n"), None);
    }
}
