//! Agents' machine output: Claude Code's `--output-format json`/`stream-json` results,
//! Codex's `exec --json` events, Gemini CLI's `--output-format json`/`stream-json`
//! output, and Claude's session transcripts.
//!
//! An agent's exit code and success flag are not trusted on their own: the JSON fields
//! (`is_error`, `subtype`, `terminal_reason`, `api_error_status`, the assistant event's
//! `error`, Codex `turn.failed`/`error` events, Gemini's `error` object) are read first,
//! then the text (SPEC `exit`, "Outcomes: reading how an attempt ended").

pub mod lines;
pub mod parked;
pub mod profiles;
pub mod structured;

pub use profiles::{PROFILES, Profile, profile};
pub use structured::{error_kind, json_kind};

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use jiff::Timestamp;

use crate::outcome::signs::Kind;
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
    /// Claude's result `subtype` (`success`, `error_max_turns`, `error_during_execution`, …).
    pub subtype: Option<String>,
    /// Claude's result `terminal_reason` (why the loop stopped, e.g. `api_error`).
    pub terminal_reason: Option<String>,
    /// The error's kind as the agent names it: the `error` of Claude's (synthetic)
    /// assistant event (`rate_limit`, `server_error`, `authentication_failed`, …), or the
    /// `type` of Gemini CLI's `error` object (`FatalAuthenticationError`, …).
    pub error_kind: Option<String>,
    /// A numeric error code from Gemini CLI's `error.code` (HTTP status).
    pub error_code: Option<u16>,
    /// The output said the run completed: a closing event with no error (Claude's
    /// `result`, Gemini's `result` success, Codex `turn.completed`, OpenCode
    /// `step_finish`/`done`, Copilot's `result`, Goose's `complete`).
    pub completed: bool,
    /// At least one JSON event was read.
    pub saw_json: bool,
    /// Multi-line objects dropped for being over 1 MiB.
    pub skipped_objects: usize,
}

/// Parse an agent's machine output held in memory (see [`parse_reader`]).
pub fn parse_result(text: &str) -> AgentResult {
    parse_reader(text.as_bytes()).0
}

/// Parse an agent's machine output, line by line in bounded memory: Claude `json` (one
/// object, also pretty-printed over several lines) or `stream-json`, Codex `--json`,
/// Gemini CLI `json`/`stream-json` (and its `[ERROR] `-prefixed stderr), OpenCode's
/// events (`sessionID`), Cursor's and Amp's Claude-shaped stream-json, Copilot's events
/// (final `result.sessionId`), Goose's `stream-json`. Lines that are not JSON are kept
/// (their last [`TEXT_KEEP`] bytes) as the message when the JSON names none: Aider
/// prints only text, Cursor none on failure. Returns the result and how many lines over
/// [`lines::MAX_LINE`] were skipped.
///
/// Errors: none; an unreadable stream ends the reading where it failed.
pub fn parse_reader<R: std::io::Read>(r: R) -> (AgentResult, usize) {
    let mut res = AgentResult::default();
    let mut p = Pending::default();
    let reader = std::io::BufReader::with_capacity(64 * 1024, r);
    let mut skipped = lines::for_each_line(reader, lines::MAX_LINE, |line| {
        p.line(&mut res, line);
    })
    .unwrap_or(0);
    skipped += p.finish(&mut res);
    (res, skipped)
}

/// How much of the non-JSON text of an output is kept, in bytes (the message's 4 KiB).
pub const TEXT_KEEP: usize = 4096;

/// The reading state between lines: a JSON object spread over several lines, and the
/// tail of the text lines.
#[derive(Default)]
struct Pending {
    object: String,
    text: std::collections::VecDeque<String>,
    text_len: usize,
    /// A `[ERROR] ` line was seen: the text from it on is the message.
    error_seen: bool,
}

impl Pending {
    fn line(&mut self, r: &mut AgentResult, line: &str) {
        let t = line.trim();
        if !self.object.is_empty() || t == "{" {
            self.object.push_str(line);
            self.object.push('\n');
            if self.object.len() > lines::MAX_LINE {
                self.object.clear();
                r.skipped_objects += 1;
            } else if t.starts_with('}')
                && let Ok(v) = serde_json::from_str::<serde_json::Value>(&self.object)
            {
                r.saw_json = true;
                read_event(r, &v);
                self.object.clear();
            }
            return;
        }
        if t.starts_with('{')
            && let Ok(v @ serde_json::Value::Object(_)) = serde_json::from_str(t)
        {
            r.saw_json = true;
            read_event(r, &v);
            return;
        }
        if t.is_empty() {
            return;
        }
        // Gemini CLI in json mode: `[ERROR] <message>` on stderr; the message may go on
        // over the next lines.
        let t = match t.strip_prefix("[ERROR] ") {
            Some(m) => {
                self.text.clear();
                self.text_len = 0;
                self.error_seen = true;
                m
            }
            None => t,
        };
        let kept = lines::tail(t, TEXT_KEEP);
        self.text_len += kept.len();
        self.text.push_back(kept);
        while self.text_len > TEXT_KEEP && self.text.len() > 1 {
            let gone = self.text.pop_front().map_or(0, |l| l.len());
            self.text_len -= gone;
        }
    }

    /// The end of the output: an unfinished object is text; the text is the message
    /// when the JSON named none, or after it when the run failed. Returns how many
    /// objects over [`lines::MAX_LINE`] were dropped.
    fn finish(&mut self, r: &mut AgentResult) -> usize {
        let unfinished = !self.object.is_empty();
        if unfinished {
            let obj = std::mem::take(&mut self.object);
            for l in obj.lines() {
                if !l.trim().is_empty() && l.trim() != "{" {
                    self.line(r, l);
                }
            }
        }
        if self.error_seen {
            r.is_error = true;
            r.completed = false;
            r.message = None;
        }
        if !self.text.is_empty() && (r.message.is_none() || r.is_error) {
            // A failed run's text output (stderr merged in) says why: it goes last, where
            // the signs are read first.
            let text: Vec<String> = self.text.drain(..).collect();
            let text = text.join("\n");
            r.message = Some(match r.message.take() {
                Some(m) => lines::tail(&format!("{m}\n{text}"), TEXT_KEEP),
                None => text,
            });
        }
        r.skipped_objects
    }
}

/// Fold one event (or Gemini CLI's single object) into `r`, by its `type`.
fn read_event(r: &mut AgentResult, v: &serde_json::Value) {
    let ty = v["type"].as_str().unwrap_or("");
    // Claude, Cursor, Amp, Gemini: `session_id`; OpenCode: `sessionID` on every event;
    // Copilot: `sessionId` on the final `result`.
    for key in ["session_id", "sessionID", "sessionId"] {
        if let Some(s) = v[key].as_str() {
            r.session_id = Some(s.to_string());
        }
    }
    match ty {
        // Gemini CLI `--output-format json`: one object, no `type`.
        "" if v.get("response").is_some() || v["error"].is_object() => {
            if let Some(m) = v["response"].as_str().filter(|m| !m.is_empty()) {
                r.message = Some(m.to_string());
                r.completed = !v["error"].is_object();
            }
            gemini_error(r, &v["error"]);
        }
        "result" if v["status"].is_string() => {
            // Gemini CLI stream-json's closing event.
            if v["status"].as_str() == Some("error") {
                r.is_error = true;
            } else {
                r.completed = true;
            }
            gemini_error(r, &v["error"]);
        }
        "result" if v.get("exitCode").is_some() && v.get("subtype").is_none() => {
            // Copilot CLI's closing event: `exitCode`, `sessionId`, no `data`.
            r.completed = true;
            if v["exitCode"].as_i64().is_some_and(|c| c != 0) {
                r.is_error = true;
            }
        }
        "init" => {}
        "assistant" => claude_assistant(r, v),
        // Copilot's final answer.
        "assistant.message" if !r.is_error => {
            if let Some(t) = v["data"]["content"]
                .as_str()
                .filter(|t| !t.trim().is_empty())
            {
                r.message = Some(t.trim().to_string());
            }
        }
        // OpenCode's text part.
        "text" if !r.is_error => {
            if let Some(t) = v["part"]["text"].as_str().filter(|t| !t.trim().is_empty()) {
                r.message = Some(t.to_string());
            }
        }
        // OpenCode: a step or the run ended.
        "step_finish" | "done" => r.completed = true,
        // Goose: the run ended.
        "complete" => r.completed = true,
        // Goose's message event: the last assistant text.
        "message" if v["message"].is_object() && !r.is_error => {
            if let Some(t) = v["message"]["content"]
                .as_array()
                .and_then(|a| a.iter().rev().find_map(|c| c["text"].as_str()))
            {
                r.message = Some(t.to_string());
            }
        }
        "error" => other_error(r, v),
        "result" => claude_result(r, v),
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
        "turn.completed" => r.completed = true,
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
        // Copilot's `session.error`-like events.
        t if t.ends_with(".error") => {
            r.is_error = true;
            if let Some(m) = v["data"]["message"].as_str() {
                r.message = Some(m.to_string());
            }
        }
        _ => {}
    }
}

/// An `error` event: OpenCode's (`error.name`, `error.data.message`: fatal), Goose's
/// (`error` a string: fatal), Gemini stream-json's (`severity`), or Codex's (a
/// reconnect, non-fatal: kept when nothing better comes).
fn other_error(r: &mut AgentResult, v: &serde_json::Value) {
    let e = &v["error"];
    if e.is_object() {
        r.is_error = true;
        if let Some(n) = e["name"].as_str() {
            r.error_kind = Some(n.to_string());
        }
        if let Some(m) = e["data"]["message"].as_str().or(e["message"].as_str()) {
            r.message = Some(m.to_string());
        }
        if let Some(s) = status_of(&e["data"]["statusCode"]).or(status_of(&e["status"])) {
            r.api_error_status = Some(s);
        }
        // Codex / OpenAI: `error.code` or `error.type` names the kind.
        if r.error_kind.is_none()
            && let Some(c) = e["code"].as_str().or(e["type"].as_str())
        {
            r.error_kind = Some(c.to_string());
        }
    } else if let Some(m) = e.as_str() {
        r.is_error = true;
        r.message = Some(m.to_string());
    } else if let Some(m) = v["message"].as_str() {
        if v["severity"].as_str() == Some("error") {
            r.is_error = true;
            r.message = Some(m.to_string());
        } else if r.message.is_none() {
            r.message = Some(m.to_string());
        }
    }
}

/// An HTTP status field, when it is a number that fits.
fn status_of(v: &serde_json::Value) -> Option<u16> {
    v.as_u64().and_then(|n| u16::try_from(n).ok())
}

/// Claude stream-json's `assistant` event: an API error may be carried only here (a
/// synthetic assistant message with `error`, like the transcript's).
fn claude_assistant(r: &mut AgentResult, v: &serde_json::Value) {
    let Some(e) = v["error"].as_str() else {
        return;
    };
    r.error_kind = Some(e.to_string());
    if let Some(status) = status_of(&v["apiErrorStatus"]) {
        r.api_error_status.get_or_insert(status);
    }
    if r.message.is_none()
        && let Some(t) = v["message"]["content"]
            .as_array()
            .and_then(|a| a.iter().find_map(|c| c["text"].as_str()))
    {
        r.message = Some(t.to_string());
    }
}

/// Claude's `result` (the object of `json`, the last event of `stream-json`): error flag,
/// status, `subtype`, `terminal_reason`, and the final text (else the first of `errors`).
fn claude_result(r: &mut AgentResult, v: &serde_json::Value) {
    r.is_error = v["is_error"].as_bool().unwrap_or(false);
    if let Some(status) = status_of(&v["api_error_status"]) {
        r.api_error_status = Some(status);
    }
    r.subtype = v["subtype"].as_str().map(str::to_string);
    r.terminal_reason = v["terminal_reason"].as_str().map(str::to_string);
    // Claude Code 2.1: the API error's type (`rate_limit_error`) or, with no answer at
    // all, what failed (`connection_failed`).
    if let Some(t) = v["api_error_type"].as_str().or(v["api_error"].as_str()) {
        r.error_kind = Some(t.to_string());
    }
    if let Some(m) = v["result"].as_str() {
        r.message = Some(m.to_string());
    }
    if !r.is_error && !r.subtype.as_deref().is_some_and(|s| s.starts_with("error")) {
        r.completed = true;
    }
    // Amp's error result carries `error` (a string) instead of `errors[]`.
    if r.is_error
        && r.message.is_none()
        && let Some(e) = v["error"].as_str()
    {
        r.message = Some(e.to_string());
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

/// Gemini CLI's `error` object (`type`, `message`, `code`), when there is one.
fn gemini_error(r: &mut AgentResult, e: &serde_json::Value) {
    if !e.is_object() {
        return;
    }
    r.is_error = true;
    // `type` (Gemini CLI's class name), else Google's `status` word or a code that is a
    // name (`RESOURCE_EXHAUSTED`, `rate_limit_exceeded`).
    if let Some(t) = e["type"]
        .as_str()
        .or(e["status"].as_str())
        .or(e["code"].as_str().filter(|c| c.parse::<u16>().is_err()))
    {
        r.error_kind = Some(t.to_string());
    }
    if let Some(s) = status_of(&e["status"]) {
        r.api_error_status = Some(s);
    }
    r.error_code = e["code"]
        .as_u64()
        .or_else(|| e["code"].as_str().and_then(|c| c.parse().ok()))
        .and_then(|n| u16::try_from(n).ok());
    if let Some(m) = e["message"].as_str() {
        r.message = Some(m.to_string());
    }
}

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
/// `exit_trusted` is the agent's [`Profile::exit_trusted`]: when false, rc 0 is read as a
/// failure unless the output says the run completed ([`AgentResult::completed`]) or, for
/// an agent that prints only text, it left a final message (SPEC 1.2: Aider, OpenCode,
/// Copilot exit 0 on failure; their output decides).
pub fn decide(
    rc: i32,
    message: &str,
    result: Option<&AgentResult>,
    transcript_error: Option<&str>,
    now: Timestamp,
    exit_trusted: bool,
) -> Verdict {
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
    if v.outcome == Outcome::Transient {
        if let Some(at) = result.and_then(|r| r.resets_at) {
            v.retry_after = Some(at);
        }
    } else {
        v.retry_after = None;
    }
    v
}

pub use crate::fence::session_id_ok;

/// Claude's config dir: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
pub fn claude_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".claude"))
}

/// Transcripts by session id (`projects/*/<id>.jsonl`), found by file name, listed once per
/// process; a file whose name is no session id ([`session_id_ok`]) is not one.
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
                    && session_id_ok(stem)
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

    /// [`decide`] on exit code `rc` and the parsed output `r`, its message the final one.
    fn verdict(rc: i32, r: &AgentResult) -> Verdict {
        decide(
            rc,
            r.message.as_deref().unwrap(),
            Some(r),
            None,
            now(),
            true,
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
            decide(1, "", None, e.as_deref(), now(), true).outcome,
            Outcome::Transient
        );
        assert_eq!(
            decide(1, "", None, Some("authentication_failed"), now(), true).outcome,
            Outcome::NeedsHuman
        );
        assert_eq!(
            decide(1, "", None, None, now(), true).outcome,
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
            decide(0, "", Some(&r), None, now(), true).outcome,
            Outcome::Failed
        );
        let r = parse_result(
            r#"{"type":"result","subtype":"success","is_error":false,"terminal_reason":"aborted","result":"Working on it","session_id":"s-1"}"#,
        );
        assert_eq!(
            decide(0, "Working on it", Some(&r), None, now(), true).outcome,
            Outcome::Failed
        );
        let ok = parse_result(
            r#"{"type":"result","subtype":"success","is_error":false,"terminal_reason":"completed","result":"Done: PR #3 opened.","session_id":"s-1"}"#,
        );
        assert_eq!(json_kind(&ok), None);
        assert_eq!(
            decide(0, "Done: PR #3 opened.", Some(&ok), None, now(), true).outcome,
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
}
