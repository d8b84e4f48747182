//! The smoke harness (`fixtures/smoke-fanout.sh`, see `smoke.rs`) on GitLab and on
//! Gitea/Forgejo: workers killed mid-task, stalled, dirty, phantom, rate-limited and red
//! settle with no human step, as on GitHub — each failing pipeline or status and each
//! requested change answered by a resume that pushes a fix. One seed each (the GitHub
//! run covers two); `SMOKE_FORGE=gitlab fixtures/smoke-seeds.sh` runs twenty.

use crate::smoke::smoke;

#[test]
fn workers_settle_with_no_human_on_gitlab() {
    smoke("gitlab", "4242");
}

#[test]
fn workers_settle_with_no_human_on_gitea() {
    smoke("gitea", "7");
}
