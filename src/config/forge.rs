//! What the forge needs from outside, read once at the edge: `recode.forge`, tokens,
//! `GH_HOST`, the API override and the limits (SPEC "Forge", 1.2 "Forges").

/// What the forge needs from outside, read once at the edge (SPEC "Forge", 1.2 "Forges"):
/// `recode.forge`, the tokens (`GH_TOKEN`/`GITHUB_TOKEN`, `GITLAB_TOKEN`,
/// `GITEA_TOKEN`/`FORGEJO_TOKEN`), `GH_HOST`, the base URL override (`RECODE_FORGE_API`,
/// else `RECODE_GITHUB_API`), the longest retry wait (`RECODE_FORGE_MAX_WAIT`, seconds)
/// and the request timeout (`recode.networkTimeout`, seconds). `Debug` never shows a token.
#[derive(Clone, Default)]
pub struct ForgeOptions {
    /// `recode.forge`, lower case: one of [`FORGES`] (`forgejo` read as `gitea`).
    pub kind: String,
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
    /// `RECODE_FORGE_MAX_WAIT`: the longest wait before one retry, in seconds (default 20).
    pub max_wait_secs: u64,
    /// The longest one request may take, in seconds (`recode.networkTimeout`).
    pub timeout_secs: u64,
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
    /// `recode.forge = kind` (checked by the caller) with the process environment.
    pub fn from_env(kind: &str, timeout_secs: u64) -> ForgeOptions {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let first = |ks: &[&str]| ks.iter().find_map(|k| var(k));
        let kind = kind.trim().to_ascii_lowercase();
        ForgeOptions {
            kind: if kind == "forgejo" {
                "gitea".into()
            } else {
                kind
            },
            github_token: first(&["GH_TOKEN", "GITHUB_TOKEN"]),
            gitlab_token: var("GITLAB_TOKEN"),
            gitea_token: first(&["GITEA_TOKEN", "FORGEJO_TOKEN"]),
            gh_host: var("GH_HOST"),
            api: first(&["RECODE_FORGE_API", "RECODE_GITHUB_API"]),
            max_wait_secs: var("RECODE_FORGE_MAX_WAIT")
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(20),
            timeout_secs,
        }
    }
}
