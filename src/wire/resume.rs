//! The `resume --json` document and the facts a resume prompt is built from (the prompt
//! and the JSON render the same facts).

use serde::Serialize;

use crate::model::Feedback;
use crate::outcome::Outcome;

/// The `resume --json` document (docs/json.md "resume"): the new attempt, how the agent
/// continues (`mode`: `session` or `fresh`, and why), where, the prompt's file and blob
/// id, and the facts the prompt was built from.
#[derive(Serialize, Clone, Debug)]
pub struct ResumeDoc<'a> {
    /// [`super::SCHEMA`].
    pub schema: u32,
    /// Task key.
    pub task: &'a str,
    /// Branch.
    pub branch: &'a str,
    /// The attempt this resume starts (as ledgered).
    pub attempt: u32,
    /// `session` or `fresh`.
    pub mode: &'static str,
    /// Why this mode.
    pub why: &'a str,
    /// The session resumed, if any.
    pub session_id: Option<&'a str>,
    /// The directory the command runs in.
    pub cwd: &'a str,
    /// The POSIX shell command line.
    pub command: &'a str,
    /// Where the prompt was written.
    pub prompt_file: Option<String>,
    /// The prompt's git blob id (SHA-1 hex).
    pub prompt_sha: &'a str,
    /// Nothing was written.
    pub dry_run: bool,
    /// The prompt's facts.
    pub facts: &'a ResumeFacts,
}

/// A gate's verdict on exactly the head.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Gate {
    /// It passed.
    Passed,
    /// It failed.
    Failed,
}

/// One commit since the base.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct CommitFact {
    /// Commit id (40 hex digits, 64 in a SHA-256 repository, in `resume --json`).
    #[serde(serialize_with = "crate::model::event::wire_head::one")]
    pub id: gix::ObjectId,
    /// First line of the message.
    pub subject: String,
    /// Its `Recode-Phase:` trailer.
    pub phase: Option<String>,
    /// A git-recode WIP snapshot (`Recode-Wip: true`).
    pub wip: bool,
}

/// The facts a prompt is built from (also `resume --json`'s `facts`).
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct ResumeFacts {
    /// Task key.
    pub task: String,
    /// Branch.
    pub branch: String,
    /// Base branch.
    pub base: String,
    /// The branch exists locally.
    pub branch_exists: bool,
    /// The remote-tracking branch, when it exists.
    pub remote_branch: Option<String>,
    /// Commits ahead of the base; null when unknown (a shallow history without a merge base).
    pub ahead: Option<u32>,
    /// Commits behind the base; null when unknown.
    pub behind: Option<u32>,
    /// Commits since the base, oldest first.
    pub commits: Vec<CommitFact>,
    /// `git diff --stat <base>...<head>`.
    pub diffstat: String,
    /// `git status --short` of the worktree (empty when clean or absent).
    pub uncommitted: Vec<String>,
    /// The worktree.
    pub worktree: Option<String>,
    /// The newest gate result for exactly the head.
    pub gate: Option<Gate>,
    /// The previous attempt's outcome.
    pub last_outcome: Option<Outcome>,
    /// Its exit code.
    pub last_rc: Option<i32>,
    /// Its final message.
    pub last_message: Option<String>,
    /// Newest milestone.
    pub phase: Option<String>,
    /// The attempt this resume starts.
    pub attempt: u32,
    /// `recode.maxAttempts`.
    pub max_attempts: u32,
    /// What the branch's newest WIP step left out and is still in the worktree (SPEC 1.2
    /// "Never lose work: more states": the resume prompt names it), in the ledger's order.
    pub left_out: Vec<LeftOutFact>,
    /// Stash entries made on the branch, newest first (`stash@{N} (<message>)`: the message
    /// is untrusted text): work no status shows (SPEC 1.3).
    pub stashes: Vec<String>,
    /// Commits a reset left only in the branch's reflog, newest first
    /// (`<branch>@{N} (<id> <subject>)`; the subject is untrusted text; SPEC 1.3).
    pub reset_away: Vec<String>,
    /// The open pull request whose failing checks or requested changes this resume
    /// answers (SPEC "Pull request feedback"); null otherwise.
    pub pull_request: Option<PrFacts>,
    /// The worker's newest attempt ran on another host, silent for `recode.hostTimeout`:
    /// this resume takes it over (SPEC 1.2 "Several machines"). Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub takeover: Option<TakeoverFacts>,
    /// The task's own prompt, as the loop gave it to the newest attempt that recorded one
    /// (`record spawn --prompt-file`, its first 16 KiB): untrusted, fenced under "The
    /// task" (SPEC 1.3). Absent when no spawn recorded one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_prompt: Option<String>,
}

/// Where the work was before a takeover (SPEC 1.2: the prompt says where the work was and
/// that uncommitted work may remain there).
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct TakeoverFacts {
    /// The silent host.
    pub from_host: String,
    /// The directory its newest attempt ran in there, when recorded.
    pub path: Option<String>,
    /// When that host was last heard of (RFC 3339).
    pub last_seen: String,
}

/// One path a WIP commit left out, as it is on disk now.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct LeftOutFact {
    /// Repository-relative, `/`-separated.
    pub path: String,
    /// `submodule` (a registered gitlink holding work its remote lacks), `repository` (an
    /// untracked nested repository), `file` (an untracked file, too large for a WIP
    /// commit or refused by the remote), or `other`.
    pub kind: &'static str,
    /// The file's size in bytes (`file` only).
    pub bytes: Option<u64>,
}

/// The open pull request a resume answers, with the forge's verdict and its evidence
/// (texts already cut to the forge's `MAX_TEXT` characters).
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct PrFacts {
    /// Its number.
    pub number: u64,
    /// Its page.
    pub url: String,
    /// `failing`, `pending`, `passing` or null.
    pub checks: Option<&'static str>,
    /// `changes_requested`, `approved` or null.
    pub review: Option<&'static str>,
    /// The failing checks and requested changes (untrusted).
    pub feedback: Feedback,
}
