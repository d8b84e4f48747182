//! SPEC 1.3 "Proof before every irreversible step": stash entries, hidden changes, a
//! foreign `.git`, a deregistered checkout, merged and closed requests whose head proves
//! nothing, and a request being merged.

use super::*;
use crate::model::reason::Row;

fn dead() -> T {
    snap().spawn(7200).exit(7000, 1, Outcome::Failed)
}

#[test]
fn a_stash_entry_made_on_the_branch_makes_a_clean_worker_half_done() {
    let w = dead()
        .wt()
        .with(|s| s.stashes = vec!["stash@{0} (On issue-7: wip)".into()])
        .run();
    lsa(&w, Liveness::Exited, State::HalfDone, Action::Resume);
    assert_eq!(
        w.reason.row,
        Row::Stashed {
            branch: "issue-7".into(),
            entries: vec!["stash@{0} (On issue-7: wip)".into()],
            reset: Vec::new(),
        }
    );
    // Commits only the branch's reflog holds (reset away): the same, the reason names them.
    let w = dead()
        .wt()
        .with(|s| s.reset_away = vec!["issue-7@{1} (1a2b3c4d5e6f add parser)".into()])
        .run();
    lsa(&w, Liveness::Exited, State::HalfDone, Action::Resume);
    assert_eq!(
        w.reason.to_string(),
        "nothing ahead and the worktree clean, but commits made on issue-7 were dropped from it, only its reflog holds them: issue-7@{1} (1a2b3c4d5e6f add parser); resume, so the agent restores them (`git reflog show issue-7`)"
    );
    // Without either: empty, deleted.
    lsa(
        &dead().wt().run(),
        Liveness::Exited,
        State::Empty,
        Action::Delete,
    );
}

#[test]
fn a_change_an_index_flag_hides_is_named() {
    let w = dead()
        .dirty(dirty(0, 1, 0, 0))
        .wt_with(|f| f.hidden = vec!["README.md (assume-unchanged)".into()])
        .run();
    lsa(&w, Liveness::Exited, State::HalfDone, Action::WipCommit);
    assert!(
        w.reason
            .to_string()
            .contains("hidden from git status by an index flag: README.md (assume-unchanged)"),
        "{}",
        w.reason
    );
}

#[test]
fn a_foreign_git_is_needs_human_naming_both() {
    let w = dead()
        .ahead(1)
        .wt_with(|f| {
            f.dirty = None;
            f.admin = "/r/.git/worktrees/wt".into();
            f.foreign = Some("/wt/.git".into());
        })
        .run();
    lsa(&w, Liveness::Exited, State::NeedsHuman, Action::Escalate);
    assert_eq!(
        w.reason.row,
        Row::Foreign {
            path: WT.into(),
            leads_to: "/wt/.git".into(),
            admin: "/r/.git/worktrees/wt".into(),
        }
    );
}

#[test]
fn a_deregistered_checkout_is_escalated_for_recover_to_register_again() {
    let w = dead()
        .ahead(1)
        .with(|s| {
            s.deregistered = Some(Deregistered {
                path: "/wts/issue-7".into(),
                names: "/r/.git/worktrees/issue-7".into(),
            })
        })
        .run();
    lsa(&w, Liveness::Exited, State::NeedsHuman, Action::Escalate);
    assert!(matches!(w.reason.row, Row::Deregistered { .. }));
}

#[test]
fn a_merged_request_whose_head_proves_nothing_is_not_the_workers() {
    for (head, state, action) in [
        (PrHead::Unknown, State::HalfDone, Action::Resume),
        (PrHead::Unrelated, State::HalfDone, Action::Resume),
        (PrHead::Tip, State::Published, Action::Delete),
        (PrHead::Contains, State::Published, Action::Delete),
    ] {
        let w = dead()
            .wt()
            .ahead(2)
            .with(|s| s.pr_head = head)
            .forge(Forge::Known(Some(pr(PrState::Merged))))
            .run();
        lsa(&w, Liveness::Exited, state, action);
    }
}

/// SPEC `published` row: commits after the request's head are new work: the worker is
/// classified as if it had no request (never deleted as merged), and the reason names it.
#[test]
fn new_work_after_a_request_is_classified_without_it_and_names_it() {
    let after = |state| {
        dead()
            .wt()
            .ahead(2)
            .with(|s| {
                s.pr_head = PrHead::Behind(1);
                s.beyond_pr = 1;
            })
            .forge(Forge::Known(Some(pr(state))))
            .run()
    };
    let w = after(PrState::Merged);
    lsa(&w, Liveness::Exited, State::HalfDone, Action::Resume);
    assert_eq!(
        w.reason.to_string(),
        "2 commits ahead; no gate result for the head; 1 commit after pull request #42 (merged): new work"
    );
    let w = after(PrState::Open);
    lsa(&w, Liveness::Exited, State::HalfDone, Action::Resume);
    assert!(
        w.reason
            .to_string()
            .ends_with("; 1 commit after pull request #42 (open): new work"),
        "{}",
        w.reason
    );
    // A closed request has its own row, which names it; one merely reusing the branch's
    // name (unrelated heads) is not named.
    assert_eq!(after(PrState::Closed).reason.after, None);
    let w = dead()
        .wt()
        .ahead(2)
        .with(|s| {
            s.pr_head = PrHead::Unrelated;
            s.beyond_pr = 2;
        })
        .forge(Forge::Known(Some(pr(PrState::Merged))))
        .run();
    assert_eq!(
        w.reason.to_string(),
        "2 commits ahead; no gate result for the head"
    );
}

#[test]
fn a_closed_request_of_another_line_of_work_escalates_nothing() {
    let closed = |head| {
        dead()
            .wt()
            .ahead(2)
            .with(|s| s.pr_head = head)
            .forge(Forge::Known(Some(pr(PrState::Closed))))
            .run()
    };
    lsa(
        &closed(PrHead::Unrelated),
        Liveness::Exited,
        State::HalfDone,
        Action::Resume,
    );
    lsa(
        &closed(PrHead::Behind(1)),
        Liveness::Exited,
        State::NeedsHuman,
        Action::Escalate,
    );
}

#[test]
fn a_request_being_merged_waits() {
    let mut p = open_pr();
    p.merging = true;
    let w = dead().wt().ahead(2).forge(Forge::Known(Some(p))).run();
    lsa(&w, Liveness::Exited, State::Published, Action::Wait);
    assert_eq!(w.reason.row, Row::Merging { pr: 42 });
}
