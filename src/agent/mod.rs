//! Agents' machine output: Claude Code's `--output-format json`/`stream-json` results,
//! Codex's `exec --json` events, Gemini CLI's `--output-format json`/`stream-json`
//! output, and Claude's session transcripts.
//!
//! An agent's exit code and success flag are not trusted on their own: the JSON fields
//! (`is_error`, `subtype`, `terminal_reason`, `api_error_status`, the assistant event's
//! `error`, Codex `turn.failed`/`error` events, Gemini's `error` object) are read first,
//! then the text (SPEC `exit`, "Outcomes: reading how an attempt ended").

mod events;
pub(crate) mod lines;
mod output;
pub(crate) mod parked;
pub(crate) mod profiles;
pub(crate) mod structured;
mod transcript;

pub use output::parse_result;
pub(crate) use output::{AgentResult, parse_reader};
pub(crate) use profiles::{Profile, profile};
pub(crate) use structured::{error_kind, json_kind};
pub(crate) use transcript::transcript;
pub use transcript::transcript_error;

use jiff::Timestamp;

use crate::outcome::signs::Kind;
use crate::outcome::{self, Outcome, Verdict};

/// Decide an exit's outcome from the rc, the final message and (when given) the agent's
/// JSON result and transcript error.
///
/// The JSON fields come first ([`json_kind`]): a status or error kind that means
/// transient, needs-human or fresh decides; a cut-short sign makes a run `failed` unless
/// the text names a sharper kind. Then the text ([`outcome::classify`]), read as a failure
/// when the JSON says the run failed (`is_error`, `turn.failed`, Gemini `error`). The
/// transcript's last API error sharpens a plain failure. A reset time from the JSON wins
/// over one read from the text.
///
/// `habits` are the agent's: when its exit code is not trusted, rc 0 is read as a
/// failure unless the output says the run completed ([`AgentResult::completed`]) or, for
/// an agent that prints only text, it left a final message (SPEC 1.2: Aider, OpenCode,
/// Copilot exit 0 on failure; their output decides). When it retries silently, a run
/// killed with nothing said ([`killed_silent`]) is `transient` (SPEC 1.3: an agent
/// retrying until killed), bounded by `recode.maxTransient`.
pub fn decide(
    rc: i32,
    message: &str,
    result: Option<&AgentResult>,
    transcript_error: Option<&str>,
    now: Timestamp,
    habits: Habits,
) -> Verdict {
    let exit_trusted = habits.exit_trusted;
    let json = result
        .and_then(json_kind)
        .or_else(|| (rc != 0).then(|| structured::text_kind(message)).flatten());
    let failed_by_json =
        result.is_some_and(|r| r.is_error || r.api_error_status.is_some()) || json.is_some();
    let no_proof = match result {
        Some(r) => !r.completed && (r.saw_json || message.trim().is_empty()),
        None => message.trim().is_empty(),
    };
    let lied = !exit_trusted && rc == 0 && no_proof;
    let rc_for_text = if (failed_by_json || lied) && rc == 0 {
        1
    } else {
        rc
    };
    let mut v = outcome::classify(rc_for_text, message, now);
    let text_sharp = matches!(v.outcome, Outcome::Transient | Outcome::NeedsHuman) || v.fresh;
    let cannot_start = rc == 126 || rc == 127;
    match json {
        Some(Kind::NeedsHuman) if !cannot_start => {
            v = Verdict {
                outcome: Outcome::NeedsHuman,
                fresh: false,
                retry_after: None,
            }
        }
        Some(Kind::Transient) if !cannot_start => {
            v.outcome = Outcome::Transient;
            v.fresh = false;
            if v.retry_after.is_none() {
                v.retry_after = outcome::reset_time(message, now);
            }
        }
        Some(Kind::Fresh) if !text_sharp => {
            v.outcome = Outcome::Failed;
            v.fresh = true;
        }
        Some(Kind::CutShort) if !text_sharp => v.outcome = Outcome::Failed,
        _ => {}
    }
    // The transcript's last API error sharpens a plain failure.
    if let Some(err) = transcript_error
        && matches!(v.outcome, Outcome::Failed | Outcome::Success)
        && !v.fresh
        && (rc != 0 || failed_by_json || v.outcome == Outcome::Failed)
    {
        match error_kind(err) {
            Some(Kind::Transient) => v.outcome = Outcome::Transient,
            Some(Kind::NeedsHuman) => v.outcome = Outcome::NeedsHuman,
            _ => {}
        }
    }
    if habits.retries_silently
        && v.outcome == Outcome::Failed
        && !v.fresh
        && !failed_by_json
        && killed_silent(rc, message)
    {
        v.outcome = Outcome::Transient;
    }
    if v.outcome == Outcome::Transient {
        if let Some(at) = result.and_then(|r| r.resets_at) {
            v.retry_after = Some(at);
        }
    } else {
        v.retry_after = None;
    }
    v
}

/// What git-recode knows of how an agent ends, from its [`Profile`] (SPEC 1.2 "Outcomes:
/// every agent", SPEC 1.3 "Outcomes: structured first, bounded").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Habits {
    /// Its exit code can be trusted ([`Profile::exit_trusted`]).
    pub exit_trusted: bool,
    /// It retries rate limits, overloads and dead connections silently until killed
    /// ([`Profile::retries_silently`]).
    pub retries_silently: bool,
}

impl Habits {
    /// An agent whose exit code is trusted and that says why it stops (a template, an
    /// unknown agent).
    pub const TRUSTED: Habits = Habits {
        exit_trusted: true,
        retries_silently: false,
    };

    /// The habits of `profile` (`None`: [`Habits::TRUSTED`]).
    pub(crate) fn of(profile: Option<&Profile>) -> Habits {
        profile.map_or(Habits::TRUSTED, |p| Habits {
            exit_trusted: p.exit_trusted,
            retries_silently: p.retries_silently,
        })
    }
}

/// The exit codes of a run killed from outside: `timeout`'s 124, and 128 + SIGKILL,
/// SIGTERM, SIGINT as a shell reports them.
const KILLED: [i32; 4] = [124, 137, 143, 130];

/// Whether a run ended killed from outside (`rc` in [`KILLED`]) having said no sign of
/// why: its final message holds no sign ([`outcome::find_sign`]: no limit, credential or
/// context wording). The JSON's errors are the caller's to check.
pub(crate) fn killed_silent(rc: i32, message: &str) -> bool {
    KILLED.contains(&rc) && outcome::find_sign(rc, message).is_none()
}

/// The sentence `record exit` ledgers for an agent that retries silently and was killed
/// with nothing said (SPEC 1.3: an agent retrying until killed is `transient`).
pub(crate) const KILLED_SILENT: &str =
    "git-recode: killed with nothing said (it retries limits and lost connections silently)";

pub(crate) use crate::fence::session_id_ok;

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Timestamp {
        "2026-07-15T00:00:00Z".parse().unwrap()
    }

    /// [`decide`] on exit code `rc` and the parsed output `r`, its message the final one.
    fn verdict(rc: i32, r: &AgentResult) -> Verdict {
        decide(
            rc,
            r.message.as_deref().unwrap(),
            Some(r),
            None,
            now(),
            Habits::TRUSTED,
        )
    }

    #[test]
    fn claude_json_success_and_api_error_reported_as_success() {
        let ok = parse_result(include_str!(
            "../../tests/data/agents/claude/json-success.json"
        ));
        assert_eq!(
            ok.session_id.as_deref(),
            Some("6f1c2b7e-3d4a-4b5c-9e8f-0a1b2c3d4e5f")
        );
        let v = verdict(0, &ok);
        assert_eq!(v.outcome, Outcome::Success);

        let err = parse_result(include_str!(
            "../../tests/data/agents/claude/json-api-error.json"
        ));
        assert!(err.is_error);
        assert_eq!(err.api_error_status, Some(403));
        let v = verdict(0, &err);
        assert_eq!(
            v.outcome,
            Outcome::NeedsHuman,
            "subtype success + is_error + rc 0 is not a success"
        );
    }

    #[test]
    fn claude_stream_rate_limit_resets_at() {
        let r = parse_result(include_str!("../../tests/data/agents/claude/stream.jsonl"));
        assert_eq!(
            r.session_id.as_deref(),
            Some("9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d")
        );
        let v = verdict(0, &r);
        assert_eq!(v.outcome, Outcome::Transient);
        assert_eq!(
            v.retry_after.unwrap().as_second(),
            1784106000,
            "resetsAt wins over the text"
        );
    }

    #[test]
    fn codex_turn_failed_with_exit_zero() {
        let r = parse_result(include_str!("../../tests/data/agents/codex/exec.jsonl"));
        assert_eq!(
            r.session_id.as_deref(),
            Some("0199a213-81c0-7800-8aa1-bbab2a035a53")
        );
        assert!(r.is_error);
        let v = verdict(0, &r);
        assert_eq!(v.outcome, Outcome::Transient);
        // "try again at 3:28 PM" in the system zone: some time after now.
        assert!(v.retry_after.unwrap() > now());
    }

    #[test]
    fn transcript_error_sharpens_a_bare_failure() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        std::fs::write(
            &p,
            include_str!("../../tests/data/agents/claude/transcript-tail.jsonl"),
        )
        .unwrap();
        let e = transcript_error(&p);
        assert_eq!(e.as_deref(), Some("server_error"));
        assert_eq!(
            decide(1, "", None, e.as_deref(), now(), Habits::TRUSTED).outcome,
            Outcome::Transient
        );
        assert_eq!(
            decide(
                1,
                "",
                None,
                Some("authentication_failed"),
                now(),
                Habits::TRUSTED
            )
            .outcome,
            Outcome::NeedsHuman
        );
        assert_eq!(
            decide(1, "", None, None, now(), Habits::TRUSTED).outcome,
            Outcome::Failed
        );
    }

    #[test]
    fn gemini_json_error_object_is_read_first() {
        let quota = parse_result(
            r#"{"session_id":"g-1","response":"","error":{"type":"TerminalQuotaError","message":"You have exhausted your daily quota on this model.","code":429}}"#,
        );
        assert_eq!(quota.session_id.as_deref(), Some("g-1"));
        assert_eq!(quota.error_code, Some(429));
        assert_eq!(json_kind(&quota), Some(Kind::Transient));
        let v = verdict(0, &quota);
        assert_eq!(v.outcome, Outcome::Transient);

        let auth = parse_result(
            "{\"type\":\"init\",\"session_id\":\"g-2\",\"model\":\"gemini-2.5-pro\"}\n{\"type\":\"result\",\"status\":\"error\",\"error\":{\"type\":\"FatalAuthenticationError\",\"message\":\"Failed to login\"}}",
        );
        assert_eq!(auth.session_id.as_deref(), Some("g-2"));
        assert!(auth.is_error);
        let v = verdict(1, &auth);
        assert_eq!(v.outcome, Outcome::NeedsHuman);
    }

    #[test]
    fn claude_error_only_in_the_assistant_event() {
        let text = concat!(
            r#"{"type":"system","subtype":"init","session_id":"s-9"}"#,
            "\n",
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"API Error: Repeated 529 Overloaded errors"}]},"error":"overloaded","session_id":"s-9"}"#,
        );
        let r = parse_result(text);
        assert_eq!(r.error_kind.as_deref(), Some("overloaded"));
        assert_eq!(
            r.message.as_deref(),
            Some("API Error: Repeated 529 Overloaded errors")
        );
        let v = verdict(0, &r);
        assert_eq!(v.outcome, Outcome::Transient);
    }

    #[test]
    fn claude_error_subtype_or_terminal_reason_cuts_a_zero_exit_short() {
        let r = parse_result(
            r#"{"type":"result","subtype":"error_max_turns","is_error":false,"num_turns":40,"session_id":"s-1"}"#,
        );
        assert_eq!(json_kind(&r), Some(Kind::CutShort));
        assert_eq!(
            decide(0, "", Some(&r), None, now(), Habits::TRUSTED).outcome,
            Outcome::Failed
        );
        let r = parse_result(
            r#"{"type":"result","subtype":"success","is_error":false,"terminal_reason":"aborted","result":"Working on it","session_id":"s-1"}"#,
        );
        assert_eq!(
            decide(0, "Working on it", Some(&r), None, now(), Habits::TRUSTED).outcome,
            Outcome::Failed
        );
        let ok = parse_result(
            r#"{"type":"result","subtype":"success","is_error":false,"terminal_reason":"completed","result":"Done: PR #3 opened.","session_id":"s-1"}"#,
        );
        assert_eq!(json_kind(&ok), None);
        assert_eq!(
            decide(
                0,
                "Done: PR #3 opened.",
                Some(&ok),
                None,
                now(),
                Habits::TRUSTED
            )
            .outcome,
            Outcome::Success
        );
    }

    #[test]
    fn codex_dropped_stream_after_reconnects_is_transient() {
        let r = parse_result(concat!(
            r#"{"type":"thread.started","thread_id":"t-4"}"#,
            "\n",
            r#"{"type":"error","message":"Reconnecting... 5/5 (stream disconnected before completion: stream closed before response.completed)"}"#,
            "\n",
            r#"{"type":"turn.failed","error":{"message":"stream disconnected before completion: stream closed before response.completed"}}"#,
        ));
        assert!(r.is_error);
        let v = verdict(1, &r);
        assert_eq!(v.outcome, Outcome::Transient);
        assert_eq!(v.retry_after, None, "the backoff is added by record exit");
    }

    #[test]
    fn a_silent_retrier_killed_with_nothing_said_is_transient() {
        let silent = Habits {
            exit_trusted: false,
            retries_silently: true,
        };
        let at = |rc, text: &str, h| {
            let r = parse_result(text);
            let m = r.message.clone().unwrap_or_default();
            decide(rc, &m, Some(&r), None, now(), h).outcome
        };
        assert_eq!(at(137, "", silent), Outcome::Transient);
        assert_eq!(at(124, "", silent), Outcome::Transient);
        assert_eq!(
            at(137, "", Habits::TRUSTED),
            Outcome::Failed,
            "a hung agent"
        );
        assert_eq!(at(1, "", silent), Outcome::Failed, "not killed");
        let said = r#"{"type":"error","sessionID":"ses_1","error":{"name":"APIError","data":{"message":"invalid x-api-key","statusCode":401}}}"#;
        assert_eq!(
            at(137, said, silent),
            Outcome::NeedsHuman,
            "what it said decides"
        );
        let unknown = r#"{"type":"error","sessionID":"ses_1","error":{"name":"UnknownError","data":{"message":"boom"}}}"#;
        assert_eq!(
            at(137, unknown, silent),
            Outcome::Failed,
            "an error said is no silence"
        );
    }
}
