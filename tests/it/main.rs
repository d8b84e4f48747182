//! The one integration-test binary (as jj does): every suite is a module here, sharing
//! the test environment in [`common`]. Real git, the real `git-recode` binary, temp dirs,
//! never the network.

mod common;
mod contract;
// The fake GitHub is shared with `examples/fake-github.rs` and the smoke harness.
#[path = "../../fixtures/fake_github.rs"]
mod fake_github;
// The GitLab and Gitea stand-ins share one core (also used by their examples).
#[path = "../../fixtures/fake_forge.rs"]
mod fake_forge;
#[path = "../../fixtures/fake_gitea.rs"]
mod fake_gitea;
#[path = "../../fixtures/fake_gitlab.rs"]
mod fake_gitlab;
mod hookenv;

mod agent_outputs;
mod agents;
mod arch;
mod cli;
mod color;
mod commit_ids;
mod doctor;
mod errors;
mod feedback;
mod forge;
mod forge_gitea;
mod forge_gitlab;
mod forge_none;
mod forge_other;
mod forge_proof;
mod forge_selfhosted;
mod forge_smoke;
mod formats;
mod gix_reads;
mod hook;
mod hooklayout;
mod hosts;
mod hosts_clock;
mod hosts_locks;
mod hosts_loop;
mod hosts_order;
mod hosts_owner;
mod journal;
mod ledger;
mod ledgerrace;
mod loopguide;
mod loopharness;
mod loopsh;
mod neverlose;
mod neverlose_env;
mod neverlose_prompt;
mod neverlose_refused;
mod neverlose_shallow;
mod neverlose_states;
mod newcomer;
mod newcomer_complete;
mod outcome;
mod perf_status;
mod pickup;
mod proof;
mod proof_elsewhere;
mod published;
mod real_agents;
mod real_failures;
mod recover;
mod report;
mod resume;
mod resume_flags;
mod resume_standins;
mod settle;
mod settle_kill;
mod settle_loop;
mod setups;
mod smoke;
mod status;
mod sync;
mod sync_many;
mod untrusted;
mod untrusted_deadline;
mod untrusted_env;
mod untrusted_forge;
mod untrusted_fuzz;
mod untrusted_memory;
mod untrusted_origin;
mod untrusted_screen;
mod untrusted_session;
mod watch;
