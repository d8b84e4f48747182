//! Commit ids in the ledger (`gix::ObjectId` past the storage boundary): a
//! `head` is written as the commit's 40 hex digits, byte for byte as before, and an old
//! or hand-edited line whose `head` is not a commit id keeps its event (an escalation
//! still stands) without the head, with a warning, and its bytes stay in the note.

use crate::common::TestEnv;

#[test]
fn a_head_that_is_no_commit_id_keeps_its_escalation_and_warns() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    env.git(&repo, &["branch", "issue-5"]);
    env.ok(&repo, &["record", "spawn", "issue-5", "--cwd", "."]);
    env.ok(&repo, &["record", "gate", "issue-5", "--failed"]);
    let anchor = env.anchor(&repo, "5");
    let bad = r#"{"branch":"issue-5","head":"abc1234","kind":"escalated","reason":"a human must look","seq":3,"task":"5","ts":"2026-11-20T11:59:00.000Z","v":1}"#;
    env.git(
        &repo,
        &[
            "notes",
            "--ref=recode",
            "append",
            "--no-separator",
            "-m",
            bad,
            &anchor,
        ],
    );
    let warning = format!(
        "warning: task 5: a ledger line's head is not a commit id; the event is kept without it \
         (the line stays in the note as written): {}\n",
        bad.chars().take(60).collect::<String>()
    );
    insta::assert_snapshot!(env.run(&repo, &["status", "--porcelain"]), @r#"
    5	issue-5	running	needs-human	wait	1
    --- stderr ---
    warning: task 5: a ledger line's head is not a commit id; the event is kept without it (the line stays in the note as written): {"branch":"issue-5","head":"abc1234","kind":"escalated","rea
    [exit status: 0]
    "#);
    // The gate's head is the branch's commit, 40 hex digits; the bad head is gone from
    // what is decided on, never from the note, and `log` shows the line as stored (it
    // sorts first: its `ts` is the oldest).
    let head = env.git(&repo, &["rev-parse", "issue-5"]);
    let log = env.output(&repo, &["log", "issue-5", "--json"]);
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&log.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let heads: Vec<(&str, Option<&str>)> = lines
        .iter()
        .map(|l| (l["kind"].as_str().unwrap(), l["head"].as_str()))
        .collect();
    assert_eq!(
        heads,
        vec![
            ("escalated", Some("abc1234")),
            ("spawn", Some(head.as_str())),
            ("gate", Some(head.as_str())),
        ]
    );
    assert_eq!(String::from_utf8_lossy(&log.stderr), warning);
    let note = env.git(&repo, &["notes", "--ref=recode", "show", &anchor]);
    assert_eq!(note.lines().last(), Some(bad));
}
