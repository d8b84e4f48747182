//! Reading an agent's machine output line by line, in bounded memory: JSON events (also
//! objects spread over several lines) folded into an [`AgentResult`], the text lines'
//! tail kept as the message when the JSON names none.

use jiff::Timestamp;

use super::events::read_event;
use super::lines;

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
pub(crate) fn parse_reader<R: std::io::Read>(r: R) -> (AgentResult, usize) {
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
pub(crate) const TEXT_KEEP: usize = 4096;

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
