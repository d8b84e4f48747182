//! Which forge a repository's remote is on, and its client (SPEC Config `recode.forge`,
//! 1.2 "Forges"): `auto` reads the remote URL's host — github.com or `GH_HOST` → GitHub,
//! gitlab.com → GitLab, codeberg.org → Gitea, anything else (a plain or local remote) →
//! none; `github`, `gitlab`, `gitea` take the remote's host as a self-hosted instance of
//! that forge; `none` is no forge. Each forge has its token variables; without one the
//! forge is unknown (nothing is phantom or published on a guess).

use std::path::PathBuf;

use super::{Forge, ForgeError, GitHub, GitLab, Gitea, Limits, gitea, github, gitlab};
use crate::config::{ForgeOptions, ForgeSetting};
use crate::model::reason::RequestNoun;

/// A forge kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// GitHub (github.com or Enterprise).
    GitHub,
    /// GitLab (gitlab.com or self-managed).
    GitLab,
    /// Gitea or Forgejo (Codeberg or self-hosted).
    Gitea,
}

impl Kind {
    /// Its name in messages.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::GitHub => "GitHub",
            Kind::GitLab => "GitLab",
            Kind::Gitea => "Gitea",
        }
    }

    /// The environment variables its token is read from, in order.
    pub(crate) fn token_vars(self) -> &'static str {
        match self {
            Kind::GitHub => "GH_TOKEN/GITHUB_TOKEN",
            Kind::GitLab => "GITLAB_TOKEN",
            Kind::Gitea => "GITEA_TOKEN/FORGEJO_TOKEN",
        }
    }

    /// What it calls a request to merge a branch (in reasons): merge request on GitLab.
    pub(crate) fn noun(self) -> RequestNoun {
        match self {
            Kind::GitLab => RequestNoun::MergeRequest,
            Kind::GitHub | Kind::Gitea => RequestNoun::PullRequest,
        }
    }

    /// The token set for it, if any.
    pub(crate) fn token(self, opts: &ForgeOptions) -> Option<&str> {
        match self {
            Kind::GitHub => opts.github_token.as_deref(),
            Kind::GitLab => opts.gitlab_token.as_deref(),
            Kind::Gitea => opts.gitea_token.as_deref(),
        }
    }
}

/// The forge of `remote_url` under `opts.kind` (`recode.forge`): `None` for `none`, and
/// for `auto` on a host that is no known forge or a URL with no host (a local path).
pub(crate) fn kind_of(opts: &ForgeOptions, remote_url: &str) -> Option<Kind> {
    match opts.kind {
        ForgeSetting::GitHub => Some(Kind::GitHub),
        ForgeSetting::GitLab => Some(Kind::GitLab),
        ForgeSetting::Gitea => Some(Kind::Gitea),
        ForgeSetting::Off => None,
        ForgeSetting::Auto => {
            let (host, _) = super::remote_parts(remote_url)?;
            let gh_host = opts.gh_host.as_deref().map(str::to_ascii_lowercase);
            if host == "github.com" || gh_host.as_deref() == Some(host.as_str()) {
                Some(Kind::GitHub)
            } else if host == "gitlab.com" {
                Some(Kind::GitLab)
            } else if host == "codeberg.org" {
                Some(Kind::Gitea)
            } else {
                None
            }
        }
    }
}

/// What the forge of a remote resolved to ([`resolve`]): which forge and why, the API
/// base and where it came from, the project. What `doctor` names (SPEC 1.3 "Self-hosted
/// forges").
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Resolved {
    /// The forge.
    pub kind: Kind,
    /// Why this forge: `recode.forge gitlab`, or `recode.forge auto: host gitlab.com`.
    pub by: String,
    /// The API base URL, no trailing slash (`https://HOST/api/v4`).
    pub api: String,
    /// Where [`Resolved::api`] came from: `RECODE_FORGE_API` (its value, with the API path
    /// added when it had none) or `the remote's host`.
    pub api_from: &'static str,
    /// The project (GitLab: `GROUP/…/PROJECT`) or repository (`OWNER/REPO`) on the forge.
    pub project: String,
}

/// The API path a forge's base URL ends in (`/api/v4` GitLab, `/api/v1` Gitea); GitHub's
/// has none to add (`https://api.github.com`).
fn api_path(kind: Kind) -> Option<&'static str> {
    match kind {
        Kind::GitHub => None,
        Kind::GitLab => Some("/api/v4"),
        Kind::Gitea => Some("/api/v1"),
    }
}

/// `RECODE_FORGE_API` as the base of `kind`'s API: an instance root (a URL with no
/// `/api/vN` in its path, e.g. `http://127.0.0.1:8080` or `https://host/gitlab`) gets the
/// forge's API path added (SPEC 1.3: "`RECODE_FORGE_API` may be the instance root").
pub(crate) fn api_of(kind: Kind, given: &str) -> String {
    let base = given.trim().trim_end_matches('/');
    let path = base.split_once("://").map_or(base, |(_, rest)| {
        rest.split_once('/').map_or("", |(_, p)| p)
    });
    let segs: Vec<&str> = path.split(['/', '?', '#']).collect();
    let versioned = segs.windows(2).any(|w| {
        w[0] == "api"
            && w[1]
                .strip_prefix('v')
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    });
    match api_path(kind) {
        Some(p) if !versioned => format!("{base}{p}"),
        _ => base.to_string(),
    }
}

/// Resolve the forge of `remote_url` under `opts` (no token needed, nothing asked):
/// `Ok(None)` when there is no forge (`none`, or `auto` on no known host).
///
/// Errors: [`ForgeError::NoProject`] when the URL names no project there (a local path,
/// no host, or a path that is not `OWNER/REPO`; GitLab: `GROUP/…/PROJECT`).
pub(crate) fn resolve(
    opts: &ForgeOptions,
    remote_url: &str,
) -> Result<Option<Resolved>, ForgeError> {
    let Some(kind) = kind_of(opts, remote_url) else {
        return Ok(None);
    };
    let no_project = || ForgeError::NoProject {
        url: super::redact_url(remote_url),
        forge: kind.name(),
        noun: if kind == Kind::GitLab {
            "project"
        } else {
            "repository"
        },
        shape: match kind {
            Kind::GitLab => "HOST/GROUP/PROJECT",
            Kind::GitHub | Kind::Gitea => "HOST/OWNER/REPO",
        },
    };
    let (host, path) = super::remote_parts(remote_url).ok_or_else(no_project)?;
    let named = match kind {
        Kind::GitLab => path.contains('/'),
        Kind::GitHub | Kind::Gitea => path.split('/').count() == 2,
    };
    if !named {
        return Err(no_project());
    }
    let by = match opts.kind {
        ForgeSetting::GitHub | ForgeSetting::GitLab | ForgeSetting::Gitea => {
            format!("recode.forge {}", opts.kind)
        }
        ForgeSetting::Auto | ForgeSetting::Off => format!("recode.forge auto: host {host}"),
    };
    let (api, api_from) = match &opts.api {
        Some(given) => (api_of(kind, given), "RECODE_FORGE_API"),
        None => (
            match kind {
                Kind::GitHub => github::api_base(&host),
                Kind::GitLab => gitlab::api_base(&host),
                Kind::Gitea => gitea::api_base(&host),
            },
            "the remote's host",
        ),
    };
    Ok(Some(Resolved {
        kind,
        by,
        api,
        api_from,
        project: path,
    }))
}

/// The client for `remote_url`, keeping ETags in `cache` (when the forge sends them):
/// `Ok(None)` when there is no forge or its token is not set.
///
/// Errors: [`ForgeError::NoProject`] when the URL has no host or its path is not a
/// repository there (`OWNER/REPO`; GitLab: `GROUP/…/PROJECT`).
pub(crate) fn client(
    opts: &ForgeOptions,
    remote_url: &str,
    cache: Option<PathBuf>,
) -> Result<Option<Box<dyn Forge>>, ForgeError> {
    let Some(kind) = kind_of(opts, remote_url) else {
        return Ok(None);
    };
    let Some(token) = kind.token(opts).map(str::to_string) else {
        return Ok(None);
    };
    let Some(r) = resolve(opts, remote_url)? else {
        return Ok(None);
    };
    let owner_repo = || {
        let (o, r) = r.project.split_once('/').unwrap_or_default();
        (o.to_string(), r.to_string())
    };
    let t = Limits::of(opts);
    Ok(Some(match kind {
        Kind::GitHub => {
            let (owner, repo) = owner_repo();
            let gh = GitHub::with_limits(&r.api, token, owner, repo, t);
            Box::new(match cache {
                Some(p) => gh.with_cache(p),
                None => gh,
            })
        }
        Kind::GitLab => {
            let gl = GitLab::new(&r.api, token, r.project.clone(), t);
            Box::new(match cache {
                Some(p) => gl.with_cache(p),
                None => gl,
            })
        }
        Kind::Gitea => {
            let (owner, repo) = owner_repo();
            Box::new(Gitea::new(&r.api, token, owner, repo, t))
        }
    }))
}

/// With `recode.forge auto`, a remote on no known forge while a token is set: one hint
/// naming the URL (the token is not used). `None` otherwise.
pub(crate) fn no_forge_hint(opts: &ForgeOptions, remote_url: &str) -> Option<String> {
    let any_token =
        opts.github_token.is_some() || opts.gitlab_token.is_some() || opts.gitea_token.is_some();
    (opts.kind == ForgeSetting::Auto && any_token && kind_of(opts, remote_url).is_none()).then(|| {
        format!(
            "no forge: the remote URL '{}' is on no known forge host (github.com, gitlab.com, \
             codeberg.org); for a self-hosted one set `git config recode.forge github|gitlab|gitea`, \
             or `recode.forge none` to silence this",
            super::redact_url(remote_url)
        )
    })
}

/// The remote is on a forge whose token is not set: pull requests are unknown; say which
/// variable to set. `None` when there is no forge or the token is set.
pub(crate) fn missing_token(opts: &ForgeOptions, remote_url: &str) -> Option<String> {
    let kind = kind_of(opts, remote_url)?;
    kind.token(opts).is_none().then(|| {
        let first = kind.token_vars().split('/').next().unwrap_or_default();
        let noun = kind.noun();
        format!(
            "{noun}s are unknown: the remote is on {} and no {} is set \
             (export {first}=<token> to let git-recode see and open {noun}s, \
             or `git config recode.forge none`)",
            kind.name(),
            kind.token_vars()
        )
    })
}

/// Why no pull request is opened for a pushed branch of `remote`.
pub(crate) fn why_none(opts: &ForgeOptions, remote_url: &str, remote: &str) -> String {
    match kind_of(opts, remote_url) {
        Some(k) if k.token(opts).is_none() => format!("no {}", k.token_vars()),
        Some(k) => format!("the remote '{remote}' is not a {} repository", k.name()),
        None if opts.kind == ForgeSetting::Off => "recode.forge is none".into(),
        None if opts.github_token.is_none()
            && opts.gitlab_token.is_none()
            && opts.gitea_token.is_none() =>
        {
            format!(
                "the remote '{remote}' is on no known forge and no GH_TOKEN/GITHUB_TOKEN, \
                 GITLAB_TOKEN or GITEA_TOKEN/FORGEJO_TOKEN is set (see recode.forge)"
            )
        }
        None => format!("the remote '{remote}' is on no known forge (see recode.forge)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(kind: &str) -> ForgeOptions {
        ForgeOptions {
            kind: ForgeSetting::parse(kind).unwrap(),
            gh_host: Some("ghe.corp".into()),
            ..ForgeOptions::default()
        }
    }

    #[test]
    fn auto_reads_the_host() {
        let auto = opts("auto");
        for (url, want) in [
            ("https://github.com/acme/w.git", Some(Kind::GitHub)),
            ("git@ghe.corp:acme/w.git", Some(Kind::GitHub)),
            ("https://gitlab.com/grp/sub/w.git", Some(Kind::GitLab)),
            ("ssh://git@codeberg.org/acme/w.git", Some(Kind::Gitea)),
            ("https://git.example.org/acme/w.git", None),
            ("/srv/git/w.git", None),
        ] {
            assert_eq!(kind_of(&auto, url), want, "{url}");
        }
        assert_eq!(
            kind_of(&opts("gitlab"), "https://git.example.org/a/w.git"),
            Some(Kind::GitLab)
        );
        assert_eq!(kind_of(&opts("none"), "https://github.com/a/w.git"), None);
    }

    #[test]
    fn no_token_is_no_client_and_a_warning_naming_the_variable() {
        let o = opts("auto");
        let url = "https://gitlab.com/acme/widget.git";
        assert!(client(&o, url, None).unwrap().is_none());
        let w = missing_token(&o, url).unwrap();
        assert!(w.contains("no GITLAB_TOKEN is set"), "{w}");
        assert!(w.contains("export GITLAB_TOKEN=<token>"), "{w}");
        assert_eq!(missing_token(&o, "/srv/w.git"), None);
        assert_eq!(
            why_none(&opts("none"), url, "origin"),
            "recode.forge is none"
        );
    }

    #[test]
    fn a_local_path_with_a_chosen_forge_is_an_error() {
        let o = ForgeOptions {
            gitea_token: Some("t".into()),
            ..opts("gitea")
        };
        let e = client(&o, "/srv/w.git", None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the remote URL '/srv/w.git' names no Gitea repository (a URL like \
             https://HOST/OWNER/REPO.git is needed): point recode.remote at a remote whose URL \
             names it (`git remote set-url <remote> <url>`), or `git config recode.forge none`"
        );
    }

    #[test]
    fn an_instance_root_gets_the_api_path() {
        for (kind, given, want) in [
            (
                Kind::GitLab,
                "http://127.0.0.1:8080",
                "http://127.0.0.1:8080/api/v4",
            ),
            (
                Kind::GitLab,
                "http://127.0.0.1:8080/",
                "http://127.0.0.1:8080/api/v4",
            ),
            (Kind::GitLab, "https://h/gitlab", "https://h/gitlab/api/v4"),
            (Kind::GitLab, "https://h/api/v4/", "https://h/api/v4"),
            (
                Kind::GitLab,
                "https://h/gitlab/api/v4",
                "https://h/gitlab/api/v4",
            ),
            (Kind::Gitea, "https://h", "https://h/api/v1"),
            (Kind::Gitea, "https://h/api/v1", "https://h/api/v1"),
            (Kind::GitHub, "http://127.0.0.1:9", "http://127.0.0.1:9"),
        ] {
            assert_eq!(api_of(kind, given), want, "{kind:?} {given}");
        }
        let o = ForgeOptions {
            api: Some("http://127.0.0.1:8080".into()),
            ..opts("gitlab")
        };
        let r = resolve(&o, "git@gl.corp:grp/sub/w.git").unwrap().unwrap();
        assert_eq!(
            (
                r.by.as_str(),
                r.api.as_str(),
                r.api_from,
                r.project.as_str()
            ),
            (
                "recode.forge gitlab",
                "http://127.0.0.1:8080/api/v4",
                "RECODE_FORGE_API",
                "grp/sub/w"
            )
        );
    }
}
