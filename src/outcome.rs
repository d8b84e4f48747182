//! Outcomes of an attempt, decided from the agent's exit code and final message
//! (SPEC `exit` event; issue "record exit classifies the outcome").
//!
//! An exit code is not trusted alone: rc 0 with a limit or API-error message is not a
//! success. Patterns are anchored narrowly (mostly to the start of a line) so that a
//! success summary that merely mentions rate limiting stays a success.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// How an attempt ended.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// The agent claims it finished (the forge may still find it phantom).
    Success,
    /// The agent failed; resuming may help.
    Failed,
    /// A rate, usage or session limit, or an overloaded service: resumable, not counted.
    Transient,
    /// Auth, permissions, billing, or an agent that could not start.
    NeedsHuman,
    /// Waiting on another issue (`--blocker`): not counted until unblocked.
    Blocked,
}

impl Outcome {
    /// The SPEC's name (`success`, `failed`, `transient`, `needs-human`, `blocked`).
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Failed => "failed",
            Outcome::Transient => "transient",
            Outcome::NeedsHuman => "needs-human",
            Outcome::Blocked => "blocked",
        }
    }
}

/// The verdict on one exit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// The outcome.
    pub outcome: Outcome,
    /// True when resuming the same session would repeat the failure (context window exceeded).
    pub fresh: bool,
    /// When a transient limit resets, where the message says.
    pub retry_after: Option<Timestamp>,
}

struct Patterns {
    needs_human: Vec<regex::Regex>,
    transient: Vec<regex::Regex>,
    fresh: Vec<regex::Regex>,
    api_error: regex::Regex,
    epoch: regex::Regex,
    clock: regex::Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| {
        let re = |s: &str| regex::Regex::new(s).expect("built-in pattern is valid");
        Patterns {
            needs_human: [
                r"(?im)^\s*invalid api key",
                r"(?i)please run /login",
                r"(?i)oauth token has expired",
                r#"(?i)"type"\s*:\s*"(authentication_error|permission_error)""#,
                r"(?im)^\s*API Error:\s*40[13]\b",
                r"(?i)permission denied \(publickey",
                r"(?im)^\s*remote: permission to \S+ denied",
                r"(?i)the requested url returned error: 40[13]\b",
                r"(?im)^\s*fatal: (could not read from remote repository|authentication failed)",
                r"(?im)^\s*(your )?credit balance (is )?too low",
                r"(?im)^\s*not logged in",
                r"(?i)run `?codex login",
                r"(?im)^\s*(error: )?(billing|payment required|your account .{0,40}(suspended|disabled))",
            ]
            .iter()
            .map(|s| re(s))
            .collect(),
            transient: [
                r"(?im)^\s*(claude( ai)? )?(usage|session|5-hour|weekly|daily|opus|sonnet) limit reached",
                r"(?im)^\s*you'?ve hit your (usage |session |weekly |daily )?limit",
                r"(?im)^\s*API Error:\s*(429|500|502|503|504|529)\b",
                r"(?im)^\s*API Error:\s*(stream idle timeout|connection error|request timed out|overloaded)",
                r#"(?i)"type"\s*:\s*"(rate_limit_error|overloaded_error)""#,
                r"(?im)^\s*(the api provider|the server|you) ha(s|ve) (been )?rate.limited",
                r"(?im)^\s*resource has been exhausted",
                r"(?im)^\s*(error: )?(overloaded|service unavailable|too many requests)\b",
            ]
            .iter()
            .map(|s| re(s))
            .collect(),
            fresh: [
                r"(?im)^\s*(API Error: 400 .*)?prompt is too long",
                r"(?i)ran out of room in the model'?s context window",
                r"(?i)context_length_exceeded",
                r"(?im)^\s*(error: )?context window (exceeded|is full)",
            ]
            .iter()
            .map(|s| re(s))
            .collect(),
            api_error: re(r"(?im)^\s*API Error:"),
            epoch: re(r"(?i)limit reached\|(\d{9,11})"),
            clock: re(
                r"(?i)(?:resets|reset at|try again at|again at)\s+(?:(mon|tue|wed|thu|fri|sat|sun)[a-z]*\s+)?(\d{1,2})(?::(\d{2}))?\s*([ap]\.?m\.?)?(?:\s*\(([A-Za-z_]+(?:/[A-Za-z_+\-]+)*)\))?",
            ),
        }
    })
}

/// Decide the outcome of an exit with code `rc` and final `message` (may be empty), at `now`.
///
/// rc 126/127 (the agent could not be started) is `needs-human`; auth, billing and git
/// auth failures are `needs-human`; limits and overloads are `transient` (with
/// `retry_after` when the message names a reset time); a context window exceeded is
/// `failed` with `fresh`; otherwise rc 0 is `success` and anything else `failed`.
pub fn classify(rc: i32, message: &str, now: Timestamp) -> Verdict {
    let p = patterns();
    let plain = |outcome| Verdict {
        outcome,
        fresh: false,
        retry_after: None,
    };
    if rc == 126 || rc == 127 {
        return plain(Outcome::NeedsHuman);
    }
    if p.needs_human.iter().any(|r| r.is_match(message)) {
        return plain(Outcome::NeedsHuman);
    }
    if p.transient.iter().any(|r| r.is_match(message)) {
        return Verdict {
            outcome: Outcome::Transient,
            fresh: false,
            retry_after: reset_time(message, now),
        };
    }
    if p.fresh.iter().any(|r| r.is_match(message)) {
        return Verdict {
            outcome: Outcome::Failed,
            fresh: true,
            retry_after: None,
        };
    }
    if rc == 0 && !p.api_error.is_match(message) {
        plain(Outcome::Success)
    } else {
        plain(Outcome::Failed)
    }
}

/// The reset time a limit message names: `limit reached|<epoch>`, or a clock time
/// (`resets 8:30pm (Asia/Tokyo)`, `try again at 3:28 PM`) taken as its next occurrence
/// after `now`, in the named zone or else the system's.
pub fn reset_time(message: &str, now: Timestamp) -> Option<Timestamp> {
    let p = patterns();
    if let Some(c) = p.epoch.captures(message) {
        return c[1]
            .parse::<i64>()
            .ok()
            .and_then(|s| Timestamp::from_second(s).ok());
    }
    let c = p.clock.captures(message)?;
    let mut hour: i8 = c[2].parse().ok()?;
    let minute: i8 = c.get(3).map_or(Some(0), |m| m.as_str().parse().ok())?;
    if let Some(ampm) = c.get(4) {
        let pm = ampm.as_str().to_ascii_lowercase().starts_with('p');
        if hour == 12 {
            hour = 0;
        }
        if pm {
            hour += 12;
        }
    }
    if hour > 23 || minute > 59 {
        return None;
    }
    let tz = match c.get(5) {
        Some(name) => jiff::tz::TimeZone::get(name.as_str()).ok()?,
        None => jiff::tz::TimeZone::system(),
    };
    let weekday = c
        .get(1)
        .map(|d| match d.as_str().to_ascii_lowercase().as_str() {
            "mon" => jiff::civil::Weekday::Monday,
            "tue" => jiff::civil::Weekday::Tuesday,
            "wed" => jiff::civil::Weekday::Wednesday,
            "thu" => jiff::civil::Weekday::Thursday,
            "fri" => jiff::civil::Weekday::Friday,
            "sat" => jiff::civil::Weekday::Saturday,
            _ => jiff::civil::Weekday::Sunday,
        });
    let local = now.to_zoned(tz);
    let mut candidate = local
        .with()
        .hour(hour)
        .minute(minute)
        .second(0)
        .subsec_nanosecond(0)
        .build()
        .ok()?;
    // The next such time (on the named weekday, when one is named) after now.
    for _ in 0..8 {
        if candidate.timestamp() > now && weekday.is_none_or(|d| candidate.weekday() == d) {
            break;
        }
        candidate = candidate.tomorrow().ok()?;
    }
    Some(candidate.timestamp())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Timestamp {
        "2026-11-29T10:00:00Z".parse().unwrap()
    }

    #[test]
    fn epoch_reset() {
        let v = classify(1, "Claude AI usage limit reached|1749924000", now());
        assert_eq!(v.outcome, Outcome::Transient);
        assert_eq!(v.retry_after.unwrap().as_second(), 1749924000);
    }

    #[test]
    fn clock_reset_in_named_zone() {
        // 8:30pm Tokyo = 11:30 UTC, after 10:00 UTC the same day.
        let v = classify(
            1,
            "You've hit your session limit · resets 8:30pm (Asia/Tokyo)",
            now(),
        );
        assert_eq!(v.retry_after.unwrap().to_string(), "2026-11-29T11:30:00Z");
        // 1pm Lisbon (UTC+0 in winter) is 13:00 UTC.
        let v = classify(
            0,
            "You've hit your limit · resets 1pm (Europe/Lisbon)",
            now(),
        );
        assert_eq!(v.outcome, Outcome::Transient);
        assert_eq!(v.retry_after.unwrap().to_string(), "2026-11-29T13:00:00Z");
    }

    #[test]
    fn weekday_resets() {
        // 2026-11-29 is a Sunday: "Mon 9am (UTC)" is the next day.
        let v = classify(
            1,
            "You've hit your weekly limit · resets Mon 9am (UTC)",
            now(),
        );
        assert_eq!(v.retry_after.unwrap().to_string(), "2026-11-30T09:00:00Z");
    }

    #[test]
    fn success_mentioning_rate_limits_stays_success() {
        for m in [
            "Implemented the rate limiter: clients now get HTTP 429 when over quota. Tests pass.",
            "Done. Added handling for rate_limit errors and overloaded upstreams; PR #4 opened.",
            "",
        ] {
            assert_eq!(classify(0, m, now()).outcome, Outcome::Success, "{m}");
        }
    }

    /// Every row of `tests/data/final-messages.tsv` (a copy of `shared/corpus`, plus the
    /// real messages added since) gets its expected outcome and `fresh` flag.
    #[test]
    fn corpus_of_real_final_messages() {
        let corpus = include_str!("../tests/data/final-messages.tsv");
        let mut rows = 0;
        for line in corpus
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        {
            let cols: Vec<&str> = line.splitn(4, '\t').collect();
            assert_eq!(cols.len(), 4, "bad corpus row: {line}");
            let rc: i32 = cols[0].parse().unwrap();
            let message = cols[3].replace("\\n", "\n");
            let v = classify(rc, &message, now());
            assert_eq!(v.outcome.as_str(), cols[1], "rc {rc}: {message}");
            assert_eq!(v.fresh, cols[2] == "true", "fresh for: {message}");
            // A transient outcome whose text names a reset time carries it.
            let names_reset = ["resets ", "limit reached|", "try again at ", "reset at "]
                .iter()
                .any(|k| message.to_lowercase().contains(k));
            if v.outcome == Outcome::Transient {
                assert_eq!(
                    v.retry_after.is_some(),
                    names_reset,
                    "retry_after for: {message}"
                );
                if let Some(t) = v.retry_after {
                    assert!(
                        t > now() || message.contains('|'),
                        "reset after now for: {message}"
                    );
                }
            }
            rows += 1;
        }
        assert!(rows >= 40, "the corpus has {rows} rows");
    }

    #[test]
    fn cannot_start_is_needs_human() {
        assert_eq!(classify(127, "", now()).outcome, Outcome::NeedsHuman);
        assert_eq!(classify(126, "", now()).outcome, Outcome::NeedsHuman);
    }
}
