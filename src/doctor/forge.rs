//! The `forge` check: the forge behind the remote, its token, one call answered.

use super::{Check, Level, check, ok};

/// The forge behind `remote`: detected from its URL and `recode.forge`, its token set,
/// and one small call answered ([`crate::forge::Forge::pull_for`]). Says which forge, API
/// base and project it resolved and from what (SPEC 1.3 "Self-hosted forges"); a remote
/// that names no project fails with the fix; `auto` on a host that is no known forge
/// warns (its requests are not seen); an API that does not answer is blamed on what the
/// answer points at (the token only for 401/403).
pub(super) fn forge(repo: &gix::Repository, cfg: &crate::config::Config) -> Check {
    use crate::forge::select;
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
    let Some(kind) = select::kind_of(&cfg.forge, &url) else {
        return no_known_forge(cfg, &url, &shown);
    };
    let name = kind.name();
    let resolved = match select::resolve(&cfg.forge, &url) {
        Ok(Some(r)) => r,
        Ok(None) => return ok("forge", format!("remote '{remote}' ({shown}): no forge")),
        Err(e) => {
            return check(
                "forge",
                Level::Fail,
                format!("remote '{remote}': {e}"),
                Some(format!(
                    "git remote set-url {remote} <the {name} URL of the repository>, or git config recode.forge none"
                )),
            );
        }
    };
    let on = format!(
        "remote '{remote}' is on {name} ({}; API {} from {}, project {})",
        resolved.by, resolved.api, resolved.api_from, resolved.project
    );
    if let Some(missing) = select::missing_token(&cfg.forge, &url) {
        return check(
            "forge",
            Level::Fail,
            format!("{on}: {missing}"),
            Some(format!(
                "export {}=<a token with {} read/write on this repository>",
                kind.token_vars().split('/').next().unwrap_or_default(),
                kind.noun()
            )),
        );
    }
    probe(repo, cfg, (kind, &resolved), &on, &shown)
}

/// The check for a remote (`url`, `shown` redacted) on no forge `recode.forge` names: a
/// warning with the setting to add when `auto` met a host it does not recognise (its
/// requests are not seen), else ok (plain git: requests are opened by hand).
fn no_known_forge(cfg: &crate::config::Config, url: &str, shown: &str) -> Check {
    let remote = cfg.remote.as_str();
    match crate::forge::remote_parts(url)
        .filter(|_| cfg.forge.kind == crate::config::ForgeSetting::Auto)
    {
        Some((host, _)) => check(
            "forge",
            Level::Warn,
            format!(
                "remote '{remote}' ({shown}) is on {host}, which recode.forge auto does not \
                 recognise as GitLab, GitHub or Gitea: the forge could not be detected, so \
                 its merge or pull requests are not seen (status shows none)"
            ),
            Some(
                "git config recode.forge gitlab (or github, gitea: the forge at that host; \
                 recode.forge none if it is plain git)"
                    .into(),
            ),
        ),
        None => ok(
            "forge",
            format!(
                "remote '{remote}' ({shown}) is on no known forge (recode.forge {}): pull requests are opened by hand",
                cfg.forge.kind
            ),
        ),
    }
}

/// Open the forge and make one small call: ok when it answers (`on` says where), a
/// failure with the fix pointing at what the answer blames ([`unanswered_fix`]) when it
/// does not, or when the forge cannot be opened.
fn probe(
    repo: &gix::Repository,
    cfg: &crate::config::Config,
    (kind, resolved): (crate::forge::Kind, &crate::forge::select::Resolved),
    on: &str,
    shown: &str,
) -> Check {
    let remote = cfg.remote.as_str();
    match crate::forge::open(repo, cfg) {
        Ok(None) => ok("forge", format!("remote '{remote}' ({shown}): no forge")),
        Ok(Some(f)) => match f.pull_for("recode-doctor-probe") {
            Ok(_) => ok("forge", format!("{on}: token answered")),
            Err(e) => {
                let fix = unanswered_fix(&e, kind, resolved);
                check(
                    "forge",
                    Level::Fail,
                    format!("{on}: it does not answer: {e}"),
                    Some(fix),
                )
            }
        },
        Err(e) => check(
            "forge",
            Level::Fail,
            e.to_string(),
            Some("check recode.remote, recode.forge and the remote's URL".into()),
        ),
    }
}

/// What to check when the forge's API does not answer the probe: the token only when the
/// forge refused it (401, 403); else the API base and the project, then the network.
fn unanswered_fix(
    e: &crate::forge::ForgeError,
    kind: crate::forge::Kind,
    r: &crate::forge::select::Resolved,
) -> String {
    use crate::forge::ForgeError;
    let base = match r.api_from {
        "RECODE_FORGE_API" => format!(
            "the API base {} (RECODE_FORGE_API: the instance root, or its /api/vN URL)",
            r.api
        ),
        _ => format!(
            "the API base {} (set RECODE_FORGE_API to the instance's URL if the API is elsewhere)",
            r.api
        ),
    };
    match e {
        ForgeError::Status {
            status: 401 | 403, ..
        } => format!(
            "check the token ({}) and its access to {}",
            kind.token_vars(),
            r.project
        ),
        ForgeError::Status { status: 404, .. } => format!(
            "check {base} and the project {} (a token without access to it also gets 404)",
            r.project
        ),
        _ => format!("check {base} and the network"),
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
