//! The signs of how an attempt ended, as data (SPEC "Outcomes: reading how an attempt
//! ended"): each row is a phrase an agent CLI (or the HTTP/SDK layer under it) prints,
//! the kind of ending it means, the agent it comes from and the public source it was
//! taken from. Only the message strings are taken, never code.
//!
//! Patterns are matched against the normalised text (ANSI escapes stripped, JSON string
//! escapes undone, lowercase, curly apostrophes straightened, runs of blanks collapsed),
//! so they are written in lowercase. A literal matches anywhere; a regex row is a
//! `regex` crate pattern (already lowercase). Each phrase is worded so that it needs the
//! error's own context ("rate limit reached", not "rate limit"), so that a success
//! message that merely mentions a limit does not match.

/// What a sign says about the attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    /// A usage, rate, session or quota limit, an overloaded service, a dropped
    /// connection or a timeout reaching the API: `transient`.
    Transient,
    /// Login, API key, permissions (401/403), billing, disabled access: `needs-human`.
    NeedsHuman,
    /// The context window or prompt is too long, or the session to resume is gone:
    /// `failed` with `fresh: true`.
    Fresh,
    /// The run was cut short (terminated, max turns, an error subtype, background work
    /// still running): `failed` even with rc 0.
    CutShort,
}

/// The agent (or layer) a sign is printed by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Agent {
    /// Claude Code (`claude`), including the Anthropic API errors it relays.
    Claude,
    /// OpenAI Codex CLI (`codex exec`).
    Codex,
    /// Google Gemini CLI (`gemini`).
    Gemini,
    /// opencode (`opencode run`).
    Opencode,
    /// Aider (`aider --message`).
    Aider,
    /// Cursor's agent CLI (`cursor-agent`).
    Cursor,
    /// GitHub Copilot CLI (`copilot -p`).
    Copilot,
    /// Sourcegraph's Amp (`amp -x`).
    Amp,
    /// Block's Goose (`goose run`).
    Goose,
    /// A kind of signal in any agent's words (a limit noun with a reset or retry, a
    /// context-size phrase, a credential phrase): rows that generalise to wordings not
    /// seen yet.
    Any,
    /// HTTP, network and SDK failures any agent may print.
    GenericHttp,
}

/// One sign: a phrase, its kind, who prints it and where it was read.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sign {
    /// Lowercase literal, or a lowercase regex when `regex` is true.
    pub pattern: &'static str,
    /// Whether `pattern` is a regex.
    pub regex: bool,
    /// A real message (any case) the pattern matches: read by the tests (each sign is
    /// proven against its example), so kept in test builds only.
    #[cfg(test)]
    pub example: &'static str,
    /// What the sign means.
    pub kind: Kind,
    /// Who prints it (test builds: the tests name it when a sign fails).
    #[cfg(test)]
    pub agent: Agent,
    /// The public page or source file the phrase was read from (test builds; the
    /// provenance stays beside each sign in this table).
    #[cfg(test)]
    pub source: &'static str,
}

use Agent::{
    Aider, Amp, Any, Claude, Codex, Copilot, Cursor, Gemini, GenericHttp, Goose, Opencode,
};
use Kind::{CutShort, Fresh, NeedsHuman, Transient};

const fn lit(
    pattern: &'static str,
    example: &'static str,
    kind: Kind,
    agent: Agent,
    source: &'static str,
) -> Sign {
    // Outside the tests, the provenance is read here only (see [`Sign`]).
    #[cfg(not(test))]
    let _ = (example, agent, source);
    Sign {
        pattern,
        regex: false,
        #[cfg(test)]
        example,
        kind,
        #[cfg(test)]
        agent,
        #[cfg(test)]
        source,
    }
}

const fn re(
    pattern: &'static str,
    example: &'static str,
    kind: Kind,
    agent: Agent,
    source: &'static str,
) -> Sign {
    // Outside the tests, the provenance is read here only (see [`Sign`]).
    #[cfg(not(test))]
    let _ = (example, agent, source);
    Sign {
        pattern,
        regex: true,
        #[cfg(test)]
        example,
        kind,
        #[cfg(test)]
        agent,
        #[cfg(test)]
        source,
    }
}

/// The real CLIs' captured output, kept as test data with each agent's version
/// (`tests/data/agents/<agent>-<version>/`, read by `tests/it/agent_outputs.rs`).
const REAL_OUTPUTS: &str = "tests/data/agents/";
const CC_ISSUES: &str = "https://github.com/anthropics/claude-code/issues";
const ANTHROPIC_ERRORS: &str = "https://docs.claude.com/en/api/errors";
const CC_HEADLESS: &str = "https://docs.claude.com/en/docs/claude-code/headless";
const CODEX_ERROR_RS: &str = "https://github.com/openai/codex/blob/main/codex-rs/core/src/error.rs";
const GEMINI_QUOTA: &str = "https://github.com/google-gemini/gemini-cli/blob/main/packages/core/src/utils/googleQuotaErrors.ts";
const GEMINI_ERRPARSE: &str =
    "https://github.com/google-gemini/gemini-cli/blob/main/packages/core/src/utils/errorParsing.ts";
const GEMINI_FALLBACK: &str = "https://github.com/google-gemini/gemini-cli/blob/main/packages/cli/src/ui/hooks/useQuotaAndFallback.ts";
const GEMINI_SESSIONS: &str =
    "https://github.com/google-gemini/gemini-cli/blob/main/packages/cli/src/utils/sessionUtils.ts";
const GEMINI_AGENT_SESSION: &str = "https://github.com/google-gemini/gemini-cli/blob/main/packages/cli/src/nonInteractiveCliAgentSession.ts";
const AIDER_EXC: &str = "https://github.com/Aider-AI/aider/blob/main/aider/exceptions.py";
const AIDER_CODER: &str = "https://github.com/Aider-AI/aider/blob/main/aider/coders/base_coder.py";
const OPENCODE_RETRY: &str =
    "https://github.com/sst/opencode/blob/dev/packages/opencode/src/session/retry.ts";
const CURSOR_LIMIT: &str = "https://github.com/cursor/cursor/issues/3703";
const MDN_STATUS: &str = "https://developer.mozilla.org/en-US/docs/Web/HTTP/Reference/Status";
const COPILOT_ISSUES: &str = "https://github.com/github/copilot-cli/issues";
const GOOSE_ERRORS: &str =
    "https://github.com/aaif-goose/goose/blob/main/crates/goose/src/providers/errors.rs";
const ECOSYSTEM: &str = "https://github.com/saaranshM/unsnooze/tree/main/src/agents";
const NODE_ERRORS: &str = "https://nodejs.org/api/errors.html#common-system-errors";

/// Every sign, in no particular order: [`super::classify`] ranks a match by kind
/// (needs-human, then fresh, then transient, then cut short) within the region it is
/// found in (JSON fields, the last lines, the rest).
pub(crate) const SIGNS: &[Sign] = &[
    // ---- Claude Code -------------------------------------------------------------
    lit(
        "usage limit reached|",
        "Claude AI usage limit reached|1749924000",
        Transient,
        Claude,
        "https://github.com/anthropics/claude-code/issues/6119",
    ),
    re(
        r"\b(claude( ai)? )?(usage|session|5-hour|weekly|daily|opus|sonnet) limit reached",
        "5-hour limit reached ∙ resets 3am",
        Transient,
        Claude,
        "https://github.com/anthropics/claude-code/issues/4375",
    ),
    re(
        r"you'?ve hit your (usage |session |weekly |daily |opus |sonnet |monthly )?limit",
        "You've hit your limit · resets 1pm (Europe/Lisbon)",
        Transient,
        Claude,
        "https://github.com/anthropics/claude-code/issues/22976",
    ),
    re(
        r"you have (reached|hit) your (usage |session |weekly |daily |5-hour )?limit",
        "You have reached your weekly limit · resets Dec 3, 6am (Europe/Berlin)",
        Transient,
        Claude,
        CC_ISSUES,
    ),
    lit(
        "your limit will reset at",
        "Claude usage limit reached. Your limit will reset at 5pm (America/New_York).",
        Transient,
        Claude,
        "https://github.com/anthropics/claude-code/issues/6119",
    ),
    lit(
        "you have reached your specified api usage limits",
        "You have reached your specified API usage limits. You will regain access on 2026-04-01 at 00:00 UTC.",
        Transient,
        Claude,
        "https://github.com/anthropics/claude-code/issues/38035",
    ),
    lit(
        "rate_limit_error",
        r#"{"type":"error","error":{"type":"rate_limit_error","message":"Rate limited"}}"#,
        Transient,
        Claude,
        ANTHROPIC_ERRORS,
    ),
    lit(
        "overloaded_error",
        r#"API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        Transient,
        Claude,
        ANTHROPIC_ERRORS,
    ),
    lit(
        "this request would exceed your account's rate limit",
        "This request would exceed your account's rate limit. Please try again later.",
        Transient,
        Claude,
        "https://github.com/anthropics/claude-code/issues/9046",
    ),
    re(
        r"api error:? \(?(408|429|500|502|503|504|529)\b",
        "API Error: 502 Bad Gateway",
        Transient,
        Claude,
        ANTHROPIC_ERRORS,
    ),
    lit(
        "api error: rate limit reached",
        "API Error: Rate limit reached",
        Transient,
        Claude,
        CC_ISSUES,
    ),
    re(
        r"api error:? (stream idle timeout|connection error|request timed out|overloaded)",
        "API Error: Stream idle timeout - no chunks received",
        Transient,
        Claude,
        CC_ISSUES,
    ),
    lit(
        "stream idle timeout",
        "Stream idle timeout - no chunks received",
        Transient,
        Claude,
        CC_ISSUES,
    ),
    re(
        r"^\W*overloaded\W*$",
        "Overloaded",
        Transient,
        Claude,
        ANTHROPIC_ERRORS,
    ),
    lit(
        "invalid api key",
        "Invalid API key · Please run /login",
        NeedsHuman,
        Claude,
        "https://docs.claude.com/en/docs/claude-code/troubleshooting",
    ),
    lit(
        "please run /login",
        "OAuth token has expired. Please obtain a new token or refresh your existing token. · Please run /login",
        NeedsHuman,
        Claude,
        CC_ISSUES,
    ),
    lit(
        "oauth token has expired",
        "OAuth token has expired.",
        NeedsHuman,
        Claude,
        CC_ISSUES,
    ),
    lit(
        "authentication_error",
        r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
        NeedsHuman,
        Claude,
        ANTHROPIC_ERRORS,
    ),
    lit(
        "permission_error",
        r#"{"type":"error","error":{"type":"permission_error","message":"no access"}}"#,
        NeedsHuman,
        Claude,
        ANTHROPIC_ERRORS,
    ),
    re(
        r"api error:? 40[13]\b",
        "API Error: 401 Unauthorized",
        NeedsHuman,
        Claude,
        ANTHROPIC_ERRORS,
    ),
    re(
        r"credit balance (is )?too low",
        "Credit balance too low · Add funds: https://platform.claude.com/settings/billing",
        NeedsHuman,
        Claude,
        "https://github.com/anthropics/claude-code/issues/867",
    ),
    re(
        r"^\W*(error:? )?not logged in",
        "Not logged in · Please run /login",
        NeedsHuman,
        Claude,
        CC_ISSUES,
    ),
    lit(
        "oauth authentication is currently not allowed for this organization",
        "OAuth authentication is currently not allowed for this organization.",
        NeedsHuman,
        Claude,
        CC_ISSUES,
    ),
    lit(
        "this organization has been disabled",
        "This organization has been disabled.",
        NeedsHuman,
        Claude,
        ANTHROPIC_ERRORS,
    ),
    lit(
        "usage credits required",
        "API Error: Usage credits required for 1M context · turn on usage credits at claude.ai/settings/billing",
        NeedsHuman,
        Claude,
        "https://github.com/anthropics/claude-code/issues/64312",
    ),
    lit(
        "prompt is too long",
        "API Error: 400 prompt is too long: 215000 tokens > 200000 maximum",
        Fresh,
        Claude,
        "https://github.com/anthropics/claude-code/issues/51919",
    ),
    lit(
        "your input exceeds the context window",
        "API Error: 400 Your input exceeds the context window of this model. Please adjust your input and try again.",
        Fresh,
        Claude,
        "https://github.com/anthropics/claude-code/issues/77992",
    ),
    lit(
        "request_too_large",
        r#"{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}"#,
        Fresh,
        Claude,
        ANTHROPIC_ERRORS,
    ),
    lit(
        "no conversation found with session id",
        "No conversation found with session ID: 7d3f6a52-1111-4222-8333-944445555666",
        Fresh,
        Claude,
        "https://github.com/anthropics/claude-code/issues/42596",
    ),
    lit(
        "no conversation found to continue",
        "No conversation found to continue",
        Fresh,
        Claude,
        CC_HEADLESS,
    ),
    lit(
        "error_max_turns",
        r#"{"type":"result","subtype":"error_max_turns"}"#,
        CutShort,
        Claude,
        CC_HEADLESS,
    ),
    lit(
        "error_during_execution",
        r#"{"type":"result","subtype":"error_during_execution"}"#,
        CutShort,
        Claude,
        CC_HEADLESS,
    ),
    lit(
        "error_max_budget_usd",
        r#"{"type":"result","subtype":"error_max_budget_usd"}"#,
        CutShort,
        Claude,
        CC_HEADLESS,
    ),
    re(
        r"reached (the )?max(imum)? (number of )?turns",
        "Reached maximum number of turns (40)",
        CutShort,
        Claude,
        CC_HEADLESS,
    ),
    re(
        r"^\W*api error: 400\b",
        "API Error: 400 messages.1.content: text content blocks must be non-empty",
        CutShort,
        Claude,
        ANTHROPIC_ERRORS,
    ),
    re(
        r"background (tasks?|shells?|processes|jobs?) (are |is )?still running",
        "2 background tasks still running when the session ended",
        CutShort,
        Claude,
        CC_ISSUES,
    ),
    // ---- Codex CLI ----------------------------------------------------------------
    lit(
        "you've hit your usage limit",
        "You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), or try again at 3:28 PM.",
        Transient,
        Codex,
        CODEX_ERROR_RS,
    ),
    lit(
        "stream disconnected before completion",
        "stream disconnected before completion: stream closed before response.completed",
        Transient,
        Codex,
        CODEX_ERROR_RS,
    ),
    re(
        r"exceeded retry limit, last status: (408|429|5\d\d)",
        "exceeded retry limit, last status: 429 Too Many Requests, request id: x",
        Transient,
        Codex,
        "https://github.com/openai/codex/issues/12675",
    ),
    re(
        r"exceeded retry limit, last status: 40[13]",
        "exceeded retry limit, last status: 401 Unauthorized, request id: 9a57",
        NeedsHuman,
        Codex,
        "https://github.com/openai/codex/issues/7362",
    ),
    lit(
        "we're currently experiencing high demand",
        "We're currently experiencing high demand, which may cause temporary errors.",
        Transient,
        Codex,
        CODEX_ERROR_RS,
    ),
    lit(
        "usage_limit_reached",
        r#"{"error":{"type":"usage_limit_reached","message":"The usage limit has been reached"}}"#,
        Transient,
        Codex,
        "https://github.com/router-for-me/CLIProxyAPI/issues/3115",
    ),
    lit(
        "the usage limit has been reached",
        "The usage limit has been reached",
        Transient,
        Codex,
        "https://github.com/router-for-me/CLIProxyAPI/issues/3115",
    ),
    lit(
        "quota exceeded. check your plan and billing details",
        "Quota exceeded. Check your plan and billing details.",
        NeedsHuman,
        Codex,
        CODEX_ERROR_RS,
    ),
    lit(
        "insufficient_quota",
        r#"{"error":{"code":"insufficient_quota"}}"#,
        NeedsHuman,
        Codex,
        CODEX_ERROR_RS,
    ),
    lit(
        "to use codex with your chatgpt plan, upgrade to plus",
        "To use Codex with your ChatGPT plan, upgrade to Plus: https://chatgpt.com/explore/plus.",
        NeedsHuman,
        Codex,
        CODEX_ERROR_RS,
    ),
    re(
        r"run `?codex login",
        "Not logged in. Run `codex login` first.",
        NeedsHuman,
        Codex,
        "https://github.com/openai/codex/blob/main/docs/authentication.md",
    ),
    lit(
        "your authentication token has been invalidated",
        "401 Your authentication token has been invalidated. Please try signing in again.",
        NeedsHuman,
        Codex,
        "https://github.com/router-for-me/CLIProxyAPI/issues/3115",
    ),
    lit(
        "codex ran out of room in the model's context window",
        "Codex ran out of room in the model's context window. Start a new conversation or clear earlier history before retrying.",
        Fresh,
        Codex,
        CODEX_ERROR_RS,
    ),
    lit(
        "context_length_exceeded",
        "context_length_exceeded: Your input exceeds the context window of this model.",
        Fresh,
        Codex,
        CODEX_ERROR_RS,
    ),
    lit(
        "input exceeds context window of this model",
        "Input exceeds context window of this model",
        Fresh,
        Codex,
        CODEX_ERROR_RS,
    ),
    lit(
        "no saved session found with id",
        "No saved session found with ID 00000000-0000-4000-8000-000000000000.",
        Fresh,
        Codex,
        "https://github.com/stoneforge-ai/stoneforge/issues/130",
    ),
    re(
        r"no (rollout|thread|session) found for (thread|session) id",
        "no rollout found for thread id 0199aaaa",
        Fresh,
        Codex,
        CODEX_ERROR_RS,
    ),
    // ---- Gemini CLI ---------------------------------------------------------------
    lit(
        "resource has been exhausted",
        "Resource has been exhausted (e.g. check quota).",
        Transient,
        Gemini,
        GEMINI_QUOTA,
    ),
    lit(
        "resource_exhausted",
        r#"{"error":{"code":429,"status":"RESOURCE_EXHAUSTED"}}"#,
        Transient,
        Gemini,
        GEMINI_QUOTA,
    ),
    lit(
        "you have exhausted your daily quota",
        "You have exhausted your daily quota on this model.",
        Transient,
        Gemini,
        GEMINI_QUOTA,
    ),
    lit(
        "you have exhausted your capacity",
        "You have exhausted your capacity on this model. Your quota will reset after 2h.",
        Transient,
        Gemini,
        GEMINI_QUOTA,
    ),
    lit(
        "model_capacity_exhausted",
        "MODEL_CAPACITY_EXHAUSTED",
        Transient,
        Gemini,
        GEMINI_QUOTA,
    ),
    lit(
        "we are currently experiencing high demand",
        "We are currently experiencing high demand.",
        Transient,
        Gemini,
        GEMINI_FALLBACK,
    ),
    lit(
        "please wait and try again later. to increase your limits",
        "Please wait and try again later. To increase your limits, request a quota increase through AI Studio",
        Transient,
        Gemini,
        GEMINI_ERRPARSE,
    ),
    lit(
        "possible quota limitations in place",
        "Possible quota limitations in place or slow response times detected.",
        Transient,
        Gemini,
        GEMINI_ERRPARSE,
    ),
    re(
        r"quota exceeded for (quota )?metric",
        "Quota exceeded for quota metric 'Generate Content API requests per minute'",
        Transient,
        Gemini,
        GEMINI_QUOTA,
    ),
    lit(
        "terminalquotaerror",
        "TerminalQuotaError: You have exhausted your daily quota",
        Transient,
        Gemini,
        GEMINI_QUOTA,
    ),
    lit(
        "retryablequotaerror",
        "RetryableQuotaError: Please retry in 2.5s",
        Transient,
        Gemini,
        GEMINI_QUOTA,
    ),
    lit(
        "rate limit exceeded. try again later",
        "Rate limit exceeded. Try again later.",
        Transient,
        Gemini,
        "https://github.com/google-gemini/gemini-cli/blob/main/packages/cli/src/acp/acpSession.ts",
    ),
    lit(
        "fatalauthenticationerror",
        "FatalAuthenticationError: Failed to login",
        NeedsHuman,
        Gemini,
        GEMINI_AGENT_SESSION,
    ),
    lit(
        "api key not valid",
        "API key not valid. Please pass a valid API key.",
        NeedsHuman,
        Gemini,
        "https://ai.google.dev/gemini-api/docs/troubleshooting",
    ),
    re(
        r#""status": ?"permission_denied""#,
        r#"{"error":{"code":403,"status":"PERMISSION_DENIED"}}"#,
        NeedsHuman,
        Gemini,
        "https://ai.google.dev/gemini-api/docs/troubleshooting",
    ),
    re(
        r#""status": ?"unauthenticated""#,
        r#"{"error":{"code":401,"status":"UNAUTHENTICATED"}}"#,
        NeedsHuman,
        Gemini,
        "https://ai.google.dev/gemini-api/docs/troubleshooting",
    ),
    lit(
        "no previous sessions found for this project",
        "No previous sessions found for this project.",
        Fresh,
        Gemini,
        GEMINI_SESSIONS,
    ),
    lit(
        "invalid session identifier",
        "Invalid session identifier \"7\". Use --list-sessions to see available sessions.",
        Fresh,
        Gemini,
        GEMINI_SESSIONS,
    ),
    lit(
        "maximum session turns exceeded",
        "Maximum session turns exceeded",
        CutShort,
        Gemini,
        GEMINI_AGENT_SESSION,
    ),
    lit(
        "reached max session turns",
        "Reached max session turns for this session.",
        CutShort,
        Gemini,
        GEMINI_AGENT_SESSION,
    ),
    lit(
        "fatalturnlimitederror",
        "FatalTurnLimitedError",
        CutShort,
        Gemini,
        GEMINI_AGENT_SESSION,
    ),
    // ---- opencode -----------------------------------------------------------------
    re(
        r"^\W*rate limited\W*$",
        "Rate Limited",
        Transient,
        Opencode,
        OPENCODE_RETRY,
    ),
    lit(
        "provider is overloaded",
        "Provider is overloaded",
        Transient,
        Opencode,
        OPENCODE_RETRY,
    ),
    lit(
        "too many requests, the rate limit is",
        "Too many requests, the rate limit is 8000000 tokens per minute.",
        Transient,
        Opencode,
        "https://github.com/anomalyco/opencode/issues/21465",
    ),
    re(
        r"session not found: ses_",
        "Error: Session not found: ses_0e44d0893ffeqpBmONanFLzzWT",
        Fresh,
        Opencode,
        "https://github.com/anomalyco/opencode/issues/34715",
    ),
    lit(
        "providerautherror",
        "ProviderAuthError: missing credentials",
        NeedsHuman,
        Opencode,
        "https://github.com/sst/opencode/blob/dev/packages/opencode/src/provider/auth.ts",
    ),
    lit(
        "contextoverflowerror",
        "ContextOverflowError: input exceeds the context window",
        Fresh,
        Opencode,
        "https://github.com/sst/opencode/blob/dev/packages/opencode/src/session/message-v2.ts",
    ),
    // ---- Aider --------------------------------------------------------------------
    lit(
        "the api provider has rate limited you",
        "The API provider has rate limited you. Try again later or check your quotas.",
        Transient,
        Aider,
        AIDER_EXC,
    ),
    lit(
        "the api provider's servers are down or overloaded",
        "The API provider's servers are down or overloaded.",
        Transient,
        Aider,
        AIDER_EXC,
    ),
    lit(
        "the api provider timed out without returning a response",
        "The API provider timed out without returning a response. They may be down or overloaded.",
        Transient,
        Aider,
        AIDER_EXC,
    ),
    lit(
        "the api provider is not able to authenticate you",
        "The API provider is not able to authenticate you. Check your API key.",
        NeedsHuman,
        Aider,
        AIDER_EXC,
    ),
    lit(
        "permission was denied. check your api key",
        "Permission was denied. Check your API key and/or credentials.",
        NeedsHuman,
        Aider,
        AIDER_EXC,
    ),
    lit(
        "insufficient credits with the api provider",
        "Insufficient credits with the API provider. Please add credits.",
        NeedsHuman,
        Aider,
        AIDER_EXC,
    ),
    lit(
        "contextwindowexceedederror",
        "litellm.ContextWindowExceededError: prompt too long",
        Fresh,
        Aider,
        AIDER_EXC,
    ),
    lit(
        "possibly exhausted context window",
        "Model gpt-4o has hit a token limit! -- possibly exhausted context window!",
        Fresh,
        Aider,
        AIDER_CODER,
    ),
    re(
        r"tokens exceeds the [\d,]+ token limit",
        "Your estimated chat context of 130,000 tokens exceeds the 128,000 token limit for gpt-4o!",
        Fresh,
        Aider,
        AIDER_CODER,
    ),
    // ---- Cursor agent -------------------------------------------------------------
    lit(
        "get cursor pro for more agent usage",
        "Error: You've hit your usage limit\n  Get Cursor Pro for more Agent usage, unlimited Tab, and more.",
        Transient,
        Cursor,
        CURSOR_LIMIT,
    ),
    lit(
        "your usage limits will reset when",
        "Your usage limits will reset when your monthly cycle ends on 11/17/2025.",
        Transient,
        Cursor,
        CURSOR_LIMIT,
    ),
    lit(
        "you've hit your free requests limit",
        "You've hit your free requests limit.",
        Transient,
        Cursor,
        CURSOR_LIMIT,
    ),
    re(
        r"cursor_api_key|cursor-agent login",
        "Not authenticated. Run cursor-agent login or set CURSOR_API_KEY.",
        NeedsHuman,
        Cursor,
        "https://docs.cursor.com/en/cli/reference/authentication",
    ),
    // ---- generic HTTP / network / SDK ---------------------------------------------
    // ---- Kinds of signal, in any agent's words (SPEC 1.2: grown by kind, not by string).
    // A limit noun, then a reset or a retry with its delay or time.
    re(
        r"\b(limits?|limited|quota|capacity|usage|credits)\b[^\n]{0,200}?(\b(resets?|reset(ting)?|retry(ing)?|try again|available again|refills?)\b[^\n]{0,24}?\b(in|after|at|on|until|when)\s+\S*\d|\bwait (for )?(about )?\d)",
        "You have hit the hourly request limit for this workspace; it resets in 42 minutes.",
        Transient,
        Any,
        "https://github.com/google-gemini/gemini-cli/blob/main/packages/core/src/utils/retry.ts",
    ),
    // A retry in progress that names its wait and a limit or overload.
    re(
        r"\b(retrying|retry) (in|after) \d[^\n]{0,80}\b(rate|limit|quota|overload|capacity|429)|\b(rate limit|rate-limited|rate limited|overloaded|429)\b[^\n]{0,40}\bretrying (in|after) \d",
        "Rate Limited [retrying in 2h5m attempt #4]",
        Transient,
        Any,
        OPENCODE_RETRY,
    ),
    // A retry after a named delay, with or without a limit's name: a throttle.
    re(
        r"\b(try again|retry|available( again)?) in (about )?\d+(\.\d+)?\s*(ms|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|days?)\b",
        "You have reached the maximum number of requests allowed per hour. Try again in 37 minutes.",
        Transient,
        Any,
        "https://www.rfc-editor.org/rfc/rfc6585#section-4",
    ),
    // A limit by any name reached, exceeded or hit.
    re(
        r"\blimits? (has been |have been |was )?(reached|exceeded|hit)\b|\b(requests?|you) (was |were |are |have been |has been )?throttled\b",
        "Free tier limit hit. Upgrade your plan or wait 3 hours.",
        Transient,
        Any,
        "https://www.rfc-editor.org/rfc/rfc6585#section-4",
    ),
    // A service that timed out or is unavailable upstream.
    re(
        r"\b(request|gateway|upstream|read|connect(ion)?) (timed out|timeout)\b|\b50[234]\b[^\n]{0,30}\b(unavailable|bad gateway|gateway time-?out)\b",
        "503 Service Temporarily Unavailable",
        Transient,
        Any,
        MDN_STATUS,
    ),
    // The session to resume is gone: resume fresh.
    re(
        r"\b(session|conversation|thread|chat)\b[^\n]{0,40}?\b(not found|does not exist|doesn't exist|no longer exists)\b",
        "Error: Unable to resume: session 1234 does not exist",
        Fresh,
        Any,
        "https://github.com/anomalyco/opencode/issues/34715",
    ),
    // Money: a balance, credits or a spend limit only a human can top up.
    re(
        r"\binsufficient (balance|funds|credits?)\b|\btop up\b|\b(add|purchase|buy) (more )?credits\b|\bspend(ing)? limit\b|\bpayment (is )?(required|failed|overdue)\b",
        "Insufficient balance: please top up your account to continue.",
        NeedsHuman,
        Any,
        "https://github.com/Aider-AI/aider/blob/main/aider/exceptions.py",
    ),
    // A login to do again.
    re(
        r"^\W*(error: )?unauthori[sz]ed\b|\b(log|sign) ?in again\b|\bre-?(authenticate|login)\b|\brun `?[a-z][\w-]* (auth )?login\b",
        "Unauthorized: please log in again with `qwen auth`.",
        NeedsHuman,
        Any,
        "https://docs.github.com/en/copilot/how-tos/copilot-cli/set-up-copilot-cli/authenticate-copilot-cli",
    ),
    // A context-size phrase: the context, prompt or input is over the model's size.
    re(
        r"\bcontext( window| length| size)?\b[^\n]{0,30}?\b(exceeded|exceeds|is full|overflow(ed)?|too (long|large)|exhausted)\b|\b(exceeds?|exceeded|over|beyond)\b[^\n]{0,30}?\b(context( window| length| size)|max(imum)? (context|input tokens|prompt length))\b|\b(prompt|input|conversation) (is |was )?too (long|large)\b|\btoo many (input )?tokens (in|for) (the |your )?(prompt|input|request|context|message)",
        "Error: conversation too long for the model's context; start a new session.",
        Fresh,
        Any,
        "https://platform.openai.com/docs/guides/error-codes",
    ),
    // A credential phrase: a key, token or login that is invalid, expired or missing.
    re(
        r"\b(api[ _-]?key|access token|oauth token|auth(entication)? token|token|credentials?)( provided)? (is |was |has |have |are )?(been )?(invalid|expired|revoked|missing|not valid|incorrect|rejected)\b|\b(invalid|expired|revoked|missing|incorrect)( or (invalid|expired|revoked|missing))? (api[ _-]?key|access token|oauth token|auth(entication)? token|credentials)\b|\b(authentication|authorization|login|sign[- ]in) (has )?(failed|required|error)\b|\bfailed to authenticate\b|\bnot (authenticated|logged in)\b|\bno authentication information\b|\bplease set an auth method\b",
        "Error: authentication failed: the access token has expired. Sign in again.",
        NeedsHuman,
        Any,
        "https://docs.github.com/en/copilot/how-tos/copilot-cli/set-up-copilot-cli/authenticate-copilot-cli",
    ),
    // ---- Copilot CLI.
    lit(
        "you've hit a rate limit",
        "✗ Sorry, you've hit a rate limit that restricts the number of Copilot model requests you can make within a specific time period. Please try again in 2 hours.",
        Transient,
        Copilot,
        "https://github.com/github/copilot-cli/issues/2144",
    ),
    re(
        r#""code": ?"rate_limited""#,
        r#"Model call failed: {"message":"rate limit exceeded","code":"rate_limited"}"#,
        Transient,
        Copilot,
        "https://github.com/github/copilot-cli/issues/138",
    ),
    lit(
        "failed to get response from the ai model; retried",
        "Execution failed: Failed to get response from the AI model; retried 5 times (total retry wait time: 92.78521667234824 seconds)",
        Transient,
        Copilot,
        "https://github.com/github/copilot-cli/issues/138",
    ),
    re(
        r#"you have no quota|"code": ?"quota_exceeded""#,
        r#"402 {"error":{"message":"You have no quota","code":"quota_exceeded"}}"#,
        NeedsHuman,
        Copilot,
        "https://github.com/github/copilot-cli/issues/3431",
    ),
    lit(
        "no authentication information found",
        "Error: No authentication information found.",
        NeedsHuman,
        Copilot,
        COPILOT_ISSUES,
    ),
    // ---- Amp.
    re(
        r"\bout of credits\b",
        "Out of Credits",
        NeedsHuman,
        Amp,
        "https://github.com/automazeio/vibeproxy/issues/199",
    ),
    // ---- Goose.
    lit(
        "max retries exceeded for rate limit error",
        "Ran into this error: Rate limit exceeded: Max retries exceeded for rate limit error.",
        Transient,
        Goose,
        "https://github.com/aaif-goose/goose/issues/2262",
    ),
    re(
        r"^\W*server error: ",
        "Server error: upstream returned 502",
        Transient,
        Goose,
        GOOSE_ERRORS,
    ),
    lit(
        "request timed out — check your network connection",
        "Request timed out — check your network connection and try again.",
        Transient,
        Goose,
        GOOSE_ERRORS,
    ),
    re(
        r"^\W*credits exhausted\b",
        "Credits exhausted: add credits to continue",
        NeedsHuman,
        Goose,
        GOOSE_ERRORS,
    ),
    re(
        r"^\W*authentication error: ",
        "Authentication error: invalid x-api-key",
        NeedsHuman,
        Goose,
        GOOSE_ERRORS,
    ),
    re(
        r"err` value: session not found",
        "called `Result::unwrap()` on an `Err` value: Session not found",
        Fresh,
        Goose,
        "https://github.com/aaif-goose/goose/issues/5361",
    ),
    // ---- More of OpenCode, Cursor, Gemini and Aider (ecosystem.md A.1-A.4).
    lit(
        "free usage exceeded, add credits",
        "Free usage exceeded, add credits https://opencode.ai/zen",
        NeedsHuman,
        Opencode,
        OPENCODE_RETRY,
    ),
    lit(
        "too many computers used within the last 24 hours",
        "Too many computers used within the last 24 hours for the same Cursor account.",
        NeedsHuman,
        Cursor,
        "https://github.com/saaranshM/unsnooze/pull/19",
    ),
    lit(
        "rate limiting your requests",
        "OpenRouter or the upstream API provider is down, overloaded or rate limiting your requests.",
        Transient,
        Aider,
        AIDER_EXC,
    ),
    lit(
        "usage limit reached for",
        "Usage limit reached for gemini-2.5-pro.",
        Transient,
        Gemini,
        ECOSYSTEM,
    ),
    re(
        r"\b429 too many requests\b",
        "Error: 429 Too Many Requests",
        Transient,
        GenericHttp,
        MDN_STATUS,
    ),
    re(
        r"(request failed with status code|http error|http status|status:|status code:) ?429\b",
        "Request failed with status code 429",
        Transient,
        GenericHttp,
        MDN_STATUS,
    ),
    re(
        r"^\W*(error: )?too many requests\W*$",
        "Too Many Requests",
        Transient,
        GenericHttp,
        MDN_STATUS,
    ),
    re(
        r"\brate[ -]limit(ed)? (reached|exceeded|hit)\b",
        "Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 29000.",
        Transient,
        GenericHttp,
        "https://platform.openai.com/docs/guides/error-codes",
    ),
    re(
        r"\b(you (have been|are being|are) |been )rate[ -]limited\b",
        "You are being rate limited",
        Transient,
        GenericHttp,
        "https://platform.openai.com/docs/guides/error-codes",
    ),
    re(
        r"\b(usage|weekly|daily|monthly|session|quota) limit (reached|exceeded|hit)\b",
        "[1308][Usage limit reached for 5 hour. Your limit will reset at 2026-12-01 14:29:33]",
        Transient,
        GenericHttp,
        "https://github.com/orbi-build/orbi/issues/525",
    ),
    re(
        r"\bquota (has been )?exceeded\b",
        "Quota exceeded, please retry later",
        Transient,
        GenericHttp,
        "https://platform.openai.com/docs/guides/error-codes",
    ),
    re(
        r"\byou (have )?exceeded your current quota\b",
        "You exceeded your current quota, please check your plan and billing details.",
        NeedsHuman,
        GenericHttp,
        "https://platform.openai.com/docs/guides/error-codes",
    ),
    re(
        r"\b529\b.{0,20}overloaded|\boverloaded\b.{0,20}\b529\b",
        "529 Overloaded",
        Transient,
        GenericHttp,
        ANTHROPIC_ERRORS,
    ),
    re(
        r"\b(server|service|model|api|upstream) (is |are )?(currently )?overloaded\b",
        "The server is overloaded, please try again later",
        Transient,
        GenericHttp,
        MDN_STATUS,
    ),
    re(
        r"\b(50[234]) (bad gateway|service unavailable|gateway time-?out)\b",
        "503 Service Unavailable",
        Transient,
        GenericHttp,
        MDN_STATUS,
    ),
    re(
        r"^\W*(error: )?service unavailable\W*$",
        "Service Unavailable",
        Transient,
        GenericHttp,
        MDN_STATUS,
    ),
    re(
        r"\b(at|over) capacity\b",
        "The model is at capacity. Please try again later.",
        Transient,
        GenericHttp,
        MDN_STATUS,
    ),
    // Read from the real CLIs' output (tests/data/agents/<agent>-<version>/).
    re(
        r"\bnot running in a trusted (directory|folder)\b|\btrust this (directory|folder)\b",
        "Gemini CLI is not running in a trusted directory. To proceed, either use `--skip-trust`, set the `GEMINI_CLI_TRUST_WORKSPACE=true` environment variable, or trust this directory in interactive mode.",
        NeedsHuman,
        Gemini,
        REAL_OUTPUTS,
    ),
    re(
        r"\breconnecting\.\.\.|\bwaiting for network\b|\bconnection failed: error sending request\b",
        "ERROR: Reconnecting... waiting for network (Connection failed: error sending request)",
        Transient,
        Codex,
        REAL_OUTPUTS,
    ),
    re(
        r"\bfetch failed\b|\bretrying with backoff\b",
        "Attempt 2 failed. Retrying with backoff... Error: exception TypeError: fetch failed sending request",
        Transient,
        Gemini,
        REAL_OUTPUTS,
    ),
    re(
        r"\bunable to connect to (the )?api\b|\bconnection to the api was lost\b|\bconnection refused\b",
        "API Error: Unable to connect to API (ConnectionRefused)",
        Transient,
        Claude,
        REAL_OUTPUTS,
    ),
    lit(
        "econnreset",
        "Error: read ECONNRESET",
        Transient,
        GenericHttp,
        NODE_ERRORS,
    ),
    lit(
        "econnrefused",
        "connect ECONNREFUSED 127.0.0.1:443",
        Transient,
        GenericHttp,
        NODE_ERRORS,
    ),
    lit(
        "etimedout",
        "connect ETIMEDOUT 104.18.0.1:443",
        Transient,
        GenericHttp,
        NODE_ERRORS,
    ),
    lit(
        "eai_again",
        "getaddrinfo EAI_AGAIN api.anthropic.com",
        Transient,
        GenericHttp,
        NODE_ERRORS,
    ),
    lit(
        "socket hang up",
        "Error: socket hang up",
        Transient,
        GenericHttp,
        NODE_ERRORS,
    ),
    re(
        r"\bother side closed\b|\bund_err_socket\b",
        "[cause]: SocketError: other side closed { code: 'UND_ERR_SOCKET' }",
        Transient,
        GenericHttp,
        "https://undici.nodejs.org/#/docs/api/Errors",
    ),
    lit(
        "connection reset by peer",
        "Connection reset by peer (os error 104)",
        Transient,
        GenericHttp,
        NODE_ERRORS,
    ),
    lit(
        "error sending request for url",
        "error sending request for url (https://api.openai.com/v1/responses)",
        Transient,
        GenericHttp,
        "https://docs.rs/reqwest/latest/reqwest/struct.Error.html",
    ),
    re(
        r"\b(apiconnectionerror|apitimeouterror|connection error\.|request timed out\.)",
        "APIConnectionError: Connection error.",
        Transient,
        GenericHttp,
        "https://github.com/anthropics/anthropic-sdk-typescript#handling-errors",
    ),
    lit(
        "upstream connect error or disconnect/reset before headers",
        "upstream connect error or disconnect/reset before headers",
        Transient,
        GenericHttp,
        "https://www.envoyproxy.io/docs/envoy/latest/faq/debugging/why_is_envoy_503",
    ),
    re(
        r"\b(stream|connection) (was )?(dropped|closed unexpectedly|interrupted)\b",
        "The stream was dropped",
        Transient,
        GenericHttp,
        MDN_STATUS,
    ),
    re(
        r"\bretry-after:\s*\d",
        "Retry-After: 120",
        Transient,
        GenericHttp,
        "https://www.rfc-editor.org/rfc/rfc9110#field.retry-after",
    ),
    re(
        r"\b401 unauthorized\b",
        "HTTP 401 Unauthorized",
        NeedsHuman,
        GenericHttp,
        MDN_STATUS,
    ),
    re(
        r"\b403 forbidden\b",
        "403 Forbidden",
        NeedsHuman,
        GenericHttp,
        MDN_STATUS,
    ),
    re(
        r"(request failed with status code|http error|http status|status:|status code:) ?40[13]\b",
        "Request failed with status code 401",
        NeedsHuman,
        GenericHttp,
        MDN_STATUS,
    ),
    re(
        r"\b402 payment required\b|^\W*(error: )?payment required",
        "402 Payment Required",
        NeedsHuman,
        GenericHttp,
        MDN_STATUS,
    ),
    re(
        r"\b(incorrect|invalid|missing|no) api key\b",
        "Incorrect API key provided: sk-xx.",
        NeedsHuman,
        GenericHttp,
        "https://platform.openai.com/docs/guides/error-codes",
    ),
    re(
        r"\byour account .{0,40}(suspended|disabled|deactivated)",
        "Your account has been suspended",
        NeedsHuman,
        GenericHttp,
        "https://platform.openai.com/docs/guides/error-codes",
    ),
    re(
        r"organization .{0,30}(has )?(been )?disabled|disabled access",
        "Your organization has disabled access to this model",
        NeedsHuman,
        GenericHttp,
        ANTHROPIC_ERRORS,
    ),
    re(
        r"^\W*(error: )?billing\b",
        "Billing hard limit has been reached",
        NeedsHuman,
        GenericHttp,
        "https://platform.openai.com/docs/guides/error-codes",
    ),
    lit(
        "billing hard limit has been reached",
        "Billing hard limit has been reached",
        NeedsHuman,
        GenericHttp,
        "https://platform.openai.com/docs/guides/error-codes",
    ),
    lit(
        "permission denied (publickey",
        "git@github.com: Permission denied (publickey).",
        NeedsHuman,
        GenericHttp,
        "https://docs.github.com/en/authentication/troubleshooting-ssh/error-permission-denied-publickey",
    ),
    re(
        r"remote: permission to \S+ denied",
        "remote: Permission to acme/app.git denied to ci-bot.",
        NeedsHuman,
        GenericHttp,
        "https://docs.github.com/en/get-started/using-git/troubleshooting-the-2-gb-push-limit",
    ),
    re(
        r"the requested url returned error: 40[13]\b",
        "The requested URL returned error: 403",
        NeedsHuman,
        GenericHttp,
        "https://git-scm.com/docs/git-http-fetch",
    ),
    re(
        r"fatal: (could not read from remote repository|authentication failed)",
        "fatal: Authentication failed for 'https://github.com/acme/widget.git/'",
        NeedsHuman,
        GenericHttp,
        "https://git-scm.com/docs/gitcredentials",
    ),
    re(
        r"\b(context window|context length) (exceeded|is full)|maximum context length",
        "This model's maximum context length is 128000 tokens.",
        Fresh,
        GenericHttp,
        "https://platform.openai.com/docs/guides/error-codes",
    ),
    re(
        r"^\W*terminated\W*$",
        "Terminated",
        CutShort,
        GenericHttp,
        "https://www.gnu.org/software/bash/manual/html_node/Signals.html",
    ),
    re(
        r"\b(session|process|run|agent) (was )?(terminated|killed|aborted)\b",
        "The session was terminated before the task finished.",
        CutShort,
        GenericHttp,
        CC_ISSUES,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_agent_has_signs_of_the_main_kinds() {
        for agent in [
            Claude,
            Codex,
            Gemini,
            Opencode,
            Aider,
            Cursor,
            Copilot,
            Goose,
            Any,
            GenericHttp,
        ] {
            assert!(
                SIGNS
                    .iter()
                    .any(|s| s.agent == agent && s.kind == Transient),
                "{agent:?} has a transient sign"
            );
            assert!(
                SIGNS
                    .iter()
                    .any(|s| s.agent == agent && s.kind == NeedsHuman),
                "{agent:?} has a needs-human sign"
            );
        }
        for s in SIGNS {
            if !s.regex {
                assert_eq!(
                    s.pattern,
                    s.pattern.to_lowercase(),
                    "lowercase: {}",
                    s.pattern
                );
            }
            assert!(
                s.source.starts_with("https://") || s.source == REAL_OUTPUTS,
                "source of {}",
                s.pattern
            );
            assert!(!s.example.is_empty(), "example of {}", s.pattern);
        }
    }
}
