//! The one integration-test binary (as jj does): every suite is a module here, sharing
//! the test environment in [`common`]. Real git, the real `git-recode` binary, temp dirs,
//! never the network.

mod common;
// The fake GitHub is shared with `examples/fake-github.rs` and the smoke harness.
#[path = "../../fixtures/fake_github.rs"]
mod fake_github;
mod hookenv;

mod arch;
mod cli;
mod errors;
mod feedback;
mod forge;
mod hook;
mod hooklayout;
mod ledger;
mod loopharness;
mod neverlose;
mod outcome;
mod pickup;
mod published;
mod recover;
mod resume;
mod settle;
mod settle_kill;
mod smoke;
mod status;
mod sync;
mod sync_many;
