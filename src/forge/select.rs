//! Which forge a repository's remote is on, and its client (SPEC Config `recode.forge`,
//! 1.2 "Forges"): `auto` reads the remote URL's host — github.com or `GH_HOST` → GitHub,
//! gitlab.com → GitLab, codeberg.org → Gitea, anything else (a plain or local remote) →
//! none; `github`, `gitlab`, `gitea` take the remote's host as a self-hosted instance of
//! that forge; `none` is no forge. Each forge has its token variables; without one the
//! forge is unknown (nothing is phantom or published on a guess).

use std::path::PathBuf;

use super::{Forge, ForgeError, GitHub, GitLab, Gitea, Limits, gitea, github, gitlab};
use crate::config::ForgeOptions;

/// A forge kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// GitHub (github.com or Enterprise).
    GitHub,
    /// GitLab (gitlab.com or self-managed).
    GitLab,
    /// Gitea or Forgejo (Codeberg or self-hosted).
    Gitea,
}

impl Kind {
    /// Its name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Kind::GitHub => "GitHub",
            Kind::GitLab => "GitLab",
            Kind::Gitea => "Gitea",
        }
    }

    /// The environment variables its token is read from, in order.
    pub fn token_vars(self) -> &'static str {
        match self {
            Kind::GitHub => "GH_TOKEN/GITHUB_TOKEN",
            Kind::GitLab => "GITLAB_TOKEN",
            Kind::Gitea => "GITEA_TOKEN/FORGEJO_TOKEN",
        }
    }

    /// The token set for it, if any.
    pub fn token(self, opts: &ForgeOptions) -> Option<&str> {
        match self {
            Kind::GitHub => opts.github_token.as_deref(),
            Kind::GitLab => opts.gitlab_token.as_deref(),
            Kind::Gitea => opts.gitea_token.as_deref(),
        }
    }
}

/// The forge of `remote_url` under `opts.kind` (`recode.forge`): `None` for `none`, and
/// for `auto` on a host that is no known forge or a URL with no host (a local path).
pub fn kind_of(opts: &ForgeOptions, remote_url: &str) -> Option<Kind> {
    match opts.kind.as_str() {
        "github" => Some(Kind::GitHub),
        "gitlab" => Some(Kind::GitLab),
        "gitea" | "forgejo" => Some(Kind::Gitea),
        "none" => None,
        _ => {
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

/// The client for `remote_url`, keeping ETags in `cache` (when the forge sends them):
/// `Ok(None)` when there is no forge or its token is not set.
///
/// Errors: [`ForgeError::NotOnForge`] when the URL has no host or its path is not a
/// repository there (`OWNER/REPO`; GitLab: `GROUP/…/PROJECT`).
pub fn client(
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
    let not_there = |host: &str| ForgeError::NotOnForge {
        url: super::redact_url(remote_url),
        forge: kind.name(),
        host: host.to_string(),
    };
    let default_host = match kind {
        Kind::GitHub => opts.gh_host.clone().unwrap_or_else(|| "github.com".into()),
        Kind::GitLab => "gitlab.com".into(),
        Kind::Gitea => "codeberg.org".into(),
    };
    let (host, path) = super::remote_parts(remote_url).ok_or_else(|| not_there(&default_host))?;
    let api = |base: fn(&str) -> String| {
        opts.api
            .clone()
            .unwrap_or_else(|| base(&host))
            .trim_end_matches('/')
            .to_string()
    };
    let owner_repo = || {
        path.split_once('/')
            .filter(|(_, r)| !r.contains('/'))
            .map(|(o, r)| (o.to_string(), r.to_string()))
            .ok_or_else(|| not_there(&host))
    };
    let t = Limits::of(opts);
    Ok(Some(match kind {
        Kind::GitHub => {
            let (owner, repo) = owner_repo()?;
            let gh = GitHub::with_limits(&api(github::api_base), token, owner, repo, t);
            Box::new(match cache {
                Some(p) => gh.with_cache(p),
                None => gh,
            })
        }
        Kind::GitLab => {
            if !path.contains('/') {
                return Err(not_there(&host));
            }
            let gl = GitLab::new(&api(gitlab::api_base), token, path.clone(), t);
            Box::new(match cache {
                Some(p) => gl.with_cache(p),
                None => gl,
            })
        }
        Kind::Gitea => {
            let (owner, repo) = owner_repo()?;
            Box::new(Gitea::new(&api(gitea::api_base), token, owner, repo, t))
        }
    }))
}

/// With `recode.forge auto`, a remote on no known forge while a token is set: one hint
/// naming the URL (the token is not used). `None` otherwise.
pub fn no_forge_hint(opts: &ForgeOptions, remote_url: &str) -> Option<String> {
    let any_token =
        opts.github_token.is_some() || opts.gitlab_token.is_some() || opts.gitea_token.is_some();
    (opts.kind == "auto" && any_token && kind_of(opts, remote_url).is_none()).then(|| {
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
pub fn missing_token(opts: &ForgeOptions, remote_url: &str) -> Option<String> {
    let kind = kind_of(opts, remote_url)?;
    kind.token(opts).is_none().then(|| {
        let first = kind.token_vars().split('/').next().unwrap_or_default();
        format!(
            "pull requests are unknown: the remote is on {} and no {} is set \
             (export {first}=<token> to let git-recode see and open pull requests, \
             or `git config recode.forge none`)",
            kind.name(),
            kind.token_vars()
        )
    })
}

/// Why no pull request is opened for a pushed branch of `remote`.
pub fn why_none(opts: &ForgeOptions, remote_url: &str, remote: &str) -> String {
    match kind_of(opts, remote_url) {
        Some(k) if k.token(opts).is_none() => format!("no {}", k.token_vars()),
        Some(k) => format!("the remote '{remote}' is not a {} repository", k.name()),
        None if opts.kind == "none" => "recode.forge is none".into(),
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
            kind: kind.into(),
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
            "the remote URL '/srv/w.git' is not a Gitea repository on codeberg.org"
        );
    }
}
