//! Agents' machine output: Claude Code's `--output-format json`/`stream-json` results,
//! Codex's `exec --json` events, and Claude's session transcripts.
//!
//! An agent's exit code and success flag are not trusted on their own: `is_error`,
//! `api_error_status`, a `turn.failed` event and the text decide (SPEC `exit`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use jiff::Timestamp;

use crate::outcome::{self, Outcome, Verdict};

/// What an agent's JSON output said.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentResult {
    /// Claude's `session_id`, or Codex's `thread_id`.
    pub session_id: Option<String>,
    /// The final text: Claude's `result`, Codex's failure message or last agent message.
    pub message: Option<String>,
    /// The run failed by the agent's own account (`is_error`, `turn.failed`).
    pub is_error: bool,
    /// Claude's `api_error_status` (HTTP status of the failing API call).
    pub api_error_status: Option<u16>,
    /// When a rate limit resets (`rate_limit_event.rate_limit_info.resetsAt`).
    pub resets_at: Option<Timestamp>,
}

/// Parse Claude `json` (one object), Claude `stream-json` or Codex `--json` (JSON lines).
/// Lines that are not JSON are skipped (agents interleave logs).
pub fn parse_result(text: &str) -> AgentResult {
    let mut r = AgentResult::default();
    let values: Vec<serde_json::Value> =
        match serde_json::from_str::<serde_json::Value>(text.trim()) {
            Ok(v @ serde_json::Value::Object(_)) => vec![v],
            _ => text
                .lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l.trim()).ok())
                .collect(),
        };
    for v in values {
        let ty = v["type"].as_str().unwrap_or("");
        if let Some(s) = v["session_id"].as_str() {
            r.session_id = Some(s.to_string());
        }
        match ty {
            "result" => {
                r.is_error = v["is_error"].as_bool().unwrap_or(false);
                r.api_error_status = v["api_error_status"]
                    .as_u64()
                    .and_then(|n| u16::try_from(n).ok());
                if let Some(m) = v["result"].as_str() {
                    r.message = Some(m.to_string());
                }
                if r.message.is_none()
                    && r.is_error
                    && let Some(e) = v["errors"]
                        .as_array()
                        .and_then(|a| a.first())
                        .and_then(|e| e.as_str())
                {
                    r.message = Some(e.to_string());
                }
            }
            "rate_limit_event" => {
                let info = &v["rate_limit_info"];
                if info["status"].as_str() != Some("allowed")
                    && let Some(at) = info["resetsAt"].as_i64()
                {
                    r.resets_at = Timestamp::from_second(at).ok();
                }
            }
            "thread.started" => {
                if let Some(t) = v["thread_id"].as_str() {
                    r.session_id = Some(t.to_string());
                }
            }
            "turn.failed" => {
                r.is_error = true;
                if let Some(m) = v["error"]["message"].as_str() {
                    r.message = Some(m.to_string());
                }
            }
            "item.completed" if !r.is_error => {
                if v["item"]["type"].as_str() == Some("agent_message")
                    && let Some(t) = v["item"]["text"].as_str()
                {
                    r.message = Some(t.to_string());
                }
            }
            _ => {}
        }
    }
    r
}

/// Decide an exit's outcome from the rc, the final message and (when given) the agent's
/// JSON result and transcript error. The JSON's `is_error`/`api_error_status` override a
/// zero rc; a reset time from the JSON wins over one read from the text.
pub fn decide(
    rc: i32,
    message: &str,
    result: Option<&AgentResult>,
    transcript_error: Option<&str>,
    now: Timestamp,
) -> Verdict {
    let failed_by_json = result.is_some_and(|r| r.is_error || r.api_error_status.is_some());
    let rc_for_text = if failed_by_json && rc == 0 { 1 } else { rc };
    let mut v = outcome::classify(rc_for_text, message, now);
    if let Some(status) = result.and_then(|r| r.api_error_status)
        && v.outcome == Outcome::Failed
        && !v.fresh
    {
        v.outcome = match status {
            401..=403 => Outcome::NeedsHuman,
            408 | 429 | 500..=599 => Outcome::Transient,
            _ => Outcome::Failed,
        };
    }
    // The transcript's last API error sharpens a plain failure.
    if let Some(err) = transcript_error
        && matches!(v.outcome, Outcome::Failed | Outcome::Success)
        && !v.fresh
        && (rc != 0 || failed_by_json || v.outcome == Outcome::Failed)
    {
        match err {
            "rate_limit" | "server_error" | "overloaded" => v.outcome = Outcome::Transient,
            "authentication_failed" | "billing_error" | "permission_error" => {
                v.outcome = Outcome::NeedsHuman
            }
            _ => {}
        }
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

/// Claude's config dir: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
pub fn claude_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".claude"))
}

/// Transcripts by session id (`projects/*/<id>.jsonl`), found by file name, listed once per process.
fn transcripts() -> &'static HashMap<String, PathBuf> {
    static T: OnceLock<HashMap<String, PathBuf>> = OnceLock::new();
    T.get_or_init(|| {
        let mut map = HashMap::new();
        let Some(projects) = claude_dir().map(|d| d.join("projects")) else {
            return map;
        };
        for dir in std::fs::read_dir(projects).into_iter().flatten().flatten() {
            for f in std::fs::read_dir(dir.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                let p = f.path();
                if p.extension().is_some_and(|e| e == "jsonl")
                    && let Some(stem) = p.file_stem().and_then(|s| s.to_str())
                {
                    map.insert(stem.to_string(), p);
                }
            }
        }
        map
    })
}

/// The transcript of session `id`, if one is on this machine.
pub fn transcript(id: &str) -> Option<&'static Path> {
    transcripts().get(id).map(PathBuf::as_path)
}

/// The `error` of the transcript's last line when that line is an API error
/// (`rate_limit`, `server_error`, `authentication_failed`, `invalid_request`, …).
pub fn transcript_error(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let last = text.lines().rev().find(|l| !l.trim().is_empty())?;
    let v: serde_json::Value = serde_json::from_str(last).ok()?;
    if v["isApiErrorMessage"].as_bool() == Some(true) || v["error"].is_string() {
        v["error"].as_str().map(str::to_string)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Timestamp {
        "2026-07-15T00:00:00Z".parse().unwrap()
    }

    #[test]
    fn claude_json_success_and_api_error_reported_as_success() {
        let ok = parse_result(include_str!(
            "../tests/data/agents/claude-json-success.json"
        ));
        assert_eq!(
            ok.session_id.as_deref(),
            Some("6f1c2b7e-3d4a-4b5c-9e8f-0a1b2c3d4e5f")
        );
        let v = decide(0, ok.message.as_deref().unwrap(), Some(&ok), None, now());
        assert_eq!(v.outcome, Outcome::Success);

        let err = parse_result(include_str!(
            "../tests/data/agents/claude-json-api-error.json"
        ));
        assert!(err.is_error);
        assert_eq!(err.api_error_status, Some(403));
        let v = decide(0, err.message.as_deref().unwrap(), Some(&err), None, now());
        assert_eq!(
            v.outcome,
            Outcome::NeedsHuman,
            "subtype success + is_error + rc 0 is not a success"
        );
    }

    #[test]
    fn claude_stream_rate_limit_resets_at() {
        let r = parse_result(include_str!("../tests/data/agents/claude-stream.jsonl"));
        assert_eq!(
            r.session_id.as_deref(),
            Some("9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d")
        );
        let v = decide(0, r.message.as_deref().unwrap(), Some(&r), None, now());
        assert_eq!(v.outcome, Outcome::Transient);
        assert_eq!(
            v.retry_after.unwrap().as_second(),
            1784106000,
            "resetsAt wins over the text"
        );
    }

    #[test]
    fn codex_turn_failed_with_exit_zero() {
        let r = parse_result(include_str!("../tests/data/agents/codex-exec.jsonl"));
        assert_eq!(
            r.session_id.as_deref(),
            Some("0199a213-81c0-7800-8aa1-bbab2a035a53")
        );
        assert!(r.is_error);
        let v = decide(0, r.message.as_deref().unwrap(), Some(&r), None, now());
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
            include_str!("../tests/data/agents/claude-transcript-tail.jsonl"),
        )
        .unwrap();
        let e = transcript_error(&p);
        assert_eq!(e.as_deref(), Some("server_error"));
        assert_eq!(
            decide(1, "", None, e.as_deref(), now()).outcome,
            Outcome::Transient
        );
        assert_eq!(
            decide(1, "", None, Some("authentication_failed"), now()).outcome,
            Outcome::NeedsHuman
        );
        assert_eq!(decide(1, "", None, None, now()).outcome, Outcome::Failed);
    }
}
