//! Outcomes of an attempt, decided from the agent's exit code and final message
//! (SPEC `exit` event and "Outcomes: reading how an attempt ended").
//!
//! An exit code is not trusted alone: rc 0 with a limit or API-error message is not a
//! success. The phrases that decide are data, in [`signs::SIGNS`] (each with the agent
//! and the public source it was read from); reset times are read by [`reset`]; the
//! backoff for a transient exit that names no reset is [`backoff`].

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// How an attempt ended.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, strum::IntoStaticStr)]
#[cfg_attr(test, derive(strum::EnumIter))]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
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
        self.into()
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

pub(crate) mod backoff;
pub(crate) mod reset;
pub(crate) mod signs;

pub(crate) use reset::{reset_time, reset_time_in};
use signs::{Kind, SIGNS, Sign};

/// How many of the message's last non-empty lines are read before the rest
/// (SPEC "Outcomes": the JSON fields, then the last lines, then the rest).
pub(crate) const LAST_LINES: usize = 5;

/// The text as the signs are matched against it: JSON string escapes undone (twice, for
/// JSON inside JSON), ANSI escapes stripped, curly quotes straightened, lowercase, runs
/// of blanks collapsed to one space. Line breaks are kept.
pub(crate) fn normalize(text: &str) -> String {
    let once = unescape_json(text);
    let twice = if once.contains('\\') {
        unescape_json(&once)
    } else {
        once
    };
    let plain = ansi().replace_all(&twice, "");
    let mut out = String::with_capacity(plain.len());
    let mut blank = false;
    for c in plain.chars() {
        let c = match c {
            '\u{2018}' | '\u{2019}' | '\u{02bc}' => '\'',
            '\u{201c}' | '\u{201d}' => '"',
            '\t' | '\r' | '\u{a0}' => ' ',
            c => c,
        };
        if c == ' ' {
            if blank {
                continue;
            }
            blank = true;
        } else {
            blank = false;
        }
        out.extend(c.to_lowercase());
    }
    out
}

fn ansi() -> &'static regex::Regex {
    static R: OnceLock<regex::Regex> = OnceLock::new();
    R.get_or_init(|| {
        regex::Regex::new(
            r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]|\x1b",
        )
        .expect("built-in ANSI pattern is valid")
    })
}

/// Undo JSON string escapes (`\n`, `\"`, `\\`, `\uXXXX`, …); anything else is kept as is.
fn unescape_json(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek().copied() {
            Some('n') => out.push('\n'),
            Some('t') | Some('r') => out.push(' '),
            Some('"') => out.push('"'),
            Some('\\') => out.push('\\'),
            Some('/') => out.push('/'),
            Some('u') => {
                let hex: String = chars.clone().skip(1).take(4).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(ch) if hex.len() == 4 => {
                        out.push(ch);
                        for _ in 0..4 {
                            chars.next();
                        }
                    }
                    _ => {
                        out.push('\\');
                        continue;
                    }
                }
            }
            _ => {
                out.push('\\');
                continue;
            }
        }
        chars.next();
    }
    out
}

/// A compiled sign.
enum Matcher {
    /// A literal; `word_start`/`word_end`: the neighbour there must not be a word character.
    Literal {
        text: &'static str,
        word_start: bool,
        word_end: bool,
    },
    Regex(regex::Regex),
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

impl Matcher {
    fn is_match(&self, line: &str) -> bool {
        match self {
            Matcher::Regex(r) => r.is_match(line),
            Matcher::Literal {
                text,
                word_start,
                word_end,
            } => line.match_indices(text).any(|(i, m)| {
                let before_ok = !word_start || !line[..i].chars().next_back().is_some_and(is_word);
                let after_ok =
                    !word_end || !line[i + m.len()..].chars().next().is_some_and(is_word);
                before_ok && after_ok
            }),
        }
    }
}

fn matchers() -> &'static [Matcher] {
    static M: OnceLock<Vec<Matcher>> = OnceLock::new();
    M.get_or_init(|| {
        SIGNS
            .iter()
            .map(|s: &Sign| {
                if s.regex {
                    Matcher::Regex(
                        regex::Regex::new(s.pattern).expect("built-in sign pattern is valid"),
                    )
                } else {
                    Matcher::Literal {
                        text: s.pattern,
                        word_start: s.pattern.chars().next().is_some_and(is_word),
                        word_end: s.pattern.chars().next_back().is_some_and(is_word),
                    }
                }
            })
            .collect()
    })
}

/// A runner's prefix at the start of a line (`Internal error:`, `ProviderError:`,
/// `[1308][`, `[INFO]`, `⏺`, `■`), removed so that line-anchored signs still match.
fn runner_prefix() -> &'static regex::Regex {
    static R: OnceLock<regex::Regex> = OnceLock::new();
    R.get_or_init(|| {
        regex::Regex::new(r"^(?:\s*(?:\[[^\]\n]*\]?|[a-z_.]*error:|internal error:|warn(?:ing)?:|info:|fatal:|[⏺■●✗✖×>*-]))+\s*")
            .expect("built-in prefix pattern is valid")
    })
}

/// Words with which an agent claims it finished: a sign on such a line of an rc-0
/// message does not flip it (SPEC "Outcomes": "added a rate limiter" is no limit).
fn success_wording() -> &'static regex::Regex {
    static R: OnceLock<regex::Regex> = OnceLock::new();
    R.get_or_init(|| {
        regex::Regex::new(
            r"\b(done|implemented|fixed|added|opened|refactored|committed|pushed|merged|wrote|all (\d+ )?tests (pass|passed|green)|tests (pass|passed|are green|green)|(pr|pull request) #\d+)\b",
        )
        .expect("built-in success pattern is valid")
    })
}

/// Rank of a kind when several signs are found in one region: needs-human, then fresh,
/// then transient, then cut short.
fn rank(kind: Kind) -> u8 {
    match kind {
        Kind::NeedsHuman => 0,
        Kind::Fresh => 1,
        Kind::Transient => 2,
        Kind::CutShort => 3,
    }
}

/// The strongest sign (by [`rank`]) on the given lines, and the index of its row.
fn strongest<'a>(lines: impl Iterator<Item = &'a str>) -> Option<(Kind, usize)> {
    let m = matchers();
    let mut best: Option<(Kind, usize)> = None;
    for line in lines {
        let stripped = runner_prefix().replace(line, "");
        for (i, matcher) in m.iter().enumerate() {
            if best.is_some_and(|(k, _)| rank(k) <= rank(SIGNS[i].kind)) {
                continue;
            }
            if matcher.is_match(line) || matcher.is_match(&stripped) {
                best = Some((SIGNS[i].kind, i));
            }
        }
    }
    best
}

/// The sign that decides the message, if any: the last [`LAST_LINES`] non-empty lines
/// first, then the rest. With rc 0 and success wording anywhere in the message, only
/// last lines without success wording are read (a success summary that mentions a limit
/// stays a success).
pub(crate) fn find_sign(rc: i32, message: &str) -> Option<(Kind, &'static Sign)> {
    let text = normalize(message);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let split = lines.len().saturating_sub(LAST_LINES);
    let (body, last) = lines.split_at(split);
    let claims_success = rc == 0 && success_wording().is_match(&text);
    let in_last = strongest(
        last.iter()
            .copied()
            .filter(|l| !(claims_success && success_wording().is_match(l))),
    );
    let found = match in_last {
        Some(f) => Some(f),
        None if claims_success => None,
        None => strongest(body.iter().copied()),
    };
    found.map(|(k, i)| (k, &SIGNS[i]))
}

/// Decide the outcome of an exit with code `rc` and final `message` (may be empty), at
/// `now`, reading clock times without a zone in the system's zone.
///
/// SPEC "Outcomes: reading how an attempt ended": rc 126/127 (the agent could not be
/// started) is `needs-human`; otherwise the strongest sign in the message (see
/// [`find_sign`], table [`signs::SIGNS`]) decides: needs-human; failed with `fresh`;
/// transient (with `retry_after` when the message names a reset, see [`reset`]); cut
/// short (failed). With no sign, rc 0 is `success` and anything else `failed`.
pub fn classify(rc: i32, message: &str, now: Timestamp) -> Verdict {
    classify_in(rc, message, now, &jiff::tz::TimeZone::system())
}

/// [`classify`] with the zone for clock times that name none given explicitly.
pub(crate) fn classify_in(
    rc: i32,
    message: &str,
    now: Timestamp,
    local: &jiff::tz::TimeZone,
) -> Verdict {
    let plain = |outcome| Verdict {
        outcome,
        fresh: false,
        retry_after: None,
    };
    if rc == 126 || rc == 127 {
        return plain(Outcome::NeedsHuman);
    }
    match find_sign(rc, message).map(|(k, _)| k) {
        Some(Kind::NeedsHuman) => match limit_with_reset(message, now, local) {
            Some(at) => Verdict {
                outcome: Outcome::Transient,
                fresh: false,
                retry_after: Some(at),
            },
            None => plain(Outcome::NeedsHuman),
        },
        Some(Kind::Fresh) => Verdict {
            outcome: Outcome::Failed,
            fresh: true,
            retry_after: None,
        },
        Some(Kind::Transient) => Verdict {
            outcome: Outcome::Transient,
            fresh: false,
            retry_after: reset_time_in(message, now, local),
        },
        Some(Kind::CutShort) => plain(Outcome::Failed),
        None if rc == 0 => plain(Outcome::Success),
        None => plain(Outcome::Failed),
    }
}

/// SPEC 1.2 "Outcomes": a limit that names a retry delay or a reset is `transient` even
/// when its text also mentions plans, billing or credits. The reset when `message` names
/// a limit (a limit noun) and a reset, and no credential (a key, token, login or
/// permission problem stays `needs-human`).
fn limit_with_reset(
    message: &str,
    now: Timestamp,
    local: &jiff::tz::TimeZone,
) -> Option<Timestamp> {
    static LIMIT: OnceLock<regex::Regex> = OnceLock::new();
    static CREDENTIAL: OnceLock<regex::Regex> = OnceLock::new();
    let limit = LIMIT.get_or_init(|| {
        regex::Regex::new(r"\b(quota|rate[ -]?limit(s|ed)?|limits?|capacity|exhausted)\b")
            .expect("built-in limit pattern is valid")
    });
    let credential = CREDENTIAL.get_or_init(|| {
        regex::Regex::new(
            r"\b(api[ _-]?key|token|credentials?|authenticat\w*|unauthori[sz]ed|log ?in|sign ?in|permission\w*|forbidden)\b",
        )
        .expect("built-in credential pattern is valid")
    });
    let text = normalize(message);
    if !limit.is_match(&text) || credential.is_match(&text) {
        return None;
    }
    reset_time_in(message, now, local)
}

/// An outcome as read again today (SPEC 1.2 "old ledgers heal"): a recorded `failed`
/// whose stored message reads `transient` under the current reading is `transient`,
/// with the reset the message names (read from `at`, the exit's time); any other
/// outcome stays as recorded (a re-reading never makes an outcome more severe).
pub(crate) fn reread(
    recorded: Outcome,
    rc: i32,
    message: Option<&str>,
    at: Timestamp,
) -> Option<(Outcome, Option<Timestamp>)> {
    let message = message.filter(|m| !m.trim().is_empty())?;
    if recorded != Outcome::Failed {
        return None;
    }
    let v = classify(rc, message, at);
    (v.outcome == Outcome::Transient).then_some((Outcome::Transient, v.retry_after))
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

    /// Every row of `tests/data/final-messages.tsv` (the rows of `shared/corpus` first,
    /// then real messages of every agent, each with its public source) gets its
    /// expected outcome, `fresh` flag and exact `retry_after` (read in UTC).
    #[test]
    fn corpus_of_real_final_messages() {
        let corpus = include_str!("../../tests/data/final-messages.tsv");
        let mut rows = 0;
        let mut sources = std::collections::BTreeSet::new();
        let mut kind = "";
        let mut kinds = Vec::new();
        for line in corpus.lines().filter(|l| !l.trim().is_empty()) {
            if let Some(k) = line.strip_prefix("## kind: ") {
                kind = k.split(' ').next().unwrap();
                kinds.push(kind);
                continue;
            }
            if line.starts_with('#') {
                continue;
            }
            let cols: Vec<&str> = line.splitn(6, '\t').collect();
            assert_eq!(cols.len(), 6, "bad corpus row: {line}");
            // Each row sits in the group of its kind (SPEC 1.2: signs grow by kind).
            let in_group = match kind {
                "limit-with-reset" => cols[1] == "transient" && !cols[3].is_empty(),
                "limit" => cols[1] == "transient" && cols[3].is_empty(),
                "cannot-start" => cols[1] == "needs-human" && ["126", "127"].contains(&cols[0]),
                "credential" => cols[1] == "needs-human",
                "context" => cols[1] == "failed" && cols[2] == "true",
                "failure" => cols[1] == "failed" && cols[2].is_empty(),
                "success" => cols[1] == "success",
                other => panic!("unknown kind {other:?} before {line}"),
            };
            assert!(in_group, "row outside its kind {kind:?}: {line}");
            let rc: i32 = cols[0].parse().unwrap();
            let message = cols[5].replace("\\n", "\n");
            let v = classify_in(rc, &message, now(), &jiff::tz::TimeZone::UTC);
            assert_eq!(v.outcome.as_str(), cols[1], "rc {rc}: {message}");
            assert_eq!(v.fresh, cols[2] == "true", "fresh for: {message}");
            let got = v
                .retry_after
                .map(crate::clock::format_secs)
                .unwrap_or_default();
            assert_eq!(got, cols[3], "retry_after for: {message}");
            assert!(!cols[4].is_empty(), "source of: {message}");
            sources.insert(cols[4]);
            rows += 1;
        }
        assert!(rows >= 150, "the corpus has {rows} rows");
        assert_eq!(
            kinds,
            [
                "limit-with-reset",
                "limit",
                "cannot-start",
                "credential",
                "context",
                "failure",
                "success"
            ]
        );
        assert!(sources.len() >= 40, "{} sources", sources.len());
    }

    #[test]
    fn cannot_start_is_needs_human() {
        assert_eq!(classify(127, "", now()).outcome, Outcome::NeedsHuman);
        assert_eq!(classify(126, "", now()).outcome, Outcome::NeedsHuman);
    }

    /// A tiny deterministic xorshift64 generator for the noise test.
    struct XorShift(u64);

    impl XorShift {
        fn next(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.0 = x;
            x
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    fn json_escape(s: &str) -> String {
        serde_json::to_string(s).unwrap()
    }

    /// Each sign's example, wrapped in noise (runner prefixes, JSON-string escaping,
    /// ANSI codes, trailing log lines, case changes), keeps its kind.
    #[test]
    fn every_sign_survives_noise() {
        let prefixes = [
            "",
            "Internal error: ",
            "[1308][",
            "Error: ",
            "ERROR ",
            "ProviderBusinessError: ",
            "[2026-11-12T11:47:04.135Z] [INFO] ",
            "\u{1b}[31m",
            "⏺ ",
        ];
        let trailers = [
            "",
            "\n    at detectProviderBusinessError (cli.cjs:1738:9096)",
            "\u{1b}[0m",
            "\n\n",
            "\nexit status 1",
        ];
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
        for seed_round in 0..12 {
            for sign in SIGNS {
                let mut text: String = sign.example.to_string();
                // Case changes (ASCII letters only).
                match rng.below(3) {
                    0 => text = text.to_uppercase(),
                    1 => {
                        text = text
                            .chars()
                            .map(|c| {
                                if c.is_ascii_alphabetic() && rng.below(2) == 0 {
                                    c.to_ascii_uppercase()
                                } else {
                                    c
                                }
                            })
                            .collect()
                    }
                    _ => {}
                }
                let prefix = prefixes[rng.below(prefixes.len())];
                // Regex rows anchored to a whole line keep their own line.
                let anchored = sign.regex && sign.pattern.starts_with('^');
                let mut wrapped = if anchored {
                    format!("{prefix}\n{text}")
                } else {
                    format!("{prefix}{text}")
                };
                if rng.below(3) == 0 {
                    wrapped = format!(r#"{{"type":"error","message":{}}}"#, json_escape(&wrapped));
                }
                let lines = rng.below(3);
                for _ in 0..lines {
                    wrapped.push_str(trailers[rng.below(trailers.len())]);
                }
                let rc = if rng.below(2) == 0 { 0 } else { 1 };
                let found = find_sign(rc, &wrapped).map(|(k, _)| k);
                assert_eq!(
                    found,
                    Some(sign.kind),
                    "round {seed_round}, rc {rc}, sign {:?} ({:?}) in {wrapped:?}",
                    sign.pattern,
                    sign.agent
                );
                let v = classify_in(rc, &wrapped, now(), &jiff::tz::TimeZone::UTC);
                let want = match sign.kind {
                    Kind::Transient => Outcome::Transient,
                    Kind::NeedsHuman => Outcome::NeedsHuman,
                    Kind::Fresh | Kind::CutShort => Outcome::Failed,
                };
                assert_eq!(v.outcome, want, "{wrapped:?}");
                assert_eq!(v.fresh, sign.kind == Kind::Fresh, "{wrapped:?}");
            }
        }
    }

    /// Success summaries that mention limits, sessions or quotas, and failures whose
    /// test names contain such words, keep their kind.
    #[test]
    fn mentions_of_limits_do_not_change_the_kind() {
        for m in [
            "Added a rate limiter to the API; all 58 tests pass.",
            "Implemented session handling and quota tests; PR #41 opened.",
            "Fixed the retry loop that hit \"usage limit reached\" errors in the worker; added a regression test.",
            "Refactored the 429 Too Many Requests handler.\nAll tests pass.",
            "Done. Handles ECONNRESET, socket hang up and timeouts with retries.",
            "Implemented the overloaded_error and rate_limit_error mapping; tests green.",
            "Added docs: 'You've hit your limit · resets 4pm' is shown when users exceed quota. PR #7 opened.",
        ] {
            assert_eq!(classify(0, m, now()).outcome, Outcome::Success, "{m}");
        }
        for m in [
            "test api::tests::test_rate_limit ... FAILED\ntest result: FAILED. 10 passed; 1 failed",
            "FAILED tests/test_quota.py::test_quota_exceeded_returns_429 - AssertionError",
            "test session::tests::session_limit_reached_is_reported ... FAILED",
            "error[E0425]: cannot find value `rate_limit_reached` in this scope",
            "thread 'limits::usage_limit' panicked at src/limits.rs:40:9",
        ] {
            let v = classify(1, m, now());
            assert_eq!((v.outcome, v.fresh), (Outcome::Failed, false), "{m}");
        }
        // A limit in the body of a success message does not flip it; in its last line it does.
        let body = "Implemented the parser.\nEarlier: Claude AI usage limit reached|1764000000\nthen resumed.\n1\n2\n3\n4\nAll tests pass, PR #5 opened.";
        assert_eq!(classify(0, body, now()).outcome, Outcome::Success);
        let tail = "Implemented the parser.\n\nClaude AI usage limit reached|1764000000";
        assert_eq!(classify(0, tail, now()).outcome, Outcome::Transient);
    }
}

#[cfg(test)]
mod name_tests {
    use strum::IntoEnumIterator;

    use super::Outcome;

    /// The SPEC's name is serde's name, for every outcome.
    #[test]
    fn as_str_is_the_serialized_name() {
        for o in Outcome::iter() {
            assert_eq!(serde_json::to_value(o).unwrap().as_str(), Some(o.as_str()));
        }
    }
}
