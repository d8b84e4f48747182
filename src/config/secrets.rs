//! `recode.secrets`: the patterns of files never pushed in a WIP nor deleted with a
//! worktree, read from git's config and `git -c`, checked, and matched (SPEC 1.2).

use super::keys::{DEFAULT_SECRETS, SECRETS};
use super::{ConfigError, command_line_settings};

/// The secrets patterns: [`DEFAULT_SECRETS`], then every non-empty `recode.secrets`
/// value (git's config files, then `git -c`), each once; with the first invalid value's
/// error (it is left out).
pub(super) fn secrets(repo: &gix::Repository) -> (Vec<String>, Option<ConfigError>) {
    let snap = repo.config_snapshot();
    let mut secrets: Vec<String> = snap
        .plumbing()
        .strings(SECRETS)
        .map(|vs| vs.iter().map(|v| v.to_string()).collect())
        .unwrap_or_default();
    let secrets_key = SECRETS.to_ascii_lowercase();
    secrets.extend(
        command_line_settings()
            .into_iter()
            .filter(|(k, _)| *k == secrets_key)
            .map(|(_, v)| v),
    );
    let mut out: Vec<String> = DEFAULT_SECRETS.iter().map(|s| s.to_string()).collect();
    let mut error = None;
    for v in secrets {
        let v = v.trim();
        if v.is_empty() || out.iter().any(|o| o == v) {
            continue; // "" adds nothing
        }
        match secret_pattern_problem(v) {
            Some(why) => {
                error.get_or_insert(ConfigError::Invalid {
                    key: SECRETS,
                    value: v.to_string(),
                    why: super::ValueError::BadSecret(why),
                });
            }
            None => out.push(v.to_string()),
        }
    }
    (out, error)
}

/// What makes `pattern` unusable as a secrets pattern, if anything: an unclosed `[`
/// class or a trailing `\` (git's wildmatch then matches nothing), a negation (values
/// only add: a `!` cannot take a default away), or a pattern gix cannot parse.
fn secret_pattern_problem(pattern: &str) -> Option<&'static str> {
    if pattern.starts_with('!') {
        return Some(
            "values add to the defaults; a negation cannot remove one (write the pattern without '!')",
        );
    }
    let chars: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' if i + 1 == chars.len() => return Some("the pattern ends with a lone '\\'"),
            '\\' => i += 1,
            '[' => {
                let mut j = i + 1;
                if matches!(chars.get(j), Some('!' | '^')) {
                    j += 1;
                }
                if chars.get(j) == Some(&']') {
                    j += 1; // a leading `]` is a member of the class
                }
                while j < chars.len() && chars[j] != ']' {
                    j += 1;
                }
                if j >= chars.len() {
                    return Some("an unclosed '[' class matches nothing; escape it as '\\['");
                }
                i = j;
            }
            _ => {}
        }
        i += 1;
    }
    gix::glob::parse(pattern.as_bytes())
        .is_none()
        .then_some("not a gitignore-style pattern")
}

/// Whether `path` (repository-relative, `/`-separated) matches one of the gitignore-style
/// `patterns` (SPEC `recode.secrets`), matched by [`gix::glob`] with gitignore semantics:
/// a pattern without `/` matches the file name at any depth, one with `/` the whole path
/// (a leading `/` anchors it), `**` spans directories, `[...]` classes and `\` escapes work,
/// and a trailing `/` matches only directories. Negations (`!pat`) are not secrets patterns
/// and match nothing.
pub(crate) fn matches_secret(patterns: &[String], path: &str) -> bool {
    use gix::bstr::ByteSlice;
    // A listing entry ending in `/` is a directory (`ls-files --directory`).
    let is_dir = path.ends_with('/');
    let path = path.trim_matches('/').as_bytes().as_bstr();
    let base = path.rfind_byte(b'/').map(|p| p + 1);
    patterns.iter().any(|p| {
        gix::glob::parse(p.trim().as_bytes()).is_some_and(|pat| {
            !pat.is_negative()
                && pat.matches_repo_relative_path(
                    path,
                    base,
                    Some(is_dir),
                    gix::glob::pattern::Case::Sensitive,
                    gix::glob::wildmatch::Mode::NO_MATCH_SLASH_LITERAL,
                )
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_match_names_and_paths() {
        let pats: Vec<String> = DEFAULT_SECRETS.iter().map(|s| s.to_string()).collect();
        assert!(matches_secret(&pats, ".env"));
        assert!(matches_secret(&pats, "app/.env.local"));
        assert!(matches_secret(&pats, "certs/server.pem"));
        assert!(matches_secret(&pats, "credentials-prod.json"));
        assert!(!matches_secret(&pats, "src/env.rs"));
        assert!(!matches_secret(&pats, "credentials.yaml"));
        let rooted = vec!["config/*.json".to_string()];
        assert!(matches_secret(&rooted, "config/a.json"));
        assert!(!matches_secret(&rooted, "x/config/a.json"));
        // gitignore semantics (gix-glob): `**`, classes, directory-only, anchors, negations.
        let deep = vec!["**/id_*".to_string()];
        assert!(matches_secret(&deep, "id_rsa"));
        assert!(matches_secret(&deep, "home/.ssh/id_ed25519"));
        let class = vec!["[Ss]ecret?.txt".to_string()];
        assert!(matches_secret(&class, "a/Secret1.txt"));
        assert!(!matches_secret(&class, "a/secret12.txt"));
        let dir_only = vec!["keys/".to_string()];
        assert!(matches_secret(&dir_only, "app/keys/"));
        assert!(!matches_secret(&dir_only, "app/keys"));
        let anchored = vec!["/top.key".to_string()];
        assert!(matches_secret(&anchored, "top.key"));
        assert!(!matches_secret(&anchored, "sub/top.key"));
        assert!(!matches_secret(&["!.env".to_string()], ".env"));
        assert!(!matches_secret(&["*.pem".to_string()], "a.pem/child.txt"));
    }
}
