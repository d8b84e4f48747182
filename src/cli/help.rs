//! The long `--help` text shared with the man page and the README: the loop tick and
//! the list of `recode.*` keys (generated from [`crate::app::CONFIG_KEYS`]).

/// The text after `--help`: every `recode.*` key from [`crate::app::CONFIG_KEYS`], the
/// environment, the exit codes and [`crate::app::LOOP_TICK`].
pub(crate) fn long_after() -> String {
    format!(
        "Configuration (git config):\n{}\n\
Environment: RECODE_NOW replaces the clock; NO_COLOR turns colour off; RUST_LOG sets
logging. The forge (recode.forge) is reached with its token:
  GitHub        GH_TOKEN or GITHUB_TOKEN; GH_HOST for GitHub Enterprise
  GitLab        GITLAB_TOKEN (sent as PRIVATE-TOKEN)
  Gitea/Forgejo GITEA_TOKEN or FORGEJO_TOKEN
  RECODE_FORGE_API (or RECODE_GITHUB_API) is the API base of whichever forge: a
  self-hosted instance's root gets its API path added (/api/v4 GitLab, /api/v1 Gitea);
  RECODE_FORGE_MAX_WAIT caps one wait before a retry (seconds).
WATCHMAN_SOCK names the Watchman server recode.watcher asks (else its default).

Exit codes: 0 done, 1 error, 2 bad usage, 3 refused for safety or capped (needs a human).

A loop tick (bash; run it every few minutes, after `git recode hook install`):
{}
`git recode doctor` checks the set-up; `git recode man` prints the manual.",
        crate::app::config_help_list(),
        crate::app::LOOP_TICK
    )
}
