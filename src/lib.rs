//! git-recode: recover the work of coding-agent workers that die, stall or claim
//! success they did not reach.
//!
//! The library holds all logic; `main.rs` only calls [`cli::main`]. Modules:
//! - [`ledger`]: the append-only per-task event log stored in git notes.
//! - [`outcome`]: classify an agent's exit (rc + final message) into an outcome.
//! - [`worktree`]: linked worktrees, their HEAD, in-progress operation and dirty counts.
//! - [`snapshot`]: gather what git and the ledger say about every worker.
//! - [`classify`]: the pure decision (liveness, state, action) over a snapshot.
//! - [`wire`]: the JSON wire format (the stable contract of `--json`).
//! - [`cli`]: one file per command.
#![deny(missing_docs)]
#![warn(unreachable_pub)]

pub mod agent;
pub mod app;
pub mod classify;
pub mod cli;
pub mod clock;
pub mod config;
pub mod doctor;
pub mod error;
pub mod failpoint;
pub mod fence;
pub mod forge;
pub mod git;
pub mod hook;
pub mod hosts;
pub mod ledger;
pub mod lock;
pub mod locks;
pub mod model;
pub mod outcome;
pub mod process;
pub mod progress;
pub mod record;
pub mod recover;
pub mod redact;
pub mod render;
pub mod repo;
pub mod report;
pub mod resume;
pub mod retry;
pub mod snapshot;
pub mod ssh;
pub mod sync;
pub mod tail;
pub mod trailer;
pub mod wire;
pub mod workers;
pub mod worktree;
