//! The `forge` check: the forge behind the remote, its token, one call answered.

use super::{Check, Level, check, ok};

/// The forge behind `remote`: detected from its URL and `recode.forge`, its token set,
/// and one small call answered ([`crate::forge::Forge::pull_for`]).
pub(super) fn forge(repo: &gix::Repository, cfg: &crate::config::Config) -> Check {
    let remote = cfg.remote.as_str();
    let Some(url) = crate::forge::remote_url(repo, remote) else {
        return check(
            "forge",
            Level::Warn,
            format!("no remote '{remote}': nothing is pushed, pull requests are opened by hand"),
            Some(no_remote_fix(repo, remote)),
        );
    };
    let shown = crate::forge::redact_url(&url);
    let Some(kind) = crate::forge::select::kind_of(&cfg.forge, &url) else {
        return ok(
            "forge",
            format!(
                "remote '{remote}' ({shown}) is on no known forge (recode.forge {}): pull requests are opened by hand",
                cfg.forge.kind
            ),
        );
    };
    let name = kind.name();
    if let Some(missing) = crate::forge::select::missing_token(&cfg.forge, &url) {
        return check(
            "forge",
            Level::Fail,
            format!("remote '{remote}' is on {name}: {missing}"),
            Some(format!(
                "export {}=<a token with pull request read/write on this repository>",
                kind.token_vars().split('/').next().unwrap_or_default()
            )),
        );
    }
    match crate::forge::open(repo, cfg) {
        Ok(None) => ok("forge", format!("remote '{remote}' ({shown}): no forge")),
        Ok(Some(f)) => match f.pull_for("recode-doctor-probe") {
            Ok(_) => ok(
                "forge",
                format!("{name} answers for remote '{remote}' with the token set"),
            ),
            Err(e) => check(
                "forge",
                Level::Fail,
                format!("{name} does not answer for remote '{remote}': {e}"),
                Some(format!(
                    "check the token ({}) and its access to the repository, and the network",
                    kind.token_vars()
                )),
            ),
        },
        Err(e) => check(
            "forge",
            Level::Fail,
            e.to_string(),
            Some("check recode.remote, recode.forge and the remote's URL".into()),
        ),
    }
}

/// The fix when `remote` (`recode.remote`, default `origin`) is not a remote here: add it,
/// or name one of the remotes there are.
fn no_remote_fix(repo: &gix::Repository, remote: &str) -> String {
    let names: Vec<String> = repo
        .remote_names()
        .into_iter()
        .map(|n| n.to_string())
        .collect();
    match names.as_slice() {
        [] => format!("git remote add {remote} <url>"),
        [one] => format!("git config recode.remote {one} (or git remote add {remote} <url>)"),
        many => format!(
            "git config recode.remote <one of: {}> (or git remote add {remote} <url>)",
            many.join(", ")
        ),
    }
}
