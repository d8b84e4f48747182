//! Outcomes structured first (SPEC 1.3 "Outcomes: structured first, bounded"): where an
//! agent's machine output carries an HTTP status or an error type (`api_error_status`,
//! `api_error_type`, `error.status`, `error.code`, `error.type`), it decides before any
//! text is read. 429, 503, 529 and the `overloaded`/`rate_limit` types are transient; 401
//! and 403 need a human; a 400 about context, tokens or request size is `failed` with
//! `fresh`. An explicit status in the agent's own error line (`API Error: Request
//! rejected (429)`, `API Error: 529 …`) is read the same way.

use std::sync::OnceLock;

use super::AgentResult;
use crate::outcome::signs::Kind;

/// What an HTTP status means, with the error's message for a 400.
fn by_status(status: u16, message: &str) -> Option<Kind> {
    match status {
        401..=403 => Some(Kind::NeedsHuman),
        413 => Some(Kind::Fresh),
        400 if about_size(message) => Some(Kind::Fresh),
        408 | 429 | 500..=599 => Some(Kind::Transient),
        _ => None,
    }
}

/// A 400's message about the context window, tokens or the request's size.
fn about_size(message: &str) -> bool {
    static R: OnceLock<regex::Regex> = OnceLock::new();
    R.get_or_init(|| {
        regex::Regex::new(
            r"(?i)\b(context|tokens?|too long|too large|request size|maximum (context|length)|exceeds? the (limit|maximum))\b",
        )
        .expect("built-in size pattern is valid")
    })
    .is_match(message)
}

/// The HTTP status an agent's error line names (`API Error: Request rejected (429)`,
/// `API Error: 529 Overloaded`, `status code 503`, `[API Error: … (Status: 429)]`).
pub(crate) fn status_in_text(message: &str) -> Option<u16> {
    static R: OnceLock<regex::Regex> = OnceLock::new();
    let r = R.get_or_init(|| {
        regex::Regex::new(
            r#"(?i)(?:\b(?:api error:?(?: request rejected)?|request rejected|status(?: code)?:?|http(?: error)?:?)\s*\(?|"code"\s*:\s*)([1-5][0-9]{2})\b"#,
        )
        .expect("built-in status pattern is valid")
    });
    // The newest line that names one: the error the run ended on.
    message
        .lines()
        .rev()
        .find_map(|l| r.captures(l))
        .and_then(|c| c[1].parse().ok())
}

/// What the HTTP status an agent's error line names means (see [`status_in_text`]), for
/// a run that failed with no JSON status: Claude Code's text output.
pub(crate) fn text_kind(message: &str) -> Option<Kind> {
    status_in_text(message).and_then(|s| by_status(s, message))
}

/// What the agent's JSON fields say, before any text is read (SPEC 1.3): an HTTP status
/// (`api_error_status`, `error.status`, Gemini `error.code`, else one its error line
/// names), the named error type (Claude's `api_error_type`/`api_error` and assistant
/// `error`, Gemini's `error.type`, OpenCode's `error.name`, Codex's `error.code`), then a
/// `terminal_reason` that says why it stopped (`prompt_too_long` is fresh), then an error
/// `subtype` or any other `terminal_reason` than completion (cut short).
pub(crate) fn json_kind(r: &AgentResult) -> Option<Kind> {
    let message = r.message.as_deref().unwrap_or("");
    let status = r.api_error_status.or(r.error_code).or_else(|| {
        (r.is_error || r.error_kind.is_some())
            .then(|| status_in_text(message))
            .flatten()
    });
    if let Some(k) = status.and_then(|s| by_status(s, message)) {
        return Some(k);
    }
    if let Some(k) = r.error_kind.as_deref().and_then(error_kind) {
        return Some(k);
    }
    if let Some(k) = r.terminal_reason.as_deref().and_then(error_kind) {
        return Some(k);
    }
    let cut = r.subtype.as_deref().is_some_and(|s| s.starts_with("error"))
        || r.terminal_reason.as_deref().is_some_and(|t| {
            !matches!(
                t,
                "completed" | "complete" | "end_turn" | "success" | "stop"
            )
        });
    cut.then_some(Kind::CutShort)
}

/// The kind an agent's own error name means: Claude's `api_error_type` (`rate_limit_error`,
/// `overloaded_error`, `authentication_error`, …), `api_error` (`connection_failed`) and
/// the `error` of an API-error message (`rate_limit`, `server_error`, …); Gemini CLI's
/// `error.type`/`error.status` (`RESOURCE_EXHAUSTED`, `UNAVAILABLE`, …); Codex's
/// `error.code`; a `terminal_reason` (`prompt_too_long`, `max_turns`).
pub(crate) fn error_kind(name: &str) -> Option<Kind> {
    let n = name.to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| n.contains(w));
    if has(&[
        "prompt_too_long",
        "context_length",
        "context_window",
        "contextwindow",
        "too_long",
    ]) {
        Some(Kind::Fresh)
    } else if has(&[
        "authentication",
        "unauthenticated",
        "unauthorized",
        "permission",
        "forbidden",
        "billing",
        "invalid_api_key",
        "trust",
    ]) {
        Some(Kind::NeedsHuman)
    } else if has(&[
        "rate_limit",
        "ratelimit",
        "overloaded",
        "quota",
        "resource_exhausted",
        "unavailable",
        "server_error",
        "connection",
        "timeout",
        "timed_out",
        "network",
        "stream",
    ]) {
        Some(Kind::Transient)
    } else if has(&[
        "turnlimited",
        "max_turns",
        "turn_limit",
        "step_limit",
        "loop",
    ]) {
        Some(Kind::CutShort)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_decides_and_a_400_only_when_about_size() {
        assert_eq!(by_status(429, ""), Some(Kind::Transient));
        assert_eq!(by_status(529, ""), Some(Kind::Transient));
        assert_eq!(by_status(503, ""), Some(Kind::Transient));
        assert_eq!(by_status(401, ""), Some(Kind::NeedsHuman));
        assert_eq!(by_status(403, ""), Some(Kind::NeedsHuman));
        assert_eq!(
            by_status(400, "prompt is too long: 250000 tokens > 200000 maximum"),
            Some(Kind::Fresh)
        );
        assert_eq!(by_status(400, "tools.0: unknown field `x`"), None);
        assert_eq!(by_status(404, "model not found"), None);
    }

    #[test]
    fn the_status_an_error_line_names() {
        let t = |s| status_in_text(s);
        assert_eq!(
            t("API Error: Request rejected (429) · Rate limit exceeded"),
            Some(429)
        );
        assert_eq!(
            t("API Error: 529 Overloaded. This is a server-side issue"),
            Some(529)
        );
        assert_eq!(t("got status code 503 from upstream"), Some(503));
        assert_eq!(
            t(r#"[API Error: {"error":{"code":400,"status":"INVALID_ARGUMENT"}}]"#),
            Some(400)
        );
        assert_eq!(t("Added 429 tests; all green"), None);
        assert_eq!(t("API Error: Connection refused (ECONNREFUSED)"), None);
    }

    #[test]
    fn error_names_by_kind() {
        assert_eq!(error_kind("rate_limit_error"), Some(Kind::Transient));
        assert_eq!(error_kind("overloaded_error"), Some(Kind::Transient));
        assert_eq!(error_kind("connection_failed"), Some(Kind::Transient));
        assert_eq!(error_kind("RESOURCE_EXHAUSTED"), Some(Kind::Transient));
        assert_eq!(error_kind("authentication_error"), Some(Kind::NeedsHuman));
        assert_eq!(error_kind("PERMISSION_DENIED"), Some(Kind::NeedsHuman));
        assert_eq!(error_kind("prompt_too_long"), Some(Kind::Fresh));
        assert_eq!(error_kind("error_max_turns"), Some(Kind::CutShort));
        assert_eq!(error_kind("invalid_request_error"), None);
        assert_eq!(error_kind("api_error"), None);
    }
}
