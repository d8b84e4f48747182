//! The agents' JSON events, one reader per agent's shape: Claude Code (and the
//! Claude-shaped Cursor and Amp), Codex, Gemini CLI, OpenCode, Copilot, Goose.

use jiff::Timestamp;

use super::AgentResult;

/// Fold one event (or Gemini CLI's single object) into `r`, by its `type`: first the
/// session id (Claude, Cursor, Amp, Gemini: `session_id`; OpenCode: `sessionID` on every
/// event; Copilot: `sessionId` on the final `result`), then the agent's own reader.
pub(super) fn read_event(r: &mut AgentResult, v: &serde_json::Value) {
    let ty = v["type"].as_str().unwrap_or("");
    for key in ["session_id", "sessionID", "sessionId"] {
        if let Some(s) = v[key].as_str() {
            r.session_id = Some(s.to_string());
        }
    }
    match ty {
        // Gemini CLI `--output-format json`: one object, no `type`.
        "" if v.get("response").is_some() || v["error"].is_object() => gemini_object(r, v),
        "result" if v["status"].is_string() => gemini_result(r, v),
        "result" if v.get("exitCode").is_some() && v.get("subtype").is_none() => {
            copilot_result(r, v)
        }
        "result" => claude_result(r, v),
        "init" => {}
        "assistant" => claude_assistant(r, v),
        "rate_limit_event" => rate_limit(r, v),
        "error" => other_error(r, v),
        // OpenCode: a step or the run ended; Goose: the run ended; Codex: the turn ended.
        "step_finish" | "done" | "complete" | "turn.completed" => r.completed = true,
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
        "assistant.message" | "text" | "message" | "item.completed" if !r.is_error => {
            final_text(r, ty, v)
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

/// Gemini CLI's single `--output-format json` object: its `response` (the run completed
/// unless an `error` object came with it), then its error.
fn gemini_object(r: &mut AgentResult, v: &serde_json::Value) {
    if let Some(m) = v["response"].as_str().filter(|m| !m.is_empty()) {
        r.message = Some(m.to_string());
        r.completed = !v["error"].is_object();
    }
    gemini_error(r, &v["error"]);
}

/// Gemini CLI stream-json's closing `result` event (`status` `error` or not), then its
/// error.
fn gemini_result(r: &mut AgentResult, v: &serde_json::Value) {
    if v["status"].as_str() == Some("error") {
        r.is_error = true;
    } else {
        r.completed = true;
    }
    gemini_error(r, &v["error"]);
}

/// Copilot CLI's closing `result` event: `exitCode`, `sessionId`, no `data`; a non-zero
/// `exitCode` is a failure.
fn copilot_result(r: &mut AgentResult, v: &serde_json::Value) {
    r.completed = true;
    if v["exitCode"].as_i64().is_some_and(|c| c != 0) {
        r.is_error = true;
    }
}

/// Claude's `rate_limit_event`: when the limit is not `allowed`, when it resets.
fn rate_limit(r: &mut AgentResult, v: &serde_json::Value) {
    let info = &v["rate_limit_info"];
    if info["status"].as_str() != Some("allowed")
        && let Some(at) = info["resetsAt"].as_i64()
    {
        r.resets_at = Timestamp::from_second(at).ok();
    }
}

/// The run's newest answer text, by event `ty` (read only while no error was seen):
/// Copilot's final answer (`assistant.message`, trimmed), OpenCode's text part (`text`),
/// Goose's message event (`message`: its last text), Codex's agent message
/// (`item.completed`). Empty texts are not answers.
fn final_text(r: &mut AgentResult, ty: &str, v: &serde_json::Value) {
    let text = match ty {
        "assistant.message" => v["data"]["content"]
            .as_str()
            .filter(|t| !t.trim().is_empty())
            .map(str::trim),
        "text" => v["part"]["text"].as_str().filter(|t| !t.trim().is_empty()),
        "message" if v["message"].is_object() => v["message"]["content"]
            .as_array()
            .and_then(|a| a.iter().rev().find_map(|c| c["text"].as_str())),
        "item.completed" if v["item"]["type"].as_str() == Some("agent_message") => {
            v["item"]["text"].as_str()
        }
        _ => None,
    };
    if let Some(t) = text {
        r.message = Some(t.to_string());
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
