//! The JSON contract (docs/json.md) as a consumer reads it: one set of types, declared
//! apart from the crate's own, nullable exactly where docs/json.md says a field may be
//! null. `deny_unknown_fields`: an added field fails here until docs/json.md and these
//! types are updated with it (changes are additive only). Every suite that reads a
//! document as a whole reads it through these.

use serde::Deserialize;

#[derive(Deserialize, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub(crate) struct Dirty {
    pub(crate) staged: u32,
    pub(crate) unstaged: u32,
    pub(crate) untracked: u32,
    pub(crate) conflicted: u32,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub(crate) struct Pr {
    pub(crate) number: u64,
    pub(crate) state: String,
    pub(crate) url: String,
    pub(crate) checks: Option<String>,
    pub(crate) review: Option<String>,
}

macro_rules! worker_fields {
    ($name:ident { $($extra:tt)* }) => {
        #[derive(Deserialize, Debug)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        pub(crate) struct $name {
            pub(crate) task: String,
            pub(crate) branch: String,
            pub(crate) worktree: Option<String>,
            pub(crate) head: Option<String>,
            pub(crate) base: String,
            pub(crate) ahead: Option<u32>,
            pub(crate) behind: Option<u32>,
            pub(crate) remote_ahead: Option<u32>,
            pub(crate) dirty: Option<Dirty>,
            pub(crate) operation: Option<String>,
            pub(crate) liveness: String,
            pub(crate) state: String,
            pub(crate) action: String,
            pub(crate) reason: String,
            pub(crate) attempts: u32,
            pub(crate) max_attempts: u32,
            pub(crate) last_outcome: Option<String>,
            pub(crate) phase: Option<String>,
            pub(crate) session_id: Option<String>,
            pub(crate) last_activity: Option<String>,
            pub(crate) idle_seconds: Option<i64>,
            pub(crate) retry_after: Option<String>,
            pub(crate) pr: Option<Pr>,
            pub(crate) phantom: bool,
            /// SPEC 1.2 "Several machines": the newest attempt's host (additive).
            pub(crate) host: Option<String>,
            $($extra)*
        }
    };
}
worker_fields!(Worker {});
worker_fields!(ClassifyDoc { pub(crate) schema: u32, pub(crate) evidence: Vec<String>, });

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(crate) struct StatusDoc {
    pub(crate) schema: u32,
    pub(crate) workers: Vec<Worker>,
}

#[derive(Deserialize, Debug)]
#[allow(dead_code)]
pub(crate) struct LogEvent {
    pub(crate) v: u32,
    pub(crate) ts: String,
    pub(crate) seq: u64,
    pub(crate) task: String,
    pub(crate) kind: String,
    pub(crate) branch: Option<String>,
    pub(crate) head: Option<String>,
    #[serde(flatten)]
    pub(crate) rest: serde_json::Map<String, serde_json::Value>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub(crate) struct ResumeDoc {
    pub(crate) schema: u32,
    pub(crate) task: String,
    pub(crate) branch: String,
    pub(crate) attempt: u32,
    pub(crate) mode: String,
    pub(crate) why: String,
    pub(crate) session_id: Option<String>,
    pub(crate) cwd: String,
    pub(crate) command: String,
    pub(crate) prompt_file: Option<String>,
    pub(crate) prompt_sha: String,
    pub(crate) dry_run: bool,
    pub(crate) facts: serde_json::Value,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub(crate) struct RecoverItem {
    pub(crate) task: String,
    pub(crate) branch: String,
    pub(crate) action: String,
    pub(crate) result: String,
    pub(crate) reason: String,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(crate) struct RecoverDoc {
    pub(crate) schema: u32,
    pub(crate) results: Vec<RecoverItem>,
}
