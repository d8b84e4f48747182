//! git-recode: recover the work of coding-agent workers that die, stall or claim
//! success they did not reach.
//!
//! The library holds all logic; `main.rs` only calls [`main`]. Its face is [`app`]: a
//! session opened once a run and one function per command; every other module is
//! `pub(crate)`. Modules:
//! - [`ledger`]: the append-only per-task event log stored in git notes.
//! - [`outcome`]: classify an agent's exit (rc + final message) into an outcome.
//! - [`worktree`]: linked worktrees, their HEAD, in-progress operation and dirty counts.
//! - [`snapshot`]: gather what git and the ledger say about every worker.
//! - [`classify`]: the pure decision (liveness, state, action) over a snapshot.
//! - [`wire`]: the JSON wire format (the stable contract of `--json`).
//! - [`cli`]: one file per command.
#![deny(missing_docs)]
#![warn(unreachable_pub)]
// The library's face is small on purpose; its docs link the crate-private modules that do
// the work (rendered with `cargo doc --document-private-items`, as CI builds them).
#![allow(rustdoc::private_intra_doc_links)]

pub(crate) mod agent;
pub mod app;
pub(crate) mod classify;
pub(crate) mod cli;
pub(crate) mod clock;
pub(crate) mod config;
pub(crate) mod doctor;
pub(crate) mod error;
pub(crate) mod failpoint;
pub(crate) mod fence;
pub(crate) mod forge;
pub(crate) mod git;
pub(crate) mod hook;
pub(crate) mod hosts;
pub(crate) mod ledger;
pub(crate) mod lock;
pub(crate) mod locks;
pub(crate) mod model;
pub(crate) mod outcome;
pub(crate) mod process;
pub(crate) mod progress;
pub(crate) mod record;
pub(crate) mod recover;
pub(crate) mod redact;
pub(crate) mod refs;
pub(crate) mod render;
pub(crate) mod repo;
pub(crate) mod report;
pub(crate) mod resume;
pub(crate) mod retry;
pub(crate) mod snapshot;
pub(crate) mod ssh;
pub(crate) mod sync;
pub(crate) mod tail;
pub(crate) mod trailer;
pub(crate) mod wire;
pub(crate) mod workers;
pub(crate) mod worktree;

/// The command line: parse the arguments, run the command, print errors; returns the exit
/// code (SPEC "Exit codes"). What `main.rs` calls.
pub fn main() -> i32 {
    cli::main()
}
