//! The library's face: a [`Session`] opened once per run, and one function per command
//! returning a typed report (its warnings collected in the session for the caller to
//! show). The command line parses, calls one function here, and renders; it reaches
//! nothing else of the library but [`crate::wire`] (the `--json` documents) and
//! [`crate::render`] (human text). Everything here is also what the tests and examples
//! may use.

mod branch;
mod demo;
mod doctor;
mod hook;
mod log;
pub mod parts;
mod record;
mod recover;
mod report;
mod resume;
mod session;
mod status;
mod sync;
mod verify;

pub use branch::parse as parse_branch;
pub use demo::{DEMO_SCRIPT, Demo, build as build_demo, demo};
pub use doctor::{Doctor, doctor, doctor_doc};
pub use hook::{
    Acted, HookSaid, act as hook_act, is_hook_path, post_commit, status as hook_status,
    status_doc as hook_status_doc,
};
pub use log::{LogLine, log};
pub use record::{Exit, Record, Spawn, record};
pub use recover::{Recovered, recover, usage as recover_usage};
pub use report::{report, report_text, write_report_html};
pub use resume::{Resume, ResumeRequest, resume};
pub use session::Session;
pub use status::{StatusRequest, classify, status};
pub use sync::{setup as sync_setup, sync};
pub use verify::verify;

pub use crate::config::{KEYS as CONFIG_KEYS, help_list as config_help_list};
pub use crate::error::{EXIT_ERROR, EXIT_OK, EXIT_REFUSED, EXIT_USAGE, Error};
pub use crate::recover::Request as RecoverRequest;

/// The loop tick of `--help`, the man page and the README (run as printed by
/// `tests/it/newcomer.rs`): the status list is read whole before any agent runs, each
/// agent's stdin is `/dev/null` (`claude -p` reads piped stdin), every worker is acted on
/// in one tick, and the agent's output goes to `record exit --message-file` so limits
/// are recognised.
pub const LOOP_TICK: &str = r#"  mapfile -t rows < <(git recode status --porcelain)
  for row in "${rows[@]}"; do
    IFS=$'\t' read -r task branch live state action n <<<"$row"
    f=${TMPDIR:-/tmp}/recode-$task
    case $action in
      resume) cmd=$(git recode resume "$branch" --output "$f.md") || continue
              sh -c "$cmd" </dev/null >"$f.out" 2>&1
              git recode record exit "$branch" --rc $? --message-file "$f.out" ;;
      delete|publish|wip-commit|escalate|kill) git recode recover "$branch" ;;
    esac
  done
"#;

/// The worker branch names of the repository in the current directory, for shell
/// completion (none outside a repository or with a bad configuration: completion never
/// fails).
pub fn worker_branches() -> Vec<String> {
    let Ok(repo) = crate::repo::open(None) else {
        return Vec::new();
    };
    let Ok(cfg) = crate::config::Config::load(&repo) else {
        return Vec::new();
    };
    crate::repo::worker_branch_names(&repo, &cfg)
}
