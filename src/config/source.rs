//! Where values come from: `git -c` settings (`GIT_CONFIG_PARAMETERS`) first, then git's
//! config files; and path values as git interpolates them.

/// `git -c key=value` settings, which git passes to subcommands in
/// `GIT_CONFIG_PARAMETERS` (`'key'='value' 'key2'='value2'`, or older `'key=value'`),
/// in order; a key without a value is `true`.
pub(crate) fn command_line_settings() -> Vec<(String, String)> {
    let Ok(text) = std::env::var("GIT_CONFIG_PARAMETERS") else {
        return Vec::new();
    };
    // Split into shell-single-quoted words; `'\''` is a literal quote, `=` between two
    // quoted words joins key and value.
    let mut words: Vec<(String, bool)> = Vec::new(); // (text, followed by '=')
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' {
            let mut w = String::new();
            while let Some(c) = chars.next() {
                if c == '\'' {
                    if chars.peek() == Some(&'\\') {
                        // `'\''`: close, an escaped quote, reopen.
                        chars.next();
                        chars.next();
                        chars.next();
                        w.push('\'');
                        continue;
                    }
                    break;
                }
                w.push(c);
            }
            let eq = chars.peek() == Some(&'=');
            if eq {
                chars.next();
            }
            words.push((w, eq));
        }
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let (w, eq) = &words[i];
        if *eq && i + 1 < words.len() {
            out.push((w.to_ascii_lowercase(), words[i + 1].0.clone()));
            i += 2;
        } else {
            match w.split_once('=') {
                Some((k, v)) => out.push((k.to_ascii_lowercase(), v.to_string())),
                None => out.push((w.to_ascii_lowercase(), "true".into())),
            }
            i += 1;
        }
    }
    out
}

/// A path-valued setting as git interpolates it (gix's `config::Path::interpolate`): a
/// leading `~/` is `$HOME`, `~user/` that user's home; a value that cannot be
/// interpolated (no `HOME`, an unknown user) is taken as it is. Relative values stay
/// relative: the caller knows what they are relative to.
pub(crate) fn interpolate_path(value: &str) -> std::path::PathBuf {
    let home = gix::path::env::home_dir();
    let raw = gix::config::Path::from(std::borrow::Cow::Owned(gix::bstr::BString::from(value)));
    let ctx = gix::config::path::interpolate::Context {
        home_dir: home.as_deref(),
        home_for_user: Some(gix::config::path::interpolate::home_for_user),
        ..Default::default()
    };
    raw.interpolate(ctx)
        .unwrap_or_else(|_| std::path::PathBuf::from(value))
}

/// The value of `key` (like `recode.base`), `git -c` first, then git's config files.
pub(crate) fn string(repo: &gix::Repository, key: &str) -> Option<String> {
    let lower = key.to_ascii_lowercase();
    command_line_settings()
        .into_iter()
        .rev()
        .find(|(k, _)| *k == lower)
        .map(|(_, v)| v)
        .or_else(|| repo.config_snapshot().string(key).map(|v| v.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_dash_c_settings() {
        // SAFETY: a test of its own; no other thread reads this variable meanwhile.
        unsafe {
            std::env::set_var(
                "GIT_CONFIG_PARAMETERS",
                "'recode.base'='trunk' 'color.ui=never' 'recode.gate'='it'\\''s fine' 'core.bare'",
            );
        }
        let got = command_line_settings();
        unsafe { std::env::remove_var("GIT_CONFIG_PARAMETERS") };
        assert_eq!(
            got,
            vec![
                ("recode.base".to_string(), "trunk".to_string()),
                ("color.ui".to_string(), "never".to_string()),
                ("recode.gate".to_string(), "it's fine".to_string()),
                ("core.bare".to_string(), "true".to_string()),
            ]
        );
    }
}
