//! What the forge needs from outside, read once at the edge: `recode.forge` (parsed into
//! [`ForgeSetting`]), tokens, `GH_HOST`, the API override and the limits (SPEC "Forge",
//! 1.2 "Forges").

use std::time::Duration;

use super::ValueError;

/// `recode.forge`, parsed when the configuration is read (SPEC "Config"): which forge to
/// ask, or `auto` to tell it from the remote's host.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ForgeSetting {
    /// `auto` (the default): from the remote URL's host (github.com or `GH_HOST`,
    /// gitlab.com, codeberg.org; any other host: no forge).
    #[default]
    Auto,
    /// `github`.
    GitHub,
    /// `gitlab`.
    GitLab,
    /// `gitea`, or its alias `forgejo`.
    Gitea,
    /// `none`: no forge is asked.
    Off,
}

impl ForgeSetting {
    /// The values `recode.forge` takes, as the user writes them (`forgejo` is
    /// [`ForgeSetting::Gitea`]).
    pub const VALUES: &'static [&'static str] =
        &["auto", "github", "gitlab", "gitea", "forgejo", "none"];

    /// Read a value of `recode.forge`, in any case, blanks around it ignored.
    ///
    /// Errors: [`ValueError::NotOneOf`] naming the allowed values ([`ForgeSetting::VALUES`]).
    pub fn parse(value: &str) -> Result<ForgeSetting, ValueError> {
        match value.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(ForgeSetting::Auto),
            "github" => Ok(ForgeSetting::GitHub),
            "gitlab" => Ok(ForgeSetting::GitLab),
            "gitea" | "forgejo" => Ok(ForgeSetting::Gitea),
            "none" => Ok(ForgeSetting::Off),
            _ => Err(ValueError::NotOneOf(Self::VALUES)),
        }
    }

    /// The value as written in git's config (`gitea` for `forgejo` too).
    pub fn as_str(self) -> &'static str {
        match self {
            ForgeSetting::Auto => "auto",
            ForgeSetting::GitHub => "github",
            ForgeSetting::GitLab => "gitlab",
            ForgeSetting::Gitea => "gitea",
            ForgeSetting::Off => "none",
        }
    }
}

impl std::fmt::Display for ForgeSetting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The default of `RECODE_FORGE_MAX_WAIT`: 20 s.
pub(crate) const DEFAULT_FORGE_MAX_WAIT: Duration = Duration::from_secs(20);

/// What the forge needs from outside, read once at the edge (SPEC "Forge", 1.2 "Forges"):
/// `recode.forge`, the tokens (`GH_TOKEN`/`GITHUB_TOKEN`, `GITLAB_TOKEN`,
/// `GITEA_TOKEN`/`FORGEJO_TOKEN`), `GH_HOST`, the base URL override (`RECODE_FORGE_API`,
/// else `RECODE_GITHUB_API`), the longest retry wait (`RECODE_FORGE_MAX_WAIT`, seconds)
/// and the request timeout (`recode.networkTimeout`). `Debug` never shows a token.
#[derive(Clone, Default)]
pub struct ForgeOptions {
    /// `recode.forge`.
    pub kind: ForgeSetting,
    /// `GH_TOKEN`, else `GITHUB_TOKEN`.
    pub github_token: Option<String>,
    /// `GITLAB_TOKEN`.
    pub gitlab_token: Option<String>,
    /// `GITEA_TOKEN`, else `FORGEJO_TOKEN`.
    pub gitea_token: Option<String>,
    /// `GH_HOST` (GitHub Enterprise), if set.
    pub gh_host: Option<String>,
    /// `RECODE_FORGE_API`, else `RECODE_GITHUB_API`: the API base URL of whichever forge.
    pub api: Option<String>,
    /// `RECODE_FORGE_MAX_WAIT` (whole seconds in the environment): the longest wait before
    /// one retry (default [`DEFAULT_FORGE_MAX_WAIT`]).
    pub max_wait: Duration,
    /// The longest one request may take (`recode.networkTimeout`).
    pub timeout: Duration,
}

impl std::fmt::Debug for ForgeOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never a token: only whether each is set.
        f.debug_struct("ForgeOptions")
            .field("kind", &self.kind)
            .field("github_token", &self.github_token.is_some())
            .field("gitlab_token", &self.gitlab_token.is_some())
            .field("gitea_token", &self.gitea_token.is_some())
            .field("gh_host", &self.gh_host)
            .field("api", &self.api)
            .finish()
    }
}

impl ForgeOptions {
    /// `recode.forge = kind` with the process environment; `timeout` is
    /// `recode.networkTimeout`.
    pub fn from_env(kind: ForgeSetting, timeout: Duration) -> ForgeOptions {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let first = |ks: &[&str]| ks.iter().find_map(|k| var(k));
        ForgeOptions {
            kind,
            github_token: first(&["GH_TOKEN", "GITHUB_TOKEN"]),
            gitlab_token: var("GITLAB_TOKEN"),
            gitea_token: first(&["GITEA_TOKEN", "FORGEJO_TOKEN"]),
            gh_host: var("GH_HOST"),
            api: first(&["RECODE_FORGE_API", "RECODE_GITHUB_API"]),
            max_wait: var("RECODE_FORGE_MAX_WAIT")
                .and_then(|v| v.trim().parse().ok())
                .map_or(DEFAULT_FORGE_MAX_WAIT, Duration::from_secs),
            timeout,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recode_forge_parses_to_its_setting_or_names_the_allowed_values() {
        assert_eq!(ForgeSetting::parse("auto"), Ok(ForgeSetting::Auto));
        assert_eq!(ForgeSetting::parse(" GitLab "), Ok(ForgeSetting::GitLab));
        assert_eq!(ForgeSetting::parse("github"), Ok(ForgeSetting::GitHub));
        assert_eq!(ForgeSetting::parse("forgejo"), Ok(ForgeSetting::Gitea));
        assert_eq!(ForgeSetting::parse("none"), Ok(ForgeSetting::Off));
        assert_eq!(
            ForgeSetting::parse("bitbucket").map_err(|e| e.to_string()),
            Err("expected one of auto, github, gitlab, gitea, forgejo, none".to_string())
        );
        for v in ForgeSetting::VALUES {
            let s = ForgeSetting::parse(v).unwrap();
            assert_eq!(ForgeSetting::parse(s.as_str()), Ok(s), "{v} round-trips");
        }
    }
}
