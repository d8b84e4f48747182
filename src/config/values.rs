//! Reading one value by the shape of its key: durations, counts, sizes, booleans, the
//! branch pattern, and [`check`], the check `doctor` runs on every key.

use super::keys::{DEFAULT_BRANCH_PATTERN, KEYS, Kind, MAX_ATTEMPTS_LIMIT};
use crate::clock;

/// Why a value is not of its key's shape: the `why` of [`super::ConfigError::Invalid`],
/// each read as the words after "is invalid: ".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    /// A duration without a unit (`10`): SPEC 1.2 "durations need a unit".
    #[error("'{0}' has no unit: a duration is a number followed by s, m, h or d, like {0}m")]
    NoUnit(String),
    /// Not a duration at all.
    #[error("'{0}' is not a duration (a number followed by s, m, h or d, like 30m)")]
    NotADuration(String),
    /// Not a whole number (a count).
    #[error("expected a whole number from 1 to {MAX_ATTEMPTS_LIMIT}")]
    NotACount,
    /// A count of 0.
    #[error(
        "expected a whole number from 1 to {MAX_ATTEMPTS_LIMIT} (0 would escalate every worker)"
    )]
    ZeroCount,
    /// A count past [`MAX_ATTEMPTS_LIMIT`].
    #[error(
        "expected a whole number from 1 to {MAX_ATTEMPTS_LIMIT} (a cap nobody reaches is no cap)"
    )]
    CountTooLarge,
    /// Not a size; `example` shows one (`50M (k, M or G)`).
    #[error("expected a size such as {example}")]
    NotASize {
        /// What a size looks like, as the message shows it.
        example: &'static str,
    },
    /// Not one of git's boolean spellings.
    #[error("expected true or false")]
    NotABool,
    /// Not one of the listed words.
    #[error("expected one of {}", .0.join(", "))]
    NotOneOf(&'static [&'static str]),
    /// Not a regular expression (the regex crate's words).
    #[error("{0}")]
    BadRegex(String),
    /// A branch pattern without a `task` group.
    #[error(
        "it has no task group: write the task key's part as (?P<task>...), as the default does: {DEFAULT_BRANCH_PATTERN}"
    )]
    NoTaskGroup,
    /// A notes ref outside `refs/notes/`.
    #[error("notes refs live under refs/notes/")]
    NotesRefOutside,
    /// `recode.base` names no branch here nor on the remote.
    #[error(
        "no branch '{base}' here nor on '{remote}' (set it to the branch work merges into, or unset it)"
    )]
    NoSuchBase {
        /// The value of `recode.base`.
        base: String,
        /// `recode.remote`.
        remote: String,
    },
    /// A `recode.secrets` pattern that cannot work, and why.
    #[error("{0}")]
    BadSecret(&'static str),
}

/// A config duration in seconds: a whole number with a unit (`90s`, `30m`, `2h`, `1d`).
/// A bare number is refused: `stallAfter=10` would silently mean ten seconds (SPEC 1.2
/// "durations need a unit").
///
/// Errors: [`ValueError::NoUnit`], [`ValueError::NotADuration`].
pub(crate) fn duration_secs(value: &str) -> Result<i64, ValueError> {
    let v = value.trim();
    if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ValueError::NoUnit(v.to_string()));
    }
    clock::parse_duration(v).map_err(|_| ValueError::NotADuration(v.to_string()))
}

/// `recode.maxAttempts`: a whole number from 1 to [`MAX_ATTEMPTS_LIMIT`].
///
/// Errors: [`ValueError::NotACount`], [`ValueError::ZeroCount`],
/// [`ValueError::CountTooLarge`].
pub(crate) fn count(value: &str) -> Result<u32, ValueError> {
    let v = value.trim();
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ValueError::NotACount);
    }
    match v.parse::<u64>() {
        Ok(0) => Err(ValueError::ZeroCount),
        Ok(n) if n <= u64::from(MAX_ATTEMPTS_LIMIT) => Ok(n as u32),
        _ => Err(ValueError::CountTooLarge),
    }
}

/// A size in bytes: a whole number with an optional unit `k`, `M`, `G` (powers of 1024,
/// as git's `core.bigFileThreshold`), as `doctor` checks it.
///
/// Errors: [`ValueError::NotASize`].
pub(crate) fn size_bytes(value: &str) -> Result<u64, ValueError> {
    size_with(value, "50M (k, M or G)")
}

/// [`size_bytes`] as the configuration reads `recode.wipMaxFileSize` (its error shows
/// other examples: `500k, 50M or 1G`).
///
/// Errors: [`ValueError::NotASize`].
pub(crate) fn parse_size(value: &str) -> Result<u64, ValueError> {
    size_with(value, "500k, 50M or 1G")
}

/// A size in bytes: a whole number with an optional `k`, `M` or `G` suffix (either case),
/// e.g. `10k`, `50M`; the error shows `example`.
fn size_with(value: &str, example: &'static str) -> Result<u64, ValueError> {
    let v = value.trim();
    let bad = || ValueError::NotASize { example };
    let i = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let n: u64 = v[..i].parse().map_err(|_| bad())?;
    let mult: u64 = match v[i..].trim() {
        "" => 1,
        "k" | "K" => 1 << 10,
        "m" | "M" => 1 << 20,
        "g" | "G" => 1 << 30,
        _ => return Err(bad()),
    };
    n.checked_mul(mult).ok_or_else(bad)
}

/// Check one value against its key's shape ([`KEYS`]); unknown keys pass.
///
/// Errors: the [`ValueError`] of its shape.
pub(crate) fn check(key: &str, value: &str) -> Result<(), ValueError> {
    let Some(k) = KEYS.iter().find(|k| k.name.eq_ignore_ascii_case(key)) else {
        return Ok(());
    };
    match k.kind {
        Kind::Text => Ok(()),
        Kind::TaskRegex => task_pattern(value).map(|_| ()),
        Kind::Duration => duration_secs(value).map(|_| ()),
        Kind::Count => count(value).map(|_| ()),
        Kind::Bool => parse_bool(value).map(|_| ()).ok_or(ValueError::NotABool),
        Kind::Size => size_bytes(value).map(|_| ()),
        Kind::OneOf(words) => {
            if words.contains(&value.trim().to_ascii_lowercase().as_str()) {
                Ok(())
            } else {
                Err(ValueError::NotOneOf(words))
            }
        }
    }
}

/// `recode.branchPattern` compiled: a regular expression with a `task` group, which
/// names each worker's task (SPEC 1.3 "Errors a newcomer meets (more)": a pattern without
/// one is refused, since every branch would become a task of its own and the branches of
/// one task would never share a ledger).
///
/// Errors: [`ValueError::BadRegex`], [`ValueError::NoTaskGroup`].
pub(crate) fn task_pattern(value: &str) -> Result<regex::Regex, ValueError> {
    let re = regex::Regex::new(value).map_err(|e| ValueError::BadRegex(e.to_string()))?;
    if re.capture_names().flatten().any(|n| n == "task") {
        Ok(re)
    } else {
        Err(ValueError::NoTaskGroup)
    }
}

/// git's boolean spellings: `true/yes/on/1` and `false/no/off/0`.
pub(super) fn parse_bool(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" => Some(true),
        "false" | "no" | "off" | "0" => Some(false),
        _ => None,
    }
}

/// [`super::Config::task_of`] for a compiled pattern (one with a `task` group,
/// [`task_pattern`]): the group's text, `None` when the pattern does not match or the
/// group is empty (an empty key would put unrelated branches into one ledger).
pub(super) fn task_key(pattern: &regex::Regex, branch: &str) -> Option<String> {
    let caps = pattern.captures(branch)?;
    Some(caps.name("task")?.as_str().to_string()).filter(|k| !k.is_empty())
}

/// `recode.watcher`, parsed when the configuration is read (issue 38): whether `status`
/// asks a file watcher what changed in a worktree since the last tick instead of reading
/// all of it. The watcher only ever saves work: any doubt is a full reading.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum WatcherSetting {
    /// `auto` (the default): Watchman when its server is running; never started here.
    #[default]
    Auto,
    /// `watchman`: Watchman, its server started when it is not running.
    Watchman,
    /// `off`: every tick reads every worktree whole.
    Off,
}

impl WatcherSetting {
    /// The values `recode.watcher` takes.
    pub(crate) const VALUES: &'static [&'static str] = &["auto", "watchman", "off"];

    /// Read a value of `recode.watcher`, in any case, blanks around it ignored.
    ///
    /// Errors: [`ValueError::NotOneOf`] naming the allowed values.
    pub(crate) fn parse(value: &str) -> Result<WatcherSetting, ValueError> {
        match value.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(WatcherSetting::Auto),
            "watchman" => Ok(WatcherSetting::Watchman),
            "off" | "none" | "false" => Ok(WatcherSetting::Off),
            _ => Err(ValueError::NotOneOf(Self::VALUES)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::keys::{BRANCH_PATTERN, help_list};

    #[test]
    fn values_are_checked_by_their_shape() {
        assert_eq!(duration_secs("90s"), Ok(90));
        assert_eq!(duration_secs("2h"), Ok(7200));
        assert_eq!(
            duration_secs("10").unwrap_err().to_string(),
            "'10' has no unit: a duration is a number followed by s, m, h or d, like 10m"
        );
        assert_eq!(
            duration_secs("soon").unwrap_err().to_string(),
            "'soon' is not a duration (a number followed by s, m, h or d, like 30m)"
        );
        assert_eq!(
            count("0").unwrap_err().to_string(),
            "expected a whole number from 1 to 1000 (0 would escalate every worker)"
        );
        assert_eq!(
            parse_size("lots").unwrap_err().to_string(),
            "expected a size such as 500k, 50M or 1G"
        );
        assert_eq!(
            size_bytes("lots").unwrap_err().to_string(),
            "expected a size such as 50M (k, M or G)"
        );
        assert_eq!(
            check("recode.forge", "bitbucket").unwrap_err().to_string(),
            "expected one of auto, github, gitlab, gitea, forgejo, none"
        );
        assert_eq!(count("1"), Ok(1));
        assert_eq!(count("1000"), Ok(1000));
        assert!(count("0").is_err() && count("1001").is_err() && count("-1").is_err());
        assert_eq!(size_bytes("50M"), Ok(50 << 20));
        assert_eq!(size_bytes("512k"), Ok(512 << 10));
        assert_eq!(size_bytes("100"), Ok(100));
        assert!(size_bytes("5T").is_err());
        assert_eq!(check("recode.forge", "GitLab"), Ok(()));
        assert!(check("recode.forge", "bitbucket").is_err());
        assert!(check("recode.pushWip", "maybe").is_err());
        assert!(check("recode.branchPattern", "(").is_err());
        assert_eq!(check("recode.unknownKey", "x"), Ok(()));
        // Every key is in the --help list, once.
        let list = help_list();
        for k in KEYS {
            assert_eq!(
                list.matches(&format!("  {} ", k.name)).count(),
                1,
                "{}",
                k.name
            );
        }
    }

    #[test]
    fn default_pattern_keys() {
        let re = regex::Regex::new(DEFAULT_BRANCH_PATTERN).unwrap();
        let cfg_task = |b: &str| {
            re.captures(b)
                .and_then(|c| c.name("task"))
                .map(|m| m.as_str().to_string())
        };
        assert_eq!(cfg_task("feat/issue-107-bake-path").as_deref(), Some("107"));
        assert_eq!(cfg_task("issue-3").as_deref(), Some("3"));
        assert_eq!(cfg_task("tissue-12"), None);
        assert_eq!(cfg_task("issue-12x"), None);
    }

    #[test]
    fn a_pattern_without_a_task_group_is_refused() {
        for bad in [
            "issue",
            "issue-[0-9]+",
            "(?P<id>[0-9]+)",
            "(issue)-([0-9]+)",
        ] {
            let why = task_pattern(bad).unwrap_err();
            assert!(
                why.to_string().starts_with("it has no task group: "),
                "{bad}: {why}"
            );
            assert_eq!(check(BRANCH_PATTERN, bad), Err(why));
        }
        assert!(
            task_pattern("issue-(")
                .unwrap_err()
                .to_string()
                .contains("unclosed group")
        );
        let grouped = task_pattern(r"^agent/(?P<task>[a-z]+)-").unwrap();
        assert_eq!(
            task_key(&grouped, "agent/login-2").as_deref(),
            Some("login")
        );
        assert_eq!(task_key(&grouped, "main"), None);
        let optional = task_pattern(r"^w(?P<task>[0-9]*)$").unwrap();
        assert_eq!(task_key(&optional, "w"), None);
    }

    /// `recode.watcher` takes its three words in any case, `none`/`false` as `off`, and
    /// refuses anything else naming the words.
    #[test]
    fn watcher_values() {
        assert_eq!(WatcherSetting::parse(" Auto "), Ok(WatcherSetting::Auto));
        assert_eq!(
            WatcherSetting::parse("watchman"),
            Ok(WatcherSetting::Watchman)
        );
        for off in ["off", "none", "false"] {
            assert_eq!(WatcherSetting::parse(off), Ok(WatcherSetting::Off));
        }
        assert_eq!(
            WatcherSetting::parse("inotify"),
            Err(ValueError::NotOneOf(WatcherSetting::VALUES))
        );
    }
}
