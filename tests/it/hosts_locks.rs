//! A lock a killed run left on a ref of ours under `refs/recode/` (SPEC 1.2 "The loop
//! settles"; 1.3 "Several machines"): this host's heartbeat, or the tracking ref `sync`
//! fetches the remote's ledger into. Past 30 s it is moved aside and named, never a wedge:
//! a heartbeat that cannot move reads as a silent host (its live workers taken over), a
//! sync that cannot fetch never pushes this host's ledger again. Loose refs only (a
//! reftable's one lock is `tables.list.lock`, `formats.rs`).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::hosts::{Agent, Fleet, MIN, a_starts_issue_1, at};

/// An empty lock file at `<clone>/.git/<name>.lock`, `age` old by its mtime.
fn lock(dir: &Path, name: &str, age: Duration) -> PathBuf {
    let path = dir.join(".git").join(format!("{name}.lock"));
    let file = std::fs::File::create(&path).unwrap();
    file.set_modified(SystemTime::now() - age).unwrap();
    path
}

/// `git-recode <args>` on `host` at `now`, exit 0: its stderr.
fn stderr_of(f: &Fleet, host: &str, dir: &Path, now: &str, args: &[&str]) -> String {
    let out = f.on(host, dir, now, args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
    err
}

#[test]
fn a_stale_lock_on_this_hosts_heartbeat_is_moved_aside_and_a_young_one_waits() {
    let f = Fleet::with_files_refs();
    let a = f.clone("a");
    let agent = Agent::start();
    a_starts_issue_1(&f, &a, &agent);
    f.ok("hostA", &a, &at(MIN), &["recover", "--all"]);
    let beat = |dir: &Path| f.env.git(dir, &["rev-parse", "refs/recode/hosts/hostA"]);
    let first = beat(&a);
    // A young lock (a writer may hold it): left alone, the heartbeat stands this tick.
    let young = lock(&a, "refs/recode/hosts/hostA", Duration::from_secs(1));
    let err = stderr_of(&f, "hostA", &a, &at(17 * MIN), &["recover", "--all"]);
    assert!(err.contains("cannot write the heartbeat"), "{err}");
    assert!(
        err.contains(&format!("({} is held, ", young.display())),
        "{err}"
    );
    assert!(young.exists());
    assert_eq!(beat(&a), first);
    // Stale (a killed run's): moved aside, named, and the heartbeat written.
    let stale = lock(&a, "refs/recode/hosts/hostA", Duration::from_secs(3600));
    let err = stderr_of(&f, "hostA", &a, &at(18 * MIN), &["recover", "--all"]);
    assert!(
        err.contains(&format!("moved aside the stale lock {}", stale.display())),
        "{err}"
    );
    assert!(!stale.exists());
    assert_ne!(beat(&a), first);
    assert_eq!(
        f.env.git(
            &a,
            &["for-each-ref", "--format=%(refname)", "refs/recode/hosts"]
        ),
        "refs/recode/hosts/hostA"
    );
}

#[test]
fn a_stale_lock_on_the_tracking_ref_sync_fetches_into_is_moved_aside() {
    let f = Fleet::with_files_refs();
    let (a, b) = (f.clone("a"), f.clone("b"));
    let agent = Agent::start();
    a_starts_issue_1(&f, &a, &agent);
    f.ok("hostA", &a, &at(MIN), &["sync"]);
    // B ledgers an attempt of its own: the remote's ledger moves.
    f.env.git(&b, &["branch", "issue-2"]);
    f.ok(
        "hostB",
        &b,
        &at(2 * MIN),
        &["record", "spawn", "issue-2", "--cwd", "."],
    );
    f.ok("hostB", &b, &at(2 * MIN), &["sync"]);
    // A's last sync was killed while its fetch held the tracking ref's lock.
    let stale = lock(
        &a,
        "refs/recode/remotes/origin/notes",
        Duration::from_secs(3600),
    );
    let err = stderr_of(&f, "hostA", &a, &at(3 * MIN), &["sync"]);
    assert!(
        err.contains(&format!("moved aside the stale lock {}", stale.display())),
        "{err}"
    );
    assert!(!stale.exists());
    // B's attempt reached A, and A's ledger the remote.
    let shown = f.ok("hostA", &a, &at(3 * MIN), &["log", "issue-2"]);
    assert!(shown.contains("spawn"), "{shown}");
    assert_eq!(
        f.env.git(&a, &["rev-parse", "refs/notes/recode"]),
        f.env.git(&f.bare, &["rev-parse", "refs/notes/recode"])
    );
}
