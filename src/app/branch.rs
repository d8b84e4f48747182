//! The branch argument of every command (`record *`, `classify`, `resume`, `recover`,
//! `log`, `verify`): a name git takes as a branch (SPEC 1.2 "Untrusted input stays out":
//! branch names on the command line follow git's ref-name rules, `git check-ref-format
//! --branch`; anything else is bad usage, exit 2).

use gix::bstr::ByteSlice;

/// clap's value parser for a branch argument: `Ok(name)` when `refs/heads/<name>` is a
/// valid ref name ([`gix::validate::reference::branch_name`]: no `..`, no control
/// characters or spaces, no `~^:?*[\`, no `@{`, no component starting with `.` or ending
/// in `.lock`, not empty), and the name is not `HEAD` nor `@`, does not start with `-`, and is not
/// a full ref name (`refs/…`: give the branch's short name).
///
/// Errors: why the name is refused (clap prints it and exits 2).
pub fn parse(name: &str) -> Result<String, String> {
    let why = if name.is_empty() {
        Some("it is empty".to_string())
    } else if name == "HEAD" || name == "@" {
        Some(format!("{name} names the checked-out commit, not a branch"))
    } else if name.starts_with('-') {
        Some("a branch name cannot start with '-'".to_string())
    } else if name.starts_with("refs/") {
        Some(format!(
            "give the branch's short name ({}), not a full ref name",
            name.strip_prefix("refs/heads/").unwrap_or(name)
        ))
    } else {
        let full = format!("refs/heads/{name}");
        gix::validate::reference::branch_name(full.as_bytes().as_bstr())
            .err()
            .map(|e| e.to_string())
    };
    match why {
        None => Ok(name.to_string()),
        Some(why) => Err(format!(
            "not a valid branch name: {why} (branch names follow git's ref-name rules: `git check-ref-format --branch '{}'`)",
            crate::fence::inline(name)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_branch_names_pass_and_others_are_refused() {
        for ok in ["issue-7", "feat/issue-12-parser", "a.b", "x@y", "ü-1"] {
            assert_eq!(parse(ok).as_deref(), Ok(ok));
        }
        for bad in [
            "",
            "a..b",
            "HEAD",
            "refs/heads/main",
            "a\nb",
            "a b",
            "-x",
            "a.lock",
            "a/",
            ".a",
            "a~1",
            "a^",
            "a:b",
            "a?",
            "a*",
            "a[b",
            "a\\b",
            "a@{1}",
            "@",
            "a\u{7f}",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} was accepted");
        }
    }
}
