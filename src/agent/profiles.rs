//! The agent CLIs git-recode knows, as one table (SPEC 1.2 "Outcomes: every agent", the
//! `recode.agent` config row). Facts per agent are from
//! `shared/research/ecosystem.md` section A (each row names its source there).
//!
//! A command template holds four placeholders, filled by [`crate::resume`]:
//! `{prompt}` (the prompt as one word, `"$(cat '<file>')"`), `{prompt_file}` (the file,
//! single-quoted), `{session_id}` (single-quoted) and `{args}` (the attempt's recorded
//! flags, each single-quoted, else [`Profile::default_args`]). Nothing else in this crate asks
//! which agent it is: every difference between agents is a field here.

/// One agent CLI.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Profile {
    /// The `recode.agent` / `record spawn --agent` name.
    pub name: &'static str,
    /// The executable on `PATH`.
    pub binary: &'static str,
    /// The headless command of a fresh session (placeholders: `{prompt}`, `{prompt_file}`).
    pub fresh: &'static str,
    /// The headless command that resumes session `{session_id}`; `None` when the agent
    /// has no sessions to resume by id (Aider: its fresh form is used).
    pub resume: Option<&'static str>,
    /// Whether a session belongs to the directory it ran in (resume must run there).
    pub resume_needs_cwd: bool,
    /// Whether its exit code can be trusted. When false, rc 0 is a success only when the
    /// output says the run completed (a closing event without an error, or for a
    /// text-only agent a final message with no sign of failure): empty output is a
    /// failure.
    pub exit_trusted: bool,
    /// Whether it retries rate limits, overloads and dead connections silently until it
    /// is killed (OpenCode 1.18.33 with `--format json` prints nothing while it retries:
    /// `tests/data/agents/opencode-1.18.33/`): a run killed with nothing said is then
    /// `transient`, not `failed` (SPEC 1.3).
    pub retries_silently: bool,
    /// Environment set on its launch command (`NAME=value` words before the binary).
    pub env: &'static [(&'static str, &'static str)],
    /// The flags `{args}` stands for when the attempt recorded none (`record spawn -- ARGS`
    /// not used, an older ledger): what git-recode launched this agent with before flags
    /// were recorded. Recorded flags replace them, so a resume never has wider
    /// permissions than the attempt it continues (SPEC 1.3 "Real agents").
    pub default_args: &'static [&'static str],
    /// The variable naming its configuration directory (`CLAUDE_CONFIG_DIR`,
    /// `CODEX_HOME`), set from `record spawn --config-dir` on the resumed agent.
    pub config_env: Option<&'static str>,
    /// The flags (recorded, or none) are followed by `--`: a flag that takes several values
    /// (`--allowedTools Bash Edit`) would otherwise take the prompt as one of them.
    pub args_end_with_dashes: bool,
}

/// Every known agent, by `recode.agent` name.
pub(crate) const PROFILES: &[Profile] = &[
    Profile {
        name: "claude",
        binary: "claude",
        fresh: "claude -p {args} {prompt}",
        resume: Some("claude -p --resume={session_id} {args} {prompt}"),
        resume_needs_cwd: true,
        // Session id: `session_id` of the `json` result, of stream-json's `system`/`init` and `result`.
        exit_trusted: true,
        // Transcripts: ~/.claude/projects/<dir>/<session>.jsonl (JSON lines).
        // SPEC 1.2: background work fails loudly instead of half-completing.
        retries_silently: false,
        env: &[("CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS", "0")],
        default_args: &[],
        config_env: Some("CLAUDE_CONFIG_DIR"),
        args_end_with_dashes: true,
    },
    Profile {
        name: "codex",
        binary: "codex",
        fresh: "codex exec {args} {prompt}",
        resume: Some("codex exec resume {args} {session_id} {prompt}"),
        resume_needs_cwd: true,
        // Session id: `thread_id` of `thread.started`.
        // `turn.failed` with exit 0.
        exit_trusted: false,
        // Transcripts: ~/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<session>.jsonl (JSON lines).
        retries_silently: false,
        env: &[],
        default_args: &[],
        config_env: Some("CODEX_HOME"),
        args_end_with_dashes: true,
    },
    Profile {
        name: "gemini",
        binary: "gemini",
        fresh: "gemini -p {prompt} -o stream-json {args}",
        resume: Some("gemini --resume {session_id} -p {prompt} -o stream-json {args}"),
        resume_needs_cwd: true,
        // Session id: `session_id` of stream-json's `init`, or of the `json` object.
        exit_trusted: true,
        // Transcripts: ~/.gemini/tmp/<project>/chats/session-<ts>-<id8>.jsonl (JSON lines).
        retries_silently: false,
        env: &[],
        default_args: &["--yolo", "--skip-trust"],
        config_env: None,
        args_end_with_dashes: false,
    },
    Profile {
        name: "opencode",
        binary: "opencode",
        fresh: "opencode run --format json {args} {prompt}",
        resume: Some("opencode run --format json {args} --session={session_id} {prompt}"),
        resume_needs_cwd: true,
        // Session id: `sessionID` of every event (`ses_…`).
        // Exit 0 for a missing session (anomalyco/opencode#27559).
        exit_trusted: false,
        // Transcripts: SQLite ~/.local/share/opencode/opencode.db (not read: the `record spawn --output` file is).
        retries_silently: true,
        env: &[],
        default_args: &["--auto"],
        config_env: None,
        args_end_with_dashes: false,
    },
    Profile {
        name: "cursor",
        binary: "cursor-agent",
        fresh: "cursor-agent -p --output-format stream-json {args} {prompt}",
        resume: Some(
            "cursor-agent -p --output-format stream-json {args} --resume={session_id} {prompt}",
        ),
        resume_needs_cwd: true,
        // Session id: `session_id` of stream-json's `system`/`init` and `result` (Claude-shaped).
        // No JSON at all on failure: the stderr text decides.
        exit_trusted: true,
        // Transcripts: SQLite ~/.cursor/chats/<md5(cwd)>/<chat>/store.db (not read: the `record spawn --output` file is).
        retries_silently: false,
        env: &[],
        default_args: &["--force"],
        config_env: None,
        args_end_with_dashes: false,
    },
    Profile {
        name: "copilot",
        binary: "copilot",
        fresh: "copilot -p {prompt} --output-format json -s {args}",
        resume: Some("copilot -p {prompt} --output-format json -s {args} --resume={session_id}"),
        resume_needs_cwd: true,
        // Session id: `sessionId` of the final `result` event.
        // Exit 0 with no output on an auth failure (github/copilot-cli#1181).
        exit_trusted: false,
        // Transcripts: ~/.copilot/session-state/<session>/events.jsonl (JSON lines).
        retries_silently: false,
        env: &[],
        default_args: &["--allow-all", "--autopilot", "--no-ask-user"],
        config_env: None,
        args_end_with_dashes: false,
    },
    Profile {
        name: "amp",
        binary: "amp",
        fresh: "amp -x {prompt} --stream-json {args}",
        resume: Some("amp threads continue {session_id} -x --stream-json {args} {prompt}"),
        // Threads are server-side: any directory of the account resumes them.
        resume_needs_cwd: false,
        // Session id: `session_id` of stream-json's `system`/`init` (thread id `T-…`, Claude-shaped).
        exit_trusted: true,
        // Transcripts: server-side threads (~/.local/state/amp/last-thread-id) (not read: the `record spawn --output` file is).
        retries_silently: false,
        env: &[],
        default_args: &["--dangerously-allow-all"],
        config_env: None,
        args_end_with_dashes: false,
    },
    Profile {
        name: "goose",
        binary: "goose",
        fresh: "goose run {args} -t {prompt} --output-format stream-json",
        resume: Some(
            "goose run -r --name={session_id} {args} -t {prompt} --output-format stream-json",
        ),
        resume_needs_cwd: true,
        // Session id: not emitted: the session name the loop gave (`-n`), recorded with `record spawn --session-id`.
        exit_trusted: false,
        // Transcripts: SQLite ~/.local/share/goose/sessions/sessions.db (not read: the `record spawn --output` file is).
        retries_silently: false,
        env: &[],
        default_args: &[],
        config_env: None,
        args_end_with_dashes: false,
    },
    Profile {
        name: "aider",
        binary: "aider",
        fresh: "aider {args} --message-file {prompt_file}",
        resume: None,
        resume_needs_cwd: true,
        // Session id: none: Aider has no session ids and no JSON output.
        // Exit 0 after every API call failed (aider/main.py returns None).
        exit_trusted: false,
        // Transcripts: <git root>/.aider.chat.history.md (not read: the `record spawn --output` file is).
        retries_silently: false,
        env: &[],
        default_args: &["--yes-always"],
        config_env: None,
        args_end_with_dashes: false,
    },
];

/// The profile named `name` (`recode.agent`, `record spawn --agent`), if it is a known
/// agent; anything else is a command template.
pub(crate) fn profile(name: &str) -> Option<&'static Profile> {
    PROFILES.iter().find(|p| p.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nine_agents_each_with_a_fresh_command_naming_its_binary() {
        let names: Vec<&str> = PROFILES.iter().map(|p| p.name).collect();
        assert_eq!(
            names,
            [
                "claude", "codex", "gemini", "opencode", "cursor", "copilot", "amp", "goose",
                "aider"
            ]
        );
        for p in PROFILES {
            assert!(p.fresh.starts_with(p.binary), "{}", p.name);
            assert!(p.fresh.contains(" {args}"), "{}", p.name);
            assert!(p.resume.is_none_or(|r| r.contains(" {args}")), "{}", p.name);
            assert!(!p.fresh.contains("{session_id}"), "{}", p.name);
            if let Some(r) = p.resume {
                assert!(
                    r.starts_with(p.binary) && r.contains("{session_id}"),
                    "{}",
                    p.name
                );
            }
        }
        assert_eq!(profile("cursor").unwrap().binary, "cursor-agent");
        assert!(profile("my-agent {session_id}").is_none());
    }
}
