//! Reading one value by the shape of its key: durations, counts, sizes, booleans, the
//! branch pattern, and [`check`], the check `doctor` runs on every key.

use super::keys::{DEFAULT_BRANCH_PATTERN, KEYS, Kind, MAX_ATTEMPTS_LIMIT};
use crate::clock;

/// A config duration in seconds: a whole number with a unit (`90s`, `30m`, `2h`, `1d`).
/// A bare number is refused: `stallAfter=10` would silently mean ten seconds (SPEC 1.2
/// "durations need a unit").
///
/// Errors: the text saying what was expected.
pub fn duration_secs(value: &str) -> Result<i64, String> {
    let v = value.trim();
    if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "'{v}' has no unit: a duration is a number followed by s, m, h or d, like {v}m"
        ));
    }
    clock::parse_duration(v).map_err(|e| e.to_string())
}

/// `recode.maxAttempts`: a whole number from 1 to [`MAX_ATTEMPTS_LIMIT`].
///
/// Errors: the text saying what was expected.
pub fn count(value: &str) -> Result<u32, String> {
    let v = value.trim();
    let range = format!("expected a whole number from 1 to {MAX_ATTEMPTS_LIMIT}");
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return Err(range);
    }
    match v.parse::<u64>() {
        Ok(0) => Err(format!("{range} (0 would escalate every worker)")),
        Ok(n) if n <= u64::from(MAX_ATTEMPTS_LIMIT) => Ok(n as u32),
        _ => Err(format!("{range} (a cap nobody reaches is no cap)")),
    }
}

/// A size in bytes: a whole number with an optional unit `k`, `M`, `G` (powers of 1024,
/// as git's `core.bigFileThreshold`).
///
/// Errors: the text saying what was expected.
pub fn size_bytes(value: &str) -> Result<u64, String> {
    let v = value.trim();
    let bad = || "expected a size such as 50M (k, M or G)".to_string();
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
/// Errors: the text saying what was expected.
pub fn check(key: &str, value: &str) -> Result<(), String> {
    let Some(k) = KEYS.iter().find(|k| k.name.eq_ignore_ascii_case(key)) else {
        return Ok(());
    };
    match k.kind {
        Kind::Text => Ok(()),
        Kind::TaskRegex => task_pattern(value).map(|_| ()),
        Kind::Duration => duration_secs(value).map(|_| ()),
        Kind::Count => count(value).map(|_| ()),
        Kind::Bool => parse_bool(value)
            .map(|_| ())
            .ok_or_else(|| "expected true or false".into()),
        Kind::Size => size_bytes(value).map(|_| ()),
        Kind::OneOf(words) => {
            if words.contains(&value.trim().to_ascii_lowercase().as_str()) {
                Ok(())
            } else {
                Err(format!("expected one of {}", words.join(", ")))
            }
        }
    }
}

/// `recode.branchPattern` compiled: a regular expression with a `task` group, which
/// names each worker's task (SPEC 1.3 "Errors a newcomer meets (more)": a pattern without
/// one is refused, since every branch would become a task of its own and the branches of
/// one task would never share a ledger).
///
/// Errors: the text saying what is wrong (a bad regex, no `task` group).
pub fn task_pattern(value: &str) -> Result<regex::Regex, String> {
    let re = regex::Regex::new(value).map_err(|e| e.to_string())?;
    if re.capture_names().flatten().any(|n| n == "task") {
        Ok(re)
    } else {
        Err(format!(
            "it has no task group: write the task key's part as (?P<task>...), as the default does: {DEFAULT_BRANCH_PATTERN}"
        ))
    }
}

/// A size in bytes: a whole number with an optional `k`, `M` or `G` suffix (powers of
/// 1024, as git's own `core.bigFileThreshold`; either case), e.g. `10k`, `50M`.
///
/// Errors: a message saying what is expected.
pub fn parse_size(value: &str) -> Result<u64, String> {
    let v = value.trim();
    let bad = || "expected a size such as 500k, 50M or 1G".to_string();
    let (num, unit) = match v.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => (&v[..i], v[i..].trim()),
        None => (v, ""),
    };
    let n: u64 = num.parse().map_err(|_| bad())?;
    let mult: u64 = match unit {
        "" => 1,
        "k" | "K" => 1 << 10,
        "m" | "M" => 1 << 20,
        "g" | "G" => 1 << 30,
        _ => return Err(bad()),
    };
    n.checked_mul(mult).ok_or_else(bad)
}

/// git's boolean spellings: `true/yes/on/1` and `false/no/off/0`.
pub(super) fn parse_bool(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" => Some(true),
        "false" | "no" | "off" | "0" => Some(false),
        _ => None,
    }
}

/// [`Config::task_of`] for a compiled pattern (one with a `task` group,
/// [`task_pattern`]): the group's text, `None` when the pattern does not match or the
/// group is empty (an empty key would put unrelated branches into one ledger).
pub(super) fn task_key(pattern: &regex::Regex, branch: &str) -> Option<String> {
    let caps = pattern.captures(branch)?;
    Some(caps.name("task")?.as_str().to_string()).filter(|k| !k.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::keys::{BRANCH_PATTERN, help_list};

    #[test]
    fn values_are_checked_by_their_shape() {
        assert_eq!(duration_secs("90s"), Ok(90));
        assert_eq!(duration_secs("2h"), Ok(7200));
        assert!(duration_secs("10").unwrap_err().contains("has no unit"));
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
            assert!(why.starts_with("it has no task group: "), "{bad}: {why}");
            assert_eq!(check(BRANCH_PATTERN, bad), Err(why));
        }
        assert!(
            task_pattern("issue-(")
                .unwrap_err()
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
}
